package scenarios_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warrenhq/warren"
	"github.com/warrenhq/warren/components"
	"github.com/warrenhq/warren/internal/fakellm"
	"github.com/warrenhq/warren/trace"
)

// liveAgents answers each agent of toScriptedScenario differently, by the task in its request's
// first user message and the number of answers it has had: workers-0 writes a file with a
// multi-line note, then reports what it reads back in a second stage; workers-1 makes two calls
// in one turn (one of which fails) and ends with text quoting its tool result; workers-2's first
// request fails with a 500, which sends it to its recovery stage.
func liveAgents(_ int, req fakellm.Request) fakellm.Reply {
	agent, answered, last := "", 0, req.Messages[len(req.Messages)-1]
	for _, m := range req.Messages {
		switch {
		case m.Role == "user" && agent == "":
			agent = strings.TrimPrefix(m.Content, "note for ")
		case m.Role == "assistant":
			answered++
		}
	}
	call := func(id, name, args string) fakellm.ToolCall {
		return fakellm.ToolCall{ID: id, Name: name, Arguments: args}
	}
	key := agent
	if strings.Join(req.Tools, ",") == "write_file" { // the recover stage
		key += "/recover"
	}
	switch key + "/" + fmt.Sprint(answered) {
	case "workers-0/0":
		return fakellm.Reply{Text: "Writing \"zero\".", ToolCalls: []fakellm.ToolCall{
			call("call_a", "write_file", `{"path":"zero.md","content":"zero\nsecond line {{.Name}}\n"}`)}}
	case "workers-0/1":
		return fakellm.Reply{Text: "Written:\n" + last.Content}
	case "workers-0/2":
		return fakellm.Reply{ToolCalls: []fakellm.ToolCall{call("call_b", "read_file", `{"path":"zero.md"}`)}}
	case "workers-0/3":
		return fakellm.Reply{Text: "Report: " + last.Content}
	case "workers-1/0":
		return fakellm.Reply{Text: "Two at once.", ToolCalls: []fakellm.ToolCall{
			call("c1", "write_file", `{"content":"one","path":"one.md"}`), call("c2", "read_file", `{"path":"missing.md"}`)}}
	case "workers-1/1":
		return fakellm.Reply{Text: "It said: " + last.Content}
	case "workers-1/2":
		return fakellm.Reply{Text: "Nothing to report."}
	case "workers-2/0":
		return fakellm.Reply{Status: 500}
	case "workers-2/recover/0":
		return fakellm.Reply{ToolCalls: []fakellm.ToolCall{call("r", "write_file", `{"path":"recovered.md","content":"after the 500"}`)}}
	}
	return fakellm.Reply{Text: "done " + agent}
}

// toScriptedScenario is a live scenario at url: three agents of one live model, in a blueprint
// of three stages.
func toScriptedScenario(t *testing.T, dir, url string) string {
	t.Helper()
	mustWrite(t, filepath.Join(dir, "worker.toml"), `
name = "worker"
description = "Writes, then reports; recovers from a failing model."
[[stages]]
name = "write"
available_tools = ["write_file", "read_file"]
max_iterations = 3
  [[stages.transitions]]
  on = "done"
  to = "report"
  [[stages.transitions]]
  on = "error"
  to = "recover"
[[stages]]
name = "report"
available_tools = ["read_file"]
max_iterations = 3
[[stages]]
name = "recover"
available_tools = ["write_file"]
max_iterations = 3
`)
	scenario := filepath.Join(dir, "live.toml")
	mustWrite(t, scenario, `# Three agents of one live model.
name = "to-scripted"
seed = 9
[blueprints]
worker = "worker.toml"
[host.tool_permissions]
write_file = "allow"

# The provider.
[models.live]
kind = "openai"
model = "fake-1"
base_url = "`+url+`"
api_key_env = "WARREN_TEST_LIVE_KEY"
system_prompt = "You work."

[[groups]]
name = "workers"
count = 3
blueprint = "worker"
model = "live"
task = "note for {{.Name}}"
`)
	return scenario
}

