package scripting

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
	"weak"

	"github.com/warrenhq/warren/models"
)

// mustPolicy compiles a policy source under the default policy limits.
func mustPolicy(t testing.TB, src string) *Policy {
	t.Helper()
	p, err := CompilePolicy("js:test", "policies/test.js", []byte(src), Limits{})
	if err != nil {
		t.Fatalf("CompilePolicy: %v", err)
	}
	t.Cleanup(p.Close)
	return p
}

// decideBody wraps a decide body in a policy file (the body starts on line 2).
func decideBody(body string) string {
	return "definePolicy(function decide(obs) {\n" + body + "\n});\n"
}

// testView is a small view of an agent on its third turn: a task, one turn that read two files
// (one failed), and a message that arrived since.
func testView(seed uint64) *models.View {
	return &models.View{
		Agent:      models.AgentInfo{ID: 7, Name: "voters-0042", Group: "voters", Index: 42},
		Stage:      "gossip",
		StageIndex: 0,
		Iteration:  1,
		Visit:      1,
		Turn:       1,
		Tools:      []models.ToolInfo{{Name: "read_file"}, {Name: "write_file"}},
		Messages: []models.Message{
			{Role: models.RoleSystem, Content: "You vote."},
			{Role: models.RoleUser, Content: "Vote red or blue."},
			{Role: models.RoleAssistant, Content: "Reading.", Calls: []models.ToolCall{
				{ID: "voters-0042-t0-c0", Name: "read_file", Args: json.RawMessage(`{"path":"a.txt"}`)},
				{ID: "voters-0042-t0-c1", Name: "read_file", Args: json.RawMessage(`{"path":"b.txt"}`)},
			}},
			{Role: models.RoleTool, CallID: "voters-0042-t0-c0", Content: "red"},
			{Role: models.RoleTool, CallID: "voters-0042-t0-c1", Content: "no such file", IsError: true},
			{Role: models.RoleUser, Content: "Hurry up."},
		},
		Memory: map[string]any{"vote": "red", "rounds": 2.0, "seen": []any{"a", map[string]any{"k": true}}},
		Rand:   rand.New(rand.NewPCG(seed, 1)),
	}
}

func TestPolicyReply(t *testing.T) {
	tests := []struct {
		name string
		body string
		want models.Reply
	}{
		{"nothing ends the stage", `return;`, models.Reply{}},
		{"null ends the stage", `return null;`, models.Reply{}},
		{"empty object ends the stage", `return {};`, models.Reply{}},
		{"text only", `return { text: "done by " + obs.agent.name };`, models.Reply{Text: "done by voters-0042"}},
		{"empty calls", `return { text: "t", calls: [] };`, models.Reply{Text: "t"}},
		{"calls with and without args", `return { calls: [
			{ tool: "write_file", args: { path: "x.txt", content: "red" } },
			{ tool: "todo_list" },
		] };`, models.Reply{Calls: []models.ToolCall{
			{Name: "write_file", Args: json.RawMessage(`{"path":"x.txt","content":"red"}`)},
			{Name: "todo_list", Args: json.RawMessage(`{}`)},
		}}},
		{"async decide is awaited", `return (async () => ({ text: "later" }))();`, models.Reply{Text: "later"}},
		{"args with toJSON encoding an object", `return { calls: [{ tool: "t", args: { toJSON() { return { a: 1 }; } } }] };`,
			models.Reply{Calls: []models.ToolCall{{Name: "t", Args: json.RawMessage(`{"a":1}`)}}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := mustPolicy(t, decideBody(tc.body))
			got, err := p.Turn(context.Background(), &models.State{}, testView(1))
			if err != nil {
				t.Fatalf("Turn: %v", err)
			}
			if got.Text != tc.want.Text || len(got.Calls) != len(tc.want.Calls) {
				t.Fatalf("reply = %+v, want %+v", got, tc.want)
			}
			for i, c := range got.Calls {
				w := tc.want.Calls[i]
				if c.ID != "" || c.Name != w.Name || string(c.Args) != string(w.Args) {
					t.Errorf("call %d = {%q %q %s}, want {\"\" %q %s}", i, c.ID, c.Name, c.Args, w.Name, w.Args)
				}
			}
		})
	}
}

