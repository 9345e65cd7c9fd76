package scenarios_test

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/warrenhq/warren"
	"github.com/warrenhq/warren/recording"
)

// recordRun runs sc with opt, recording it, and returns its trace and its recording (read back;
// its bytes are left in opt.Record when that is set).
func recordRun(t *testing.T, sc *warren.Scenario, opt warren.Options) ([]byte, *recording.Tape) {
	t.Helper()
	var tr bytes.Buffer
	rec, _ := opt.Record.(*bytes.Buffer)
	if rec == nil {
		rec = &bytes.Buffer{}
	}
	opt.Trace, opt.Record, opt.TraceFile, opt.RecordFile = &tr, rec, "run.jsonl", "run.rec.jsonl"
	if _, err := warren.Run(t.Context(), sc, opt); err != nil {
		t.Fatalf("recorded run: %v", err)
	}
	tape, err := recording.Read(bytes.NewReader(rec.Bytes()))
	if err != nil {
		t.Fatalf("reading the recording back: %v", err)
	}
	return tr.Bytes(), tape
}

// replayRun replays tape (from scenario, or the recorded file when it is "") with no program on
// PATH: no shell, no bubblewrap, no MCP server could start. It returns the trace and summary.
func replayRun(t *testing.T, tape *recording.Tape, scenario string) ([]byte, *warren.Summary, error) {
	t.Helper()
	sc, opt, err := warren.LoadReplay(tape, scenario)
	if err != nil {
		t.Fatalf("loading the replay: %v", err)
	}
	t.Setenv("PATH", t.TempDir())
	var tr bytes.Buffer
	opt.Trace = &tr
	sum, err := warren.Run(t.Context(), sc, opt)
	return tr.Bytes(), sum, err
}

// TestRecordReplayExamples records every shipped example at its golden scale and replays it with
// nothing outside available (no program on PATH, so no sandbox, shell or MCP server): the
// replay's trace must equal the recorded one byte for byte, every recorded call must be asked
// for, and no MCP call may reach a server.
func TestRecordReplayExamples(t *testing.T) {
	skipUnderRace(t)
	for _, file := range exampleFiles(t) {
		base := filepath.Base(file)
		t.Run(strings.TrimSuffix(base, ".toml"), func(t *testing.T) {
			requireExample(t, base)
			sc, err := warren.Load(file)
			if err != nil {
				t.Fatal(err)
			}
			want, tape := recordRun(t, sc, warren.Options{Agents: goldenAgents[base]})
			got, sum, err := replayRun(t, tape, "")
			if err != nil {
				t.Fatalf("replay: %v", err)
			}
			if !bytes.Equal(want, got) {
				t.Fatalf("the replay's trace differs from the recorded one:\n%s", traceDiff(t, want, got))
			}
			if sum.Replayed != sum.ReplayCalls || sum.MCPCalls != 0 || sum.MCPStarts != 0 {
				t.Fatalf("replayed %d of %d recorded calls, %d MCP calls and %d sessions went out", sum.Replayed, sum.ReplayCalls, sum.MCPCalls, sum.MCPStarts)
			}
		})
	}
}

