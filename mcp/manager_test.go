package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/warrenhq/warren/mcp"
	"github.com/warrenhq/warren/mcp/mcpconfig"
	"github.com/warrenhq/warren/tools"
)

var transports = []string{"stdio", "http"}

func TestDiscover(t *testing.T) {
	all := []string{"kv__big", "kv__crash", "kv__echo", "kv__garbage", "kv__kv_get", "kv__kv_list", "kv__kv_set", "kv__slow"}
	tests := []struct {
		name      string
		allow     []string
		wantNames []string
		wantErr   error
		errHas    []string
	}{
		{name: "all tools", wantNames: all},
		{name: "allow-list", allow: []string{"kv_get", "echo", "kv_get"}, wantNames: []string{"kv__echo", "kv__kv_get"}},
		{name: "allow-list names an unknown tool", allow: []string{"echo", "kv_nope"}, wantErr: mcp.ErrUnknownServerTool,
			errHas: []string{"kv_nope", "big, crash, echo, garbage, kv_get, kv_list, kv_set, slow", "host.toml"}},
	}
	for _, transport := range transports {
		for _, tc := range tests {
			t.Run(transport+"/"+tc.name, func(t *testing.T) {
				cfg := configFor(t, transport, "kv")
				cfg.Tools = tc.allow
				infos, err := mcp.Discover(context.Background(), cfg)
				if tc.wantErr != nil {
					if !errors.Is(err, tc.wantErr) {
						t.Fatalf("err = %v, want %v", err, tc.wantErr)
					}
					for _, s := range tc.errHas {
						if !strings.Contains(err.Error(), s) {
							t.Errorf("error %q lacks %q", err, s)
						}
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				var names []string
				for _, info := range infos {
					names = append(names, info.Name)
					if info.Server != "kv" || mcpconfig.ToolName(info.Server, info.Tool) != info.Name {
						t.Errorf("info %+v: inconsistent names", info)
					}
				}
				if fmt.Sprint(names) != fmt.Sprint(tc.wantNames) {
					t.Fatalf("names = %v, want %v", names, tc.wantNames)
				}
				for _, info := range infos {
					if info.Tool != "kv_get" {
						continue
					}
					var schema struct {
						Type       string                     `json:"type"`
						Properties map[string]json.RawMessage `json:"properties"`
						Required   []string                   `json:"required"`
					}
					if err := json.Unmarshal(info.Parameters, &schema); err != nil {
						t.Fatal(err)
					}
					if schema.Type != "object" || schema.Properties["key"] == nil || fmt.Sprint(schema.Required) != "[key]" {
						t.Errorf("kv_get schema = %s", info.Parameters)
					}
					if _, err := tools.NewHandle(toolOf(newManager(t, mcp.Options{}), "kv", "kv_get")); err != nil {
						t.Errorf("handle: %v", err)
					}
				}
			})
		}
	}
}

func TestDiscoverStartFailure(t *testing.T) {
	tests := []struct {
		name string
		cfg  mcpconfig.Server
		want []error
	}{
		{name: "no such command", cfg: mcpconfig.Server{Name: "kv", Command: "/nonexistent/mcpserver"}, want: []error{mcp.ErrStart}},
		{name: "exits at once", cfg: mcpconfig.Server{Name: "kv", Command: mcpserverPath, Args: []string{"--transport", "bogus"}},
			want: []error{mcp.ErrStart, mcp.ErrServerExited}},
		{name: "not an MCP server", cfg: mcpconfig.Server{Name: "kv", Command: "/bin/sh", Args: []string{"-c", "echo hello; sleep 5"}},
			want: []error{mcp.ErrStart, mcp.ErrProtocol}},
		{name: "nothing listens", cfg: mcpconfig.Server{Name: "kv", URL: "http://127.0.0.1:1/mcp"}, want: []error{mcp.ErrStart}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.cfg.Dir = t.TempDir()
			start := time.Now()
			_, err := mcp.Discover(context.Background(), &tc.cfg)
			for _, want := range tc.want {
				if !errors.Is(err, want) {
					t.Errorf("err = %v, want %v", err, want)
				}
			}
			if elapsed := time.Since(start); elapsed > 5*time.Second {
				t.Errorf("took %v", elapsed)
			}
		})
	}
}

func TestCalls(t *testing.T) {
	for _, transport := range transports {
		t.Run(transport, func(t *testing.T) {
			m := newManager(t, mcp.Options{}, configFor(t, transport, "kv"))
			tests := []struct {
				name, tool, args, want string
				wantErr                bool
			}{
				{name: "echo", tool: "echo", args: `{"text":"héllo"}`, want: "héllo"},
				{name: "set", tool: "kv_set", args: `{"key":"k","value":"v"}`, want: "ok"},
				{name: "get", tool: "kv_get", args: `{"key":"k"}`, want: "v"},
				{name: "get missing is a tool error", tool: "kv_get", args: `{"key":"nope"}`, want: "key not found", wantErr: true},
				{name: "bad arguments are the server's error", tool: "slow", args: `{"ms":-1}`, wantErr: true},
			}
			for _, tc := range tests {
				t.Run(tc.name, func(t *testing.T) {
					res := call(t, toolOf(m, "kv", tc.tool), tc.args)
					if res.IsError != tc.wantErr || !strings.Contains(res.Content, tc.want) {
						t.Fatalf("result = %+v, want error=%v containing %q", res, tc.wantErr, tc.want)
					}
					wantNote := tools.Note{Fn: "mcp", Text: "kv/" + tc.tool + " session 1", OK: !tc.wantErr}
					if tc.wantErr {
						wantNote.Err = "the tool reported an error"
					}
					if len(res.Notes) != 1 || res.Notes[0] != wantNote {
						t.Fatalf("notes = %+v, want [%+v]", res.Notes, wantNote)
					}
				})
			}
		})
	}
}

func TestLazyStart(t *testing.T) {
	m := newManager(t, mcp.Options{}, stdioConfig(t, "kv"))
	m.Lease("kv")
	if st := m.Stats("kv"); st.Starts != 0 || st.Pid != 0 || st.Leases != 1 {
		t.Fatalf("before the first call: %+v", st)
	}
	if events := m.Drain(); len(events) != 0 {
		t.Fatalf("events before the first call: %+v", events)
	}
	mustOK(t, call(t, toolOf(m, "kv", "echo"), `{"text":"x"}`))
	if st := m.Stats("kv"); st.Starts != 1 || st.Pid == 0 || st.Session != 1 || st.Calls != 1 {
		t.Fatalf("after the first call: %+v", st)
	}
}

func TestConcurrentCalls(t *testing.T) {
	const callers = 1000
	for _, transport := range transports {
		t.Run(transport, func(t *testing.T) {
			m := newManager(t, mcp.Options{}, configFor(t, transport, "kv"))
			set := toolOf(m, "kv", "kv_set")
			var wg sync.WaitGroup
			failures := make(chan string, callers)
			for i := range callers {
				wg.Go(func() {
					res := call(t, set, fmt.Sprintf(`{"key":"k%04d","value":"%d"}`, i, i))
					if res.IsError {
						failures <- res.Content
					}
				})
			}
			wg.Wait()
			close(failures)
			for f := range failures {
				t.Fatalf("a call failed: %s", f)
			}
			var entries []struct{ Key, Value string }
			if err := json.Unmarshal([]byte(mustOK(t, call(t, toolOf(m, "kv", "kv_list"), `{}`))), &entries); err != nil {
				t.Fatal(err)
			}
			if len(entries) != callers || entries[0].Key != "k0000" || entries[callers-1].Value != "999" {
				t.Fatalf("kv_list has %d entries", len(entries))
			}
			if st := m.Stats("kv"); st.Starts != 1 || st.Calls != callers+1 || st.InFlight != 0 {
				t.Fatalf("stats %+v", st)
			}
		})
	}
}

// eventKinds renders events as "kind:session:reason" for comparison.
func eventKinds(events []mcp.Event) []string {
	out := make([]string, len(events))
	for i, ev := range events {
		out[i] = fmt.Sprintf("%s:%s:%d:%s", ev.Server, ev.Kind, ev.Session, ev.Reason)
	}
	return out
}

func TestCrashWithCallInFlight(t *testing.T) {
	m := newManager(t, mcp.Options{RestartBackoff: 50 * time.Millisecond}, stdioConfig(t, "kv"))
	mustOK(t, call(t, toolOf(m, "kv", "echo"), `{"text":"warm"}`))
	slowDone := make(chan tools.Result, 1)
	go func() { slowDone <- call(t, toolOf(m, "kv", "slow"), `{"ms":60000}`) }()
	waitFor(t, func() bool { return m.Stats("kv").InFlight == 1 })
	time.Sleep(50 * time.Millisecond) // let the slow call reach the server
	start := time.Now()
	crash := call(t, toolOf(m, "kv", "crash"), `{}`)
	slow := <-slowDone
	if elapsed := time.Since(start); elapsed > 3*time.Second {
		t.Fatalf("the calls took %v to fail", elapsed)
	}
	want := "server kv exited (exit status 3) during the call; it is restarted on the next call"
	for _, res := range []tools.Result{crash, slow} {
		if !res.IsError || res.Content != want || res.Notes[0].OK || res.Notes[0].Err != want {
			t.Errorf("result = %+v, want error %q", res, want)
		}
	}
	got := eventKinds(m.Drain())
	if fmt.Sprint(got) != fmt.Sprint([]string{"kv:start:1:", "kv:exit:1:exit status 3"}) {
		t.Fatalf("events = %q", got)
	}
	res := mustOK(t, call(t, toolOf(m, "kv", "echo"), `{"text":"again"}`))
	if res != "again" {
		t.Fatalf("after restart: %q", res)
	}
	if got := eventKinds(m.Drain()); fmt.Sprint(got) != fmt.Sprint([]string{"kv:restart:2:exit status 3"}) {
		t.Fatalf("events = %q", got)
	}
	if st := m.Stats("kv"); st.Restarts != 1 || st.Exits != 1 || st.Session != 2 {
		t.Fatalf("stats %+v", st)
	}
}

// TestServerKilledFromOutside: a stdio server killed by someone else (SIGKILL) while calls are in
// flight ends them all at once with error results, and the next call restarts it.
func TestServerKilledFromOutside(t *testing.T) {
	m := newManager(t, mcp.Options{RestartBackoff: 50 * time.Millisecond}, stdioConfig(t, "kv"))
	mustOK(t, call(t, toolOf(m, "kv", "echo"), `{"text":"warm"}`))
	const inFlight = 5
	done := make(chan tools.Result, inFlight)
	for range inFlight {
		go func() { done <- call(t, toolOf(m, "kv", "slow"), `{"ms":60000}`) }()
	}
	waitFor(t, func() bool { return m.Stats("kv").InFlight == inFlight })
	time.Sleep(50 * time.Millisecond) // let the calls reach the server
	start := time.Now()
	if err := syscall.Kill(m.Stats("kv").Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	want := "server kv exited (signal: killed) during the call; it is restarted on the next call"
	for range inFlight {
		if res := <-done; !res.IsError || res.Content != want {
			t.Errorf("result %+v, want the error %q", res, want)
		}
	}
	if elapsed := time.Since(start); elapsed > 3*time.Second {
		t.Errorf("the calls took %v to fail", elapsed)
	}
	if got := mustOK(t, call(t, toolOf(m, "kv", "echo"), `{"text":"back"}`)); got != "back" {
		t.Errorf("after the restart: %q", got)
	}
	if got := eventKinds(m.Drain()); fmt.Sprint(got) != fmt.Sprint([]string{"kv:start:1:", "kv:exit:1:signal: killed", "kv:restart:2:signal: killed"}) {
		t.Errorf("events = %q", got)
	}
}

// waitFor polls cond for up to 5s.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached within 5s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestCallTimeout(t *testing.T) {
	for _, transport := range transports {
		t.Run(transport, func(t *testing.T) {
			cfg := configFor(t, transport, "kv")
			// Long enough that the echo after it never hits it on a loaded machine under -race.
			cfg.CallTimeout = 3 * time.Second
			m := newManager(t, mcp.Options{}, cfg)
			start := time.Now()
			res := call(t, toolOf(m, "kv", "slow"), `{"ms":60000}`)
			want := "kv__slow: no reply within 3s (call_timeout); the call was cancelled"
			if !res.IsError || res.Content != want || res.Notes[0].Err != want {
				t.Fatalf("result = %+v, want %q", res, want)
			}
			if len(res.Notes) != 2 || res.Notes[1] != tools.RealTimeNote("mcp call_timeout 3s") {
				t.Fatalf("notes = %+v, want the call_timeout noted as a real-time limit", res.Notes)
			}
			if elapsed := time.Since(start); elapsed > 20*time.Second {
				t.Fatalf("timed out after %v", elapsed)
			}
			if got := mustOK(t, call(t, toolOf(m, "kv", "echo"), `{"text":"still here"}`)); got != "still here" {
				t.Fatalf("next call: %q", got)
			}
			if st := m.Stats("kv"); st.Starts != 1 || st.Exits != 0 {
				t.Fatalf("the session did not survive: %+v", st)
			}
		})
	}
}

func TestCallerCancel(t *testing.T) {
	m := newManager(t, mcp.Options{}, stdioConfig(t, "kv"))
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	res, err := toolOf(m, "kv", "slow").Execute(tools.NewExecContext(ctx, "c", 1, tools.AgentRef{}, ""), json.RawMessage(`{"ms":60000}`))
	if err != nil || !res.IsError || !strings.Contains(res.Content, "the call was cancelled") {
		t.Fatalf("result = %+v, %v", res, err)
	}
}

func TestGarbage(t *testing.T) {
	tests := []struct {
		transport  string
		want       string
		wantEvents []string
	}{
		{transport: "stdio", want: `server kv sent a malformed reply: "this is not JSON-RPC <<garbage>>"`,
			wantEvents: []string{"kv:start:1:", `kv:exit:1:malformed reply: "this is not JSON-RPC <<garbage>>"`,
				`kv:restart:2:malformed reply: "this is not JSON-RPC <<garbage>>"`}},
		{transport: "http", want: "kv__garbage: server kv failed the call: ", wantEvents: []string{"kv:start:1:"}},
	}
	for _, tc := range tests {
		t.Run(tc.transport, func(t *testing.T) {
			m := newManager(t, mcp.Options{}, configFor(t, tc.transport, "kv"))
			res := call(t, toolOf(m, "kv", "garbage"), `{}`)
			if !res.IsError || !strings.HasPrefix(res.Content, tc.want) || res.Notes[0].OK {
				t.Fatalf("result = %+v, want prefix %q", res, tc.want)
			}
			if got := mustOK(t, call(t, toolOf(m, "kv", "echo"), `{"text":"ok"}`)); got != "ok" {
				t.Fatalf("next call: %q", got)
			}
			if got := eventKinds(m.Drain()); fmt.Sprint(got) != fmt.Sprint(tc.wantEvents) {
				t.Fatalf("events = %q, want %q", got, tc.wantEvents)
			}
		})
	}
}

func TestBigResultIsCut(t *testing.T) {
	cfg := stdioConfig(t, "kv")
	cfg.MaxResultBytes = 64 << 10
	m := newManager(t, mcp.Options{}, cfg)
	got := mustOK(t, call(t, toolOf(m, "kv", "big"), `{"bytes":1048576}`))
	note := "\n[cut: the result was 1048576 bytes; max_result_bytes is 65536]"
	if !strings.HasSuffix(got, note) || len(got) != 65536+len(note) {
		t.Fatalf("result of %d bytes ends %q", len(got), got[max(0, len(got)-80):])
	}
}

func TestLeases(t *testing.T) {
	m := newManager(t, mcp.Options{}, stdioConfig(t, "kv"))
	echo := toolOf(m, "kv", "echo")
	m.Lease("kv")
	m.Lease("kv")
	mustOK(t, call(t, echo, `{"text":"1"}`))
	pid := m.Stats("kv").Pid
	m.Release("kv")
	if st := m.Stats("kv"); st.Session != 1 || st.Leases != 1 {
		t.Fatalf("one lease left: %+v", st)
	}
	m.Release("kv")
	if st := m.Stats("kv"); st.Session != 0 || st.Stops != 1 {
		t.Fatalf("no lease left: %+v", st)
	}
	waitFor(t, func() bool { return !processAlive(pid) })
	m.Lease("kv")
	res := call(t, echo, `{"text":"2"}`)
	mustOK(t, res)
	if res.Notes[0].Text != "kv/echo session 2" {
		t.Fatalf("note %+v", res.Notes[0])
	}
	// With a call in flight, the last release stops the session only when the call ends.
	slowDone := make(chan tools.Result, 1)
	go func() { slowDone <- call(t, toolOf(m, "kv", "slow"), `{"ms":300}`) }()
	waitFor(t, func() bool { return m.Stats("kv").InFlight == 1 })
	m.Release("kv")
	if st := m.Stats("kv"); st.Session != 2 {
		t.Fatalf("stopped under a call: %+v", st)
	}
	mustOK(t, <-slowDone)
	waitFor(t, func() bool { return m.Stats("kv").Session == 0 })
	want := []string{"kv:start:1:", "kv:stop:1:no agent holds a lease", "kv:start:2:", "kv:stop:2:no agent holds a lease"}
	if got := eventKinds(m.Drain()); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("events = %q, want %q", got, want)
	}
	m.Release("kv") // more releases than leases: ignored
	if st := m.Stats("kv"); st.Leases != 0 {
		t.Fatalf("leases %d", st.Leases)
	}
}

