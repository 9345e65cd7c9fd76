package scenarios_test

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/warrenhq/warren"
	"github.com/warrenhq/warren/components"
	"github.com/warrenhq/warren/internal/fakellm"
)

// TestLivePrompts: a live model is sent its table's system prompt, then the blueprint's
// system_prompt and the stage's prompt, templated for the agent, then the task as the first user
// message; the stage's prompt follows the agent into its next stage.
func TestLivePrompts(t *testing.T) {
	var mu sync.Mutex
	var systems []string
	srv := startFake(t, func(n int, req fakellm.Request) fakellm.Reply {
		mu.Lock()
		defer mu.Unlock()
		var sys []string
		for _, m := range req.Messages {
			if m.Role == "system" {
				sys = append(sys, m.Content)
			}
		}
		systems = append(systems, strings.Join(sys, " | ")+" || first user: "+req.Messages[len(sys)].Content)
		return fakellm.Reply{Text: "ok"}
	})
	dir := t.TempDir()
	mustWrite(t, filepath.Join(dir, "two.toml"), `
name = "two"
description = "Plans, then works."
system_prompt = "You are {{.Name}}, agent {{.Index}} of {{.Group}}."
[[stages]]
name = "plan"
prompt = "Plan how to {{.Task}}."
transitions = [{ on = "done", to = "work" }]
[[stages]]
name = "work"
prompt = "Now work (visit {{.Visit}} of stage {{.Stage}})."
`)
	path := filepath.Join(dir, "p.toml")
	mustWrite(t, path, fmt.Sprintf(`
name = "prompts"
[blueprints]
two = "two.toml"
[models.live]
kind = "openai"
model = "fake-1"
base_url = %q
system_prompt = "Be brief."
[[groups]]
name = "crew"
count = 1
blueprint = "two"
model = "live"
task = "count the stars"
`, srv.URL))
	sc, err := warren.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := warren.Run(t.Context(), sc, warren.Options{})
	if err != nil || sum.ByStatus[components.Done] != 1 {
		t.Fatalf("run: %v %+v", err, sum)
	}
	want := []string{
		"Be brief. | You are crew-0, agent 0 of crew.\n\nPlan how to count the stars. || first user: count the stars",
		"Be brief. | You are crew-0, agent 0 of crew.\n\nNow work (visit 1 of stage work). || first user: count the stars",
	}
	if strings.Join(systems, "\n--\n") != strings.Join(want, "\n--\n") {
		t.Fatalf("the provider was sent\n%q\nwant\n%q", systems, want)
	}
}

// TestBadPromptTemplate: a prompt that is not a valid template is a load error at its key.
func TestBadPromptTemplate(t *testing.T) {
	dir := t.TempDir()
	mustWrite(t, filepath.Join(dir, "bp.toml"), "name = \"bp\"\ndescription = \"x\"\n[[stages]]\nname = \"s\"\nprompt = \"{{.Nmae}\"\n")
	mustWrite(t, filepath.Join(dir, "s.toml"), "name = \"s\"\n[blueprints]\nbp = \"bp.toml\"\n[models.m]\nkind = \"scripted\"\n[[groups]]\nname = \"g\"\ncount = 1\nblueprint = \"bp\"\nmodel = \"m\"\n")
	_, err := warren.Load(filepath.Join(dir, "s.toml"))
	if err == nil || !strings.Contains(err.Error(), "bp.toml:5") || !strings.Contains(err.Error(), "stages[0].prompt") || !strings.Contains(err.Error(), "invalid prompt template") {
		t.Fatalf("err = %v", err)
	}
}

// TestContextCut: a conversation that outgrows context_tokens is sent without its oldest whole
// turns (the task stays, no tool result loses its call), the trace says how many messages were
// cut; with context_overflow = "fail" the turn fails instead.
func TestContextCut(t *testing.T) {
	for _, overflow := range []string{"", `context_overflow = "fail"`} {
		var mu sync.Mutex
		var sent [][]fakellm.Message
		srv := startFake(t, func(n int, req fakellm.Request) fakellm.Reply {
			mu.Lock()
			defer mu.Unlock()
			sent = append(sent, req.Messages)
			if n >= 8 {
				return fakellm.Reply{Text: "enough", Usage: fakellm.Usage{Prompt: 300, Completion: 1}}
			}
			// Every turn writes 200 bytes; the provider counts about a token per 4 bytes of request.
			return fakellm.Reply{ToolCalls: []fakellm.ToolCall{{ID: fmt.Sprintf("c%d", n), Name: "write_file",
				Arguments: fmt.Sprintf(`{"path":"f%d.md","content":%q}`, n, strings.Repeat("x", 200))}},
				Usage: fakellm.Usage{Prompt: 300 * n, Completion: 60}}
		})
		sc := liveScenario(t, srv.URL, 1, "max_tokens = 100\ncontext_tokens = 1500\n"+overflow, "[host.tool_permissions]\nwrite_file = \"allow\"\n")
		var tr bytes.Buffer
		sum, err := warren.Run(t.Context(), sc, warren.Options{Trace: &tr})
		if err != nil {
			t.Fatal(err)
		}
		turns := events(t, tr.Bytes(), "model_turn")
		if overflow != "" {
			last := turns[len(turns)-1]
			if sum.ByStatus[components.Done] != 0 || !strings.Contains(fmt.Sprint(last["error"]), "outgrows the model's context window") {
				t.Fatalf("with context_overflow = fail: %+v, last turn %v", sum.ByStatus, last)
			}
			continue
		}
		cut := 0
		for _, e := range turns {
			if n, ok := e["context_dropped"].(float64); ok {
				cut += int(n)
			}
		}
		if cut == 0 {
			t.Fatalf("no turn was cut to fit the context window: %v", turns)
		}
		mu.Lock()
		for i, msgs := range sent {
			if msgs[0].Role != "user" || !strings.HasPrefix(msgs[0].Content, "say something") {
				t.Fatalf("request %d lost its task: %+v", i, msgs[0])
			}
			calls := map[string]bool{}
			for _, m := range msgs {
				for _, c := range m.ToolCalls {
					calls[c.ID] = true
				}
				if m.Role == "tool" && !calls[m.ToolCallID] {
					t.Fatalf("request %d has the result of %s without its call", i, m.ToolCallID)
				}
			}
		}
		if len(sent[len(sent)-1]) >= 1+2*7 {
			t.Fatalf("the last request still has %d messages", len(sent[len(sent)-1]))
		}
		mu.Unlock()
	}
}
