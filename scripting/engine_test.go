package scripting

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"weak"
)

// fakeHost is a Host that records every call ("fn(arg, ...)") and answers from its fields.
type fakeHost struct {
	mu    sync.Mutex
	calls []string

	files    map[string]string
	response HTTPResponse
	httpErr  error
	// block, when set, makes Shell wait for it to close or for its context to end (a host call
	// that would outlive the budget).
	block chan struct{}
	// delay, when set, makes Shell sleep that long (waiting, using no CPU) and then succeed.
	delay time.Duration
	// big, when non-empty, is what Env returns (a host string over the cap).
	big string
}

var _ Host = (*fakeHost)(nil)

func (h *fakeHost) record(format string, args ...any) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.calls = append(h.calls, fmt.Sprintf(format, args...))
}

func (h *fakeHost) recorded() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.calls)
}

func (h *fakeHost) ReadFile(path string) (string, error) {
	h.record("readFile(%s)", path)
	content, ok := h.files[path]
	if !ok {
		return "", fmt.Errorf("read_file: %s: no such file", path)
	}
	return content, nil
}

func (h *fakeHost) WriteFile(path, content string) (string, error) {
	h.record("writeFile(%s, %d bytes)", path, len(content))
	return fmt.Sprintf("wrote %d bytes to %s", len(content), path), nil
}

func (h *fakeHost) ListDir(path string) (string, error) {
	h.record("listDir(%s)", path)
	return "a.txt\nb.txt", nil
}

func (h *fakeHost) Shell(ctx context.Context, command string) (string, error) {
	h.record("shell(%s)", command)
	if h.delay > 0 {
		select {
		case <-time.After(h.delay):
			return "ok", nil
		case <-ctx.Done():
			return "", fmt.Errorf("shell: %w", context.Cause(ctx))
		}
	}
	if h.block != nil {
		select {
		case <-h.block:
		case <-ctx.Done():
			return "", fmt.Errorf("shell: %w", context.Cause(ctx))
		}
	}
	return "", errors.New("shell needs the agent's sandbox, and this call has none (the agent has no workdir, or the tool was called outside an agent)")
}

func (h *fakeHost) HTTPGet(_ context.Context, url string, headers map[string]string) (HTTPResponse, error) {
	h.record("httpGet(%s, %s)", url, formatHeaders(headers))
	return h.response, h.httpErr
}

func (h *fakeHost) HTTPPost(_ context.Context, url, contentType, body string, headers map[string]string) (HTTPResponse, error) {
	h.record("httpPost(%s, %s, %s, %s)", url, contentType, body, formatHeaders(headers))
	return h.response, h.httpErr
}

func (h *fakeHost) Env(name string) (string, error) {
	h.record("env(%s)", name)
	if h.big != "" {
		return h.big, nil
	}
	if name != "REGION" {
		return "", fmt.Errorf("env: %s is not allowed", name)
	}
	return "eu-west", nil
}

func (h *fakeHost) CallTool(_ context.Context, name string, args json.RawMessage) (string, error) {
	h.record("callTool(%s, %s)", name, args)
	return "called " + name, nil
}

func (h *fakeHost) Log(message string) { h.record("log(%s)", message) }

// formatHeaders renders headers sorted by name.
func formatHeaders(headers map[string]string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(headers)) {
		parts = append(parts, k+"="+headers[k])
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// fixedEnv is a deterministic CallEnv: the clock at 2030-01-02T03:04:05Z, Math.random a
// counter's fractions.
func fixedEnv() CallEnv {
	n := 0
	return CallEnv{
		Now: time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC),
		Rand: func() float64 {
			n++
			return float64(n) / 10
		},
	}
}

// tool wraps a run function body in a tool definition.
func tool(run string) string {
	return `defineTool({ name: "t", description: "test tool", parameters: { type: "object" }, run: ` + run + ` });`
}

// warmEngine is an engine whose pool already holds a runtime, so a test timing a call does not
// time building one (milliseconds, more under the race detector).
func warmEngine(t testing.TB, limits Limits) *Engine {
	t.Helper()
	e := NewEngine(limits)
	if out, err := runTool(t, e, tool(`() => "warm"`), "", nil); err != nil || out != "warm" {
		t.Fatalf("warming the engine: %q, %v", out, err)
	}
	return e
}

// runTool compiles src and runs it once with args against host.
func runTool(t testing.TB, e *Engine, src, args string, host Host) (string, error) {
	t.Helper()
	s := mustCompile(t, "tool.js", src)
	return e.Run(context.Background(), s, json.RawMessage(args), host, fixedEnv())
}

