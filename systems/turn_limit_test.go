package systems_test

import (
	"testing"

	"github.com/warrenhq/warren/components"
	"github.com/warrenhq/warren/ecs"
	"github.com/warrenhq/warren/models"
	"github.com/warrenhq/warren/resources"
)

// circlingBlueprint sends its agents round two stages forever: only the turn limit ends them.
const circlingBlueprint = `
name = "circling"
endless = true

[[stages]]
name = "look"
available_tools = ["echo_inline", "echo"]
max_iterations = 2

  [[stages.transitions]]
  on = "always"
  to = "rest"

[[stages]]
name = "rest"

  [[stages.transitions]]
  on = "always"
  to = "look"
`

// selfLoopBlueprint re-enters its one stage on every outcome.
const selfLoopBlueprint = `
name = "self_loop"
endless = true

[[stages]]
name = "work"
available_tools = ["echo_inline"]

  [[stages.transitions]]
  on = "always"
  to = "work"
`

// finishingBlueprint ends on done: the turn limit matters only if the model never says so.
const finishingBlueprint = `
name = "finishing"

[[stages]]
name = "work"
available_tools = ["echo_inline"]
max_iterations = 100
`

// TestTurnLimit: an agent about to be asked for a model turn past its life's limit ends failed,
// with a reason naming the limit and the setting, however it got there (an endless stage graph,
// a model that never stops calling tools) and whichever lane its model runs on; an agent whose
// last allowed turn ends it is not touched.
func TestTurnLimit(t *testing.T) {
	callForever := func(*models.State, *models.View) (models.Reply, error) {
		return models.Reply{Calls: []models.ToolCall{{Name: "echo_inline", Args: []byte(`{"text":"again"}`)}}}, nil
	}
	stopAt := func(n int32) turnFunc {
		return func(st *models.State, _ *models.View) (models.Reply, error) {
			st.Cursor++
			if st.Cursor >= n {
				return models.Reply{Text: "done"}, nil
			}
			return callForever(st, nil)
		}
	}
	cases := []struct {
		name       string
		blueprint  string
		model      models.Model
		limit      uint32
		wantStatus components.StatusKind
		wantTurns  uint32
		wantReason string
		wantStage  string
	}{
		{name: "an endless graph ends at the limit", blueprint: circlingBlueprint, limit: 7,
			model:      scriptedRepeat(t, "scripted:circle", turn("looking", call("echo_inline", "x"))),
			wantStatus: components.Failed, wantTurns: 7, wantStage: "rest", // 2 turns in look, then rest's
			wantReason: "turn limit: 7 model turns (limits.max_turns_per_agent)"},
		{name: "a lane model ends at the limit too", blueprint: circlingBlueprint, limit: 5,
			model:      laneModel{id: "lane:circle", turn: callForever},
			wantStatus: components.Failed, wantTurns: 5, wantStage: "rest",
			wantReason: "turn limit: 5 model turns (limits.max_turns_per_agent)"},
		{name: "a model that never stops calling tools", blueprint: finishingBlueprint, limit: 30,
			model:      inlineModel{id: "inline:forever", turn: callForever},
			wantStatus: components.Failed, wantTurns: 30, wantStage: "work",
			wantReason: "turn limit: 30 model turns (limits.max_turns_per_agent)"},
		{name: "the last allowed turn may end the agent done", blueprint: finishingBlueprint, limit: 4,
			model:      inlineModel{id: "inline:four", turn: stopAt(4)},
			wantStatus: components.Done, wantTurns: 4, wantStage: "work"},
		{name: "the default limit", blueprint: selfLoopBlueprint,
			model:      inlineModel{id: "inline:forever", turn: callForever},
			wantStatus: components.Failed, wantTurns: resources.DefaultMaxModelTurns, wantStage: "work",
			wantReason: "turn limit: 1000 model turns (limits.max_turns_per_agent)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, options{maxTurns: tc.limit})
			h.spawn(h.profile("g", h.blueprint(tc.blueprint), tc.model, "go"), 1)
			if stop := h.run(100_000); stop != ecs.FixedPoint {
				t.Fatalf("stop %v, want a fixed point: the turn limit ends the agent", stop)
			}
			rec := h.record("g-0")
			if rec.Status != tc.wantStatus || rec.Reason != tc.wantReason || rec.Stage != tc.wantStage {
				t.Errorf("status %v, reason %q, stage %q; want %v, %q, %q", rec.Status, rec.Reason, rec.Stage, tc.wantStatus, tc.wantReason, tc.wantStage)
			}
			if rec.Counters.ModelTurns != tc.wantTurns {
				t.Errorf("%d model turns, want %d", rec.Counters.ModelTurns, tc.wantTurns)
			}
			if turns := h.events("model_turn", "g-0"); len(turns) != int(tc.wantTurns) {
				t.Errorf("%d model_turn events, want %d", len(turns), tc.wantTurns)
			}
			ends := h.events("terminal", "g-0")
			if len(ends) != 1 || ends[0].Reason != tc.wantReason || ends[0].Stage != tc.wantStage {
				t.Errorf("terminal events %+v, want one with reason %q in stage %q", ends, tc.wantReason, tc.wantStage)
			}
		})
	}
}

// scriptedRepeat compiles a scripted model that repeats its last turn forever.
func scriptedRepeat(tb testing.TB, id string, turns ...models.ScriptedTurn) *models.Scripted {
	tb.Helper()
	m, err := models.NewScripted(id, turns, models.ExhaustedRepeatLast)
	if err != nil {
		tb.Fatal(err)
	}
	return m
}
