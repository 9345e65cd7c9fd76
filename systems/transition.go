package systems

import (
	"github.com/warrenhq/warren/blueprint"
	"github.com/warrenhq/warren/components"
	"github.com/warrenhq/warren/ecs"
)

// Transition resolves the end of a stage visit: the stage's transitions are tried in order and
// the first whose `on` matches the outcome (or is `always`) sends the agent to Entering its
// target stage. When none matches the run ends: outcome done ends it done, error and
// max_iterations end it failed with the visit's reason.
type Transition struct {
	store
	maps     agentMaps
	view     *ecs.View2[components.Cursor, components.Identity]
	entering *mover
	terminal *mover
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
	return nil
}

// Update implements ecs.System.
func (s *Transition) Update(w *ecs.World) {
	tick := w.Tick()
	q := s.view.Query()
	for q.Next() {
		cur, id := q.Get()
		e := q.Entity()
		bp := s.profiles.Get(id.Profile).Blueprint
		d := s.agents.Get(id.Slot)
		from := &bp.Stages[cur.Stage]
		if to, ok := from.Next(cur.Outcome); ok {
			s.run.Trace.Transition(tick, ref(id, d), from.Name, bp.Stages[to].Name, cur.Outcome.String())
			s.maps.counters.Get(e).Transitions++
			cur.Stage = int32(to)
			s.entering.add(e)
			continue
		}
		kind, reason := components.Done, ""
		if cur.Outcome != blueprint.OutcomeDone {
			kind, reason = components.Failed, d.Reason
		}
		terminate(s.run.Trace, tick, id, d, s.maps.status.Get(e), from.Name, kind, reason)
		s.terminal.add(e)
	}
	w.Touch(s.entering.apply() + s.terminal.apply())
}

// Finalize implements ecs.System.
func (*Transition) Finalize(*ecs.World) {}