func TestRunWordCount(t *testing.T) {
	host := &fakeHost{files: map[string]string{"notes.txt": "the quick  brown\nfox"}}
	s := compileFile(t, "testdata/good/word_count.js")
	out, err := NewEngine(Limits{}).Run(context.Background(), s, json.RawMessage(`{"path":"notes.txt"}`), host, fixedEnv())
	if err != nil {
		t.Fatal(err)
	}
	if out != `{"words":4}` {
		t.Errorf("result = %s", out)
	}
	want := []string{"readFile(notes.txt)", "log(counting notes.txt)"}
	if got := host.recorded(); !slices.Equal(got, want) {
		t.Errorf("host calls = %q, want %q", got, want)
	}
}

func TestRunAsyncAwaitsHTTPGet(t *testing.T) {
	host := &fakeHost{response: HTTPResponse{Status: 200, Body: "all good", Headers: map[string]string{"X-B": "2", "Content-Type": "text/plain", "A": "1"}}}
	s := compileFile(t, "testdata/good/fetch_status.js")
	e := NewEngine(Limits{})
	out, err := e.Run(context.Background(), s, json.RawMessage(`{"url":"https://example.org/x"}`), host, fixedEnv())
	if err != nil {
		t.Fatal(err)
	}
	if out != `{"status":200,"length":8}` {
		t.Errorf("result = %s", out)
	}
	if got := host.recorded(); !slices.Equal(got, []string{"httpGet(https://example.org/x, {Accept=application/json})"}) {
		t.Errorf("host calls = %q", got)
	}

	headers := mustCompile(t, "headers.js", tool(`async (args, host) => Object.keys((await host.httpGet("https://e.org")).headers).join(",")`))
	out, err = e.Run(context.Background(), headers, nil, host, fixedEnv())
	if err != nil || out != "A,Content-Type,X-B" {
		t.Errorf("header names = %q, %v; want them sorted", out, err)
	}
}

func TestHostFunctions(t *testing.T) {
	tests := []struct {
		name, run string
		want      string
		calls     []string
	}{
		{"readFile", `(a, h) => h.readFile("x.txt")`, "hello", []string{"readFile(x.txt)"}},
		{"readFile error is catchable", `(a, h) => { try { h.readFile("nope") } catch (e) { return e instanceof Error ? e.message : "?" } }`,
			"read_file: nope: no such file", []string{"readFile(nope)"}},
		{"writeFile", `(a, h) => h.writeFile("out.txt", "abc")`, "wrote 3 bytes to out.txt", []string{"writeFile(out.txt, 3 bytes)"}},
		{"listDir without a path", `(a, h) => h.listDir()`, "a.txt\nb.txt", []string{"listDir(.)"}},
		{"listDir", `(a, h) => h.listDir("src")`, "a.txt\nb.txt", []string{"listDir(src)"}},
		{"shell refused", `(a, h) => { try { h.shell("ls") } catch (e) { return e.message } }`,
			"shell needs the agent's sandbox, and this call has none (the agent has no workdir, or the tool was called outside an agent)", []string{"shell(ls)"}},
		{"env", `(a, h) => h.env("REGION")`, "eu-west", []string{"env(REGION)"}},
		{"callTool with an object", `(a, h) => h.callTool("read_file", { path: "a" })`, "called read_file", []string{`callTool(read_file, {"path":"a"})`}},
		{"callTool with a JSON string", `(a, h) => h.callTool("list_dir", '{"path":"."}')`, "called list_dir", []string{`callTool(list_dir, {"path":"."})`}},
		{"callTool without args", `(a, h) => h.callTool("todo")`, "called todo", []string{`callTool(todo, {})`}},
		{"log any value", `(a, h) => { h.log({ toString() { return "obj" } }); h.log(42); return "ok" }`, "ok", []string{"log(obj)", "log(42)"}},
		{"httpPost with defaults", `async (a, h) => (await h.httpPost("https://e.org/p", "body")).status`, "201",
			[]string{"httpPost(https://e.org/p, , body, {})"}},
		{"httpPost with options", `async (a, h) => (await h.httpPost("https://e.org/p", "{}", { contentType: "application/json", headers: { "X-Key": "k" } })).body`,
			"created", []string{"httpPost(https://e.org/p, application/json, {}, {X-Key=k})"}},
		{"host object is frozen", `(a, h) => { try { h.readFile = () => "mine" } catch (e) { return e.constructor.name } }`, "TypeError", nil},
	}
	e := NewEngine(Limits{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			host := &fakeHost{files: map[string]string{"x.txt": "hello"}, response: HTTPResponse{Status: 201, Body: "created"}}
			out, err := runTool(t, e, tool(tt.run), "", host)
			if err != nil {
				t.Fatal(err)
			}
			if out != tt.want {
				t.Errorf("result = %q, want %q", out, tt.want)
			}
			if got := host.recorded(); !slices.Equal(got, tt.calls) {
				t.Errorf("host calls = %q, want %q", got, tt.calls)
			}
		})
	}
}

