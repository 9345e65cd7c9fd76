package scenarios_test

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/warrenhq/warren"
	"github.com/warrenhq/warren/mcp"
)

// hostileScenario is one client of the demo server in hostile mode (flags after --hostile),
// declared with the entry's extra keys, making the scripted turns.
func hostileScenario(flags, keys, turns string) map[string]string {
	return map[string]string{
		"client.toml": mcpClientBlueprint,
		"s.toml": fmt.Sprintf(`
name = "mcp-hostile"
seed = 1

[blueprints]
client = "client.toml"

[host.tool_permissions]
kv__flood = "allow"
kv__echo = "allow"

[[host.mcp_servers]]
name = "kv"
command = "@demo"
args = ["--hostile", "--log-level", "error"%s]
%s

[models.client]
kind = "scripted"
%s
  [[models.client.turns]]
  text = "done"

[[groups]]
name = "clients"
blueprint = "client"
model = "client"
count = 1
`, flags, keys, turns),
	}
}

// TestMCPToolListRefusedAtLoad: a server that lists more tools than its entry's max_tools (or
// the default 1,000), or a tool whose schema is over max_tool_schema_bytes, makes the scenario a
// load error at the entry's line and key, naming the server and the bound.
func TestMCPToolListRefusedAtLoad(t *testing.T) {
	tests := []struct {
		name, flags, keys, want string
	}{
		{name: "the default max_tools", flags: `, "--tools", "2000"`, want: "server kv lists more than 1000 tools (max_tools)"},
		{name: "the entry's max_tools", flags: `, "--tools", "5"`, keys: "max_tools = 4", want: "server kv lists more than 4 tools (max_tools)"},
		{name: "a fat schema", flags: `, "--tools", "1", "--schema-bytes", "70000"`,
			want: `server kv's tool "filler_000000": its input schema is 70`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := writePolicyFiles(t, hostileScenario(tc.flags, tc.keys, ""))
			_, err := warren.Load(path)
			at := path + ":12: host.mcp_servers[0]: server \"kv\" could not list its tools:"
			if !errors.Is(err, mcp.ErrToolListRefused) || !strings.Contains(err.Error(), at) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v\nwant it at %q, saying %q", err, at, tc.want)
			}
		})
	}
}

// TestMCPReplyBoundInRun: in a run, a reply over max_reply_bytes is the agent's error result
// naming the bound, the session goes on (the echo after it is served by session 1), and the
// trace is the same recorded and replayed with no server.
func TestMCPReplyBoundInRun(t *testing.T) {
	turns := callTurn("kv__flood", `{ bytes = 300000 }`) + callTurn("kv__echo", `{ text = "after the flood" }`)
	sc, err := warren.Load(writePolicyFiles(t, hostileScenario("", `max_reply_bytes = "64KiB"`, turns)))
	if err != nil {
		t.Fatal(err)
	}
	want, tape := recordRun(t, sc, warren.Options{})
	events := decodeEvents(t, want)
	got := results(events, "clients-0")
	wantResults := []string{
		"kv__flood false: kv__flood: the server's reply was more than 65536 bytes (max_reply_bytes) and was discarded",
		"kv__echo true: after the flood",
	}
	if strings.Join(got, "\n") != strings.Join(wantResults, "\n") {
		t.Errorf("results:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(wantResults, "\n"))
	}
	if evs := serverEvents(events); strings.Join(evs, "|") != "start 1|stop 1 no agent holds a lease" {
		t.Errorf("server events %q", evs)
	}
	replayed, _, err := replayRun(t, tape, "")
	if err != nil || !bytes.Equal(want, replayed) {
		t.Fatalf("replay: %v\n%s", err, traceDiff(t, want, replayed))
	}
}

// TestMCPTimeoutReplays: an MCP call that its call_timeout ended is an input of the run like the
// server's answers: the recording keeps the error result and its realtime_limit note, and the
// replay, with no server to reach, gives the same trace and counts the same limit.
func TestMCPTimeoutReplays(t *testing.T) {
	files := mcpScenario(demoStdio+"\ncall_timeout = \"1s\"", callTurn("kv__slow", `{ ms = 60000 }`)+
		callTurn("kv__echo", `{ text = "after the timeout" }`)+"  [[models.client.turns]]\n  text = \"done\"\n", 1)
	sc, err := warren.Load(writePolicyFiles(t, files))
	if err != nil {
		t.Fatal(err)
	}
	want, tape := recordRun(t, sc, warren.Options{})
	note := []byte(`"kind":"tool_note","stage":"work","call_id":"clients-0-t0-c0","tool":"kv__slow","fn":"realtime_limit","text":"mcp call_timeout 1s"`)
	if !bytes.Contains(want, note) || !bytes.Contains(want, []byte("kv__slow: no reply within 1s (call_timeout); the call was cancelled")) {
		t.Fatalf("the recorded run has no timed-out call:\n%s", want)
	}
	replayed, sum, err := replayRun(t, tape, "")
	if err != nil || !bytes.Equal(want, replayed) {
		t.Fatalf("replay: %v\n%s", err, traceDiff(t, want, replayed))
	}
	if sum.RealTimeLimits != 1 {
		t.Errorf("the replay counts %d real-time limits, want the recorded 1", sum.RealTimeLimits)
	}
}
