package systems_test

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/warrenhq/warren/components"
	"github.com/warrenhq/warren/ecs"
	"github.com/warrenhq/warren/gate"
	"github.com/warrenhq/warren/models"
	"github.com/warrenhq/warren/policy"
	"github.com/warrenhq/warren/resources"
	"github.com/warrenhq/warren/systems"
)

// writerBlueprint is one stage where write_file asks (its built-in default).
const writerBlueprint = `
name = "writer"

[[stages]]
name = "work"
available_tools = ["ask_user_choice", "ask_user_confirm", "ask_user_text", "read_file", "shell", "write_file"]
`

// loopBlueprint re-enters its one stage after every turn (max_iterations 1, then a transition
// to itself) until a turn makes no calls.
const loopBlueprint = `
name = "loop"

[[stages]]
name = "draft"
available_tools = ["write_file"]
max_iterations = 1
[[stages.transitions]]
on = "max_iterations"
to = "draft"
`

// pingPongBlueprint alternates between two stages after every turn until a turn makes no calls.
const pingPongBlueprint = `
name = "pingpong"
entry = "draft"

[[stages]]
name = "draft"
available_tools = ["write_file"]
max_iterations = 1
[[stages.transitions]]
on = "max_iterations"
to = "review"

[[stages]]
name = "review"
available_tools = ["write_file"]
max_iterations = 1
[[stages.transitions]]
on = "max_iterations"
to = "draft"
`

// onStage is a scripted turn that asserts the stage it runs in.
func onStage(stage string, calls ...models.ScriptedCall) models.ScriptedTurn {
	return models.ScriptedTurn{Stage: stage, Calls: calls}
}

// gateTrail lists an agent's tool_call decisions as "tool:verdict:layer".
func (h *harness) gateTrail(name string) []string {
	var out []string
	for _, ev := range h.events("tool_call", name) {
		out = append(out, ev.Tool+":"+ev.Verdict+":"+ev.Layer)
	}
	return out
}

// grantWatch is a probe that keeps, for every agent, the last grants it held: agents are reaped
// when they end, and their grants with them.
func grantWatch(h **harness, held map[string]*policy.Grants) *probe {
	return &probe{fn: func(*ecs.World) {
		for _, e := range (*h).entities() {
			d := (*h).data(e)
			held[d.Name] = d.Tools.Grants
		}
	}}
}

// runToEnd runs to a fixed point and checks the agent called name ended done.
func (h *harness) runToEnd(name string) {
	h.tb.Helper()
	if stop := h.run(200); stop != ecs.FixedPoint {
		h.tb.Fatalf("stop %v", stop)
	}
	if r := h.record(name); r.Status != components.Done {
		h.tb.Errorf("%s ended %v %q, want done", name, r.Status, r.Reason)
	}
}

func TestApproveOnceRecordsNoGrant(t *testing.T) {
	ans := answers(reply{answer: "once", delay: 1})
	var h *harness
	held := map[string]*policy.Grants{}
	h = newHarness(t, options{gate: gate.Standard{}, answerer: ans, systems: append(systems.Pipeline(), grantWatch(&h, held))})
	bp := h.blueprint(writerBlueprint)
	model := scripted(t, "scripted:once", turn("", writeCall("a.txt", "one")), turn("", writeCall("a.txt", "two")), turn("done"))
	h.spawn(h.gatedProfile("g", bp, model, policySpec{}), 1)
	h.runToEnd("g-0")

	if got, want := h.gateTrail("g-0"), []string{"write_file:ask:default", "write_file:ask:default"}; !slices.Equal(got, want) {
		t.Errorf("decisions %q, want %q: a once approval must not cover the next call", got, want)
	}
	if len(ans.asked) != 2 {
		t.Errorf("the answerer was asked %d times, want 2", len(ans.asked))
	}
	if g, seen := held["g-0"]; !seen || g != nil {
		t.Errorf("a once approval allocated grants: %+v (agent seen: %v)", g, seen)
	}
	want := []string{`ok|Wrote 3 bytes to "a.txt" (new file)`, `ok|Wrote 3 bytes to "a.txt" (replaced the previous content)`}
	if got := h.results("g-0"); !slices.Equal(got, want) {
		t.Errorf("results %q, want %q", got, want)
	}
	if content, _ := h.fileIn("g", "g-0", "a.txt"); content != "two" {
		t.Errorf("a.txt reads %q", content)
	}
}

