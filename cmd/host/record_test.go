package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warrenhq/warren/internal/fakellm"
	"github.com/warrenhq/warren/trace"
)

// liveScenario writes a scenario of two agents on a live model at url, each answered by name:
// writers-0 writes a file, writers-1 lists the folder; both then end.
func liveScenario(t *testing.T, dir, url string) string {
	t.Helper()
	writeFile(t, dir, "writer.toml", `
name = "writer"
description = "Writes a note."
[[stages]]
name = "write"
available_tools = ["write_file", "list_dir"]
max_iterations = 3
`)
	return writeFile(t, dir, "live.toml", `name = "live"
seed = 4
[blueprints]
writer = "writer.toml"
[host.tool_permissions]
write_file = "allow"
[models.live]
kind = "openai"
model = "fake-1"
base_url = "`+url+`"
api_key_env = "WARREN_TEST_LIVE_KEY"
[[groups]]
name = "writers"
count = 2
blueprint = "writer"
model = "live"
task = "I am {{.Name}}"
`)
}

// toolCalls lists, per agent, what its model said and which tools it called with what.
func toolCalls(t *testing.T, path string) map[string][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	_, events, err := trace.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, raw := range events {
		var ev struct {
			Name, Kind, Tool, Text string
			Args                   json.RawMessage
		}
		if err := json.Unmarshal(raw, &ev); err != nil {
			t.Fatal(err)
		}
		switch ev.Kind {
		case "tool_call":
			var args any // key order aside: a scripted call's arguments are sorted
			_ = json.Unmarshal(ev.Args, &args)
			canon, _ := json.Marshal(args)
			out[ev.Name] = append(out[ev.Name], ev.Tool+" "+string(canon))
		case "model_turn":
			out[ev.Name] = append(out[ev.Name], "says "+ev.Text)
		}
	}
	return out
}