func TestPolicyObservation(t *testing.T) {
	p := mustPolicy(t, decideBody(`return { text: JSON.stringify(obs) };`))
	got, err := p.Turn(context.Background(), &models.State{}, testView(1))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"agent":{"id":7,"name":"voters-0042","group":"voters","index":42},` +
		`"stage":"gossip","stageIndex":0,"iteration":1,"visit":1,"turn":1,"tools":["read_file","write_file"],` +
		`"messages":[{"role":"system","content":"You vote."},{"role":"user","content":"Vote red or blue."},` +
		`{"role":"assistant","content":"Reading.","calls":[{"id":"voters-0042-t0-c0","tool":"read_file","args":{"path":"a.txt"}},` +
		`{"id":"voters-0042-t0-c1","tool":"read_file","args":{"path":"b.txt"}}]},` +
		`{"role":"tool","content":"red","callId":"voters-0042-t0-c0","name":"read_file","isError":false},` +
		`{"role":"tool","content":"no such file","callId":"voters-0042-t0-c1","name":"read_file","isError":true},` +
		`{"role":"user","content":"Hurry up."}],` +
		`"lastResults":[{"id":"voters-0042-t0-c0","name":"read_file","args":{"path":"a.txt"},"content":"red","isError":false},` +
		`{"id":"voters-0042-t0-c1","name":"read_file","args":{"path":"b.txt"},"content":"no such file","isError":true}],` +
		`"inbox":["Hurry up."],"memory":{"rounds":2,"seen":["a",{"k":true}],"vote":"red"}}`
	if got.Text != want {
		t.Errorf("obs =\n%s\nwant\n%s", got.Text, want)
	}
}

func TestPolicyObservationIsReadOnly(t *testing.T) {
	p := mustPolicy(t, decideBody(`
  const tries = {
    assign: () => { obs.turn = 9; },
    add: () => { obs.extra = 1; },
    remove: () => { delete obs.stage; },
    push: () => { obs.messages.push({}); },
    nested: () => { obs.agent.name = "x"; },
    sort: () => { obs.tools.sort(); },
  };
  const out = [];
  for (const k of Object.keys(tries)) {
    try { tries[k](); out.push(k + ":changed"); } catch (e) { out.push(k + ":" + e.name); }
  }
  // Copies are ordinary values, and parts keep their identity within the turn.
  const copy = obs.messages.slice();
  copy.push("mine");
  const args = obs.lastResults[0].args;
  args.path = "changed";
  out.push(copy.length, obs.messages === obs.messages, obs.lastResults[0].args.path, Array.isArray(obs.tools), obs.turn);
  return { text: out.join(" ") };`))
	got, err := p.Turn(context.Background(), &models.State{}, testView(1))
	if err != nil {
		t.Fatal(err)
	}
	want := "assign:TypeError add:TypeError remove:TypeError push:TypeError nested:TypeError sort:TypeError 7 true changed true 1"
	if got.Text != want {
		t.Errorf("got  %q\nwant %q", got.Text, want)
	}
}

func TestPolicyObservationWindowAndInbox(t *testing.T) {
	v := testView(1)
	v.Messages = nil
	for i := range 20 {
		v.Messages = append(v.Messages, models.Message{Role: models.RoleUser, Content: fmt.Sprint("m", i)})
	}
	p := mustPolicy(t, decideBody(`return { text: obs.messages.map(m => m.content).join(",") + "|" + obs.inbox.length + "|" + obs.lastResults.length };`))
	got, err := p.Turn(context.Background(), &models.State{}, v)
	if err != nil {
		t.Fatal(err)
	}
	// No assistant message yet: every user message is in the inbox; the window is the last 8.
	if want := "m12,m13,m14,m15,m16,m17,m18,m19|20|0"; got.Text != want {
		t.Errorf("got %q, want %q", got.Text, want)
	}
}

func TestPolicyBadReplies(t *testing.T) {
	// Reply errors point at the definePolicy call, which goja places at its parenthesis: column
	// 13 of decideBody's first line.
	tests := []struct {
		name string
		body string
		want string
	}{
		{"a number", `return 42;`, "decide must return {text, calls} or nothing, not a number"},
		{"an array", `return [];`, "decide must return {text, calls} or nothing, not an array"},
		{"a typo", `return { call: [] };`, `decide's reply has an unknown key "call" (valid: text, calls)`},
		{"text not a string", `return { text: 5 };`, "text must be a string, not a number"},
		{"calls not an array", `return { calls: { tool: "x" } };`, "calls must be an array of {tool, args}, not an object"},
		{"a call not an object", `return { calls: ["read_file"] };`, "calls[0] must be {tool, args}, not a string"},
		{"a call without tool", `return { calls: [{ args: {} }] };`, "calls[0].tool must be the name of a tool, as a string"},
		{"a call with an empty tool", `return { calls: [{ tool: "" }] };`, "calls[0].tool must be the name of a tool, as a string"},
		{"a call with a typo", `return { calls: [{ tool: "x", argz: {} }] };`, `calls[0] has an unknown key "argz" (valid: tool, args)`},
		{"args an array", `return { calls: [{ tool: "x", args: [1] }] };`, "calls[0].args must be an object, not an array"},
		{"args encoding as a string", `return { calls: [{ tool: "x", args: { toJSON() { return "s"; } } }] };`, `calls[0].args must encode as a JSON object, not "s"`},
		{"too many calls", `return { calls: Array.from({ length: 257 }, () => ({ tool: "x" })) };`, "decide returned 257 calls, over the 256 a turn may make"},
		{"a promise that never settles", `return new Promise(() => {});`, "decide returned a promise that never settled"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := mustPolicy(t, decideBody(tc.body))
			_, err := p.Turn(context.Background(), &models.State{}, testView(1))
			if !errors.Is(err, ErrPolicyReply) {
				t.Fatalf("err = %v, want ErrPolicyReply", err)
			}
			if want := "policies/test.js:1:13: " + tc.want; err.Error() != want {
				t.Errorf("err = %q\nwant  %q", err, want)
			}
		})
	}
}

