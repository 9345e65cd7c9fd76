package otelgenai

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/warrenhq/warren"
	"github.com/warrenhq/warren/trace"
)

// examples is where the shipped example scenarios are, from this package's folder.
var examples = filepath.Join("..", "scenarios", "examples")

// runExample runs a shipped example through the root package, as host run does, with the
// exporter's Tap on its events, and returns the trace it wrote.
func runExample(t *testing.T, x *Exporter, file string, agents int) []byte {
	t.Helper()
	sc, err := warren.Load(filepath.Join(examples, file))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	opt := warren.Options{Agents: agents, Trace: &buf, Events: x.Tap("", sc.Name, nil)}
	if _, err := warren.Run(context.Background(), sc, opt); err != nil {
		t.Fatalf("run %s: %v", file, err)
	}
	return buf.Bytes()
}

// runReplay replays a shipped recording offline, the way host replay does, with the exporter's
// Writer as the run's trace: a live model's turns, with the tokens its provider reported.
func runReplay(t *testing.T, x *Exporter, rec string) []byte {
	t.Helper()
	tape, err := warren.ReadRecording(filepath.Join(examples, rec))
	if err != nil {
		t.Fatal(err)
	}
	sc, opt, err := warren.LoadReplay(tape, "")
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	opt.Trace = x.Writer("replay-1", &buf)
	if _, err := warren.Run(context.Background(), sc, opt); err != nil {
		t.Fatalf("replay %s: %v", rec, err)
	}
	return buf.Bytes()
}