func TestHostFunctionMisuse(t *testing.T) {
	tests := []struct {
		name, run string
		host      *fakeHost
		want      string // the error, after "tool.js:"
	}{
		{"path not a string", `(a, h) => h.readFile(42)`, &fakeHost{}, "1:108: TypeError: readFile: path must be a string"},
		{"argument over the cap", `(a, h) => { let s = "x"; for (let i = 0; i < 11; i++) s += s; return h.writeFile("f", s) }`, &fakeHost{},
			"1:168: RangeError: writeFile: content is 2048 characters, over the 1024-byte cap on strings"},
		{"result over the cap", `(a, h) => h.env("BIG")`, &fakeHost{big: strings.Repeat("é", 600)},
			"1:103: RangeError: env: the result is 1200 bytes, over the 1024-byte cap on strings"},
		{"header not a string", `(a, h) => h.httpGet("https://e.org", { headers: { n: 1 } })`, &fakeHost{},
			"1:107: TypeError: httpGet: header n must be a string"},
		{"rejected request not caught", `async (a, h) => {
  const r = await h.httpGet("https://e.org");
  return r.status;
}`, &fakeHost{httpErr: errors.New("http_get: connection refused")}, "2:28: Error: http_get: connection refused"},
		{"no host", `(a, h) => h.log("x")`, nil, "1:103: Error: log is unavailable: this call has no host"},
	}
	e := NewEngine(Limits{MaxStringBytes: 1024})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var host Host
			if tt.host != nil {
				host = tt.host
			}
			_, err := runTool(t, e, tool(tt.run), "", host)
			if !errors.Is(err, ErrRuntime) || err.Error() != "tool.js:"+tt.want {
				t.Errorf("error = %v, want tool.js:%s", err, tt.want)
			}
		})
	}
}

func TestResultConversion(t *testing.T) {
	tests := []struct {
		name, run, want string
	}{
		{"string as is", `() => "plain \"text\""`, `plain "text"`},
		{"undefined is empty", `() => {}`, ""},
		{"null", `() => null`, "null"},
		{"number", `() => 4.5`, "4.5"},
		{"boolean", `() => true`, "true"},
		{"object", `() => ({ b: 1, a: [1, "x"] })`, `{"b":1,"a":[1,"x"]}`},
		{"function is empty", `() => () => 1`, ""},
		{"awaited object", `async () => { await null; return { ok: true } }`, `{"ok":true}`},
		{"promise of a string", `() => Promise.resolve("later")`, "later"},
		{"arguments", `(args) => args`, `{"n":1,"s":"é"}`},
	}
	e := NewEngine(Limits{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := runTool(t, e, tool(tt.run), `{"n":1,"s":"é"}`, nil)
			if err != nil || out != tt.want {
				t.Errorf("result = %q, %v; want %q", out, err, tt.want)
			}
		})
	}
}

func TestRuntimeErrors(t *testing.T) {
	tests := []struct {
		name, src, want string
		kind            error
	}{
		{"throw", "defineTool({ name: \"t\", description: \"d\", parameters: { type: \"object\" },\n  run() {\n    throw new Error(\"boom\");\n  } });",
			"tool.js:3:11: Error: boom", ErrRuntime},
		{"type error", tool("(args) => args.missing.field"), "tool.js:1:111: TypeError: Cannot read property 'field' of undefined", ErrRuntime},
		{"thrown string", tool(`() => { throw "just text" }`), "tool.js:1:96: just text", ErrRuntime},
		{"rejected promise", tool("async () => { await null; throw new RangeError(\"late\") }"), "tool.js:1:120: RangeError: late", ErrRuntime},
		{"promise never settles", tool("() => new Promise(() => {})"), "tool.js: run returned a promise that never settled (it awaits something no host function resolves)", ErrRuntime},
		{"unprintable exception", tool(`() => { throw { toString() { throw 1 } } }`), "tool.js:1:96: uncaught exception (its message cannot be read)", ErrRuntime},
		{"stack overflow", tool("function f(n) { return f(n + 1) + 1 }"), "tool.js:1:112: call stack exceeded 256 frames", ErrStackOverflow},
		{"huge message cut", tool(`() => { throw new Error("x".repeat(5000)) }`), "tool.js:1:102: Error: " + strings.Repeat("x", maxMessageBytes-len("Error: ")) + "…", ErrRuntime},
	}
	e := NewEngine(Limits{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := runTool(t, e, tt.src, "", nil)
			if !errors.Is(err, tt.kind) || err.Error() != tt.want {
				t.Errorf("error = %v\nwant %s (%v)", err, tt.want, tt.kind)
			}
		})
	}
}

