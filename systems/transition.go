package systems

import (
	"fmt"

	"github.com/expr-lang/expr/vm"
	"github.com/warrenhq/warren/blueprint"
	"github.com/warrenhq/warren/components"
	"github.com/warrenhq/warren/ecs"
)

// Transition resolves the end of a stage visit: the stage's transitions are tried in order and
// the first whose `on` matches the outcome (or is `always`) and whose `when`, if any, holds
// fires. It writes the transition's set to the agent's memory, then sends the agent to Entering
// its target stage, or ends it when the transition has end. When none fires the agent ends:
// outcome done ends it done, error and max_iterations end it failed with the visit's reason. A
// condition or set value that fails to evaluate fails the agent, naming the transition.
type Transition struct {
	store
	maps     agentMaps
	view     *ecs.View2[components.Cursor, components.Identity]
	entering *mover
	terminal *mover
	// machine and env are reused by every condition, so an evaluation allocates only what its
	// expression builds; tools and inbox back env's map and list.
	machine vm.VM
	env     blueprint.ConditionEnv
	tools   map[string]any
	inbox   []string
	values  []any
}

var _ ecs.System = (*Transition)(nil)

func init() {
	Register(Info{ID: IDPrefix + "transition", Order: 90, New: func() ecs.System { return &Transition{} }})
}

// Name implements ecs.System.
func (*Transition) Name() string { return "transition" }

// Initialize implements ecs.System.
func (s *Transition) Initialize(w *ecs.World) (err error) {
	if s.store, err = resolveStore(w); err != nil {
		return err
	}
	s.maps = newAgentMaps(w)
	s.view = ecs.NewView2[components.Cursor, components.Identity](w, []ecs.Comp{ecs.T[components.ResolveTransition]()}, nil)
	s.entering = newMover[components.ResolveTransition, components.Entering](w)
	s.terminal = newMover[components.ResolveTransition, components.Terminal](w)
	s.tools = map[string]any{}
	return nil
}

// Update implements ecs.System.
func (s *Transition) Update(w *ecs.World) {
	tick := w.Tick()
	q := s.view.Query()
	for q.Next() {
		cur, id := q.Get()
		e := q.Entity()
		p := s.profiles.Get(id.Profile)
		bp := p.Blueprint
		d := s.agents.Get(id.Slot)
		from := &bp.Stages[cur.Stage]
		if from.Conditional() {
			s.fill(p, from, cur, id, d, s.maps.counters.Get(e))
		}
		k, err := from.Fire(cur.Outcome, &s.machine, &s.env)
		if err == nil && k >= 0 {
			err = s.set(tick, id, d, from, &from.Transitions[k])
		}
		if err != nil {
			terminate(s.run.Trace, tick, id, d, s.maps.status.Get(e), from.Name, components.Failed, err.Error())
			s.terminal.add(e)
			continue
		}
		if k >= 0 {
			t := &from.Transitions[k]
			when := ""
			if t.When != nil {
				when = t.When.Source
			}
			if t.End == blueprint.EndNone {
				s.move(tick, e, id, d, cur, from, t.ToName, t.To, when)
				continue
			}
			kind := components.Done
			if t.End == blueprint.EndFailed {
				kind = components.Failed
			}
			s.run.Trace.Transition(tick, ref(id, d), from.Name, "", cur.Outcome.String(), when, t.End.String())
			terminate(s.run.Trace, tick, id, d, s.maps.status.Get(e), from.Name, kind, endReason(from, t))
			s.terminal.add(e)
			continue
		}
		kind, reason := components.Done, ""
		if cur.Outcome != blueprint.OutcomeDone {
			kind, reason = components.Failed, d.Reason
		}
		// No transition catches the outcome: the graph's implicit way out (done ends done, the
		// others failed), traced as the edge it is.
		s.run.Trace.Transition(tick, ref(id, d), from.Name, "", cur.Outcome.String(), "", kind.String())
		terminate(s.run.Trace, tick, id, d, s.maps.status.Get(e), from.Name, kind, reason)
		s.terminal.add(e)
	}
	w.Touch(s.entering.apply() + s.terminal.apply())
}