// turnEvents is, per agent, what its model said and what its calls did, in order: every
// model_turn (stage, text, number of calls, error), tool_call (tool, arguments, verdict) and
// tool_result (tool, ok, content) of the trace, without the call ids and the ticks, which a
// scripted model (ids of its own, no model lane) does not keep.
func turnEvents(t *testing.T, tr []byte) map[string][]string {
	t.Helper()
	_, events, err := trace.ReadAll(bytes.NewReader(tr))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, raw := range events {
		var ev struct {
			Name, Kind, Stage, Text, Error, Tool, Verdict, Content string
			Calls                                                  int
			Args                                                   json.RawMessage
			OK                                                     bool
		}
		if err := json.Unmarshal(raw, &ev); err != nil {
			t.Fatal(err)
		}
		var line string
		switch ev.Kind {
		case trace.KindModelTurn:
			line = fmt.Sprintf("model_turn %s %q calls=%d", ev.Stage, ev.Text, ev.Calls)
			if ev.Error != "" {
				// A scripted failure says it is one: what the provider said follows.
				line += " error=" + ev.Error[strings.LastIndex(ev.Error, "500"):]
			}
		case "tool_call":
			var args any
			_ = json.Unmarshal(ev.Args, &args)
			canon, _ := json.Marshal(args)
			line = fmt.Sprintf("tool_call %s %s %s %s", ev.Stage, ev.Tool, canon, ev.Verdict)
		case "tool_result":
			line = fmt.Sprintf("tool_result %s %s ok=%v %q", ev.Stage, ev.Tool, ev.OK, ev.Content)
		default:
			continue
		}
		out[ev.Name] = append(out[ev.Name], line)
	}
	return out
}

// TestLiveRunToScripted records a live run of three agents that answered differently (tool
// calls, a failing turn, multi-line text, template braces in arguments), turns the recording
// into a scripted copy of its scenario, and runs that copy with the provider gone and no key:
// every agent's model turns, calls and results come out as in the live run.
func TestLiveRunToScripted(t *testing.T) {
	srv, err := fakellm.Start(liveAgents)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	t.Setenv("WARREN_TEST_LIVE_KEY", "sk-live-secret")
	dir := t.TempDir()
	scenario := toScriptedScenario(t, dir, srv.URL)
	sc, err := warren.Load(scenario)
	if err != nil {
		t.Fatal(err)
	}
	live, tape := recordRun(t, sc, warren.Options{})
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	want := turnEvents(t, live)
	if len(want) != 3 || len(want["workers-0"]) != 8 || !strings.Contains(strings.Join(want["workers-2"], "\n"), "model_turn write \"\" calls=0 error=500") {
		t.Fatalf("the live run is not the one this test means:\n%v", want)
	}

	script, err := tape.Script("run.rec.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if err := script.AddStages(bytes.NewReader(live)); err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(scenario)
	if err != nil {
		t.Fatal(err)
	}
	converted, err := script.Splice(scenario, src)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(converted), "base_url") || !strings.Contains(string(converted), "# The provider.\n# [models.live] was a live model (openai:live): these are the 10 turns its 3 agents had in run.rec.jsonl") ||
		!strings.Contains(string(converted), "  agent = \"workers-2\"\n  stage = \"write\"\n  error = ") || len(script.Notes) != 0 {
		t.Fatalf("notes %q; the converted scenario:\n%s", script.Notes, converted)
	}
	file := filepath.Join(dir, "scripted.toml")
	mustWrite(t, file, string(converted))
	t.Setenv("WARREN_TEST_LIVE_KEY", "")
	sc, err = warren.Load(file)
	if err != nil {
		t.Fatalf("the converted scenario does not load: %v\n%s", err, converted)
	}
	var tr bytes.Buffer
	sum, err := warren.Run(t.Context(), sc, warren.Options{Trace: &tr})
	if err != nil {
		t.Fatal(err)
	}
	if sum.ByStatus[components.Done] != 3 || sum.ModelTurns != 10 {
		t.Fatalf("summary %+v", sum)
	}
	got := turnEvents(t, tr.Bytes())
	for agent, events := range want {
		if g, w := strings.Join(got[agent], "\n"), strings.Join(events, "\n"); g != w {
			t.Errorf("%s in the scripted run:\n%s\nin the live run:\n%s", agent, g, w)
		}
	}
	if !bytes.Contains(tr.Bytes(), []byte(`"model":"scripted:live"`)) {
		t.Error("the scripted run's agents are not driven by scripted:live")
	}
}
