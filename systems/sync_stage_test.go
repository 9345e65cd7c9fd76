package systems_test

import (
	"slices"
	"testing"
	"time"

	"github.com/warrenhq/warren/blueprint"
	"github.com/warrenhq/warren/ecs"
	"github.com/warrenhq/warren/sandbox"
	"github.com/warrenhq/warren/systems"
)

const twoStageBlueprint = `
name = "two"
entry = "plan"

[[stages]]
name = "plan"
available_tools = ["echo_inline"]
[[stages.transitions]]
on = "done"
to = "build"

[[stages]]
name = "build"
available_tools = ["echo_inline"]
`

func TestSyncStageEntersTheCursorStage(t *testing.T) {
	h := newHarness(t, options{systems: []ecs.System{&systems.SyncStage{}}})
	bp := h.blueprint(twoStageBlueprint)
	agents := h.spawn(h.profile("g", bp, scripted(t, "scripted:g"), ""), 2)

	// Leftovers of an earlier visit that entering must clear.
	cur := h.cursor.Get(agents[0])
	cur.Iteration, cur.Turn, cur.Outcome = 7, 9, blueprint.OutcomeError
	h.data(agents[0]).Reason = "stale reason"

	if touched := h.step(); touched != 2 {
		t.Errorf("touched %d, want 2", touched)
	}
	for _, e := range agents {
		if got := h.phase(e); got != "ReadyToInfer" {
			t.Errorf("%s: phase %s, want ReadyToInfer", h.data(e).Name, got)
		}
		if got := h.data(e).Visits; !slices.Equal(got, []uint32{1, 0}) {
			t.Errorf("%s: visits %v, want [1 0]", h.data(e).Name, got)
		}
	}
	cur = h.cursor.Get(agents[0])
	if cur.Iteration != 0 || cur.Outcome != 0 {
		t.Errorf("cursor after entering: iteration %d outcome %v, want 0 and none", cur.Iteration, cur.Outcome)
	}
	if cur.Turn != 9 {
		t.Errorf("turn %d: entering a stage must not reset the run's turn count (9)", cur.Turn)
	}
	if reason := h.data(agents[0]).Reason; reason != "" {
		t.Errorf("reason %q survived entering a stage", reason)
	}
	enters := h.events("stage_enter", "")
	if len(enters) != 2 {
		t.Fatalf("stage_enter events: %+v", enters)
	}
	for i, ev := range enters {
		if ev.Name != h.data(agents[i]).Name || ev.Stage != "plan" || ev.Visit != 1 {
			t.Errorf("event %d: %+v, want %s entering plan, visit 1", i, ev, h.data(agents[i]).Name)
		}
	}

	// A second step finds nobody entering.
	if touched := h.step(); touched != 0 {
		t.Errorf("idle step touched %d", touched)
	}
}

func TestSyncStageCountsEveryVisit(t *testing.T) {
	h := newHarness(t, options{systems: []ecs.System{&systems.SyncStage{}}})
	bp := h.blueprint(twoStageBlueprint)
	e := h.spawn(h.profile("g", bp, scripted(t, "scripted:g"), ""), 1)[0]
	h.step()

	steps := []struct {
		name       string
		stage      int32
		wantStage  string
		wantVisit  int
		wantVisits []uint32
	}{
		{name: "move on to build", stage: 1, wantStage: "build", wantVisit: 1, wantVisits: []uint32{1, 1}},
		{name: "back to plan", stage: 0, wantStage: "plan", wantVisit: 2, wantVisits: []uint32{2, 1}},
		{name: "plan again", stage: 0, wantStage: "plan", wantVisit: 3, wantVisits: []uint32{3, 1}},
		{name: "build again", stage: 1, wantStage: "build", wantVisit: 2, wantVisits: []uint32{3, 2}},
	}
	for _, s := range steps {
		before := len(h.events("stage_enter", ""))
		h.cursor.Get(e).Stage = s.stage
		h.cursor.Get(e).Iteration = 4
		h.moveTo(e, "Entering")
		h.step()
		if got := h.data(e).Visits; !slices.Equal(got, s.wantVisits) {
			t.Errorf("%s: visits %v, want %v", s.name, got, s.wantVisits)
		}
		if it := h.cursor.Get(e).Iteration; it != 0 {
			t.Errorf("%s: iteration %d, want 0", s.name, it)
		}
		enters := h.events("stage_enter", "")
		if len(enters) != before+1 {
			t.Fatalf("%s: %d new stage_enter events, want 1", s.name, len(enters)-before)
		}
		if ev := enters[len(enters)-1]; ev.Stage != s.wantStage || ev.Visit != s.wantVisit {
			t.Errorf("%s: stage_enter %s visit %d, want %s visit %d", s.name, ev.Stage, ev.Visit, s.wantStage, s.wantVisit)
		}
	}
}

// TestSyncStagePointsTheSandbox: entering a stage points the agent's sandbox manager at the
// stage's boundary, on every entry; an agent without a manager gets none.
func TestSyncStagePointsTheSandbox(t *testing.T) {
	h := newHarness(t, options{systems: []ecs.System{&systems.SyncStage{}}})
	bp := h.blueprint(twoStageBlueprint)
	p := h.profile("g", bp, scripted(t, "scripted:g"), "")
	plan := sandbox.Ceiling(sandbox.Spec{})
	build := plan
	build.Limits.Timeout = time.Second
	p.Sandbox = []sandbox.Boundary{plan, build}
	agents := h.spawn(p, 2)
	m := sandbox.NewManager(t.TempDir(), sandbox.Probe(), build)
	h.data(agents[0]).Sandbox = m
	h.step()
	if got := m.Boundary(); got.Limits.Timeout != plan.Limits.Timeout {
		t.Errorf("after entering plan: timeout %v, want %v", got.Limits.Timeout, plan.Limits.Timeout)
	}
	if h.data(agents[1]).Sandbox != nil {
		t.Error("sync_stage made a manager for an agent that ran no command")
	}
	h.cursor.Get(agents[0]).Stage = 1
	h.moveTo(agents[0], "Entering")
	h.step()
	if got := m.Boundary(); got.Limits.Timeout != time.Second {
		t.Errorf("after entering build: timeout %v, want 1s", got.Limits.Timeout)
	}
}