// move sends the agent from its stage to stage to, tracing the transition (with the condition
// that chose it, when one did).
func (s *Transition) move(tick uint64, e ecs.Entity, id *components.Identity, d *components.AgentData, cur *components.Cursor, from *blueprint.Stage, toName string, to int, when string) {
	s.run.Trace.Transition(tick, ref(id, d), from.Name, toName, cur.Outcome.String(), when, "")
	s.maps.counters.Get(e).Transitions++
	cur.Stage = int32(to)
	s.entering.add(e)
}

// endReason is the status reason of an agent a transition with end ended: which stage, on what
// and, when a condition chose it, which condition.
func endReason(from *blueprint.Stage, t *blueprint.Transition) string {
	if t.When != nil {
		return fmt.Sprintf("stage %q ended the agent %s: on %s when %s", from.Name, t.End, t.On, t.When.Source)
	}
	return fmt.Sprintf("stage %q ended the agent %s: on %s", from.Name, t.End, t.On)
}

// set writes the transition's set to the agent's memory: every value evaluated first, over the
// environment the condition saw, then written in key order, each traced.
func (s *Transition) set(tick uint64, id *components.Identity, d *components.AgentData, from *blueprint.Stage, t *blueprint.Transition) error {
	if len(t.Set) == 0 {
		return nil
	}
	s.values = s.values[:0]
	for i := range t.Set {
		v, err := t.Set[i].Value.Eval(&s.machine, &s.env)
		if err != nil {
			return err
		}
		s.values = append(s.values, v)
	}
	for i, a := range t.Set {
		if err := d.Memory.Set(a.Key, s.values[i]); err != nil {
			return fmt.Errorf("%w: %s: %w", blueprint.ErrConditionFailed, a.Value.At, err)
		}
		text, _ := d.Memory.Get(a.Key)
		s.run.Trace.Memory(tick, ref(id, d), from.Name, a.Key, text)
	}
	clear(s.values)
	return nil
}

// fill sets env to what the agent's visit of from produced and its state now, filling the
// costly fields only when the blueprint's conditions read them.
func (s *Transition) fill(p *components.Profile, from *blueprint.Stage, cur *components.Cursor, id *components.Identity, d *components.AgentData, c *components.Counters) {
	reads := &p.Blueprint.Reads
	s.env = blueprint.ConditionEnv{
		Outcome:   cur.Outcome.String(),
		Stage:     from.Name,
		Visit:     int(d.Visits[cur.Stage]),
		Iteration: int(cur.Iteration),
		Counters: blueprint.ConditionCounters{
			Turns: int(c.ModelTurns), ToolCalls: int(c.ToolCalls), ToolErrors: int(c.ToolErrors), Transitions: int(c.Transitions),
		},
		Name:  d.Name,
		Group: p.Group,
		Index: int(id.Index),
	}
	if reads.Memory {
		s.env.Memory = d.Memory.Map()
	}
	if out := d.Output; out != nil {
		if reads.Result && out.HasResult {
			s.env.Result, s.env.ResultError = components.ResultValue(out.Result), out.ResultError
		}
		s.env.Text = out.Text
		if len(reads.Tools) > 0 {
			clear(s.tools)
			for _, t := range out.Tools {
				// Held to the tool's declared result schema, when the blueprint has one.
				s.tools[t.Tool] = p.Blueprint.ToolValue(t.Tool, components.ResultValue(t.Content), t.IsError)
			}
			s.env.Tools = s.tools
		}
	}
	if reads.Inbox {
		s.inbox = s.inbox[:0]
		for _, m := range d.Inbox {
			s.inbox = append(s.inbox, m.Content)
		}
		s.env.Inbox = s.inbox
	}
}

// Finalize implements ecs.System.
func (*Transition) Finalize(*ecs.World) {}
