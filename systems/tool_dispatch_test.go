package systems_test

import (
	"path/filepath"
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
	"github.com/warrenhq/warren/tools"
)

// toolTurnOnly brings an agent through one model turn and its tool dispatch.
func toolTurnOnly() []ecs.System {
	return []ecs.System{&systems.SyncStage{}, &systems.InferDispatch{}, &systems.ToolDispatch{}}
}

func TestToolDispatchChecksInOrder(t *testing.T) {
	const stageWithGhost = `
name = "checks"
[[stages]]
name = "work"
available_tools = ["echo_inline", "ghost"]
`
	cases := []struct {
		name        string
		gate        gate.Decider
		call        models.ScriptedCall
		wantVerdict string
		wantLayer   string
		wantReason  string // substring of the tool_call reason
		wantResult  string // substring of the result the model reads
		wantError   bool
		wantRuns    int64
	}{
		{
			name:        "tool not advertised by the stage",
			call:        models.ScriptedCall{Tool: "read_file", Args: map[string]any{"path": "notes.txt"}},
			wantVerdict: "deny", wantLayer: "visibility",
			wantReason: `tool "read_file" is not available in stage "work" (available: echo_inline, ghost)`,
			wantResult: `tool "read_file" is not available in stage "work"`,
			wantError:  true,
		},
		{
			name:        "tool advertised but not registered",
			call:        models.ScriptedCall{Tool: ghostTool, Args: map[string]any{"text": "boo"}},
			wantVerdict: "deny", wantLayer: "visibility",
			wantReason: `tool "ghost" is not registered with this host`,
			wantResult: `tool "ghost" is not registered with this host`,
			wantError:  true,
		},
		{
			name:        "arguments fail the schema",
			call:        models.ScriptedCall{Tool: "echo_inline", Args: map[string]any{"text": int64(5)}},
			wantVerdict: "deny", wantLayer: "schema",
			wantReason: `invalid arguments for tool "echo_inline": at /text:`,
			wantResult: `invalid arguments for tool "echo_inline": at /text:`,
			wantError:  true,
		},
		{
			name:        "the gate denies",
			gate:        verdictGate(policy.Deny, "test_policy", "echo is off limits"),
			call:        call("echo_inline", "hi"),
			wantVerdict: "deny", wantLayer: "test_policy",
			wantReason: "echo is off limits",
			wantResult: "permission denied for echo_inline by test_policy: echo is off limits",
			wantError:  true,
		},
		{
			name:        "a gate verdict that is not a verdict fails safe",
			gate:        verdictGate(0, "broken_policy", "forgot to decide"),
			call:        call("echo_inline", "hi"),
			wantVerdict: "Verdict(0)", wantLayer: "broken_policy",
			wantReason: "forgot to decide",
			wantResult: "permission denied for echo_inline by broken_policy",
			wantError:  true,
		},
		{
			name:        "the gate allows",
			call:        call("echo_inline", "hi"),
			wantVerdict: "allow", wantLayer: "test",
			wantReason: "the harness allows every call",
			wantResult: "echo: hi",
			wantRuns:   1,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, options{systems: toolTurnOnly(), gate: tc.gate})
			model := scripted(t, "scripted:checks", turn("trying", tc.call))
			e := h.spawn(h.profile("g", h.blueprint(stageWithGhost), model, ""), 1)[0]
			h.step()

			if got := h.phase(e); got != "ReadyToInfer" {
				t.Errorf("phase %s, want ReadyToInfer (the agent reads the result and goes on)", got)
			}
			calls := h.events("tool_call", "g-0")
			if len(calls) != 1 {
				t.Fatalf("tool_call events %+v", calls)
			}
			ev := calls[0]
			if ev.Verdict != tc.wantVerdict || ev.Layer != tc.wantLayer || !strings.Contains(ev.Reason, tc.wantReason) {
				t.Errorf("tool_call verdict %q layer %q reason %q, want %q %q containing %q", ev.Verdict, ev.Layer, ev.Reason, tc.wantVerdict, tc.wantLayer, tc.wantReason)
			}
			if ev.Tool != tc.call.Tool || ev.CallID != "g-0-t0-c0" {
				t.Errorf("tool_call names %s %s", ev.Tool, ev.CallID)
			}
			msgs := h.data(e).Conversation.Messages
			last := msgs[len(msgs)-1]
			if last.Role != models.RoleTool || last.CallID != "g-0-t0-c0" || last.IsError != tc.wantError || !strings.Contains(last.Content, tc.wantResult) {
				t.Errorf("result message %+v, want error=%v containing %q", last, tc.wantError, tc.wantResult)
			}
			results := h.events("tool_result", "g-0")
			if len(results) != 1 || results[0].OK == tc.wantError {
				t.Errorf("tool_result events %+v", results)
			}
			if runs := h.runs["echo_inline"].Load(); runs != tc.wantRuns {
				t.Errorf("echo_inline ran %d times, want %d", runs, tc.wantRuns)
			}
			c := h.counters.Get(e)
			wantErrors := uint32(0)
			if tc.wantError {
				wantErrors = 1
			}
			if c.ToolCalls != 1 || c.ToolErrors != wantErrors {
				t.Errorf("counters %+v, want 1 call and %d errors", *c, wantErrors)
			}
		})
	}
}

