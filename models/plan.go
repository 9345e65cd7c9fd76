package models

import "strconv"

// Planned is implemented by a model whose turns are written down before the run (the scripted
// kind), so that the scenario loader can check them against the blueprints that use the model
// before anything runs: a turn that asserts a stage no such blueprint has can never run, and a
// call of a tool that no stage offers is refused by the gate every time. A model that decides
// in code (a js policy) has no plan to check.
type Planned interface {
	// Plan lists the model's turns as written, once each however often they repeat, in file
	// order.
	Plan() []PlannedTurn
}

// PlannedTurn is one written turn: the stage it asserts and the tools it calls, with the key
// of each relative to the model's table, where a loader reports a problem with it.
type PlannedTurn struct {
	// Key is the turn's key ("turns[2]"); Stage is the stage it asserts ("": any).
	Key, Stage string
	// Calls are the turn's calls, in order.
	Calls []PlannedCall
}

// PlannedCall is one call of a written turn.
type PlannedCall struct {
	// Key is the call's tool key ("turns[2].calls[0].tool"); Tool is the tool it calls.
	Key, Tool string
}

var _ Planned = (*Scripted)(nil)

// Plan implements Planned: the turns as written, a repeated turn once. A failing turn (a
// constant error) asserts its stage like any other and calls nothing.
func (s *Scripted) Plan() []PlannedTurn {
	var plan []PlannedTurn
	last := 0
	for i := range s.turns {
		t := &s.turns[i]
		if t.number == last {
			continue // a repeat of the turn just listed
		}
		last = t.number
		key := "turns[" + strconv.Itoa(t.number-1) + "]"
		pt := PlannedTurn{Key: key, Stage: t.stage}
		for j := range t.calls {
			pt.Calls = append(pt.Calls, PlannedCall{Key: key + ".calls[" + strconv.Itoa(j) + "].tool", Tool: t.calls[j].tool})
		}
		plan = append(plan, pt)
	}
	return plan
}
