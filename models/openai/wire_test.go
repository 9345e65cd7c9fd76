package openai_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/warrenhq/warren/models"
	"github.com/warrenhq/warren/models/openai"
)

// wire is a provider written by hand for these tests (not internal/fakellm): it keeps every
// request body it receives and answers with the handler the test gives.
type wire struct {
	*httptest.Server
	mu     sync.Mutex
	bodies [][]byte
}

func serveWire(t *testing.T, answer func(w http.ResponseWriter, body []byte)) *wire {
	t.Helper()
	s := &wire{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.bodies = append(s.bodies, body)
		s.mu.Unlock()
		answer(w, body)
	}))
	t.Cleanup(s.Close)
	return s
}

// compileAt builds an openai model of cfg asking base.
func compileAt(t *testing.T, base string, cfg openai.Config) *openai.Model {
	t.Helper()
	cfg.BaseURL = base
	cfg.APIKeyEnv = "WARREN_TEST_OPENAI_KEY"
	t.Setenv("WARREN_TEST_OPENAI_KEY", "sk-secret-42")
	m, err := cfg.Compile(&models.KindEnv{Key: "live", Path: "models.live", ID: "openai:live"})
	if err != nil {
		t.Fatal(err)
	}
	return m.(*openai.Model)
}

// sse writes a streamed answer's events, each "data: " and the event.
func sse(w http.ResponseWriter, events ...string) {
	w.Header().Set("Content-Type", "text/event-stream")
	for _, e := range events {
		_, _ = io.WriteString(w, "data: "+e+"\n\n")
	}
	_, _ = io.WriteString(w, "data: [DONE]\n\n")
}

// TestRequestIsWhatIsSent: the body a turn sends is Request's, byte for byte, streamed or not (so
// a recording's hash is the hash of what went over the wire), and a provider's arguments come back
// as it wrote them (Python's spacing; streamed in pieces split inside a key and an escape), which
// the next turn sends back as they are.
func TestRequestIsWhatIsSent(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(map[bool]string{false: "whole", true: "streamed"}[stream], func(t *testing.T) {
			srv := serveWire(t, func(w http.ResponseWriter, _ []byte) {
				if !stream {
					w.Header().Set("Content-Type", "application/json")
					_, _ = io.WriteString(w, `{"usage": {"total_tokens": 3, "completion_tokens": 1, "prompt_tokens": 2},
 "choices": [{"finish_reason": "tool_calls", "index": 0, "message": {"tool_calls": [{"function": {"arguments": "{\"path\": \"a.txt\", \"n\": 1.0}", "name": "read_file"}, "type": "function", "id": "c9"}], "role": "assistant", "content": null}}],
 "model": "m", "object": "chat.completion", "created": 0, "id": "x"}`)
					return
				}
				head := `{"choices": [{"delta": %s, "finish_reason": %s, "index": 0}], "object": "chat.completion.chunk", "model": "m", "created": 0, "id": "x"}`
				ev := func(delta, finish string) string { return fmt.Sprintf(head, delta, finish) }
				sse(w, ev(`{"role": "assistant", "content": ""}`, "null"),
					ev(`{"tool_calls": [{"index": 0, "id": "c9", "type": "function", "function": {"name": "read_file", "arguments": "{\"pa"}}]}`, "null"),
					ev(`{"tool_calls": [{"index": 0, "function": {"arguments": "th\": \"a.txt\", \"n\""}}]}`, "null"),
					ev(`{"tool_calls": [{"index": 0, "function": {"arguments": ": 1.0}"}}]}`, "null"),
					ev(`{}`, `"tool_calls"`),
					`{"usage": {"prompt_tokens": 2, "completion_tokens": 1, "total_tokens": 3}, "choices": [], "object": "chat.completion.chunk", "model": "m", "created": 0, "id": "x"}`)
			})
			m := compileAt(t, srv.URL, openai.Config{Model: "m", Stream: stream, MaxTokens: 10})
			v := view()
			reply, err := m.Turn(context.Background(), &models.State{}, v)
			if err != nil {
				t.Fatal(err)
			}
			if len(reply.Calls) != 1 || string(reply.Calls[0].Args) != `{"path": "a.txt", "n": 1.0}` {
				t.Fatalf("calls %+v, want the provider's arguments as it wrote them", reply.Calls)
			}
			v.Messages = append(v.Messages, models.Message{Role: models.RoleAssistant, Calls: reply.Calls},
				models.Message{Role: models.RoleTool, CallID: "c9", Content: "text"})
			if _, err := m.Turn(context.Background(), &models.State{}, v); err != nil {
				t.Fatal(err)
			}
			want, err := m.Request(v)
			if err != nil {
				t.Fatal(err)
			}
			if got := srv.bodies[1]; !bytes.Equal(got, want) {
				t.Fatalf("the body sent is not Request's:\nsent    %s\nrequest %s", got, want)
			}
			if !bytes.Contains(want, []byte(`"arguments":"{\"path\": \"a.txt\", \"n\": 1.0}"`)) {
				t.Fatalf("the next turn does not send the arguments back as the provider wrote them:\n%s", want)
			}
			if stream != bytes.HasSuffix(want, []byte(`,"stream":true}`)) {
				t.Fatalf("a streamed request says so, a whole one does not:\n%s", want)
			}
		})
	}
}
