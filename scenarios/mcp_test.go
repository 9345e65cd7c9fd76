package scenarios_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/warrenhq/warren"
	"github.com/warrenhq/warren/components"
	"github.com/warrenhq/warren/internal/mcpdemo"
	"github.com/warrenhq/warren/mcp/mcpconfig"
	"github.com/warrenhq/warren/scenarios"
)

// mcpClientBlueprint is a one-stage client of the server "kv".
const mcpClientBlueprint = `
name = "client"

[[stages]]
name = "work"
connectors = ["kv"]
max_iterations = 6
`

// mcpScenario is a scenario of count clients whose scripted model makes turns (TOML of
// [[models.client.turns]] entries), under a [host] table that declares the server with entry.
func mcpScenario(entry, turns string, count int) map[string]string {
	return map[string]string{
		"client.toml": mcpClientBlueprint,
		"s.toml": fmt.Sprintf(`
name = "mcp-test"
seed = 1

[lanes]
tool_workers = 16

[blueprints]
client = "client.toml"

[host.tool_permissions]
kv__echo = "allow"
kv__kv_set = "allow"
kv__kv_get = "allow"
kv__slow = "allow"
kv__crash = "allow"
kv__garbage = "allow"

[[host.mcp_servers]]
name = "kv"
%s

[models.client]
kind = "scripted"
%s

[[groups]]
name = "clients"
blueprint = "client"
model = "client"
count = %d
`, entry, turns, count),
	}
}

// callTurn is one scripted turn making one call.
func callTurn(tool, args string) string {
	return fmt.Sprintf("  [[models.client.turns]]\n    [[models.client.turns.calls]]\n    tool = %q\n    args = %s\n", tool, args)
}

// runMCP loads and runs a scenario's files, returning the summary and the decoded trace.
func runMCP(t *testing.T, files map[string]string) (*warren.Summary, []gateEvent) {
	t.Helper()
	sum, tr := runTraced(t, writePolicyFiles(t, files), warren.Options{})
	return sum, decodeEvents(t, tr)
}

// serverEvents lists the mcp_server events as "event session reason".
func serverEvents(events []gateEvent) []string {
	var out []string
	for _, e := range events {
		if e.Kind == "mcp_server" {
			out = append(out, strings.TrimSpace(fmt.Sprintf("%s %d %s", e.Event, e.Session, e.Reason)))
		}
	}
	return out
}

// results lists an agent's tool results as "tool ok: content".
func results(events []gateEvent, agent string) []string {
	var out []string
	for _, e := range events {
		if e.Kind == "tool_result" && e.Name == agent {
			out = append(out, fmt.Sprintf("%s %v: %s", e.Tool, e.OK, e.Content))
		}
	}
	return out
}

const demoStdio = `command = "@demo"
args = ["--log-level", "error"]`