func TestPolicyTooLarge(t *testing.T) {
	src := decideBody(`return obs.turn === 0 ? { text: "x".repeat(2000) } : { calls: [{ tool: "t", args: { s: "y".repeat(2000) } }] };`)
	p, err := CompilePolicy("js:big", "big.js", []byte(src), Limits{MaxResultBytes: 1000, MaxArgBytes: 1000})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	v := testView(1)
	for turn, want := range []string{
		"big.js:1:13: text is 2000 characters, over the 1000-byte cap",
		"big.js:1:13: calls[0].args is 2008 characters, over the 1000-byte cap",
	} {
		v.Turn = turn
		if _, err := p.Turn(context.Background(), &models.State{}, v); !errors.Is(err, ErrTooLarge) || err.Error() != want {
			t.Errorf("turn %d: err = %v, want %q (ErrTooLarge)", turn, err, want)
		}
	}
}

func TestCompilePolicyErrors(t *testing.T) {
	tests := []struct {
		name string
		src  string
		kind error
		want string
	}{
		{"syntax", "definePolicy(function (obs) {\n  return 1 +;\n});", ErrSyntax, "p.js:2:13: Unexpected token ;"},
		{"no definePolicy", "const x = 1;", ErrPolicyDefinition, "p.js:1:1: the file never calls definePolicy(function decide(obs) {...})"},
		{"twice", "definePolicy(function () {});\n  definePolicy(function () {});", ErrPolicyDefinition, "p.js:2:15: definePolicy is called more than once (a file defines exactly one policy)"},
		{"not a function", "// a policy\n  definePolicy({ decide() {} });", ErrPolicyDefinition, "p.js:2:15: definePolicy takes one function: definePolicy(function decide(obs) {...})"},
		{"top level throws on line 1", `throw new Error("broken");`, ErrRuntime, "p.js:1:7: Error: broken"},
		{"top level throws later on line 1", `const a = 1; throw new Error("late");`, ErrRuntime, "p.js:1:20: Error: late"},
		{"runaway top level", "while (true) {}", ErrTimeout, "p.js: script ran past its 100ms CPU budget"},
		{"not UTF-8", "definePolicy(\xff)", ErrSyntax, "p.js:1:14: the file is not valid UTF-8"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := CompilePolicy("js:p", "p.js", []byte(tc.src), Limits{})
			if !errors.Is(err, tc.kind) {
				t.Fatalf("err = %v, want kind %v", err, tc.kind)
			}
			if err.Error() != tc.want {
				t.Errorf("err = %q\nwant  %q", err, tc.want)
			}
		})
	}
}