// processAlive reports whether pid still exists (a zombie counts as gone: it was reaped or is
// about to be).
func processAlive(pid int) bool {
	return syscall.Kill(pid, 0) == nil
}

func TestClose(t *testing.T) {
	before := runtime.NumGoroutine()
	m := mcp.NewManager(mcp.Options{})
	for _, name := range []string{"a", "b"} {
		if err := m.Add(stdioConfig(t, name)); err != nil {
			t.Fatal(err)
		}
	}
	mustOK(t, call(t, toolOf(m, "a", "echo"), `{"text":"x"}`))
	mustOK(t, call(t, toolOf(m, "b", "echo"), `{"text":"x"}`))
	pids := []int{m.Stats("a").Pid, m.Stats("b").Pid}
	slowDone := make(chan tools.Result, 1)
	go func() { slowDone <- call(t, toolOf(m, "a", "slow"), `{"ms":60000}`) }()
	waitFor(t, func() bool { return m.Stats("a").InFlight == 1 })
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if res := <-slowDone; !res.IsError || !strings.Contains(res.Content, "world ended") {
		t.Fatalf("call in flight at close: %+v", res)
	}
	for _, pid := range pids {
		if processAlive(pid) {
			t.Errorf("pid %d still alive after Close", pid)
		}
	}
	if err := m.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	want := []string{"a:start:1:", "a:stop:1:world ended", "b:start:1:", "b:stop:1:world ended"}
	if got := eventKinds(m.Drain()); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("events = %q, want %q", got, want)
	}
	res := call(t, toolOf(m, "a", "echo"), `{"text":"late"}`)
	if !res.IsError || !strings.Contains(res.Content, "closed") || len(res.Notes) != 1 {
		t.Fatalf("call after close: %+v", res)
	}
	if err := m.Add(stdioConfig(t, "c")); !errors.Is(err, mcp.ErrClosed) {
		t.Fatalf("Add after Close: %v", err)
	}
	// Every goroutine the Manager and mcp-go started is gone (mcp-go's best-effort cancel
	// notifications end within their own timeout).
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if after := runtime.NumGoroutine(); after > before {
		buf := make([]byte, 1<<16)
		t.Fatalf("%d goroutines before, %d after:\n%s", before, after, buf[:runtime.Stack(buf, true)])
	}
}