// writeTrace writes a small trace by hand with the real trace writer, through the exporter's
// Writer: every field of a live turn (cache tokens, a cut context), a call a person denied, a
// failed model turn, a failed agent and a failed run, which no shipped example has together.
// With end false it stops before the end event, as the trace of a host that died does.
func writeTrace(t *testing.T, x *Exporter, end bool) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := trace.NewWriter(x.Writer("run-7", &buf), trace.Header{Scenario: "by-hand", ScenarioHash: "sha256:00", Clock: trace.ClockVirtual, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	a := trace.AgentRef{ID: 1, Name: "writer-0"}
	b := trace.AgentRef{ID: 2, Name: "writer-0/1"}
	model := "anthropic:claude"
	w.Spawn(0, a, "writers", 0, "writer", model, "write the secret plan for project nightingale")
	w.StageEnter(0, a, "draft", 1)
	w.ModelTurn(1, a, "draft", model, 0, "here is the confidential draft", 2, "",
		&trace.LiveTurn{Pool: "main", Attempts: 2, Prompt: 1200, Completion: 80, CacheRead: 900, CacheWrite: 120, Cost: 4_500_000, Dropped: 3})
	w.ToolCall(1, a, "draft", "call-1", "write_file", json.RawMessage(`{"path":"plan.md","content":"launch codes 0000"}`),
		[]string{"write_file(plan.md)"}, "ask", "default", "write_file asks by default")
	w.Prompt(1, a, "draft", "call-1", "write_file", "approval", []string{"write_file(plan.md)"}, "", 31)
	w.Answer(2, a, "draft", "call-1", "write_file", "deny", "script", "deny")
	w.ToolCall(1, a, "draft", "call-2", "spawn_agent", json.RawMessage(`{"task":"review the nightingale plan"}`),
		[]string{"spawn_agent"}, "allow", "default", "spawn_agent is allowed by default")
	w.ToolCall(1, a, "draft", "call-3", "write_file", json.RawMessage(`{"path":"notes.md","content":"meeting at dawn"}`),
		[]string{"write_file(notes.md)"}, "ask", "default", "write_file asks by default")
	w.Prompt(1, a, "draft", "call-3", "write_file", "approval", []string{"write_file(notes.md)"}, "", 31)
	w.Answer(2, a, "draft", "call-3", "write_file", "once", "person:mallory", "allow")
	w.ToolResult(2, a, "draft", "call-3", "write_file", true, "wrote 15 bytes to notes.md")
	w.SpawnChild(2, b, "writers", 0, "writer", "openai:gpt", "review the nightingale plan", a, "call-2", 1, false, -1)
	w.StageEnter(2, b, "draft", 1)
	w.ToolResult(2, a, "draft", "call-1", "write_file", false, "permission denied for write_file")
	w.ModelTurn(3, b, "draft", "openai:gpt", 0, "a review answer", 0, "", &trace.LiveTurn{Pool: "main", Attempts: 1, Prompt: 50, Completion: 10})
	if !end {
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	w.ToolResult(3, a, "draft", "call-2", "spawn_agent", true, "spawned writer-0/1")
	w.ModelTurn(4, a, "draft", model, 1, "", 0, "401: invalid key sk-ant-0123456789", &trace.LiveTurn{Pool: "main", Attempts: 1})
	w.Terminal(4, a, "failed", "model error: 401: invalid key sk-ant-0123456789", "draft")
	w.Reap(4, a, "failed", 2, 2, 1, &trace.Spent{Tokens: 1280})
	w.End(4, trace.RunFailed, 5, 2, 3, 2, 1, nil)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestSpansMatchTrace runs shipped examples (and two traces written by hand) with spans exported
// to a real OTLP/HTTP receiver on loopback, and checks every span against the trace's own events:
// one workflow span per run, one agent span per spawn under the run's (a sub-agent's under its
// parent's), one chat span per model_turn and one execute_tool span per tool_call under their
// agent's, each with the GenAI attributes the events give (model, tokens, tool, call id) and
// Warren's (stage, ticks, verdict); no content of the trace in any span; every attribute declared
// in the package's table (which the docs are checked against), and every declared attribute set
// by one of the runs.
func TestSpansMatchTrace(t *testing.T) {
	cases := []struct {
		name string
		run  func(t *testing.T, x *Exporter) []byte
	}{
		{"quickstart", func(t *testing.T, x *Exporter) []byte { return runExample(t, x, "quickstart.toml", 12) }},
		{"gated", func(t *testing.T, x *Exporter) []byte { return runExample(t, x, "gated.toml", 0) }},
		{"on_error", func(t *testing.T, x *Exporter) []byte { return runExample(t, x, "on_error.toml", 0) }},
		{"bad_calls", func(t *testing.T, x *Exporter) []byte { return runExample(t, x, "bad_calls.toml", 0) }},
		{"kill_tree", func(t *testing.T, x *Exporter) []byte { return runExample(t, x, "kill_tree.toml", 0) }},
		{"live replay", func(t *testing.T, x *Exporter) []byte { return runReplay(t, x, "live.rec") }},
		{"by hand", func(t *testing.T, x *Exporter) []byte { return writeTrace(t, x, true) }},
		{"by hand, no end event", func(t *testing.T, x *Exporter) []byte { return writeTrace(t, x, false) }},
	}
	seen := map[string]bool{} // op + " " + key
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rc := newReceiver(t, 200)
			rc.point(t)
			x := newTestExporter(t, nil)
			data := tc.run(t, x)
			closeExporter(t, x)
			checkSpans(t, data, rc.received(), seen)
		})
	}
	if t.Failed() {
		return
	}
	for _, d := range attributeDocs {
		for _, op := range d.ops {
			if !seen[op+" "+string(d.key)] {
				t.Errorf("%s is declared for %s spans, and no run's %s span had it", d.key, op, op)
			}
		}
	}
}

// event is one trace event, its numbers as int64.
type event map[string]any

func (e event) str(k string) string { s, _ := e[k].(string); return s }
func (e event) num(k string) int64 {
	n, ok := e[k].(json.Number)
	if !ok {
		return -1
	}
	v, _ := n.Int64()
	return v
}
func (e event) has(k string) bool { _, ok := e[k]; return ok }

// callKey and turnKey find a call's and a turn's span: (agent, call id) and (agent, tick): an
// agent makes at most one model turn a tick.
type callKey struct {
	agent int64
	id    string
}
type turnKey struct{ agent, tick int64 }