func TestApprovalGrants(t *testing.T) {
	cases := []struct {
		name      string
		blueprint string
		turns     []models.ScriptedTurn
		replies   []reply
		wantTrail []string
		wantAsked int
	}{
		{
			name:      "a stage grant covers the next call in the same stage",
			blueprint: writerBlueprint,
			turns:     []models.ScriptedTurn{turn("", writeCall("a.txt", "1")), turn("", writeCall("a.txt", "2")), turn("done")},
			replies:   []reply{{answer: "stage", delay: 1}},
			wantTrail: []string{"write_file:ask:default", "write_file:allow:grant:stage"},
			wantAsked: 1,
		},
		{
			name:      "a stage grant survives re-entering the same stage",
			blueprint: loopBlueprint,
			turns: []models.ScriptedTurn{
				onStage("draft", writeCall("a.txt", "1")), onStage("draft", writeCall("a.txt", "2")), onStage("draft"),
			},
			replies:   []reply{{answer: "stage", delay: 1}},
			wantTrail: []string{"write_file:ask:default", "write_file:allow:grant:stage"},
			wantAsked: 1,
		},
		{
			name:      "a stage grant is dropped by moving to another stage",
			blueprint: pingPongBlueprint,
			turns: []models.ScriptedTurn{
				onStage("draft", writeCall("a.txt", "1")), onStage("review", writeCall("a.txt", "2")),
				onStage("draft", writeCall("a.txt", "3")), onStage("review"),
			},
			replies:   []reply{{answer: "stage", delay: 1}, {answer: "once", delay: 1}},
			wantTrail: []string{"write_file:ask:default", "write_file:ask:default", "write_file:ask:default"},
			wantAsked: 3,
		},
		{
			name:      "a run grant covers every later call in every stage",
			blueprint: pingPongBlueprint,
			turns: []models.ScriptedTurn{
				onStage("draft", writeCall("a.txt", "1")), onStage("review", writeCall("a.txt", "2")),
				onStage("draft", writeCall("a.txt", "3")), onStage("review"),
			},
			replies:   []reply{{answer: "run", delay: 1}},
			wantTrail: []string{"write_file:ask:default", "write_file:allow:grant:run", "write_file:allow:grant:run"},
			wantAsked: 1,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ans := answers(tc.replies...)
			h := newHarness(t, options{gate: gate.Standard{}, answerer: ans})
			bp := h.blueprint(tc.blueprint)
			h.spawn(h.gatedProfile("g", bp, scripted(t, "scripted:grants", tc.turns...), policySpec{}), 1)
			h.runToEnd("g-0")
			if got := h.gateTrail("g-0"); !slices.Equal(got, tc.wantTrail) {
				t.Errorf("decisions %q, want %q", got, tc.wantTrail)
			}
			if len(ans.asked) != tc.wantAsked {
				t.Errorf("the answerer was asked %d times, want %d", len(ans.asked), tc.wantAsked)
			}
			for _, r := range h.results("g-0") {
				if !strings.HasPrefix(r, "ok|") {
					t.Errorf("result %q, want every write to run", r)
				}
			}
		})
	}
}

func TestDenyAnswerRefusesTheCall(t *testing.T) {
	var h *harness
	held := map[string]*policy.Grants{}
	h = newHarness(t, options{gate: gate.Standard{}, answerer: answers(reply{answer: "deny", delay: 1}),
		systems: append(systems.Pipeline(), grantWatch(&h, held))})
	bp := h.blueprint(writerBlueprint)
	h.spawn(h.gatedProfile("g", bp, scripted(t, "scripted:deny", turn("", writeCall("a.txt", "x")), turn("done")), policySpec{}), 1)
	h.runToEnd("g-0")
	want := []string{`error|permission denied for write_file: the prompt was answered "deny"`}
	if got := h.results("g-0"); !slices.Equal(got, want) {
		t.Errorf("results %q, want %q", got, want)
	}
	if _, exists := h.fileIn("g", "g-0", "a.txt"); exists {
		t.Error("a denied write_file wrote its file")
	}
	if g, seen := held["g-0"]; !seen || g != nil {
		t.Errorf("a deny answer allocated grants: %+v (agent seen: %v)", g, seen)
	}
	if r := h.record("g-0"); r.Counters.ToolCalls != 1 || r.Counters.ToolErrors != 1 {
		t.Errorf("counters %+v, want 1 call and 1 error", r.Counters)
	}
}