func TestTimeoutInterruptsWithinBudget(t *testing.T) {
	tests := []struct {
		name, run string
		budget    time.Duration
	}{
		{"infinite loop", `() => { for (;;) {} }`, 50 * time.Millisecond},
		{"loop that catches everything", `() => { for (;;) { try { for (;;) {} } catch (e) {} } }`, 50 * time.Millisecond},
		{"async loop", `async () => { await null; while (true) {} }`, 50 * time.Millisecond},
		{"spread of a huge sparse array", `() => [...new Array(2 ** 32 - 1)].length`, 50 * time.Millisecond},
		{"callback loop", `() => { [1, 2, 3].forEach(function f() { for (;;) {} }) }`, 50 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := mustCompile(t, "loop.js", tool(tt.run))
			e := warmEngine(t, Limits{CallTimeout: tt.budget})
			start := time.Now()
			_, err := e.Run(context.Background(), s, nil, nil, fixedEnv())
			elapsed := time.Since(start)
			if want := fmt.Sprintf("loop.js: script ran past its %v CPU budget", tt.budget); !errors.Is(err, ErrTimeout) || err.Error() != want {
				t.Errorf("error = %v, want %s", err, want)
			}
			// The bound only tells an interrupt from none (the loops never end on
			// their own); a second of slack keeps it true under -race on a busy
			// 2-core machine, where 2x the budget was once exceeded.
			if elapsed > tt.budget+time.Second {
				t.Errorf("the call took %v with a %v budget: the interrupt did not stop it", elapsed, tt.budget)
			}
			// The runtime that was interrupted serves the next call normally.
			if out, err := runTool(t, e, tool(`() => "fine"`), "", nil); err != nil || out != "fine" {
				t.Errorf("after the timeout: %q, %v", out, err)
			}
		})
	}
}

// A call that waits on a host function uses no CPU time, so its CPU budget never ends it; its
// wall-clock backstop does, and the error says it was waiting.
func TestBlockingHostCallEndsWithTheWallClockLimit(t *testing.T) {
	limits := Limits{CallTimeout: 50 * time.Millisecond, WallTimeout: 300 * time.Millisecond}
	host := &fakeHost{block: make(chan struct{})}
	defer close(host.block)
	e := warmEngine(t, limits)
	s := mustCompile(t, "stuck.js", tool(`(a, h) => { try { h.shell("sleep") } catch (e) {} h.log("after"); return "done" }`))
	start := time.Now()
	_, err := e.Run(context.Background(), s, nil, host, fixedEnv())
	// The host call blocks until its context ends, which the backstop does; the bound leaves room
	// for a loaded machine and the race detector.
	if elapsed := time.Since(start); elapsed < limits.WallTimeout || elapsed > limits.WallTimeout+5*time.Second {
		t.Errorf("Run took %v while the host call was blocked, want the %v backstop", elapsed, limits.WallTimeout)
	}
	if want := "stuck.js: script waited past its 300ms wall-clock limit (a host function did not return)"; !errors.Is(err, ErrTimeout) || err == nil || err.Error() != want {
		t.Errorf("error = %v, want %q", err, want)
	}
	// The script caught the host call's error, but the interrupt stops it before its next step.
	if got := host.recorded(); !slices.Equal(got, []string{"shell(sleep)"}) {
		t.Errorf("host calls = %q, want only the blocked shell", got)
	}
}

