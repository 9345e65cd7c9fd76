package systems

import (
	"github.com/warrenhq/warren/components"
	"github.com/warrenhq/warren/ecs"
	"github.com/warrenhq/warren/internal/sandboxwire"
)

// SyncStage brings an agent into the stage its cursor names. It counts the visit, restarts the
// stage's iteration count and records stage_enter; it applies the stage's policy: the agent's
// tool state now names this stage (so its tool_permissions and required_tools are the ones the
// gate uses), stage grants are dropped when the stage index differs from the one they were
// given under (re-entering the same stage keeps them), and calls resolve through the stage's
// registry (the group's tools with the stage's scope on top), and the agent's sandbox manager,
// if it has one, is pointed at the stage's boundary. Then the agent is ReadyToInfer.
//
// Every stage entry passes through here: the first, every transition, and any agent that is
// restored or rebuilt, which re-enters its stage, so no agent ever runs under a stale stage's
// policy.
type SyncStage struct {
	store
	view  *ecs.View2[components.Cursor, components.Identity]
	ready *ecs.Exchange
}

var _ ecs.System = (*SyncStage)(nil)

func init() {
	Register(Info{ID: IDPrefix + "sync_stage", Order: 20, New: func() ecs.System { return &SyncStage{} }})
}

// Name implements ecs.System.
func (*SyncStage) Name() string { return "sync_stage" }

// Initialize implements ecs.System.
func (s *SyncStage) Initialize(w *ecs.World) (err error) {
	if s.store, err = resolveStore(w); err != nil {
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
		d := s.agents.Get(id.Slot)
		d.Visits[cur.Stage]++
		cur.Iteration = 0
		cur.Outcome = 0
		d.Reason = ""
		if d.Tools.Grants != nil {
			d.Tools.Grants.EnterStage(int(cur.Stage))
		}
		d.Tools.Stage = cur.Stage
		if d.Output != nil {
			d.Output.EnterStage()
		}
		profile := s.profiles.Get(id.Profile)
		if d.Sandbox != nil {
			d.Sandbox.Point(sandboxwire.StageBoundary(profile, cur.Stage))
		}
		stage := &profile.Blueprint.Stages[cur.Stage]
		s.run.Trace.StageEnter(tick, ref(id, d), stage.Name, int(d.Visits[cur.Stage]))
	}
	w.Touch(s.view.SwapAll(s.ready))
}

// Finalize implements ecs.System.
func (*SyncStage) Finalize(*ecs.World) {}