// An agent on a prompt is parked: waiting while the prompt is open, active again once it is
// settled, and the scheduler skips the ticks in between.
func TestPromptDelayAndDeadline(t *testing.T) {
	cases := []struct {
		name       string
		delay      uint64
		timeout    uint64
		wantTick   uint64 // when the prompt is settled
		wantBy     string
		wantAnswer string
		wantResult string
	}{
		{name: "answered after its delay", delay: 4, timeout: 10, wantTick: 4, wantBy: "script", wantAnswer: "once",
			wantResult: `ok|Wrote 1 bytes to "a.txt" (new file)`},
		{name: "answered the tick before its deadline", delay: 2, timeout: 3, wantTick: 2, wantBy: "script", wantAnswer: "once",
			wantResult: `ok|Wrote 1 bytes to "a.txt" (new file)`},
		{name: "an answer due at the deadline is too late", delay: 3, timeout: 3, wantTick: 3, wantBy: "timeout", wantAnswer: "deny",
			wantResult: "error|permission denied for write_file: nobody answered the prompt before its deadline (tick 3)"},
		{name: "an answer due after the deadline is too late", delay: 50, timeout: 3, wantTick: 3, wantBy: "timeout", wantAnswer: "deny",
			wantResult: "error|permission denied for write_file: nobody answered the prompt before its deadline (tick 3)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			type seen struct {
				tick   uint64
				status components.StatusKind
				open   int
			}
			var ticks []seen
			var h *harness
			watch := &probe{fn: func(w *ecs.World) {
				for _, e := range h.entities() {
					ticks = append(ticks, seen{w.Tick(), h.status.Get(e).Kind, h.host.Hub.Open()})
				}
			}}
			h = newHarness(t, options{gate: gate.Standard{}, answerer: answers(reply{answer: "once", delay: tc.delay}),
				systems: append(systems.Pipeline(), watch)})
			bp := h.blueprint(writerBlueprint)
			h.spawn(h.gatedProfile("g", bp, scripted(t, "scripted:delay", turn("", writeCall("a.txt", "x")), turn("done")), policySpec{timeout: tc.timeout}), 1)
			h.runToEnd("g-0")

			prompts := h.events("prompt", "g-0")
			if len(prompts) != 1 || prompts[0].Tick != 0 || prompts[0].Deadline != tc.timeout {
				t.Errorf("prompts:%s\nwant one at tick 0 with deadline %d", describe(prompts), tc.timeout)
			}
			settled := h.events("answer", "g-0")
			if len(settled) != 1 || settled[0].Tick != tc.wantTick || settled[0].By != tc.wantBy || settled[0].Answer != tc.wantAnswer {
				t.Errorf("answers:%s\nwant %q by %s at tick %d", describe(settled), tc.wantAnswer, tc.wantBy, tc.wantTick)
			}
			if got := h.results("g-0"); len(got) != 1 || got[0] != tc.wantResult {
				t.Errorf("results %q, want %q", got, tc.wantResult)
			}
			// Ticks 0 (the call) and 1 (nothing due yet) run; then the clock jumps to the settling
			// tick.
			want := []seen{{0, components.Waiting, 1}, {1, components.Waiting, 1}, {tc.wantTick, components.Active, 0}}
			if len(ticks) < len(want) || !slices.Equal(ticks[:len(want)], want) {
				t.Errorf("ticks seen %+v, want them to begin %+v", ticks, want)
			}
		})
	}
}

