package systems_test

import (
	"slices"
	"testing"

	"github.com/warrenhq/warren/blueprint"
	"github.com/warrenhq/warren/components"
	"github.com/warrenhq/warren/ecs"
	"github.com/warrenhq/warren/systems"
)

// routing has a stage whose transitions overlap (done appears twice, then always), a stage
// reached only on errors, and a last stage with no transitions at all.
const routingBlueprint = `
name = "routing"
entry = "triage"

[[stages]]
name = "triage"
[[stages.transitions]]
on = "done"
to = "finish"
[[stages.transitions]]
on = "done"
to = "recover"
[[stages.transitions]]
on = "error"
to = "recover"
[[stages.transitions]]
on = "always"
to = "triage"

[[stages]]
name = "recover"
[[stages.transitions]]
on = "always"
to = "finish"

[[stages]]
name = "finish"
`

func TestTransitionPicksTheFirstMatch(t *testing.T) {
	cases := []struct {
		name      string
		stage     string
		outcome   blueprint.Outcome
		reason    string
		wantPhase string
		wantStage string
		// for agents that end
		wantStatus components.StatusKind
		wantReason string
	}{
		{name: "done takes the first of two done transitions", stage: "triage", outcome: blueprint.OutcomeDone,
			wantPhase: "Entering", wantStage: "finish"},
		{name: "error skips the done transitions", stage: "triage", outcome: blueprint.OutcomeError, reason: "model error: x",
			wantPhase: "Entering", wantStage: "recover"},
		{name: "max_iterations falls through to always", stage: "triage", outcome: blueprint.OutcomeMaxIterations,
			wantPhase: "Entering", wantStage: "triage"},
		{name: "always matches done", stage: "recover", outcome: blueprint.OutcomeDone,
			wantPhase: "Entering", wantStage: "finish"},
		{name: "always matches error", stage: "recover", outcome: blueprint.OutcomeError, reason: "model error: y",
			wantPhase: "Entering", wantStage: "finish"},
		{name: "no match after done ends the run done", stage: "finish", outcome: blueprint.OutcomeDone,
			wantPhase: "Terminal", wantStage: "finish", wantStatus: components.Done},
		{name: "no match after error ends the run failed with the reason", stage: "finish", outcome: blueprint.OutcomeError,
			reason: "model error: backend down", wantPhase: "Terminal", wantStage: "finish",
			wantStatus: components.Failed, wantReason: "model error: backend down"},
		{name: "no match after max_iterations ends the run failed with the reason", stage: "finish",
			outcome: blueprint.OutcomeMaxIterations, reason: `stage "finish" reached max_iterations (10)`,
			wantPhase: "Terminal", wantStage: "finish",
			wantStatus: components.Failed, wantReason: `stage "finish" reached max_iterations (10)`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, options{systems: []ecs.System{&systems.Transition{}}})
			bp := h.blueprint(routingBlueprint)
			e := h.spawn(h.profile("g", bp, scripted(t, "scripted:g"), ""), 1)[0]
			from, _ := bp.Stage(tc.stage)
			cur := h.cursor.Get(e)
			cur.Stage, cur.Outcome = int32(from.Index), tc.outcome
			h.data(e).Reason = tc.reason
			h.moveTo(e, "ResolveTransition")
			if touched := h.step(); touched != 1 {
				t.Errorf("touched %d, want 1", touched)
			}

			if got := h.phase(e); got != tc.wantPhase {
				t.Fatalf("phase %s, want %s", got, tc.wantPhase)
			}
			if got := bp.Stages[h.cursor.Get(e).Stage].Name; got != tc.wantStage {
				t.Errorf("stage %s, want %s", got, tc.wantStage)
			}
			transitions := h.events("transition", "g-0")
			terminals := h.events("terminal", "g-0")
			if tc.wantPhase == "Entering" {
				if n := h.counters.Get(e).Transitions; n != 1 {
					t.Errorf("transitions counter %d, want 1", n)
				}
				if len(transitions) != 1 || transitions[0].From != tc.stage || transitions[0].To != tc.wantStage || transitions[0].On != tc.outcome.String() {
					t.Errorf("transition events %+v, want %s -> %s on %s", transitions, tc.stage, tc.wantStage, tc.outcome)
				}
				if len(terminals) != 0 || h.status.Get(e).Kind != components.Active {
					t.Errorf("a transition ended the run: %+v", terminals)
				}
				return
			}
			if n := h.counters.Get(e).Transitions; n != 0 {
				t.Errorf("transitions counter %d, want 0 (a way out of the graph is no move)", n)
			}
			if len(transitions) != 1 || transitions[0].From != tc.stage || transitions[0].To != "" || transitions[0].On != tc.outcome.String() ||
				transitions[0].End != tc.wantStatus.String() {
				t.Errorf("transition events %+v, want %s out of the graph on %s, ending %s", transitions, tc.stage, tc.outcome, tc.wantStatus)
			}
			if st := h.status.Get(e).Kind; st != tc.wantStatus || h.data(e).Reason != tc.wantReason {
				t.Errorf("status %v reason %q, want %v %q", st, h.data(e).Reason, tc.wantStatus, tc.wantReason)
			}
			if len(terminals) != 1 || terminals[0].Status != tc.wantStatus.String() || terminals[0].Reason != tc.wantReason || terminals[0].Stage != tc.stage {
				t.Errorf("terminal events %+v", terminals)
			}
		})
	}
}

func TestTransitionCounterCountsEveryMove(t *testing.T) {
	h := newHarness(t, options{})
	bp := h.blueprint(routingBlueprint)
	// triage errors (-> recover), recover is done (-> finish), finish is done (end).
	model := scripted(t, "scripted:route",
		turnError("flaky"),
		turn("recovered"),
		turn("finished"))
	h.spawn(h.profile("g", bp, model, ""), 1)
	if stop := h.run(50); stop != ecs.FixedPoint {
		t.Fatalf("stop %v", stop)
	}
	r := h.record("g-0")
	if r.Status != components.Done || r.Stage != "finish" || r.Counters.Transitions != 2 {
		t.Errorf("record %+v, want done in finish after 2 transitions", r)
	}
	var path []string
	for _, ev := range h.events("transition", "g-0") {
		path = append(path, ev.From+">"+ev.To+":"+ev.On+ev.End)
	}
	// The counter counts the two moves; the trace also has the way out, ending done.
	if want := []string{"triage>recover:error", "recover>finish:done", "finish>:donedone"}; !slices.Equal(path, want) {
		t.Errorf("path %v, want %v", path, want)
	}
}