func TestToolDispatchAsksTheGateWithTheCall(t *testing.T) {
	type seenCall struct {
		agent      tools.AgentRef
		stage      string
		visible    bool
		registered bool
		tool       string
		args       string
	}
	var seen []seenCall
	recording := gateFunc(func(pol *gate.Policy, req *gate.Request) gate.Decision {
		seen = append(seen, seenCall{agent: req.Agent, stage: req.StageName, visible: req.Visible,
			registered: req.Handle != nil, tool: req.Tool, args: string(req.Args)})
		return gate.Decide(allowAll, req)
	})
	h := newHarness(t, options{systems: toolTurnOnly(), gate: recording})
	model := scripted(t, "scripted:gate", turn("", call("read_file", "ignored"), call("echo_inline", "{{.Name}}"), call("echo_inline", "second")))
	h.spawn(h.profile("g", h.blueprint(oneStageBlueprint), model, ""), 1)
	h.step()

	// Every call reaches the gate, which refuses read_file at visibility: the stage does not
	// offer it.
	want := []seenCall{
		{agent: tools.AgentRef{ID: 1, Name: "g-0"}, stage: "work", visible: false, registered: true, tool: "read_file", args: `{"text":"ignored"}`},
		{agent: tools.AgentRef{ID: 1, Name: "g-0"}, stage: "work", visible: true, registered: true, tool: "echo_inline", args: `{"text":"g-0"}`},
		{agent: tools.AgentRef{ID: 1, Name: "g-0"}, stage: "work", visible: true, registered: true, tool: "echo_inline", args: `{"text":"second"}`},
	}
	if !slices.Equal(seen, want) {
		t.Fatalf("gate saw\n%+v\nwant\n%+v", seen, want)
	}
	if got := h.results("g-0"); len(got) != 3 || !strings.HasPrefix(got[0], "error|") || !strings.Contains(got[0], "not available in stage") || got[1] != "ok|echo: g-0" {
		t.Errorf("results %q: want read_file refused at visibility, the echoes run", got)
	}
}

func TestInlineToolRunsInTheDispatchTick(t *testing.T) {
	h := newHarness(t, options{systems: toolTurnOnly()})
	model := scripted(t, "scripted:inline", turn("", call("echo_inline", "one"), call("echo_inline", "two")))
	e := h.spawn(h.profile("g", h.blueprint(oneStageBlueprint), model, ""), 1)[0]
	h.step()

	if got := h.phase(e); got != "ReadyToInfer" {
		t.Fatalf("phase %s, want ReadyToInfer in the same tick", got)
	}
	if n := h.host.Lanes.Tool.Pending(); n != 0 {
		t.Errorf("inline calls left %d jobs on the tool lane", n)
	}
	if runs := h.runs["echo_inline"].Load(); runs != 2 {
		t.Errorf("echo_inline ran %d times", runs)
	}
	msgs := h.data(e).Conversation.Messages
	if len(msgs) != 3 || msgs[1].Content != "echo: one" || msgs[2].Content != "echo: two" {
		t.Errorf("conversation %+v", msgs)
	}
	for _, ev := range h.events("", "g-0") {
		if ev.Tick != 0 {
			t.Errorf("%s at tick %d, want 0", ev.Kind, ev.Tick)
		}
	}
	if w := h.data(e).Work; len(w.Calls) != 0 || w.Outstanding != 0 {
		t.Errorf("the finished turn left work behind: %+v", w)
	}
}