// checkSpans checks the spans one run exported against its trace, and notes in seen which
// attribute each operation's spans had.
func checkSpans(t *testing.T, data []byte, spans []span, seen map[string]bool) {
	t.Helper()
	ls := lines(data)
	var header event
	if err := json.Unmarshal(ls[0], &header); err != nil {
		t.Fatal(err)
	}
	var evs []event
	for _, l := range ls[1:] {
		d := json.NewDecoder(bytes.NewReader(l))
		d.UseNumber()
		var e event
		if err := d.Decode(&e); err != nil {
			t.Fatalf("trace line %s: %v", l, err)
		}
		evs = append(evs, e)
	}
	ops := byOp(spans)
	if n := len(spans) - len(ops[opWorkflow]) - len(ops[opAgent]) - len(ops[opChat]) - len(ops[opTool]); n != 0 {
		t.Errorf("%d spans of no known operation", n)
	}

	// The run.
	if len(ops[opWorkflow]) != 1 {
		t.Fatalf("%d workflow spans, want 1", len(ops[opWorkflow]))
	}
	run := ops[opWorkflow][0]
	scenario := header["scenario"].(string)
	if run.name != opWorkflow+" "+scenario || run.str("gen_ai.workflow.name") != scenario || run.parent != "" {
		t.Errorf("run span %q (workflow %q, parent %q), want %q at the root", run.name, run.str("gen_ai.workflow.name"), run.parent, opWorkflow+" "+scenario)
	}
	for _, s := range spans {
		if s.traceID != run.traceID {
			t.Errorf("span %q is in trace %s, not the run's %s", s.name, s.traceID, run.traceID)
		}
		if s.service != "warren" || s.scope != ScopeName || s.scopeSchema != schemaURL || s.scopeVersion == "" {
			t.Errorf("span %q: service %q, scope %q %q (schema %q)", s.name, s.service, s.scope, s.scopeVersion, s.scopeSchema)
		}
		if s.start == 0 || s.end < s.start {
			t.Errorf("span %q runs from %d to %d", s.name, s.start, s.end)
		}
	}
	last := evs[len(evs)-1]
	ended := last.str("kind") == trace.KindEnd
	if ended {
		for attr, field := range map[string]string{"warren.run.agents": "agents", "warren.run.model_turns": "model_turns",
			"warren.run.tool_calls": "tool_calls", "warren.run.tool_errors": "tool_errors", "warren.tick.end": "tick"} {
			if got, want := run.num(attr), last.num(field); got != want {
				t.Errorf("run span %s = %d, the end event's %s is %d", attr, got, field, want)
			}
		}
		if run.str("warren.run.status") != last.str("status") {
			t.Errorf("run span status %q, the end event's %q", run.str("warren.run.status"), last.str("status"))
		}
		if (last.str("status") == trace.RunFailed) != (run.status == tracepb.Status_STATUS_CODE_ERROR) {
			t.Errorf("run status %q, span status %v", last.str("status"), run.status)
		}
	} else if run.str("error.type") != errUnfinished || run.status != tracepb.Status_STATUS_CODE_ERROR {
		t.Errorf("a run without its end event: error.type %q, status %v", run.str("error.type"), run.status)
	}

	// The names a span may carry: a result or message that is only a name (an agent's, a
	// tool's, a stage's) is no content to hide.
	names := map[string]bool{}
	for _, e := range evs {
		for _, f := range []string{"name", "tool", "stage", "model", "call_id", "group", "blueprint"} {
			names[e.str(f)] = true
		}
	}

	// The agents.
	agentSpans := map[int64]span{}
	for _, s := range ops[opAgent] {
		id, err := strconv.ParseInt(s.str("gen_ai.agent.id"), 10, 64)
		if err != nil {
			t.Errorf("agent span %q: gen_ai.agent.id %q", s.name, s.str("gen_ai.agent.id"))
		}
		if _, dup := agentSpans[id]; dup {
			t.Errorf("two spans for agent %d", id)
		}
		agentSpans[id] = s
	}
	spawns, reaps := 0, map[int64]event{}
	for _, e := range evs {
		if e.str("kind") == trace.KindReap {
			reaps[e.num("agent")] = e
		}
	}
	for _, e := range evs {
		if e.str("kind") != trace.KindSpawn {
			continue
		}
		spawns++
		id := e.num("agent")
		s, ok := agentSpans[id]
		if !ok {
			t.Errorf("no span for agent %d %s", id, e.str("name"))
			continue
		}
		parent := run
		if e.has("parent") {
			parent = agentSpans[e.num("parent")]
		}
		provider, _ := providerOf(e.str("model"))
		if s.name != opAgent+" "+e.str("name") || s.parent != parent.id || s.str("gen_ai.agent.name") != e.str("name") ||
			s.str("gen_ai.request.model") != e.str("model") || s.str("gen_ai.provider.name") != provider ||
			s.str("warren.agent.group") != e.str("group") || s.str("warren.agent.blueprint") != e.str("blueprint") ||
			s.num("warren.tick.start") != e.num("tick") || s.num("warren.agent.depth") != max(e.num("depth"), 0) {
			t.Errorf("agent %d: span %q under %s, attributes %v; want it under %q, from %v", id, s.name, s.parent, s.attrs, parent.name, e)
		}
		// A sub-agent may outlive its parent (a detached one, or one a kill cascade reaps after
		// it), as OpenTelemetry allows a child span to; no agent outlives the run.
		if s.start < parent.start || s.end > run.end {
			t.Errorf("agent span %q [%d, %d] starts before its parent %q [%d, …] or ends after the run [… %d]", s.name, s.start, s.end, parent.name, parent.start, run.end)
		}
		switch r, reaped := reaps[id]; {
		case reaped:
			if s.str("warren.agent.status") != r.str("status") || s.num("warren.agent.model_turns") != r.num("model_turns") ||
				s.num("warren.agent.tool_calls") != r.num("tool_calls") || s.num("warren.tick.end") != r.num("tick") {
				t.Errorf("agent %d: span %v, reap %v", id, s.attrs, r)
			}
			if (r.str("status") == "failed") != (s.status == tracepb.Status_STATUS_CODE_ERROR) {
				t.Errorf("agent %d ended %s, span status %v", id, r.str("status"), s.status)
			}
		case ended:
			if st := s.str("warren.agent.status"); st == "" || s.num("warren.tick.end") != last.num("tick") {
				t.Errorf("agent %d alive at the end: status %q, tick.end %d", id, st, s.num("warren.tick.end"))
			}
		default:
			if s.str("warren.agent.status") != "running" {
				t.Errorf("agent %d of an unfinished run: status %q, want running", id, s.str("warren.agent.status"))
			}
		}
	}
	if len(ops[opAgent]) != spawns {
		t.Errorf("%d agent spans, %d spawn events", len(ops[opAgent]), spawns)
	}

	// The model turns: a chat span per model_turn, from the agent's last ready mark.
	chats := map[turnKey]span{}
	for _, s := range ops[opChat] {
		chats[turnKey{s.num("warren.agent.id"), s.num("warren.tick.end")}] = s
	}
	mark := map[int64]int64{}
	turns := 0
	for _, e := range evs {
		id := e.num("agent")
		switch e.str("kind") {
		case trace.KindSpawn, trace.KindStageEnter, trace.KindToolResult:
			mark[id] = e.num("tick")
			continue
		case trace.KindModelTurn:
		default:
			continue
		}
		turns++
		s, ok := chats[turnKey{id, e.num("tick")}]
		if !ok {
			t.Errorf("no chat span for %s's model turn at tick %d", e.str("name"), e.num("tick"))
			continue
		}
		provider, live := providerOf(e.str("model"))
		want := map[string]any{"gen_ai.request.model": e.str("model"), "gen_ai.provider.name": provider,
			"warren.agent.name": e.str("name"), "warren.stage": e.str("stage"), "warren.iteration": e.num("iteration"),
			"warren.tick.start": mark[id]}
		for field, attr := range map[string]string{"prompt_tokens": "gen_ai.usage.input_tokens", "completion_tokens": "gen_ai.usage.output_tokens",
			"cache_read_tokens": "gen_ai.usage.cache_read.input_tokens", "cache_write_tokens": "gen_ai.usage.cache_creation.input_tokens",
			"attempts": "warren.attempts", "context_dropped": "warren.context_dropped"} {
			if e.has(field) {
				want[attr] = e.num(field)
			} else if _, ok := s.attrs[attr]; ok {
				t.Errorf("chat span at tick %d has %s, the event has no %s", e.num("tick"), attr, field)
			}
		}
		if e.has("pool") {
			want["warren.pool"] = e.str("pool")
		}
		if e.has("cost_usd") {
			want["warren.cost_usd"] = e.str("cost_usd")
		}
		if e.has("error") {
			want["error.type"] = errModel
		}
		for k, v := range want {
			if fmt.Sprint(s.attrs[k]) != fmt.Sprint(v) {
				t.Errorf("chat span of %s at tick %d: %s = %v, want %v", e.str("name"), e.num("tick"), k, s.attrs[k], v)
			}
		}
		var reasons []string
		switch {
		case e.has("error"):
		case e.num("calls") > 0:
			reasons = []string{"tool_calls"}
		case !e.has("pool"):
			reasons = []string{"stop"}
		}
		if got, _ := s.attrs["gen_ai.response.finish_reasons"].([]string); !slices.Equal(got, reasons) {
			t.Errorf("chat span at tick %d: finish reasons %q, want %q", e.num("tick"), got, reasons)
		}
		wantKind := tracepb.Span_SPAN_KIND_INTERNAL
		if live {
			wantKind = tracepb.Span_SPAN_KIND_CLIENT
		}
		a := agentSpans[id]
		if s.name != opChat+" "+e.str("model") || s.parent != a.id || s.kind != wantKind || s.start < a.start || s.end > a.end {
			t.Errorf("chat span %q (kind %v) under %s [%d, %d], want %q under agent %q [%d, %d]", s.name, s.kind, s.parent, s.start, s.end,
				opChat+" "+e.str("model"), a.name, a.start, a.end)
		}
		if e.has("error") != (s.status == tracepb.Status_STATUS_CODE_ERROR) {
			t.Errorf("chat span at tick %d: status %v, error %q", e.num("tick"), s.status, e.str("error"))
		}
		mark[id] = e.num("tick")
	}
	if len(ops[opChat]) != turns {
		t.Errorf("%d chat spans, %d model_turn events", len(ops[opChat]), turns)
	}

	// The tool calls: an execute_tool span per tool_call, ended by its tool_result.
	tools := map[callKey]span{}
	for _, s := range ops[opTool] {
		tools[callKey{s.num("warren.agent.id"), s.str("gen_ai.tool.call.id")}] = s
	}
	results, answers := map[callKey]event{}, map[callKey]event{}
	for _, e := range evs {
		k := callKey{e.num("agent"), e.str("call_id")}
		switch e.str("kind") {
		case trace.KindToolResult:
			results[k] = e
		case trace.KindAnswer:
			answers[k] = e
		}
	}
	calls := 0
	for _, e := range evs {
		if e.str("kind") != trace.KindToolCall {
			continue
		}
		calls++
		k := callKey{e.num("agent"), e.str("call_id")}
		s, ok := tools[k]
		if !ok {
			t.Errorf("no execute_tool span for %s's call %s", e.str("name"), k.id)
			continue
		}
		want := map[string]any{"gen_ai.tool.name": e.str("tool"), "warren.agent.name": e.str("name"), "warren.stage": e.str("stage"),
			"warren.tick.start": e.num("tick"), "warren.gate.verdict": e.str("verdict"), "warren.gate.layer": e.str("layer")}
		denied := e.str("verdict") == "deny"
		if ans, ok := answers[k]; ok {
			by, _, _ := strings.Cut(ans.str("by"), ":") // "person:<who>": who stays in the trace
			want["warren.prompt.verdict"], want["warren.prompt.by"] = ans.str("verdict"), by
			denied = ans.str("verdict") == "deny"
		}
		res, done := results[k]
		switch {
		case !done:
			want["error.type"] = errUnfinished
		case !res.has("ok"):
			t.Errorf("tool_result without ok: %v", res)
		case res["ok"] == false && denied:
			want["error.type"] = errDenied
		case res["ok"] == false:
			want["error.type"] = errTool
		}
		if done {
			want["warren.tick.end"] = res.num("tick")
		}
		for kk, v := range want {
			if fmt.Sprint(s.attrs[kk]) != fmt.Sprint(v) {
				t.Errorf("execute_tool span of %s's call %s: %s = %v, want %v", e.str("name"), k.id, kk, s.attrs[kk], v)
			}
		}
		if _, ok := want["error.type"]; !ok && s.attrs["error.type"] != nil {
			t.Errorf("execute_tool span of call %s: error.type %v for a call that succeeded", k.id, s.attrs["error.type"])
		}
		a := agentSpans[e.num("agent")]
		if s.name != opTool+" "+e.str("tool") || s.parent != a.id || s.start < a.start || s.end > a.end {
			t.Errorf("execute_tool span %q under %s, want %q under agent %q", s.name, s.parent, opTool+" "+e.str("tool"), a.name)
		}
	}
	if len(ops[opTool]) != calls {
		t.Errorf("%d execute_tool spans, %d tool_call events", len(ops[opTool]), calls)
	}

	// Every attribute is declared for its operation, and none holds the run's content.
	declared := map[string]bool{}
	for _, d := range attributeDocs {
		for _, op := range d.ops {
			declared[op+" "+string(d.key)] = true
		}
	}
	content := slices.DeleteFunc(contentOf(evs), func(c string) bool { return names[c] })
	for _, s := range spans {
		for k, v := range s.attrs {
			if !declared[s.op()+" "+k] {
				t.Errorf("span %q has %s, which attributeDocs does not declare for %s spans", s.name, k, s.op())
			}
			seen[s.op()+" "+k] = true
			vals, _ := v.([]string)
			if str, ok := v.(string); ok {
				vals = append(vals, str)
			}
			for _, str := range vals {
				if c := containsAny(str, content); c != "" {
					t.Errorf("span %q: %s = %q holds the trace's content %q", s.name, k, str, c)
				}
			}
		}
		if c := containsAny(s.name, content); c != "" {
			t.Errorf("span name %q holds the trace's content %q", s.name, c)
		}
	}
}