func TestDrainOrder(t *testing.T) {
	m := newManager(t, mcp.Options{}, stdioConfig(t, "zeta"), stdioConfig(t, "alpha"))
	mustOK(t, call(t, toolOf(m, "zeta", "echo"), `{"text":"x"}`))
	mustOK(t, call(t, toolOf(m, "alpha", "echo"), `{"text":"x"}`))
	m.Lease("zeta")
	m.Release("zeta")
	want := []string{"alpha:start:1:", "zeta:start:1:", "zeta:stop:1:no agent holds a lease"}
	if got := eventKinds(m.Drain()); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("events = %q, want %q", got, want)
	}
	if got := m.Drain(); len(got) != 0 {
		t.Fatalf("second drain: %+v", got)
	}
}

func TestManagerErrors(t *testing.T) {
	m := newManager(t, mcp.Options{}, stdioConfig(t, "kv"))
	if err := m.Add(stdioConfig(t, "kv")); !errors.Is(err, mcp.ErrDuplicateServer) {
		t.Errorf("duplicate Add: %v", err)
	}
	if _, err := toolOf(m, "nope", "echo").Execute(nil, json.RawMessage(`{}`)); !errors.Is(err, mcp.ErrUnknownServer) {
		t.Errorf("unknown server: %v", err)
	}
	if st := m.Stats("nope"); st != (mcp.Stats{}) {
		t.Errorf("stats of an unknown server: %+v", st)
	}
	m.Lease("nope") // ignored, must not panic
	m.Release("nope")
	broken := newManager(t, mcp.Options{}, &mcpconfig.Server{Name: "gone", Command: "/nonexistent/server", Dir: t.TempDir()})
	res := call(t, toolOf(broken, "gone", "echo"), `{}`)
	if !res.IsError || !strings.Contains(res.Content, "could not start") || res.Notes[0].Text != "gone/echo session 1" {
		t.Errorf("start failure: %+v", res)
	}
	if got := eventKinds(broken.Drain()); len(got) != 1 || !strings.HasPrefix(got[0], "gone:exit:1:start failed: ") {
		t.Errorf("events = %q", got)
	}
}