func TestLaneToolParksTheAgent(t *testing.T) {
	h := newHarness(t, options{systems: toolTurnOnly(), latency: resources.Latency{Tool: 4}})
	model := scripted(t, "scripted:lane", turn("", call("echo_inline", "now"), call("echo", "later")))
	e := h.spawn(h.profile("g", h.blueprint(oneStageBlueprint), model, ""), 1)[0]
	h.step()

	if got := h.phase(e); got != "AwaitingTools" {
		t.Fatalf("phase %s, want AwaitingTools", got)
	}
	w := h.data(e).Work
	if w.Outstanding != 1 || len(w.Results) != 2 || w.Results[0].Content != "echo: now" {
		t.Errorf("work %+v, want the inline result filed and one call outstanding", w)
	}
	if n := h.host.Lanes.Tool.Pending(); n != 1 {
		t.Errorf("tool lane owes %d jobs, want 1", n)
	}
	if n := len(h.events("tool_result", "")); n != 0 {
		t.Errorf("%d tool results recorded before the turn finished", n)
	}
}

func TestToolErrorIsAResultAndTheAgentGoesOn(t *testing.T) {
	var views [][]models.Message
	model := inlineModel{id: "inline:fail", turn: func(_ *models.State, v *models.View) (models.Reply, error) {
		views = append(views, append([]models.Message(nil), v.Messages...))
		if v.Turn == 0 {
			return models.Reply{Text: "try", Calls: []models.ToolCall{{Name: "fail", Args: []byte(`{"text":"x"}`)}}}, nil
		}
		return models.Reply{Text: "gave up gracefully"}, nil
	}}
	h := newHarness(t, options{})
	h.spawn(h.profile("g", h.blueprint(oneStageBlueprint), model, ""), 1)
	if stop := h.run(50); stop != ecs.FixedPoint {
		t.Fatalf("stop %v", stop)
	}
	r := h.record("g-0")
	if r.Status != components.Done || r.Counters.ToolCalls != 1 || r.Counters.ToolErrors != 1 || r.Counters.ModelTurns != 2 {
		t.Errorf("record %+v, want done after 2 turns with 1 failed call", r)
	}
	res := h.events("tool_result", "g-0")
	if len(res) != 1 || res[0].OK || res[0].Content != errDiskOnFire.Error() {
		t.Errorf("tool_result %+v, want a failed result reading %q", res, errDiskOnFire)
	}
	if len(views) != 2 {
		t.Fatalf("model saw %d turns", len(views))
	}
	last := views[1][len(views[1])-1]
	if last.Role != models.RoleTool || !last.IsError || last.Content != errDiskOnFire.Error() {
		t.Errorf("second turn's last message %+v, want the error result", last)
	}
}