func TestUnansweredPromptIsRefusedNextTick(t *testing.T) {
	h := newHarness(t, options{gate: gate.Standard{}, answerer: answers()})
	bp := h.blueprint(writerBlueprint)
	h.spawn(h.gatedProfile("g", bp, scripted(t, "scripted:unanswered", turn("", shellCall("make build")), turn("done")), policySpec{timeout: 50}), 1)
	h.runToEnd("g-0")

	settled := h.events("answer", "g-0")
	if len(settled) != 1 || settled[0].Tick != 1 || settled[0].By != "unanswered" || settled[0].Answer != "deny" || settled[0].Verdict != "deny" {
		t.Errorf("answers:%s\nwant a deny by unanswered at tick 1", describe(settled))
	}
	want := []string{"error|permission denied for shell: nothing can answer the prompt"}
	if got := h.results("g-0"); !slices.Equal(got, want) {
		t.Errorf("results %q, want %q", got, want)
	}
	failures := h.host.Hub.Unanswered()
	if len(failures) != 1 {
		t.Fatalf("unanswered %q, want one", failures)
	}
	for _, part := range []string{"agent g-0", "shell", "keys shell:make build", "at tick 0"} {
		if !strings.Contains(failures[0], part) {
			t.Errorf("unanswered %q does not name %q", failures[0], part)
		}
	}
}

// Ten thousand agents parked on prompts due far in the future cost nothing per tick: the
// scheduler runs the tick that parks them and the next, then jumps straight to the due tick.
func TestParkedAgentsAreNotVisited(t *testing.T) {
	const agents = 10_000
	const due = 1_000_000
	var ticks []uint64
	decided := 0
	counting := gateFunc(func(pol *gate.Policy, req *gate.Request) gate.Decision {
		decided++
		return gate.Decide(pol, req)
	})
	watch := &probe{fn: func(w *ecs.World) { ticks = append(ticks, w.Tick()) }}
	h := newHarness(t, options{gate: counting, answerer: answers(reply{answer: "deny", delay: due}), noTrace: true,
		systems: append(systems.Pipeline(), watch), initialCapacity: agents})
	bp := h.blueprint(writerBlueprint)
	h.spawn(h.gatedProfile("g", bp, scripted(t, "scripted:parked", turn("", writeCall("a.txt", "x")), turn("done")), policySpec{timeout: 2 * due}), agents)

	h.step()
	if n := h.host.Hub.Open(); n != agents {
		t.Fatalf("%d prompts open, want %d", n, agents)
	}
	if next, ok := h.host.Hub.NextDue(); !ok || next != due {
		t.Fatalf("hub next due %d %v, want %d", next, ok, due)
	}
	ticks = nil
	if stop := h.run(0); stop != ecs.FixedPoint {
		t.Fatalf("stop %v", stop)
	}
	// Run starts where Step left the clock: tick 0 again, where nothing is due, so the clock
	// jumps straight to the due tick; what follows is the agents finishing.
	if len(ticks) < 2 || ticks[0] != 0 || ticks[1] != due || len(ticks) > 5 {
		t.Errorf("ticks run %v, want 0, then %d, then a few more", ticks, due)
	}
	if decided != agents {
		t.Errorf("the gate decided %d calls, want %d (one per agent)", decided, agents)
	}
	if h.host.Hub.Open() != 0 || len(h.host.Records.All()) != agents {
		t.Errorf("%d prompts open, %d agents finished", h.host.Hub.Open(), len(h.host.Records.All()))
	}
}

// An approved call on a lane tool runs on the lane after the answer; the turn finishes only when
// its result arrives, however long the other calls of the turn take.
func TestApprovedLaneCallFinishesTheTurnWhenItsResultArrives(t *testing.T) {
	type seen struct {
		phase       string
		outstanding int32
	}
	at := map[uint64]seen{}
	var h *harness
	watch := &probe{fn: func(w *ecs.World) {
		for _, e := range h.entities() {
			at[w.Tick()] = seen{h.phase(e), h.data(e).Work.Outstanding}
		}
	}}
	h = newHarness(t, options{gate: gate.Standard{}, answerer: answers(reply{answer: "once", delay: 2}),
		latency: resources.Latency{Tool: 3}, systems: append(systems.Pipeline(), watch)})
	h.putFile("g", "g-0", "notes.txt", "notes")
	bp := h.blueprint(writerBlueprint)
	h.spawn(h.gatedProfile("g", bp, scripted(t, "scripted:lane", turn("", writeCall("a.txt", "x"), readCall("notes.txt")), turn("done")), policySpec{}), 1)
	h.runToEnd("g-0")

	// Tick 0: the write waits on its prompt, the read runs on the lane (due at 3). Tick 2: the
	// write is approved and starts on the lane (due at 5). Tick 3: the read is back. Tick 5: the
	// write is back and the turn finishes.
	for tick, want := range map[uint64]seen{0: {"AwaitingTools", 2}, 2: {"AwaitingTools", 2}, 3: {"AwaitingTools", 1}, 5: {"ReadyToInfer", 0}} {
		if got, ok := at[tick]; !ok || got != want {
			t.Errorf("tick %d: %+v (seen %v), want %+v", tick, got, ok, want)
		}
	}
	for _, ev := range h.events("tool_result", "g-0") {
		if ev.Tick != 5 || !ev.OK {
			t.Errorf("tool_result %s at tick %d ok=%v, want both at tick 5", ev.Tool, ev.Tick, ev.OK)
		}
	}
	if turns := h.events("model_turn", "g-0"); len(turns) != 2 || turns[1].Tick != 6 {
		t.Errorf("model turns:%s\nwant the second at tick 6", describe(turns))
	}
	if content, _ := h.fileIn("g", "g-0", "a.txt"); content != "x" {
		t.Errorf("a.txt reads %q", content)
	}
}