// TestMCPServerCrashMidRun: the server exits during a call; the call gets an error result, the
// session's exit is in the trace, and the agent's next call restarts the server (session 2),
// which answers. The run itself goes on.
func TestMCPServerCrashMidRun(t *testing.T) {
	turns := callTurn("kv__kv_set", `{ key = "k", value = "before" }`) + callTurn("kv__crash", "{}") +
		callTurn("kv__echo", `{ text = "after the crash" }`) + callTurn("kv__kv_get", `{ key = "k" }`) +
		"  [[models.client.turns]]\n  text = \"done\"\n"
	sum, events := runMCP(t, mcpScenario(demoStdio, turns, 1))
	if sum.ByStatus[components.Done] != 1 { // done
		t.Errorf("statuses %v, want the client done", sum.ByStatus)
	}
	got := results(events, "clients-0")
	want := []string{
		"kv__kv_set true: ok",
		"kv__crash false: server kv exited (exit status 3) during the call; it is restarted on the next call",
		"kv__echo true: after the crash",
		// The store lived in the process that crashed.
		`kv__kv_get false: "k": key not found`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("results:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	wantEvents := []string{"start 1", "exit 1 exit status 3", "restart 2 exit status 3", "stop 2 no agent holds a lease"}
	if got := serverEvents(events); strings.Join(got, "|") != strings.Join(wantEvents, "|") {
		t.Errorf("server events %q, want %q", got, wantEvents)
	}
}

// TestMCPHungCallTimesOut: a call past call_timeout is cancelled and reported, and neither the
// agent's next call nor the other agents wait for it.
func TestMCPHungCallTimesOut(t *testing.T) {
	files := mcpScenario(demoStdio+"\ncall_timeout = \"3s\"", callTurn("kv__slow", `{ ms = 60000 }`)+
		callTurn("kv__echo", `{ text = "still here" }`)+"  [[models.client.turns]]\n  text = \"done\"\n", 3)
	start := time.Now()
	sum, events := runMCP(t, files)
	if took := time.Since(start); took > 20*time.Second {
		t.Errorf("the run took %v: a hung call held it up", took)
	}
	if sum.ByStatus[components.Done] != 3 {
		t.Errorf("statuses %v, want 3 done", sum.ByStatus)
	}
	// The timeout is a real-time limit: the summary counts it and the trace notes each call.
	if sum.RealTimeLimits != 3 {
		t.Errorf("RealTimeLimits = %d, want 3", sum.RealTimeLimits)
	}
	notes := 0
	for _, e := range events {
		if e.Kind == "tool_note" && e.Fn == "realtime_limit" && e.Text == "mcp call_timeout 3s" {
			notes++
		}
	}
	if notes != 3 {
		t.Errorf("%d realtime_limit notes, want 3", notes)
	}
	for _, agent := range []string{"clients-0", "clients-1", "clients-2"} {
		got := results(events, agent)
		if len(got) != 2 || got[0] != "kv__slow false: kv__slow: no reply within 3s (call_timeout); the call was cancelled" ||
			got[1] != "kv__echo true: still here" {
			t.Errorf("%s: %q", agent, got)
		}
	}
}

// TestMCPGarbageReplyStdio: a server that writes a line that is not JSON-RPC breaks its session:
// the call gets an error result naming the line, and the next call gets a fresh session.
func TestMCPGarbageReplyStdio(t *testing.T) {
	turns := callTurn("kv__garbage", "{}") + callTurn("kv__echo", `{ text = "fresh" }`) + "  [[models.client.turns]]\n  text = \"done\"\n"
	_, events := runMCP(t, mcpScenario(demoStdio, turns, 1))
	got := results(events, "clients-0")
	if len(got) != 2 || !strings.HasPrefix(got[0], `kv__garbage false: server kv sent a malformed reply: "this is not JSON-RPC`) || got[1] != "kv__echo true: fresh" {
		t.Errorf("results %q", got)
	}
	evs := serverEvents(events)
	if len(evs) != 4 || !strings.HasPrefix(evs[1], "exit 1 malformed reply") || !strings.HasPrefix(evs[2], "restart 2 malformed reply") {
		t.Errorf("server events %q, want start, exit and restart for the malformed reply, stop", evs)
	}
}

// startHTTPDemo starts the demo server over streamable HTTP on loopback, as its own process
// (this test binary re-executed as the demo server), and returns its URL.
func startHTTPDemo(t *testing.T) string {
	t.Helper()
	cmd := &exec.Cmd{Path: "/proc/self/exe", Args: []string{mcpconfig.DemoReexecName, "--transport", "http", "--listen", "127.0.0.1:0", "--log-level", "error"}}
	url, err := mcpdemo.StartHTTP(cmd)
	if err != nil {
		t.Fatalf("the HTTP demo server: %v", err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
	})
	return url
}

// TestMCPOverHTTP: 200 agents share a streamable HTTP server on loopback: each stores and reads
// back its own key; a garbage body is an error result and the session goes on.
func TestMCPOverHTTP(t *testing.T) {
	url := startHTTPDemo(t)
	turns := callTurn("kv__kv_set", `{ key = "{{.Name}}", value = "v-{{.Name}}" }`) + callTurn("kv__kv_get", `{ key = "{{.Name}}" }`) +
		callTurn("kv__garbage", "{}") + callTurn("kv__echo", `{ text = "ok" }`) + "  [[models.client.turns]]\n  text = \"done\"\n"
	sum, events := runMCP(t, mcpScenario(fmt.Sprintf("url = %q\nmax_concurrency = 16", url), turns, 200))
	if sum.ByStatus[components.Done] != 200 {
		t.Fatalf("statuses %v, want 200 done", sum.ByStatus)
	}
	for _, agent := range []string{"clients-000", "clients-117", "clients-199"} {
		got := results(events, agent)
		want := []string{"kv__kv_set true: ok", "kv__kv_get true: v-" + agent}
		if len(got) != 4 || got[0] != want[0] || got[1] != want[1] || !strings.HasPrefix(got[2], "kv__garbage false: kv__garbage: server kv failed the call") ||
			got[3] != "kv__echo true: ok" {
			t.Errorf("%s: %q", agent, got)
		}
	}
	if evs := serverEvents(events); strings.Join(evs, "|") != "start 1|stop 1 no agent holds a lease" {
		t.Errorf("server events %q: the session should start once and stop after the last agent", evs)
	}
}

// TestMCPBlueprintServer: a blueprint's own server is refused unless the host config allows
// blueprint servers; allowed, its tools are discovered and called like the host's.
func TestMCPBlueprintServer(t *testing.T) {
	bp := `
name = "client"

[[mcp_servers]]
name = "own"
command = "@demo"
args = ["--log-level", "error"]
tools = ["echo"]

[[stages]]
name = "work"
available_tools = ["own__echo"]
`
	scenario := func(host string) map[string]string {
		return map[string]string{"client.toml": bp, "s.toml": `
name = "own-server"

[blueprints]
client = "client.toml"
` + host + `
[models.client]
kind = "scripted"
` + strings.ReplaceAll(callTurn("own__echo", `{ text = "mine" }`), "kv__", "own__") + `
[[groups]]
name = "clients"
blueprint = "client"
model = "client"
count = 2
`}
	}
	_, err := scenarios.Load(writePolicyFiles(t, scenario("")), scenarios.KnownTools())
	if !errors.Is(err, scenarios.ErrBlueprintServer) {
		t.Fatalf("without the host's opt-in: %v, want scenarios.ErrBlueprintServer", err)
	}
	for _, part := range []string{"s.toml:5:1: blueprints.client: blueprint MCP server refused:", "client.toml:4: mcp_servers[0] declares MCP server \"own\"",
		"allow_blueprint_servers = true"} {
		if !strings.Contains(err.Error(), part) {
			t.Errorf("the refusal does not say %q:\n%v", part, err)
		}
	}
	sum, events := runMCP(t, scenario("\n[host.mcp]\nallow_blueprint_servers = true\n[host.tool_permissions]\nown__echo = \"allow\"\n"))
	if sum.ToolCalls != 2 || sum.ToolErrors != 0 {
		t.Errorf("%d calls, %d errors; want 2 and 0", sum.ToolCalls, sum.ToolErrors)
	}
	if got := results(events, "clients-0"); len(got) != 1 || got[0] != "own__echo true: mine" {
		t.Errorf("results %q", got)
	}
}

// TestMCPLoadErrors: a stage naming a tool the server does not offer, and a server that cannot
// start, are load errors at their file, line and key.
func TestMCPLoadErrors(t *testing.T) {
	tests := []struct {
		name, entry, blueprint string
		want                   []string
	}{
		{"tool the server lacks", demoStdio, strings.Replace(mcpClientBlueprint, `connectors = ["kv"]`, `available_tools = ["kv__nope"]`, 1),
			[]string{"client.toml:6:20: stages[0].available_tools[0]: unknown tool \"kv__nope\"", "kv__echo"}},
		{"server that does not start", `command = "/nonexistent/server"`, mcpClientBlueprint,
			[]string{"s.toml:19: host.mcp_servers[0]: server \"kv\" could not list its tools", "/nonexistent/server: no such file or directory"}},
		{"allow-list naming a missing tool", demoStdio + "\ntools = [\"echo\", \"nope\"]", mcpClientBlueprint,
			[]string{"host.mcp_servers[0]", "nope"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := mcpScenario(tt.entry, callTurn("kv__echo", `{ text = "x" }`), 1)
			files["client.toml"] = tt.blueprint
			_, err := scenarios.Load(writePolicyFiles(t, files), scenarios.KnownTools())
			if err == nil {
				t.Fatal("the scenario loaded")
			}
			for _, part := range tt.want {
				if !strings.Contains(err.Error(), part) {
					t.Errorf("the error does not say %q:\n%v", part, err)
				}
			}
		})
	}
}

// TestMCPShippedScenarioAtFullSize runs the shipped scenario with its 1,001 agents and checks
// that every client stored and read back its line through the one session, and that the
// auditor's list was cut with a note.
func TestMCPShippedScenarioAtFullSize(t *testing.T) {
	sum, tr := runTraced(t, "examples/mcp.toml", warren.Options{})
	if len(sum.Failures) > 0 || sum.ByStatus[components.Done] != 1001 {
		t.Fatalf("statuses %v, failures %v", sum.ByStatus, sum.Failures)
	}
	events := decodeEvents(t, tr)
	if evs := serverEvents(events); strings.Join(evs, "|") != "start 1|stop 1 no agent holds a lease" {
		t.Errorf("server events %q", evs)
	}
	notes := 0
	for _, e := range events {
		if e.Kind == "tool_note" && e.Fn == "mcp" && e.OK {
			notes++
		}
	}
	if notes != 3002 {
		t.Errorf("%d successful mcp notes, want 3002 (3 per client, 2 for the auditor)", notes)
	}
	got := results(events, "auditors-0")
	if len(got) != 2 || !strings.Contains(got[1], "[cut: the result was") {
		t.Errorf("the auditor's results %q, want kv_list cut with a note", got)
	}
}

// TestMCPSubagentLeases: an agent that may spawn clients leases their server too, so the session
// outlives the children that come and go under it: a boss without MCP tools spawns three clients
// one after another and waits for each; one session serves them all and stops when the boss,
// the last agent that could call it, is reaped.
func TestMCPSubagentLeases(t *testing.T) {
	files := map[string]string{
		"client.toml": mcpClientBlueprint,
		"boss.toml": `
name = "boss"

[subagents]
spawnable = ["client"]

[[stages]]
name = "lead"
available_tools = ["spawn_agent", "wait_for_agent"]
max_iterations = 10
`,
		"s.toml": `
name = "mcp-tree"

[blueprints]
boss = "boss.toml"
client = "client.toml"

[spawn.client]
model = "client"

[host.tool_permissions]
kv__kv_set = "allow"

[[host.mcp_servers]]
name = "kv"
` + demoStdio + `

[models.boss]
kind = "scripted"
  [[models.boss.turns]]
  repeat = 3
    [[models.boss.turns.calls]]
    tool = "spawn_agent"
    args = { blueprint = "client", task = "record", wait = true }
  [[models.boss.turns]]
  text = "all recorded"

[models.client]
kind = "scripted"
` + callTurn("kv__kv_set", `{ key = "{{.Name}}", value = "x" }`) + `  [[models.client.turns]]
  text = "recorded"

[[groups]]
name = "bosses"
blueprint = "boss"
model = "boss"
count = 1
`,
	}
	sum, events := runMCP(t, files)
	if sum.ByStatus[components.Done] != 4 || sum.ToolErrors != 0 {
		t.Fatalf("statuses %v, %d tool errors; want the boss and 3 clients done", sum.ByStatus, sum.ToolErrors)
	}
	var stopTick, lastChildReap, bossReap uint64
	for _, e := range events {
		switch {
		case e.Kind == "mcp_server" && e.Event == "stop":
			stopTick = e.Tick
		case e.Kind == "reap" && e.Name == "bosses-0":
			bossReap = e.Tick
		case e.Kind == "reap":
			lastChildReap = max(lastChildReap, e.Tick)
		}
	}
	if evs := serverEvents(events); strings.Join(evs, "|") != "start 1|stop 1 no agent holds a lease" {
		t.Fatalf("server events %q, want one session for the three children", evs)
	}
	if stopTick != bossReap+1 || lastChildReap >= bossReap {
		t.Errorf("the session stopped at tick %d; the last child was reaped at %d and the boss at %d", stopTick, lastChildReap, bossReap)
	}
}

// TestMCPCrashFault: a seeded mcp_crash fault fails its call as a call in flight at a crash does,
// and kills the server's live session at the start of the next tick, so the next call restarts
// the server: a real crash of the demo server's process, its exit and the restart recorded as
// such, and the store it held gone with it.
func TestMCPCrashFault(t *testing.T) {
	turns := callTurn("kv__kv_set", `{ key = "k", value = "before" }`) + callTurn("kv__kv_get", `{ key = "k" }`) +
		callTurn("kv__echo", `{ text = "after the crash" }`) + callTurn("kv__kv_set", `{ key = "j", value = "new" }`) +
		"  [[models.client.turns]]\n  text = \"done\"\n"
	files := mcpScenario(demoStdio, turns, 1)
	files["s.toml"] += "\n[faults]\n  [faults.tools.kv__kv_get]\n  mcp_crash = 1.0\n"
	sum, events := runMCP(t, files)
	if sum.ByStatus[components.Done] != 1 || sum.MCPStarts != 2 {
		t.Errorf("statuses %v, %d sessions started; want the client done and 2 sessions", sum.ByStatus, sum.MCPStarts)
	}
	got := results(events, "clients-0")
	want := []string{"kv__kv_set true: ok",
		"kv__kv_get false: injected fault: the MCP server crashed during the call; it is restarted on the next call (faults.mcp_crash)",
		"kv__echo true: after the crash", "kv__kv_set true: ok"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("results:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	wantEvents := []string{"start 1", "exit 1 signal: killed", "restart 2 signal: killed", "stop 2 no agent holds a lease"}
	if got := serverEvents(events); strings.Join(got, "|") != strings.Join(wantEvents, "|") {
		t.Errorf("server events %q, want %q", got, wantEvents)
	}

	// Recorded and replayed: the replay kills nothing and starts nothing, and its trace shows the
	// same crash, exit and restart.
	sc, err := warren.Load(writePolicyFiles(t, files))
	if err != nil {
		t.Fatal(err)
	}
	recorded, tape := recordRun(t, sc, warren.Options{})
	replayed, rsum, err := replayRun(t, tape, "")
	if err != nil || rsum.MCPStarts != 0 || !bytes.Equal(recorded, replayed) {
		t.Fatalf("replay: %v, %d sessions started\n%s", err, rsum.MCPStarts, traceDiff(t, recorded, replayed))
	}
}