func TestToolPanicFailsOnlyThatAgent(t *testing.T) {
	for _, tool := range []string{"boom", "boom_lane"} {
		t.Run(tool, func(t *testing.T) {
			h := newHarness(t, options{latency: resources.Latency{Tool: 2}})
			bp := h.blueprint(oneStageBlueprint)
			h.spawn(h.profile("steady", bp, scripted(t, "scripted:steady", turn("", call("echo", "a")), turn("done")), ""), 2)
			h.spawn(h.profile("reckless", bp, scripted(t, "scripted:reckless",
				turn("", call("echo_inline", "before"), call(tool, "x"), call("echo", "after")), turn("unreachable")), ""), 2)
			if stop := h.run(50); stop != ecs.FixedPoint {
				t.Fatalf("stop %v", stop)
			}
			for _, name := range []string{"steady-0", "steady-1"} {
				if r := h.record(name); r.Status != components.Done {
					t.Errorf("%s: %v %q, want done", name, r.Status, r.Reason)
				}
			}
			want := "panic in tool " + tool + ": tool exploded"
			for _, name := range []string{"reckless-0", "reckless-1"} {
				r := h.record(name)
				if r.Status != components.Failed || r.Reason != want {
					t.Errorf("%s: %v %q, want failed %q", name, r.Status, r.Reason, want)
				}
				if r.Counters.ModelTurns != 1 || r.Counters.ToolCalls != 3 || r.Counters.ToolErrors != 1 {
					t.Errorf("%s: counters %+v, want 1 turn, 3 calls, 1 error", name, r.Counters)
				}
				results := h.events("tool_result", name)
				if len(results) != 3 || results[1].Tool != tool || results[1].OK || results[1].Content != "tool panicked" {
					t.Errorf("%s: tool results %+v", name, results)
				}
				terms := h.events("terminal", name)
				if len(terms) != 1 || terms[0].Reason != want {
					t.Errorf("%s: terminal %+v", name, terms)
				}
			}
			if runs := h.runs[tool].Load(); runs != 2 {
				t.Errorf("%s ran %d times, want 2", tool, runs)
			}
		})
	}
}

// The ExecContext of a call names the agent, the call and the turn that issued it, consistently
// with the call id ("<agent>-t<turn>-c<index>") and the model's View.Turn; its checkpoint origin
// is the agent's conversation at the dispatching position, and its intent the latest user
// message (the task).
func TestToolExecContextDescribesTheCall(t *testing.T) {
	h := newHarness(t, options{})
	model := scripted(t, "scripted:ctx",
		turn("", call("ctx_probe", "a")),
		turn("", call("echo_inline", "b"), call("ctx_probe", "c")),
		turn("done"))
	h.spawn(h.profile("g", h.blueprint(oneStageBlueprint), model, "the task"), 1)
	if stop := h.run(50); stop != ecs.FixedPoint {
		t.Fatalf("stop %v", stop)
	}
	want := []execRecord{
		// task, assistant turn 0 → two messages at dispatch.
		{CallID: "g-0-t0-c0", TurnID: 0, MessageIndex: 2},
		// + tool result, assistant turn 1 → four messages at dispatch.
		{CallID: "g-0-t1-c1", TurnID: 1, MessageIndex: 4},
	}
	if len(h.execSeen) != len(want) {
		t.Fatalf("ctx_probe ran %d times, want %d", len(h.execSeen), len(want))
	}
	for i, got := range h.execSeen {
		w := want[i]
		if got.Agent.ID != 1 || got.Agent.Name != "g-0" || got.ModelID != "scripted:ctx" || got.Tasks != h.host.Tasks {
			t.Errorf("call %d: agent %+v model %q tasks %p", i, got.Agent, got.ModelID, got.Tasks)
		}
		if got.Workdir != filepath.Join(h.root, "g", "g-0") {
			t.Errorf("call %d: workdir %q", i, got.Workdir)
		}
		if got.CallID != w.CallID || got.MessageIndex != w.MessageIndex {
			t.Errorf("call %d: id %q message index %d, want %q %d", i, got.CallID, got.MessageIndex, w.CallID, w.MessageIndex)
		}
		if got.TurnID != w.TurnID {
			t.Errorf("call %s: TurnID %d, want %d (the turn named in its call id)", got.CallID, got.TurnID, w.TurnID)
		}
		origin := tools.CheckpointOrigin{SessionID: "g-0", MessageIndex: w.MessageIndex, CallID: w.CallID, TurnID: w.TurnID}
		if got.Origin != origin || got.Intent != "the task (g-0)" || got.Context != -1 {
			t.Errorf("call %s: origin %+v intent %q context %d, want %+v, the task (g-0), -1 (no context window)", got.CallID, got.Origin, got.Intent, got.Context, origin)
		}
	}
}
