package systems_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/warrenhq/warren/ecs"
	"github.com/warrenhq/warren/gate"
	"github.com/warrenhq/warren/models"
	"github.com/warrenhq/warren/policy"
	"github.com/warrenhq/warren/tools"
)

func TestUnattendedDeniesAsksNothingCovers(t *testing.T) {
	cases := []struct {
		name        string
		spec        policySpec
		grant       policy.Scope // a grant of the call's keys the agent holds before its first turn
		call        models.ScriptedCall
		wantVerdict string
		wantLayer   string
		wantReason  string
		wantResult  string
	}{
		{
			name: "an ask nothing covers is denied", call: writeCall("a.txt", "x"),
			wantVerdict: "deny", wantLayer: "unattended",
			wantReason: "nobody is watching this run, and no grant or --yolo covers the ask (default: no layer sets write_file; its built-in default is ask)",
			wantResult: "error|permission denied for write_file by unattended: nobody is watching this run",
		},
		{
			name: "a shell line nothing covers is denied", call: shellCall("make build"),
			wantVerdict: "deny", wantLayer: "unattended", wantReason: "nobody is watching this run",
			wantResult: "error|permission denied for shell by unattended: ",
		},
		{
			name: "a run grant still runs the call", call: writeCall("a.txt", "x"), grant: policy.ScopeRun,
			wantVerdict: "allow", wantLayer: "grant:run",
			wantResult: `ok|Wrote 1 bytes to "a.txt" (new file)`,
		},
		{
			name: "a stage grant still runs the call", call: writeCall("a.txt", "x"), grant: policy.ScopeStage,
			wantVerdict: "allow", wantLayer: "grant:stage",
			wantResult: `ok|Wrote 1 bytes to "a.txt" (new file)`,
		},
		{
			name: "--yolo still runs the call", call: writeCall("a.txt", "x"), spec: policySpec{launch: policy.Launch{Yolo: true}},
			wantVerdict: "allow", wantLayer: "launch:yolo",
			wantResult: `ok|Wrote 1 bytes to "a.txt" (new file)`,
		},
		{
			name: "--allow still runs the call", call: writeCall("a.txt", "x"), spec: policySpec{launch: policy.Launch{Allow: []string{"write_file"}}},
			wantVerdict: "allow", wantLayer: "launch:allow",
			wantResult: `ok|Wrote 1 bytes to "a.txt" (new file)`,
		},
		{
			name: "a safe shell line still runs", call: shellCall("ls | wc -l"),
			wantVerdict: "allow", wantLayer: "safe",
			wantResult: "ok|ran: ls | wc -l",
		},
		{
			name: "a deny keeps the layer that denied it", call: writeCall("a.txt", "x"),
			spec:        policySpec{host: policy.HostLayer{Global: map[string]policy.Verdict{"write_file": policy.Deny}}},
			wantVerdict: "deny", wantLayer: "host",
			wantResult: "error|permission denied for write_file by host: ",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ans := answers(reply{answer: "run", delay: 1})
			h := newHarness(t, options{gate: gate.Standard{}, answerer: ans})
			bp := h.blueprint(writerBlueprint)
			tc.spec.unattended = true
			model := scripted(t, "scripted:unattended", turn("", tc.call), turn("done"))
			e := h.spawn(h.scenarioProfile("g", bp, model, toolPolicy(t, bp, tc.spec)), 1)[0]
			if tc.grant != 0 {
				g := &policy.Grants{}
				g.Grant([]string{tc.call.Tool}, tc.grant, 0)
				h.data(e).Tools.Grants = g
			}
			h.runToEnd("g-0")

			calls := h.events("tool_call", "g-0")
			if len(calls) != 1 || calls[0].Verdict != tc.wantVerdict || calls[0].Layer != tc.wantLayer || !strings.Contains(calls[0].Reason, tc.wantReason) {
				t.Errorf("tool_call:%s\nwant %s by %s, reason containing %q", describe(calls), tc.wantVerdict, tc.wantLayer, tc.wantReason)
			}
			if got := h.results("g-0"); len(got) != 1 || !strings.HasPrefix(got[0], tc.wantResult) {
				t.Errorf("results %q, want one starting %q", got, tc.wantResult)
			}
			if n := len(h.events("prompt", "")); n != 0 || len(ans.asked) != 0 {
				t.Errorf("an unattended run opened %d prompts and asked the answerer %d times", n, len(ans.asked))
			}
		})
	}
}

// interactionBlueprint has a stage where ask_user_text is merely available and one that
// requires it.
const interactionBlueprint = `
name = "interview"
entry = "solo"

[[stages]]
name = "solo"
available_tools = ["ask_user_text", "write_file"]
[[stages.transitions]]
on = "done"
to = "interview"

[[stages]]
name = "interview"
available_tools = ["ask_user_text"]
required_tools = ["ask_user_text"]
`