// TestCrash: Crash kills a live stdio session as if it had died, with its exit recorded before it
// returns, and the next call restarts the server; with no live session, or over HTTP (a process
// the host does not own), there is nothing to crash.
func TestCrash(t *testing.T) {
	m := newManager(t, mcp.Options{}, configFor(t, "stdio", "kv"))
	if m.Crash("kv") {
		t.Fatal("crashed a server with no live session")
	}
	mustOK(t, call(t, toolOf(m, "kv", "kv_set"), `{"key":"k","value":"v"}`))
	if !m.Crash("kv") {
		t.Fatal("the live session was not crashed")
	}
	var kinds []string
	for _, e := range m.Drain() {
		kinds = append(kinds, e.Kind+" "+e.Reason)
	}
	if strings.Join(kinds, "|") != "start |exit signal: killed" {
		t.Fatalf("events %q, want the start and the exit, recorded when Crash returned", kinds)
	}
	if got := call(t, toolOf(m, "kv", "kv_get"), `{"key":"k"}`); !got.IsError || !strings.Contains(got.Content, "not found") {
		t.Fatalf("after the crash the store must be gone with its process: %+v", got)
	}
	if st := m.Stats("kv"); st.Starts != 2 || st.Restarts != 1 || st.Exits != 1 {
		t.Fatalf("stats %+v, want a restart after the crash", st)
	}
	h := newManager(t, mcp.Options{}, configFor(t, "http", "kv"))
	mustOK(t, call(t, toolOf(h, "kv", "echo"), `{"text":"x"}`))
	if h.Crash("kv") {
		t.Fatal("crashed an HTTP server, whose process is not the host's")
	}
}

