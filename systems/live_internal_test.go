package systems

import (
	"context"
	"strings"
	"testing"

	"github.com/warrenhq/warren/components"
	"github.com/warrenhq/warren/inference"
	"github.com/warrenhq/warren/models"
)

// liveModel names models.Live for embedding: an embedded models.Live would be a field named Live,
// which hides the promoted Live method.
type liveModel = models.Live

// fakeLive is a live model with a context window, for the context rules.
type fakeLive struct {
	liveModel
	spec models.LiveSpec
}

func (f fakeLive) Spec() models.LiveSpec { return f.spec }

type plainModel struct{}

func (plainModel) ID() string { return "scripted:x" }
func (plainModel) Turn(context.Context, *models.State, *models.View) (models.Reply, error) {
	return models.Reply{}, nil
}

func TestContextPercent(t *testing.T) {
	live := fakeLive{spec: models.LiveSpec{ContextTokens: 8000}}
	for _, tc := range []struct {
		name  string
		model models.Model
		count int64
		want  int
	}{
		{"no answer yet", live, 0, -1},
		{"a quarter full", live, 2000, 25},
		{"over the window", live, 9000, 100},
		{"no window known", fakeLive{}, 2000, -1},
		{"not a live model", plainModel{}, 2000, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := contextPercent(tc.model, &components.AgentData{ContextTokens: tc.count}); got != tc.want {
				t.Fatalf("contextPercent = %d, want %d", got, tc.want)
			}
		})
	}
}

// TestCutContext: whole turns go oldest first, the task and the latest turn stay, the
// conversation itself is never written, and the fail rule fails instead.
func TestCutContext(t *testing.T) {
	long := strings.Repeat("x", 400)
	conv := []models.Message{{Role: models.RoleUser, Content: "the task"}}
	for i := range 4 {
		id := string(rune('a' + i))
		conv = append(conv, models.Message{Role: models.RoleAssistant, Calls: []models.ToolCall{{ID: id, Name: "read_file", Args: []byte(`{}`)}}},
			models.Message{Role: models.RoleTool, CallID: id, Content: long})
	}
	before := append([]models.Message(nil), conv...)
	v := &models.View{Messages: conv}
	spec := models.LiveSpec{ContextTokens: 800, MaxTokens: 100}
	dropped, bytes, err := cutContext(v, spec, inference.Context{})
	if err != nil {
		t.Fatal(err)
	}
	if dropped != 6 || len(v.Messages) != 3 || v.Messages[0].Content != "the task" || v.Messages[1].Calls[0].ID != "d" || v.Messages[2].CallID != "d" {
		t.Fatalf("dropped %d, kept %+v", dropped, v.Messages)
	}
	if bytes != inference.PromptBytes(v, "") {
		t.Fatalf("the cut reports %d bytes left, the view measures %d", bytes, inference.PromptBytes(v, ""))
	}
	for i := range conv {
		if conv[i].Content != before[i].Content || conv[i].CallID != before[i].CallID {
			t.Fatal("the cut wrote into the agent's conversation")
		}
	}
	v = &models.View{Messages: conv}
	if _, _, err := cutContext(v, models.LiveSpec{ContextTokens: 800, MaxTokens: 100, ContextOverflow: models.ContextFail}, inference.Context{}); err == nil || len(v.Messages) != len(conv) {
		t.Fatalf("fail rule: %v", err)
	}
	v = &models.View{Messages: conv}
	if _, _, err := cutContext(v, models.LiveSpec{ContextTokens: 300, MaxTokens: 100}, inference.Context{}); err == nil {
		t.Fatal("a window the task and latest turn cannot fit cut instead of failing")
	}
	v = &models.View{Messages: conv}
	if n, _, _ := cutContext(v, spec, inference.Context{Tokens: 100, Bytes: 2000}); n != 0 {
		t.Fatalf("with 1 token per 20 bytes counted, %d messages were cut from a conversation that fits", n)
	}
}