func TestQuestions(t *testing.T) {
	cases := []struct {
		name       string
		call       models.ScriptedCall
		replies    []reply
		timeout    uint64
		wantResult string
		wantBy     string
		wantAnswer string
	}{
		{name: "a valid choice", call: askChoice("Which colour?", "red", "blue"), replies: []reply{{answer: "blue", delay: 1}},
			wantResult: "ok|The user chose: blue", wantBy: "script", wantAnswer: "blue"},
		{name: "an answer that is not a choice", call: askChoice("Which colour?", "red", "blue"), replies: []reply{{answer: "purple", delay: 1}},
			wantResult: `error|invalid answer: "purple" is not one of the choices ("red", "blue")`, wantBy: "script", wantAnswer: "purple"},
		{name: "a text answer", call: askText("Name?"), replies: []reply{{answer: "Ada", delay: 1}},
			wantResult: "ok|The user answered: Ada", wantBy: "script", wantAnswer: "Ada"},
		{name: "a confirmation", call: models.ScriptedCall{Tool: "ask_user_confirm", Args: map[string]any{"question": "Go?"}}, replies: []reply{{answer: "Y", delay: 1}},
			wantResult: "ok|The user answered yes.", wantBy: "script", wantAnswer: "Y"},
		{name: "an unanswered question", call: askText("Name?"),
			wantResult: "error|nobody can answer the question", wantBy: "unanswered"},
		{name: "a question past its deadline", call: askText("Name?"), replies: []reply{{answer: "Ada", delay: 9}}, timeout: 4,
			wantResult: "error|nobody answered the question before its deadline", wantBy: "timeout"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ans := answers(tc.replies...)
			h := newHarness(t, options{gate: gate.Standard{}, answerer: ans})
			bp := h.blueprint(writerBlueprint)
			h.spawn(h.gatedProfile("g", bp, scripted(t, "scripted:ask", turn("", tc.call), turn("done")), policySpec{timeout: tc.timeout}), 1)
			h.runToEnd("g-0")
			if got := h.results("g-0"); len(got) != 1 || !strings.HasPrefix(got[0], tc.wantResult) {
				t.Errorf("results %q, want one starting %q", got, tc.wantResult)
			}
			// The gate allowed the call (interaction tools are allowed by default); the question is
			// the prompt.
			if got, want := h.gateTrail("g-0"), []string{tc.call.Tool + ":allow:default"}; !slices.Equal(got, want) {
				t.Errorf("decisions %q, want %q", got, want)
			}
			settled := h.events("answer", "g-0")
			if len(settled) != 1 || settled[0].By != tc.wantBy || settled[0].Answer != tc.wantAnswer {
				t.Errorf("answers:%s\nwant %q by %s", describe(settled), tc.wantAnswer, tc.wantBy)
			}
			if len(ans.asked) != 1 || ans.asked[0].Kind != gate.PromptQuestion || ans.asked[0].Tool != tc.call.Tool ||
				ans.asked[0].Question.Text != tc.call.Args["question"] || ans.asked[0].Question.Agent.Name != "g-0" {
				t.Errorf("the answerer was asked %+v", ans.asked)
			}
		})
	}
}