func TestPolicyRuntimeErrorPositions(t *testing.T) {
	tests := []struct {
		name, src, want string
	}{
		{"a throw", "definePolicy(function decide(obs) {\n  if (obs.turn >= 0) {\n    throw new RangeError(\"no turn \" + obs.turn);\n  }\n});",
			`p.js:3:11: RangeError: no turn 1`},
		{"a one-liner", `definePolicy(obs => obs.nothing.here);`, "p.js:1:33: TypeError: Cannot read property 'here' of undefined"},
		{"a rejected async decide", "definePolicy(async function (obs) {\n  await null;\n  throw new Error(\"late\");\n});", "p.js:3:9: Error: late"},
		{"deep recursion", "function f(n) { return f(n + 1); }\ndefinePolicy(function (obs) { return f(0); });", "p.js:1:25: call stack exceeded 256 frames"},
		{"a top level that fails on a turn only", "if (Math.random() > 0) throw new Error(\"not while loading\");\ndefinePolicy(function () {});", "p.js:1:30: Error: not while loading"},
		{"definePolicy called twice on a turn only", "definePolicy(function () {});\nif (Math.random() > 0) definePolicy(function () {});", "p.js:2:36: definePolicy is called more than once (a file defines exactly one policy)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := CompilePolicy("js:p", "p.js", []byte(tc.src), Limits{})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			_, err = p.Turn(context.Background(), &models.State{}, testView(1))
			if err == nil || err.Error() != tc.want {
				t.Errorf("err = %v\nwant  %s", err, tc.want)
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("err is %T, not *Error", err)
			}
		})
	}
}

