package systems_test

import (
	"encoding/json"
	"slices"
	"sync"
	"testing"

	"github.com/warrenhq/warren/mcp"
	"github.com/warrenhq/warren/tools"
)

// fakeServers stands in for mcp.Manager: it counts leases per server, and a call of its tool
// starts the session on the lane (an event, as the real manager records one), so the test sees
// when the world writes what happened during lane work.
type fakeServers struct {
	mu      sync.Mutex
	leases  map[string]int
	peak    map[string]int
	pending []mcp.Event
	started bool
	closed  bool
}

func newFakeServers() *fakeServers {
	return &fakeServers{leases: map[string]int{}, peak: map[string]int{}}
}

func (f *fakeServers) Lease(server string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.leases[server]++
	f.peak[server] = max(f.peak[server], f.leases[server])
}

func (f *fakeServers) Replayed(string, string, uint64) {}
func (f *fakeServers) Crash(string) bool               { return false }

func (f *fakeServers) Release(server string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.leases[server]--
	if f.leases[server] == 0 && f.started {
		f.pending = append(f.pending, mcp.Event{Server: server, Kind: mcp.EventStop, Session: 1, Transport: "stdio", Reason: mcp.ReasonNoLease})
	}
}

func (f *fakeServers) Drain() []mcp.Event {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := f.pending
	f.pending = nil
	return out
}

func (f *fakeServers) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed = true
	return nil
}

// call is what the server's tool does on the lane: the first call starts the session.
func (f *fakeServers) call() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.started {
		f.started = true
		f.pending = append(f.pending, mcp.Event{Server: "kv", Kind: mcp.EventStart, Session: 1, Transport: "stdio"})
	}
}

// serverTool is the fake server's one tool, run on the tool lane.
type serverTool struct{ servers *fakeServers }

var _ tools.Tool = serverTool{}

func (serverTool) Spec() tools.Spec {
	return tools.Spec{Name: "kv__get", Description: "a server's tool", Parameters: json.RawMessage(`{"type":"object"}`)}
}

func (t serverTool) Execute(*tools.ExecContext, json.RawMessage) (tools.Result, error) {
	t.servers.call()
	return tools.TextResult("value"), nil
}

const serverBlueprint = `
name = "client"

[[stages]]
name = "work"
available_tools = ["kv__get"]
`

// TestServerLeasesAndEvents: every agent of a profile that advertises a server's tools leases
// it from spawn to reap; the session's start, caused on the lane, is written by mcp_events at the
// first tick after the call, as a world-level event; the stop caused by the last reap is written
// at the next tick, and a server no profile uses is never leased.
func TestServerLeasesAndEvents(t *testing.T) {
	servers := newFakeServers()
	h := newHarness(t, options{servers: servers})
	if err := h.scoped.Base().Register(serverTool{servers}); err != nil {
		t.Fatal(err)
	}
	h.known = append(h.known, "kv__get")
	bp := h.blueprint(serverBlueprint)
	model := scripted(t, "scripted:client", turn("", call("kv__get", "x")), turn("done"))
	p := h.profile("clients", bp, model, "")
	p.MCPServers = []string{"kv"}
	h.spawn(p, 3)
	if got := servers.leases["kv"]; got != 3 {
		t.Fatalf("after spawn: %d leases, want 3", got)
	}
	h.run(50)

	if got, peak := servers.leases["kv"], servers.peak["kv"]; got != 0 || peak != 3 {
		t.Errorf("after the run: %d leases (peak %d), want 0 (peak 3)", got, peak)
	}
	if _, other := servers.leases["other"]; other {
		t.Error("a server no profile advertises was leased")
	}
	events := h.events("mcp_server", "")
	if len(events) != 2 {
		t.Fatalf("%d mcp_server events, want start and stop: %+v", len(events), events)
	}
	var firstCall, lastReap uint64
	for _, e := range h.events("tool_call", "") {
		if firstCall == 0 || e.Tick < firstCall {
			firstCall = e.Tick
		}
	}
	for _, e := range h.events("reap", "") {
		lastReap = max(lastReap, e.Tick)
	}
	start, stop := events[0], events[1]
	if start.Event != "start" || start.Server != "kv" || start.Session != 1 || start.Agent != 0 || start.Name != "" || start.Tick != firstCall+1 {
		t.Errorf("start event %+v, want kv session 1 at tick %d (after the first call at %d), agent 0", start, firstCall+1, firstCall)
	}
	if stop.Event != "stop" || stop.Reason != mcp.ReasonNoLease || stop.Tick != lastReap+1 {
		t.Errorf("stop event %+v, want %q at tick %d (after the last reap at %d)", stop, mcp.ReasonNoLease, lastReap+1, lastReap)
	}
	if !slices.IsSortedFunc(h.events("", ""), func(a, b event) int { return int(a.Tick) - int(b.Tick) }) {
		t.Error("the events' ticks are not in order")
	}
}