// contentOf gathers what a trace holds that no span may: the text of tasks, answers, messages,
// questions and results, the arguments of calls (whole and each string in them), the gate's
// reasons, and error texts. Short strings (under six bytes) are left out: they are words such as
// "ok" that a name may share without leaking anything.
func contentOf(evs []event) []string {
	var out []string
	add := func(s string) {
		if len(s) >= 6 {
			out = append(out, s)
		}
	}
	for _, e := range evs {
		for _, f := range []string{"task", "text", "content", "reason", "error", "prompt"} {
			add(e.str(f))
		}
		if e.str("kind") == trace.KindAnswer {
			if !slices.Contains([]string{"deny", "once", "stage", "run"}, e.str("answer")) {
				add(e.str("answer"))
			}
			if _, who, ok := strings.Cut(e.str("by"), ":"); ok {
				out = append(out, e.str("by"), who) // a person's name, however short
			}
		}
		if args, ok := e["args"]; ok {
			raw, _ := json.Marshal(args)
			add(string(raw))
			var walk func(v any)
			walk = func(v any) {
				switch x := v.(type) {
				case string:
					add(x)
				case map[string]any:
					for _, y := range x {
						walk(y)
					}
				case []any:
					for _, y := range x {
						walk(y)
					}
				}
			}
			walk(args)
		}
	}
	// A stage's name is no content; a prompt event's "prompt" field is its kind (approval,
	// question), not text.
	return slices.DeleteFunc(out, func(s string) bool { return s == "approval" || s == "question" || strings.TrimSpace(s) == "" })
}
