package systems

import (
	"github.com/warrenhq/warren/components"
	"github.com/warrenhq/warren/ecs"
)

// SyncStage brings an agent into the stage its cursor names: it counts the visit, restarts the
// stage's iteration count, records stage_enter, and moves the agent to ReadyToInfer. Every stage
// entry passes through it (the first, every transition, and a restored run), so stage-scoped
// state (stage grants, the sandbox boundary) is re-pointed here and nowhere else.
type SyncStage struct {
	host  *Host
	view  *ecs.View2[components.Cursor, components.Identity]
	ready *ecs.Exchange
}

var _ ecs.System = (*SyncStage)(nil)

// Name implements ecs.System.
func (*SyncStage) Name() string { return "sync_stage" }

// Initialize implements ecs.System.
func (s *SyncStage) Initialize(w *ecs.World) (err error) {
	if s.host, err = hostOf(w); err != nil {
		return err
	}
	s.view = ecs.NewView2[components.Cursor, components.Identity](w, []ecs.Comp{ecs.T[components.Entering]()}, nil)
	s.ready = swap[components.Entering, components.ReadyToInfer](w)
	return nil
}

// Update implements ecs.System.
func (s *SyncStage) Update(w *ecs.World) {
	tick := w.Tick()
	q := s.view.Query()
	for q.Next() {
		cur, id := q.Get()
		d := s.host.Agents.Get(id.Slot)
		d.Visits[cur.Stage]++
		cur.Iteration = 0
		cur.Outcome = 0
		d.Reason = ""
		stage := &s.host.Profiles.Get(id.Profile).Blueprint.Stages[cur.Stage]
		s.host.Trace.StageEnter(tick, ref(id, d), stage.Name, int(d.Visits[cur.Stage]))
	}
	w.Touch(s.view.SwapAll(s.ready))
}

// Finalize implements ecs.System.
func (*SyncStage) Finalize(*ecs.World) {}