// TestReadOnlyIsTheConfigsWord: a tool is read-only, for the read-only floor, only when the
// entry's read_only_tools vouches for it. The demo server annotates kv_get, kv_list and others
// readOnlyHint, which a hostile server can say of a tool that writes (issue 31: the read-only
// floor let a side-effecting call through); the annotation alone declares nothing.
func TestReadOnlyIsTheConfigsWord(t *testing.T) {
	for _, transport := range transports {
		t.Run(transport, func(t *testing.T) {
			cfg := configFor(t, transport, "kv")
			cfg.ReadOnlyTools = []string{"kv_list"}
			infos, err := mcp.Discover(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			for _, info := range infos {
				vouched := info.Tool == "kv_list"
				if got := info.Effects.ReadOnly(); got != vouched {
					t.Errorf("%s: read-only %v (%s), want %v: only read_only_tools makes a tool read-only", info.Tool, got, info.Effects, vouched)
				}
			}
			cfg.ReadOnlyTools = []string{"kv_nope"}
			if _, err := mcp.Discover(context.Background(), cfg); !errors.Is(err, mcp.ErrUnknownServerTool) || !strings.Contains(err.Error(), "read_only_tools names kv_nope") {
				t.Errorf("read_only_tools naming no tool: %v, want ErrUnknownServerTool naming it", err)
			}
		})
	}
}
