package anthropic_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/warrenhq/warren/models"
	"github.com/warrenhq/warren/models/anthropic"
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

// compileAt builds an anthropic model of cfg asking base.
func compileAt(t *testing.T, base string, cfg anthropic.Config) models.Live {
	t.Helper()
	cfg.BaseURL = base
	cfg.APIKeyEnv = "WARREN_TEST_ANTHROPIC_KEY"
	t.Setenv("WARREN_TEST_ANTHROPIC_KEY", secret)
	m, err := cfg.Compile(&models.KindEnv{Key: "live", Path: "models.live", ID: "anthropic:live"})
	if err != nil {
		t.Fatal(err)
	}
	return m.(models.Live)
}

// events writes a streamed answer: each pair is an event's name and its data.
func events(w http.ResponseWriter, pairs ...string) {
	w.Header().Set("Content-Type", "text/event-stream")
	for i := 0; i+1 < len(pairs); i += 2 {
		_, _ = io.WriteString(w, "event: "+pairs[i]+"\ndata: "+pairs[i+1]+"\n\n")
	}
}

// toolUseStream is a streamed answer of one read_file call whose input comes in pieces split
// inside a key and a number, with Python's spacing.
var toolUseStream = []string{
	"message_start", `{"message": {"usage": {"output_tokens": 0, "input_tokens": 2}, "content": [], "model": "m", "role": "assistant", "type": "message", "id": "msg_1"}, "type": "message_start"}`,
	"content_block_start", `{"content_block": {"input": {}, "name": "read_file", "id": "toolu_9", "type": "tool_use"}, "index": 0, "type": "content_block_start"}`,
	"content_block_delta", `{"delta": {"partial_json": "{\"pa", "type": "input_json_delta"}, "index": 0, "type": "content_block_delta"}`,
	"content_block_delta", `{"delta": {"partial_json": "th\": \"a.txt\", \"n\": 1.", "type": "input_json_delta"}, "index": 0, "type": "content_block_delta"}`,
	"content_block_delta", `{"delta": {"partial_json": "0}", "type": "input_json_delta"}, "index": 0, "type": "content_block_delta"}`,
	"content_block_stop", `{"index": 0, "type": "content_block_stop"}`,
	"message_delta", `{"usage": {"output_tokens": 1}, "delta": {"stop_sequence": null, "stop_reason": "tool_use"}, "type": "message_delta"}`,
	"message_stop", `{"type": "message_stop"}`,
}

// TestRequestIsWhatIsSent: the body a turn sends is Request's, byte for byte, streamed or not (so
// a recording's hash is the hash of what went over the wire), and a provider's tool input comes
// back as it wrote it (spaced, indented, streamed in pieces).
func TestRequestIsWhatIsSent(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(map[bool]string{false: "whole", true: "streamed"}[stream], func(t *testing.T) {
			srv := serveWire(t, func(w http.ResponseWriter, _ []byte) {
				if stream {
					events(w, toolUseStream...)
					return
				}
				w.Header().Set("Content-Type", "application/json")
				_, _ = io.WriteString(w, `{"usage": {"output_tokens": 1, "input_tokens": 2}, "stop_reason": "tool_use",
 "content": [{"input": {"path": "a.txt", "n": 1.0}, "name": "read_file", "id": "toolu_9", "type": "tool_use"}],
 "model": "m", "role": "assistant", "type": "message", "id": "msg_1"}`)
			})
			m := compileAt(t, srv.URL, anthropic.Config{Model: "m", Stream: stream})
			v := view()
			reply, err := m.Turn(context.Background(), &models.State{}, v)
			if err != nil {
				t.Fatal(err)
			}
			if len(reply.Calls) != 1 || string(reply.Calls[0].Args) != `{"path": "a.txt", "n": 1.0}` {
				t.Fatalf("calls %+v, want the provider's input as it wrote it", reply.Calls)
			}
			v.Messages = append(v.Messages, models.Message{Role: models.RoleAssistant, Calls: reply.Calls},
				models.Message{Role: models.RoleTool, CallID: "toolu_9", Content: "text"})
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
		})
	}
}
