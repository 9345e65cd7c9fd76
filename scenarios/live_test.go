package scenarios_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warrenhq/warren"
	"github.com/warrenhq/warren/components"
	"github.com/warrenhq/warren/internal/fakellm"
)

// TestLiveModelScenario runs a scenario whose agents are driven by the openai kind against the
// fake provider over real HTTP on loopback: each agent's first turn asks for a file to be
// written, its second reads the result and ends; the provider sees the stage's tools and the
// tool result, and the key never reaches the trace.
func TestLiveModelScenario(t *testing.T) {
	srv, err := fakellm.Start(func(n int, req fakellm.Request) fakellm.Reply {
		last := req.Messages[len(req.Messages)-1]
		if last.Role == "tool" {
			return fakellm.Reply{Text: "Noted: " + last.Content, Usage: fakellm.Usage{Prompt: 40, Completion: 5}}
		}
		return fakellm.Reply{ToolCalls: []fakellm.ToolCall{{ID: "call_1", Name: "write_file",
			Arguments: `{"path":"note.md","content":"hello"}`}}, Usage: fakellm.Usage{Prompt: 30, Completion: 9}}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	t.Setenv("WARREN_TEST_LIVE_KEY", "sk-live-secret")
	dir := t.TempDir()
	mustWrite(t, filepath.Join(dir, "writer.toml"), `
name = "writer"
description = "Writes a note."
[[stages]]
name = "write"
available_tools = ["write_file", "read_file"]
max_iterations = 4
`)
	scenario := filepath.Join(dir, "live.toml")
	mustWrite(t, scenario, `
name = "live"
seed = 5
[blueprints]
writer = "writer.toml"
[host.tool_permissions]
write_file = "allow"
[models.live]
kind = "openai"
model = "fake-1"
base_url = "`+srv.URL+`"
api_key_env = "WARREN_TEST_LIVE_KEY"
system_prompt = "You write notes."
[[groups]]
name = "writers"
count = 3
blueprint = "writer"
model = "live"
task = "write a note"
`)
	sc, err := warren.Load(scenario)
	if err != nil {
		t.Fatal(err)
	}
	var tr bytes.Buffer
	sum, err := warren.Run(t.Context(), sc, warren.Options{Trace: &tr})
	if err != nil {
		t.Fatal(err)
	}
	if sum.ByStatus[components.Done] != 3 || sum.ModelTurns != 6 || sum.ToolCalls != 3 || sum.ToolErrors != 0 {
		t.Fatalf("summary %+v", sum)
	}
	for _, want := range []string{`"model":"openai:live"`, `"kind":"tool_call","stage":"write","call_id":"call_1","tool":"write_file"`,
		`"text":"Noted: Wrote 5 bytes to \"note.md\" (new file)"`} {
		if !strings.Contains(tr.String(), want) {
			t.Errorf("the trace lacks %s", want)
		}
	}
	if strings.Contains(tr.String(), "sk-live-secret") {
		t.Fatal("the key reached the trace")
	}
	// Recorded, then replayed with the provider gone: the same trace, and no request made; a
	// changed prompt stops the replay at the first turn it changes.
	var rec bytes.Buffer
	recorded, tape := recordRun(t, sc, warren.Options{Record: &rec})
	if strings.Contains(rec.String(), "sk-live-secret") || !strings.Contains(rec.String(), `"kind":"model"`) {
		t.Fatal("the recording must keep the live turns and never the key")
	}
	reqs := srv.Requests()
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	replayed, _, err := replayRun(t, tape, "")
	if err != nil || !bytes.Equal(recorded, replayed) {
		t.Fatalf("replay: %v\n%s", err, traceDiff(t, recorded, replayed))
	}
	src, _ := os.ReadFile(scenario)
	edited := filepath.Join(dir, "edited.toml")
	mustWrite(t, edited, strings.Replace(string(src), "You write notes.", "You write poems.", 1))
	if _, _, err := replayRun(t, tape, edited); !errors.Is(err, warren.ErrDivergence) ||
		!strings.Contains(err.Error(), "agent writers-0, model turn 0: the model is asked something else than in the recording") {
		t.Fatalf("a changed prompt: %v", err)
	}
	if len(reqs) != 12 || !reqs[0].Authorized || strings.Join(reqs[0].Tools, ",") != "read_file,write_file" ||
		reqs[0].Messages[0].Content != "You write notes." || !strings.HasPrefix(reqs[0].Messages[1].Content, "write a note") {
		t.Fatalf("%d requests; the first %+v", len(reqs), reqs[0])
	}
}

// TestLiveStageModel runs a pipeline whose first stage is scripted and whose second runs on a
// live model of its own (stage_models) against the fake provider: only the second stage's turns
// reach the provider, with the conversation the scripted stage left; the trace names each turn's
// model; the summary accounts each model apart, the live one with its tokens; and the run replays
// offline from its recording.
func TestLiveStageModel(t *testing.T) {
	srv, err := fakellm.Start(func(n int, req fakellm.Request) fakellm.Reply {
		return fakellm.Reply{Text: "Looks right.", Usage: fakellm.Usage{Prompt: 50, Completion: 4}}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	dir := t.TempDir()
	mustWrite(t, filepath.Join(dir, "pipeline.toml"), `
name = "pipeline"
[[stages]]
name = "write"
available_tools = ["write_file"]
  [[stages.transitions]]
  on = "done"
  to = "check"
[[stages]]
name = "check"
available_tools = ["read_file"]
`)
	scenario := filepath.Join(dir, "stages.toml")
	mustWrite(t, scenario, `
name = "stages"
seed = 3
[blueprints]
pipeline = "pipeline.toml"
[host.tool_permissions]
write_file = "allow"
[models.writer]
kind = "scripted"
  [[models.writer.turns]]
  stage = "write"
  text = "Writing."
    [[models.writer.turns.calls]]
    tool = "write_file"
    args = { path = "note.md", content = "a note of {{.Name}}" }
  [[models.writer.turns]]
  stage = "write"
  text = "Written."
[models.checker]
kind = "openai"
model = "fake-checker"
base_url = "`+srv.URL+`"
[[groups]]
name = "writers"
count = 2
blueprint = "pipeline"
model = "writer"
stage_models = { check = "checker" }
task = "write a note"
`)
	sc, err := warren.Load(scenario)
	if err != nil {
		t.Fatal(err)
	}
	var rec bytes.Buffer
	recorded, tape := recordRun(t, sc, warren.Options{Record: &rec})
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("the provider got %d requests, want one per agent's check stage", len(reqs))
	}
	if last := reqs[0].Messages[len(reqs[0].Messages)-1]; last.Role != "assistant" || last.Content != "Written." {
		t.Errorf("the live stage was sent a conversation ending %+v, want the scripted stage's last turn", last)
	}
	for _, want := range []string{`"kind":"model_turn","stage":"write","model":"scripted:writer"`,
		`"kind":"model_turn","stage":"check","model":"openai:checker"`} {
		if !bytes.Contains(recorded, []byte(want)) {
			t.Errorf("the trace lacks %s", want)
		}
	}
	sum, err := warren.Run(t.Context(), sc, warren.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Models) != 2 {
		t.Fatalf("the summary accounts %d models, want 2: %+v", len(sum.Models), sum.Models)
	}
	live, scripted := sum.Models[0], sum.Models[1]
	if live.ID != "openai:checker" || live.Turns != 2 || live.Spend.Tokens.Total() != 2*54 || live.Spend.Turns != 2 ||
		scripted.ID != "scripted:writer" || scripted.Turns != 4 || scripted.Spend.Attempts != 0 {
		t.Fatalf("per model: %+v", sum.Models)
	}
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	replayed, _, err := replayRun(t, tape, "")
	if err != nil || !bytes.Equal(recorded, replayed) {
		t.Fatalf("replay: %v\n%s", err, traceDiff(t, recorded, replayed))
	}
}