// TestReplayHTTP records a script tool fetching from a real loopback HTTP server, shuts the server
// down, and replays: the script runs again, its httpGet answered from the recording.
func TestReplayHTTP(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if r.URL.Query().Get("city") == "fetchers-2" {
			<-r.Context().Done() // never answers: the script's http_timeout ends the request
			return
		}
		w.Header().Set("X-Served", "yes")
		fmt.Fprintf(w, "weather for %s: rain", r.URL.Query().Get("city"))
	}))
	t.Setenv("WARREN_TEST_TOKEN", "tok-3141")
	dir := t.TempDir()
	mustWrite(t, filepath.Join(dir, "tools", "forecast.js"), `
defineTool({
  name: "forecast",
  description: "Fetches a forecast.",
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"], additionalProperties: false },
  run: async function (args, host) {
    const token = host.env("WARREN_TEST_TOKEN");
    const r = await host.httpGet("`+srv.URL+`/?city=" + args.city, { headers: { Authorization: "Bearer " + token } });
    host.log("status " + r.status + " served " + r.headers["X-Served"]);
    return r.body.toUpperCase();
  }
});
`)
	mustWrite(t, filepath.Join(dir, "fetcher.toml"), `
name = "fetcher"
description = "Fetches forecasts over HTTP."
entry = "fetch"
[[stages]]
name = "fetch"
available_tools = ["forecast"]
max_iterations = 3
`)
	scenario := filepath.Join(dir, "http.toml")
	mustWrite(t, scenario, `
name = "http"
seed = 3
[blueprints]
fetcher = "fetcher.toml"
[host.scripting]
http_allow_private = true
http_timeout = "300ms"
allow_env = ["WARREN_TEST_TOKEN"]
[host.tool_permissions]
forecast = "allow"
[host.tool_script_permissions]
http_get = "allow"
[models.fetch]
kind = "scripted"
  [[models.fetch.turns]]
    [[models.fetch.turns.calls]]
    tool = "forecast"
    args = { city = "{{.Name}}" }
  [[models.fetch.turns]]
  text = "done"
[[groups]]
name = "fetchers"
count = 3
blueprint = "fetcher"
model = "fetch"
`)
	sc, err := warren.Load(scenario)
	if err != nil {
		t.Fatal(err)
	}
	var rec bytes.Buffer
	want, tape := recordRun(t, sc, warren.Options{Record: &rec})
	if strings.Contains(rec.String(), "tok-3141") {
		t.Fatal("the recording keeps the environment variable's value")
	}
	if hits.Load() != 3 || !bytes.Contains(want, []byte("WEATHER FOR FETCHERS-1: RAIN")) ||
		!bytes.Contains(want, []byte(`"name":"fetchers-2","kind":"tool_note","stage":"fetch","call_id":"fetchers-2-t0-c0","tool":"forecast","fn":"realtime_limit","text":"http_get timeout"`)) {
		t.Fatalf("the recorded run made %d requests; trace:\n%s", hits.Load(), want)
	}
	srv.Close()
	got, _, err := replayRun(t, tape, "")
	if err != nil {
		t.Fatalf("replay: %v", err)
	}
	if !bytes.Equal(want, got) {
		t.Fatalf("the replay differs:\n%s", traceDiff(t, want, got))
	}

	// An edited script asks another URL: the replay stops at that request, naming the call.
	edited := filepath.Join(dir, "tools", "forecast.js")
	src, _ := os.ReadFile(edited)
	mustWrite(t, edited, strings.Replace(string(src), "?city=", "?town=", 1))
	_, _, err = replayRun(t, tape, "")
	var d *recording.DivergenceError
	if !errors.As(err, &d) || !strings.Contains(err.Error(), "request 2 of the call (http_get) asks something else than the recording's") ||
		!strings.Contains(err.Error(), "agent fetchers-0, turn 0, call 0 (fetchers-0-t0-c0), tool forecast") {
		t.Fatalf("err = %v", err)
	}
}

// TestReplayEditedScenario replays a recording against edited copies of its scenario: a scripted
// call with other arguments stops the replay there, naming the agent, turn and call and showing
// the first difference; a tighter permission changes a decision, which the trace diff shows.
func TestReplayEditedScenario(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("examples", "quickstart.toml"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	copyTree(t, filepath.Join("examples", "blueprints"), filepath.Join(dir, "blueprints"))
	original := filepath.Join(dir, "quickstart.toml")
	mustWrite(t, original, string(src))
	sc, err := warren.Load(original)
	if err != nil {
		t.Fatal(err)
	}
	want, tape := recordRun(t, sc, warren.Options{Agents: 4})

	argsEdit := filepath.Join(dir, "args.toml")
	mustWrite(t, argsEdit, strings.Replace(string(src), "was here", "came by", 1))
	_, _, err = replayRun(t, tape, argsEdit)
	var d *recording.DivergenceError
	if !errors.As(err, &d) || d.Call.Tool != "write_file" || !strings.Contains(err.Error(), "the arguments differ from the recording's") ||
		!strings.Contains(err.Error(), "agent 0 was here") || !strings.Contains(err.Error(), "agent 0 came by") {
		t.Fatalf("err = %v", err)
	}

	permEdit := filepath.Join(dir, "perm.toml")
	mustWrite(t, permEdit, string(src)+"\n[launch]\ndeny = [\"write_file\"]\n")
	got, _, err := replayRun(t, tape, permEdit)
	if err != nil {
		t.Fatalf("a denied call makes no request, so the replay runs on: %v", err)
	}
	report := traceDiff(t, want, got)
	if !strings.Contains(report, "header differs") || !strings.Contains(report, `- verdict: "ask"`) ||
		!strings.Contains(report, `+ verdict: "deny"`) || !strings.Contains(report, `+ layer: "launch:deny"`) {
		t.Fatalf("report:\n%s", report)
	}
}

func mustWrite(t testing.TB, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestReplayDynamicTools: tools an agent writes into its workdir (dynamic_tools) are compiled from
// what the recorded scans read, since a replay has no workdir with them in it: the replay
// advertises, calls and reports them exactly as the recorded run did.
func TestReplayDynamicTools(t *testing.T) {
	sc, err := warren.Load(filepath.Join("testdata", "scripts", "dynamic.toml"))
	if err != nil {
		t.Fatal(err)
	}
	var rec bytes.Buffer
	want, tape := recordRun(t, sc, warren.Options{Record: &rec})
	if !strings.Contains(rec.String(), `"kind":"dynamic"`) || !bytes.Contains(want, []byte(`"tool":"shout","ok":true,"content":"MADE IT!"`)) {
		t.Fatalf("the recording keeps no dynamic-tools scan:\n%s", rec.String())
	}
	got, _, err := replayRun(t, tape, "")
	if err != nil {
		t.Fatalf("replay: %v", err)
	}
	if !bytes.Equal(want, got) {
		t.Fatalf("the replay differs:\n%s", traceDiff(t, want, got))
	}
}