// A call's CPU budget counts only its own thread's running time: a call that spends its time
// waiting (here on a host function that returns after three times the budget) fits a budget its
// wall time is far past.
func TestCPUBudgetIgnoresWaiting(t *testing.T) {
	limits := Limits{CallTimeout: 50 * time.Millisecond, WallTimeout: time.Minute}
	host := &fakeHost{delay: 150 * time.Millisecond}
	e := warmEngine(t, limits)
	s := mustCompile(t, "waits.js", tool(`(a, h) => { h.shell("slow"); h.shell("slow"); return "done" }`))
	out, err := e.Run(context.Background(), s, nil, host, fixedEnv())
	if err != nil || out != "done" {
		t.Fatalf("a call that waits 300ms on a 50ms CPU budget: %q, %v", out, err)
	}
}

func TestCancellation(t *testing.T) {
	s := mustCompile(t, "loop.js", tool(`() => { for (;;) {} }`))
	e := warmEngine(t, Limits{})

	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(20*time.Millisecond, cancel)
	start := time.Now()
	_, err := e.Run(ctx, s, nil, nil, fixedEnv())
	if !errors.Is(err, context.Canceled) || err.Error() != "loop.js: script call cancelled: context canceled" {
		t.Errorf("error = %v, want the cancellation", err)
	}
	if elapsed := time.Since(start); elapsed > time.Second {
		t.Errorf("cancelled call took %v", elapsed)
	}

	done, stop := context.WithCancel(context.Background())
	stop()
	if _, err := e.Run(done, s, nil, nil, fixedEnv()); !errors.Is(err, context.Canceled) {
		t.Errorf("a call on a cancelled context: %v", err)
	}
}

func TestLimitsBeforeAndAfterTheCall(t *testing.T) {
	e := NewEngine(Limits{MaxArgBytes: 64, MaxResultBytes: 32})
	host := &fakeHost{}
	echo := mustCompile(t, "echo.js", tool(`(args, host) => { host.log("ran"); return args.s }`))
	tests := []struct {
		name, args, want string
		kind             error
	}{
		{"arguments over the cap", `{"s":"` + strings.Repeat("a", 64) + `"}`, "echo.js: arguments are 72 bytes, over the 64-byte cap", ErrTooLarge},
		{"result at the cap", `{"s":"` + strings.Repeat("b", 32) + `"}`, "", nil},
		{"result over the cap", `{"s":"` + strings.Repeat("c", 33) + `"}`, "echo.js: the result is 33 characters, over the 32-byte cap", ErrTooLarge},
		{"result over the cap in bytes", `{"s":"` + strings.Repeat("é", 20) + `"}`, "echo.js: the result is 40 bytes, over the 32-byte cap", ErrTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			host.calls = nil
			out, err := e.Run(context.Background(), echo, json.RawMessage(tt.args), host, fixedEnv())
			if tt.kind == nil {
				if err != nil || len(out) != 32 {
					t.Errorf("result = %q, %v", out, err)
				}
				return
			}
			if !errors.Is(err, tt.kind) || err.Error() != tt.want {
				t.Errorf("error = %v, want %s", err, tt.want)
			}
		})
	}
	host.calls = nil
	if _, err := e.Run(context.Background(), echo, json.RawMessage(`{"s":"`+strings.Repeat("a", 64)+`"}`), host, fixedEnv()); err == nil {
		t.Fatal("oversized arguments accepted")
	}
	if got := host.recorded(); len(got) != 0 {
		t.Errorf("a call with oversized arguments ran: %q", got)
	}
}

func TestDeterministicClockAndRandom(t *testing.T) {
	s := mustCompile(t, "clock.js", tool(`() => [Date.now(), new Date().toISOString(), Math.random(), Math.random()].join(" ")`))
	e := NewEngine(Limits{})
	want := "1893553445000 2030-01-02T03:04:05.000Z 0.1 0.2"
	for range 3 {
		out, err := e.Run(context.Background(), s, nil, nil, fixedEnv())
		if err != nil || out != want {
			t.Fatalf("result = %q, %v; want %q", out, err, want)
		}
	}
	other := CallEnv{Now: time.Unix(0, 0), Rand: func() float64 { return 0.75 }}
	if out, err := e.Run(context.Background(), s, nil, nil, other); err != nil || out != "0 1970-01-01T00:00:00.000Z 0.75 0.75" {
		t.Errorf("another env: %q, %v", out, err)
	}
	noRand := CallEnv{Now: time.Unix(0, 0)}
	if _, err := e.Run(context.Background(), s, nil, nil, noRand); err == nil || !strings.Contains(err.Error(), "Math.random is unavailable") {
		t.Errorf("a call without a random source: %v", err)
	}
}