func TestPolicyRunawayFailsItsTurnOnly(t *testing.T) {
	tests := []struct {
		name string
		body string
	}{
		{"an endless loop", `if (obs.turn === 1) { while (true) {} } return { text: "fine" };`},
		// A catastrophic regular expression runs in Go and ignores the interrupt: the runtime is
		// abandoned after the grace and a new one serves the next turn.
		{"a catastrophic regexp", `if (obs.turn === 1) { /^(a+)+\1$/.test("a".repeat(24) + "b"); } return { text: "fine" };`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := CompilePolicy("js:p", "p.js", []byte(decideBody(tc.body)), Limits{CallTimeout: 50 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			v := testView(1)
			start := time.Now()
			_, err = p.Turn(context.Background(), &models.State{}, v)
			elapsed := time.Since(start)
			if !errors.Is(err, ErrTimeout) || err.Error() != "p.js: script ran past its 50ms CPU budget" {
				t.Fatalf("err = %v, want the budget's ErrTimeout", err)
			}
			if elapsed > regexpWallLimit+time.Second {
				t.Errorf("the turn took %v, far past its 50ms budget and grace (a regexp step ends within %v)", elapsed, regexpWallLimit)
			}
			v.Turn = 2
			got, err := p.Turn(context.Background(), &models.State{}, v)
			if err != nil || got.Text != "fine" {
				t.Errorf("the next turn: %+v, %v; want a normal reply", got, err)
			}
		})
	}
}

// TestPolicyTurnHonoursItsContext: a turn stops when its context is done, long before its
// budget (a killed agent or a cancelled run must not wait out a policy), with the context's error
// as the kind; a turn asked for with a done context does not start; and the next turn runs
// normally, so a cancellation leaves no interrupt behind in the pooled runtime.
func TestPolicyTurnHonoursItsContext(t *testing.T) {
	p, err := CompilePolicy("js:p", "p.js", []byte(decideBody(`if (obs.turn === 1) { while (true) {} } return { text: "fine" };`)),
		Limits{CallTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	v := testView(1)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(20*time.Millisecond, cancel)
	start := time.Now()
	_, err = p.Turn(ctx, &models.State{}, v)
	elapsed := time.Since(start)
	if !errors.Is(err, context.Canceled) || err.Error() != "p.js: script call cancelled: context canceled" {
		t.Fatalf("err = %v, want the turn cancelled (context.Canceled)", err)
	}
	if elapsed > 5*time.Second {
		t.Errorf("the cancelled turn took %v: it waited for its 10s budget", elapsed)
	}

	deadline, stop := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer stop()
	if _, err := p.Turn(deadline, &models.State{}, v); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want the turn stopped at the context's deadline", err)
	}

	v.Rand = rand.New(rand.NewPCG(1, 1))
	if _, err := p.Turn(ctx, &models.State{}, v); !errors.Is(err, context.Canceled) {
		t.Errorf("a turn with a done context: err = %v, want context.Canceled", err)
	}
	if got := v.Rand.Uint64(); got != rand.New(rand.NewPCG(1, 1)).Uint64() {
		t.Errorf("a turn that never started drew from the agent's stream")
	}

	v.Turn = 2
	got, err := p.Turn(context.Background(), &models.State{}, v)
	if err != nil || got.Text != "fine" {
		t.Errorf("the next turn: %+v, %v; want a normal reply", got, err)
	}
}

func TestPolicyDeterministic(t *testing.T) {
	p := mustPolicy(t, decideBody(`
  const picks = [];
  for (let i = 0; i < 5; i++) picks.push(Math.floor(Math.random() * 100));
  return { text: picks.join(",") + " at " + new Date().toISOString() };`))
	turn := func(seed uint64) (string, uint64) {
		v := testView(seed)
		got, err := p.Turn(context.Background(), &models.State{}, v)
		if err != nil {
			t.Fatal(err)
		}
		return got.Text, v.Rand.Uint64()
	}
	a, afterA := turn(1)
	b, afterB := turn(1)
	c, _ := turn(2)
	if a != b || afterA != afterB {
		t.Errorf("same seed, different turns: %q / %q, streams then at %d / %d", a, b, afterA, afterB)
	}
	if a == c {
		t.Errorf("seeds 1 and 2 gave the same picks %q", a)
	}
	if !strings.HasSuffix(a, " at 1970-01-01T00:00:00.000Z") {
		t.Errorf("Date is not the Unix epoch: %q", a)
	}
	// The agent's stream advances by exactly two draws a turn, however often decide draws.
	ref := rand.New(rand.NewPCG(1, 1))
	ref.Uint64()
	ref.Uint64()
	if want := ref.Uint64(); afterA != want {
		t.Errorf("the agent's stream is at %d after a turn, want %d (two draws)", afterA, want)
	}
}

func TestPolicyWithoutRandomSource(t *testing.T) {
	p := mustPolicy(t, decideBody(`return { text: String(Math.random()) };`))
	v := testView(1)
	v.Rand = nil
	_, err := p.Turn(context.Background(), &models.State{}, v)
	if !errors.Is(err, ErrRuntime) || !strings.Contains(err.Error(), "Math.random is unavailable") {
		t.Errorf("err = %v, want Math.random to throw", err)
	}
}

func TestPolicyCannotBuildCode(t *testing.T) {
	tests := []struct {
		name, body, want string
	}{
		{"eval", `return { text: eval("1 + 1") };`, "ReferenceError: eval is not defined"},
		{"Function", `return { text: Function("return 1")() };`, "EvalError: Function is disabled"},
		{"a function's constructor", `return { text: (function () {}).constructor("return 1")() };`, "EvalError: Function is disabled"},
		{"an async function's constructor", `return { text: (async function () {}).constructor("return 1") };`, "EvalError: AsyncFunction is disabled"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := mustPolicy(t, decideBody(tc.body))
			_, err := p.Turn(context.Background(), &models.State{}, testView(1))
			if !errors.Is(err, ErrRuntime) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestPolicyNoStateSurvivesATurn(t *testing.T) {
	p := mustPolicy(t, `let count = 0;
definePolicy(function decide(obs) {
  count++;
  const leaks = [];
  for (const attempt of [() => { globalThis.shared = 1; }, () => { definePolicy.shared = 1; }, () => { Math.shared = 1; }]) {
    try { attempt(); leaks.push("leaked"); } catch (e) { leaks.push(e.name); }
  }
  return { text: count + " " + leaks.join(",") + " " + typeof globalThis.shared };
});`)
	for i := range 3 {
		got, err := p.Turn(context.Background(), &models.State{}, testView(uint64(i)))
		if err != nil {
			t.Fatal(err)
		}
		if want := "1 TypeError,TypeError,TypeError undefined"; got.Text != want {
			t.Errorf("turn %d: %q, want %q", i, got.Text, want)
		}
	}
}

func TestPolicyConcurrentTurns(t *testing.T) {
	// Sixteen turns at once build runtimes in parallel on a couple of cores (slower still under
	// the race detector): a wall-time budget generous enough that starving is not a timeout.
	src := decideBody(`return { text: obs.agent.name + ":" + Math.floor(Math.random() * 1000) };`)
	p, err := CompilePolicy("js:test", "policies/test.js", []byte(src), Limits{CallTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	want := make([]string, 16)
	for i := range want {
		v := testView(uint64(i))
		v.Agent.Name = fmt.Sprint("a", i)
		got, err := p.Turn(context.Background(), &models.State{}, v)
		if err != nil {
			t.Fatal(err)
		}
		want[i] = got.Text
	}
	var wg sync.WaitGroup
	got := make([]string, len(want))
	errs := make([]error, len(want))
	for i := range want {
		wg.Go(func() {
			v := testView(uint64(i))
			v.Agent.Name = fmt.Sprint("a", i)
			r, err := p.Turn(context.Background(), &models.State{}, v)
			got[i], errs[i] = r.Text, err
		})
	}
	wg.Wait()
	for i := range want {
		if errs[i] != nil || got[i] != want[i] {
			t.Errorf("agent %d: %q, %v; serially %q", i, got[i], errs[i], want[i])
		}
	}
}

func TestPolicyClosed(t *testing.T) {
	p := mustPolicy(t, decideBody(`return {};`))
	p.Close()
	if _, err := p.Turn(context.Background(), &models.State{}, testView(1)); !errors.Is(err, ErrClosed) {
		t.Errorf("err = %v, want ErrClosed", err)
	}
}

func TestPolicyRuntimesAreReleased(t *testing.T) {
	tests := []struct {
		name    string
		release func(**Policy)
	}{
		{"Close", func(p **Policy) { (*p).Close() }},
		{"garbage collection", func(p **Policy) { *p = nil }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			baseline := runtime.NumGoroutine()
			p, err := CompilePolicy("js:p", "p.js", []byte(decideBody(`return {};`)), Limits{})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := p.Turn(context.Background(), &models.State{}, testView(1)); err != nil {
				t.Fatal(err)
			}
			// Turns run on the caller's goroutine: a policy keeps none of its own.
			waitForGoroutines(t, baseline)
			idle := weak.Make(p.pool.idle[0])
			tc.release(&p)
			if !collected(func() bool { return idle.Value() == nil }) {
				t.Error("the idle runtime is still reachable")
			}
		})
	}
}

func TestPolicyIdentity(t *testing.T) {
	p := mustPolicy(t, decideBody(`return {};`))
	if p.ID() != "js:test" || p.File() != "policies/test.js" || !p.Inline() {
		t.Errorf("ID %q, File %q, Inline %v", p.ID(), p.File(), p.Inline())
	}
	if got := DefaultPolicyLimits(); got.CallTimeout != DefaultPolicyTimeout || got.MaxArgBytes != DefaultLimits().MaxArgBytes {
		t.Errorf("DefaultPolicyLimits = %+v", got)
	}
}

// ExampleCompilePolicy compiles a policy and asks it for one turn of an agent that has just been
// given its task.
func ExampleCompilePolicy() {
	src := []byte(`definePolicy(function decide(obs) {
  if (obs.turn > 0) return { text: "done" };          // nothing to call: the stage is done
  const color = Math.random() < 0.5 ? "red" : "blue"; // the agent's seeded stream
  return {
    text: obs.agent.name + " picks " + color + " for: " + obs.inbox[0],
    calls: [{ tool: "write_file", args: { path: "opinions/" + obs.agent.name + ".txt", content: color } }],
  };
});`)
	policy, err := CompilePolicy("js:voter", "policies/voter.js", src, Limits{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer policy.Close()
	view := &models.View{
		Agent:    models.AgentInfo{ID: 1, Name: "voters-0", Group: "voters"},
		Messages: []models.Message{{Role: models.RoleUser, Content: "pick a color"}},
		Rand:     rand.New(rand.NewPCG(1, 2)),
	}
	reply, err := policy.Turn(context.Background(), &models.State{}, view)
	fmt.Println(reply.Text, err)
	for _, c := range reply.Calls {
		fmt.Println(c.Name, string(c.Args))
	}
	// Output:
	// voters-0 picks red for: pick a color <nil>
	// write_file {"path":"opinions/voters-0.txt","content":"red"}
}

// TestPolicyObservationMemory: obs.memory is the agent's memory as plain values, the script's
// own copy: changing it changes nothing of the host's memory.
func TestPolicyObservationMemory(t *testing.T) {
	p := mustPolicy(t, decideBody(`
  const before = obs.memory.rounds + 1;
  obs.memory.vote = "blue";
  obs.memory.seen[1].k = false;
  return { text: [before, obs.memory.vote, typeof obs.memory.missing].join(" ") };`))
	v := testView(1)
	got, err := p.Turn(context.Background(), &models.State{}, v)
	if err != nil {
		t.Fatal(err)
	}
	if got.Text != "3 blue undefined" {
		t.Errorf("got %q", got.Text)
	}
	if v.Memory["vote"] != "red" || v.Memory["seen"].([]any)[1].(map[string]any)["k"] != true {
		t.Errorf("the script changed the host's memory: %v", v.Memory)
	}
}