// askEveryStage is a model that asks a question on the first turn of every stage visit and
// finishes the visit on the next, recording what each stage advertised.
func askEveryStage(advertised map[string][]string) inlineModel {
	return inlineModel{id: "inline:asker", turn: func(_ *models.State, v *models.View) (models.Reply, error) {
		if v.Iteration > 0 {
			return models.Reply{Text: "done"}, nil
		}
		var names []string
		for _, ti := range v.Tools {
			names = append(names, ti.Name)
		}
		advertised[v.Stage] = names
		args, err := json.Marshal(map[string]string{"question": "Who are you, in " + v.Stage + "?"})
		if err != nil {
			return models.Reply{}, err
		}
		return models.Reply{Calls: []models.ToolCall{{Name: tools.NameAskUserText, Args: args}}}, nil
	}}
}

func TestUnattendedInteractionTools(t *testing.T) {
	cases := []struct {
		name           string
		unattended     bool
		wantAdvertised map[string][]string
		wantResults    []string
		wantPrompts    []string // the stages whose question opened a prompt
	}{
		{
			name: "unattended: only a stage that requires it advertises and asks", unattended: true,
			wantAdvertised: map[string][]string{"solo": {"write_file"}, "interview": {"ask_user_text"}},
			wantResults:    []string{"ok|" + tools.UnattendedAnswer, "ok|The user answered: Ada"},
			wantPrompts:    []string{"interview"},
		},
		{
			name:           "attended: every stage advertises and asks",
			wantAdvertised: map[string][]string{"solo": {"ask_user_text", "write_file"}, "interview": {"ask_user_text"}},
			wantResults:    []string{"ok|The user answered: Ada", "ok|The user answered: Ada"},
			wantPrompts:    []string{"solo", "interview"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			advertised := map[string][]string{}
			ans := answers(reply{answer: "Ada", delay: 2})
			h := newHarness(t, options{gate: gate.Standard{}, answerer: ans})
			bp := h.blueprint(interactionBlueprint)
			h.spawn(h.scenarioProfile("g", bp, askEveryStage(advertised), toolPolicy(t, bp, policySpec{unattended: tc.unattended})), 1)
			h.runToEnd("g-0")

			for stage, want := range tc.wantAdvertised {
				if got := advertised[stage]; !slices.Equal(got, want) {
					t.Errorf("stage %s advertised %q, want %q", stage, got, want)
				}
			}
			if got := h.results("g-0"); !slices.Equal(got, tc.wantResults) {
				t.Errorf("results %q, want %q", got, tc.wantResults)
			}
			var prompted []string
			for _, q := range ans.asked {
				prompted = append(prompted, strings.TrimSuffix(strings.TrimPrefix(q.Question.Text, "Who are you, in "), "?"))
			}
			if !slices.Equal(prompted, tc.wantPrompts) {
				t.Errorf("questions put to the answerer in stages %q, want %q", prompted, tc.wantPrompts)
			}
			// The stand-in answers inline: the call's result is recorded in the tick it was made.
			calls, results := h.events("tool_call", "g-0"), h.events("tool_result", "g-0")
			if len(calls) != 2 || len(results) != 2 {
				t.Fatalf("calls:%s\nresults:%s", describe(calls), describe(results))
			}
			for i, ev := range calls {
				if ev.Verdict != "allow" || ev.Layer != "default" {
					t.Errorf("call %d decided %s by %s, want allow by default", i, ev.Verdict, ev.Layer)
				}
			}
			if tc.unattended && results[0].Tick != calls[0].Tick {
				t.Errorf("the stand-in answered at tick %d, the call was made at tick %d", results[0].Tick, calls[0].Tick)
			}
		})
	}
}

// An unattended run does not wait on a stage's required question for ever: nobody answers it, so
// it is refused on the next tick and reported, like any unanswered prompt.
func TestUnattendedRequiredQuestionNobodyAnswers(t *testing.T) {
	advertised := map[string][]string{}
	h := newHarness(t, options{gate: gate.Standard{}, answerer: answers()})
	bp := h.blueprint(interactionBlueprint)
	h.spawn(h.scenarioProfile("g", bp, askEveryStage(advertised), toolPolicy(t, bp, policySpec{unattended: true})), 1)
	if stop := h.run(100); stop != ecs.FixedPoint {
		t.Fatalf("stop %v", stop)
	}
	want := []string{"ok|" + tools.UnattendedAnswer, "error|nobody can answer the question"}
	if got := h.results("g-0"); !slices.Equal(got, want) {
		t.Errorf("results %q, want %q", got, want)
	}
	if u := h.host.Hub.Unanswered(); len(u) != 1 || !strings.Contains(u[0], `ask_user_text question "Who are you, in interview?"`) {
		t.Errorf("unanswered %q, want the interview question", u)
	}
}