func TestConcurrentCalls(t *testing.T) {
	s := mustCompile(t, "concurrent.js", tool(`(args, host) => {
  let total = 0;
  for (let i = 0; i < args.n; i++) total += i;
  host.log("n=" + args.n);
  return { n: args.n, total, r: Math.random() };
}`))
	e := NewEngine(Limits{})
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Go(func() {
			host := &fakeHost{}
			for i := range 20 {
				n := g*100 + i
				out, err := e.Run(context.Background(), s, json.RawMessage(fmt.Sprintf(`{"n":%d}`, n)), host, fixedEnv())
				want := fmt.Sprintf(`{"n":%d,"total":%d,"r":0.1}`, n, n*(n-1)/2)
				if err != nil || out != want {
					errs <- fmt.Errorf("goroutine %d call %d: %q, %v; want %q", g, i, out, err, want)
					return
				}
			}
			if calls := host.recorded(); len(calls) != 20 || calls[19] != fmt.Sprintf("log(n=%d)", g*100+19) {
				errs <- fmt.Errorf("goroutine %d: host calls %q", g, calls)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestClosedEngine(t *testing.T) {
	e := NewEngine(Limits{})
	s := mustCompile(t, "t.js", tool(`() => 1`))
	if out, err := e.Run(context.Background(), s, nil, nil, fixedEnv()); err != nil || out != "1" {
		t.Fatalf("before Close: %q, %v", out, err)
	}
	e.Close()
	if _, err := e.Run(context.Background(), s, nil, nil, fixedEnv()); !errors.Is(err, ErrClosed) {
		t.Errorf("after Close: %v", err)
	}
	if _, err := e.Run(context.Background(), nil, nil, nil, fixedEnv()); !errors.Is(err, ErrDefinition) {
		t.Errorf("a nil script: %v", err)
	}
}

func TestIdleRuntimesAreReleased(t *testing.T) {
	s := mustCompile(t, "t.js", tool(`() => 1`))
	tests := []struct {
		name    string
		release func(*Engine)
	}{
		{"Close", func(e *Engine) { e.Close() }},
		{"garbage collection", func(*Engine) {}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			baseline := runtime.NumGoroutine()
			e := NewEngine(Limits{})
			var wg sync.WaitGroup
			for range 4 {
				wg.Go(func() {
					if _, err := e.Run(context.Background(), s, nil, nil, fixedEnv()); err != nil {
						t.Error(err)
					}
				})
			}
			wg.Wait()
			// Calls run on their callers' goroutines: an engine keeps none of its own. (Goroutines
			// of earlier tests, a timer's callback or a server winding down, may still be
			// finishing: the count must come back to the baseline, not stay above it.)
			waitForGoroutines(t, baseline)
			w := e.acquire()
			idle := weak.Make(w)
			e.idle.Put(w)
			w = nil
			tt.release(e)
			// sync.Pool drops what survived one collection at the next; the heap watch's sampler,
			// winding down after the last call, may hold the runtime for a moment.
			if !collected(func() bool { return idle.Value() == nil }) {
				t.Error("an idle runtime is still reachable")
			}
		})
	}
}

func TestDefaultLimits(t *testing.T) {
	got := NewEngine(Limits{MaxCallStack: 10}).limits
	want := DefaultLimits()
	want.MaxCallStack, want.WallTimeout = 10, 40*time.Second // twenty times the CPU budget
	if got != want {
		t.Errorf("limits = %+v, want %+v", got, want)
	}
	if d := DefaultLimits(); d.CallTimeout != 2*time.Second || d.MaxCallStack != 256 || d.MaxArgBytes != 1<<20 ||
		d.MaxResultBytes != 1<<20 || d.MaxStringBytes != 4<<20 {
		t.Errorf("DefaultLimits() = %+v", d)
	}
}

// waitForGoroutines fails t unless the goroutine count comes back to at most baseline within a
// few seconds.
func waitForGoroutines(t *testing.T, baseline int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > baseline {
		if time.Now().After(deadline) {
			t.Errorf("%d goroutines remain, %d before", runtime.NumGoroutine(), baseline)
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// collected runs collections until done reports true (at least three, so that what sync.Pool
// kept through one goes at the next), for up to ten seconds: a goroutine still winding down, the
// heap watch's sampler among them, may hold an object for a moment on a busy machine.
func collected(done func() bool) bool {
	deadline := time.Now().Add(10 * time.Second)
	for i := 0; ; i++ {
		runtime.GC()
		if i >= 2 && done() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
}