// The trace records each prompt and its answer with every field a reader needs.
func TestPromptAndAnswerEvents(t *testing.T) {
	ans := answers(reply{answer: "stage", delay: 2}, reply{answer: "green", delay: 3})
	var h *harness
	held := map[string]*policy.Grants{}
	h = newHarness(t, options{gate: gate.Standard{}, answerer: ans, systems: append(systems.Pipeline(), grantWatch(&h, held))})
	bp := h.blueprint(writerBlueprint)
	h.spawn(h.gatedProfile("team", bp, scripted(t, "scripted:events",
		turn("", shellCall("make build > log.txt"), askChoice("Colour?", "green", "red")), turn("done")), policySpec{timeout: 7}), 1)
	h.runToEnd("team-0")

	var got []string
	for _, ev := range h.events("", "team-0") {
		switch ev.Kind {
		case "prompt":
			got = append(got, fmt.Sprintf("%d prompt %s %s %s keys=%v text=%q deadline=%d", ev.Tick, ev.CallID, ev.Tool, ev.Prompt, ev.Keys, ev.Text, ev.Deadline))
		case "answer":
			got = append(got, fmt.Sprintf("%d answer %s %s answer=%q by=%s verdict=%s", ev.Tick, ev.CallID, ev.Tool, ev.Answer, ev.By, ev.Verdict))
		}
	}
	want := []string{
		`0 prompt team-0-t0-c0 shell approval keys=[shell:>log.txt shell:make build] text="" deadline=7`,
		`0 prompt team-0-t0-c1 ask_user_choice question keys=[ask_user_choice] text="Colour?" deadline=7`,
		`2 answer team-0-t0-c0 shell answer="stage" by=script verdict=allow`,
		`3 answer team-0-t0-c1 ask_user_choice answer="green" by=script verdict=allow`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("prompt and answer events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(ans.asked) != 2 || ans.asked[0].Agent != "team-0" || ans.asked[0].Group != "team" || ans.asked[0].Kind != gate.PromptApproval ||
		!slices.Equal(ans.asked[0].Keys, []string{"shell:>log.txt", "shell:make build"}) {
		t.Errorf("the answerer was asked %+v", ans.asked)
	}
	// The stage answer granted both keys of the line.
	g := held["team-0"]
	for _, k := range []string{"shell:>log.txt", "shell:make build"} {
		if scope, ok := g.Covers(k); !ok || scope != policy.ScopeStage {
			t.Errorf("grant for %s: %v %v, want a stage grant", k, scope, ok)
		}
	}
}

// Two runs of the same world, with prompts, questions, grants, timeouts and lane tools over many
// agents, write byte-identical traces.
func TestInteractionIsDeterministic(t *testing.T) {
	run := func() []byte {
		ans := answers(reply{answer: "stage", delay: 3}, reply{answer: "deny", delay: 1}, reply{answer: "blue", delay: 2},
			reply{answer: "once", delay: 5}, reply{answer: "run", delay: 40}, reply{answer: "red", delay: 1})
		h := newHarness(t, options{gate: gate.Standard{}, answerer: ans, latency: resources.Latency{Tool: 2, PerTool: map[string]uint64{"read_file": 4}}})
		bp := h.blueprint(writerBlueprint)
		for _, group := range []string{"alpha", "beta", "gamma"} {
			model := scripted(t, "scripted:"+group,
				turn("", writeCall("{{.Name}}.txt", "x"), askChoice("Colour?", "red", "blue"), shellCall("git push")),
				turn("", writeCall("{{.Name}}-2.txt", "y"), readCall("{{.Name}}.txt"), shellCall("ls && git push")),
				turn("done"))
			h.spawn(h.gatedProfile(group, bp, model, policySpec{timeout: 20}), 4)
		}
		if stop := h.run(500); stop != ecs.FixedPoint {
			t.Fatalf("stop %v", stop)
		}
		if len(h.events("prompt", "")) == 0 || len(h.events("answer", "")) == 0 {
			t.Fatal("the run opened no prompts")
		}
		return bytes.Clone(h.traceBytes())
	}
	first, second := run(), run()
	if !bytes.Equal(first, second) {
		t.Errorf("traces differ: %s", firstDifference(first, second))
	}
}