// TestRecordToScripted drives host record to-scripted: a live run recorded, converted with
// --scenario, runs with host run and no provider, making the same calls and saying the same
// things; without --scenario the tables go to standard output, with how to paste them.
func TestRecordToScripted(t *testing.T) {
	srv, err := fakellm.Start(func(_ int, req fakellm.Request) fakellm.Reply {
		if req.Messages[len(req.Messages)-1].Role == "tool" {
			return fakellm.Reply{Text: "ok"}
		}
		if strings.Contains(req.Messages[len(req.Messages)-1].Content, "writers-0") {
			return fakellm.Reply{Text: "Writing.", ToolCalls: []fakellm.ToolCall{{ID: "a", Name: "write_file", Arguments: `{"path":"n.md","content":"hi"}`}}}
		}
		return fakellm.Reply{ToolCalls: []fakellm.ToolCall{{ID: "b", Name: "list_dir", Arguments: `{"path":"."}`}}}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	t.Setenv("WARREN_TEST_LIVE_KEY", "sk-test")
	dir := t.TempDir()
	scenario := liveScenario(t, dir, srv.URL)
	tr, rec := filepath.Join(dir, "t.jsonl"), filepath.Join(dir, "r.jsonl")
	wantCode(t, host(t, "run", scenario, "--trace", tr, "--record", rec), exitOK)
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	t.Setenv("WARREN_TEST_LIVE_KEY", "")

	out := filepath.Join(dir, "scripted.toml")
	r := host(t, "record", "to-scripted", rec, "--scenario", scenario, "--out", out)
	wantCode(t, r, exitOK)
	if r.stdout != "" || !strings.Contains(r.stderr, "host: wrote a copy of "+scenario+", its live models replaced by the scripted tables [models.live] (was openai:live: 4 turns of 2 agents), to "+out+".\n") ||
		!strings.Contains(r.stderr, "Run it as the recording was run: host run "+out+" --seed 4\n") {
		t.Fatalf("stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	}
	tr2 := filepath.Join(dir, "t2.jsonl")
	wantCode(t, host(t, "run", out, "--seed", "4", "--trace", tr2), exitOK)
	want, got := toolCalls(t, tr), toolCalls(t, tr2)
	if len(want) != 2 || len(want["writers-0"]) != 3 || want["writers-0"][1] != `write_file {"content":"hi","path":"n.md"}` || want["writers-1"][1] != `list_dir {"path":"."}` {
		t.Fatalf("the live run is not the one this test means: %q", want)
	}
	for agent := range want {
		if strings.Join(got[agent], "\n") != strings.Join(want[agent], "\n") {
			t.Errorf("%s: the scripted run %q, the live run %q", agent, got[agent], want[agent])
		}
	}

	r = host(t, "record", "to-scripted", rec)
	wantCode(t, r, exitOK)
	if !strings.HasPrefix(r.stdout, "# [models.live] was a live model (openai:live): these are the 4 turns its 2 agents had in "+rec+"\n") ||
		!strings.Contains(r.stdout, "  agent = \"writers-1\"\n  stage = \"write\"\n") || strings.Contains(r.stdout, "[[groups]]") ||
		!strings.Contains(r.stderr, "host: wrote the scripted tables [models.live] (was openai:live: 4 turns of 2 agents) to standard output.\nPaste them into a copy of the scenario ("+scenario+")") {
		t.Fatalf("stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	}
}

// TestRecordToScriptedBadInput: what is not a whole recording of a live run, a scenario without
// the recorded model, and an --out that would overwrite an input are bad input (exit 2), each
// naming the file and what would do.
func TestRecordToScriptedBadInput(t *testing.T) {
	dir := t.TempDir()
	// A recording of a run with scripted models only.
	tr, rec := filepath.Join(dir, "t.jsonl"), filepath.Join(dir, "r.jsonl")
	wantCode(t, host(t, "run", example("quickstart.toml"), "--agents", "2", "--trace", tr, "--record", rec), exitOK)
	data, err := os.ReadFile(rec)
	if err != nil {
		t.Fatal(err)
	}
	// A recording with one live turn, made by hand from it: a run of another scenario hash, so
	// the trace it names is not its run's.
	lines := bytes.SplitAfter(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
	live := strings.Replace(string(lines[0]), `"scenario_hash":"`, `"scenario_hash":"edited-`, 1) + `{"kind":"model","tick":1,"agent":"a-0","turn":0,"model":"openai:live","request":"sha256:x","text":"hi"}` + "\n" +
		`{"kind":"end","entries":1,"status":"finished"}` + "\n"
	liveRec := writeFile(t, dir, "live.jsonl", live)
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no live turns", []string{rec}, "host: " + rec + ": the recording has no live model turns: its run asked no model of a live kind"},
		{"a trace", []string{tr}, "host: " + tr + ": not a valid recording: line 1 is format \"warren-trace\""},
		{"cut", []string{writeFile(t, dir, "cut.jsonl", string(data[:len(data)/2]))}, "host: " + filepath.Join(dir, "cut.jsonl") + ": not a valid recording:"},
		{"missing", []string{filepath.Join(dir, "nope.jsonl")}, "no such file or directory\nhost record to-scripted reads a whole recording, as host run SCENARIO --trace FILE --record FILE writes it"},
		{"scenario without the model", []string{liveRec, "--scenario", example("quickstart.toml")},
			"host: " + example("quickstart.toml") + " has no [models.live] table, which the recording's turns of model openai:live come from; give the scenario that was recorded"},
		{"out over the recording", []string{liveRec, "--out", liveRec}, "--out " + liveRec + " names the recording (" + liveRec + "), which the run reads"},
		{"a trace of another run", []string{liveRec, "--trace", tr}, "host: --trace " + tr + ": the trace is of another run"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := host(t, append([]string{"record", "to-scripted"}, tc.args...)...)
			wantCode(t, r, exitBadInput)
			if !strings.Contains(r.stderr, tc.want) || r.stdout != "" {
				t.Errorf("stdout:\n%s\nstderr:\n%s\nwant in stderr: %s", r.stdout, r.stderr, tc.want)
			}
		})
	}
	if data, _ := os.ReadFile(liveRec); string(data) != live {
		t.Error("the recording was overwritten")
	}
}
