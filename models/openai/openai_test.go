package openai_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/warrenhq/warren/internal/fakellm"
	"github.com/warrenhq/warren/internal/netguard"
	"github.com/warrenhq/warren/models"
	"github.com/warrenhq/warren/models/openai"
)

// compile builds an openai model of cfg against srv.
func compile(t *testing.T, srv *fakellm.Server, cfg openai.Config) models.Model {
	t.Helper()
	cfg.BaseURL = srv.URL
	cfg.APIKeyEnv = "WARREN_TEST_OPENAI_KEY"
	t.Setenv("WARREN_TEST_OPENAI_KEY", "sk-secret-42")
	m, err := cfg.Compile(&models.KindEnv{Key: "live", Path: "models.live", ID: "openai:live"})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func serve(t *testing.T, script fakellm.Script) *fakellm.Server {
	t.Helper()
	srv, err := fakellm.Start(script)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	return srv
}

// view is a turn after one tool call came back.
func view() *models.View {
	return &models.View{Stage: "work", Messages: []models.Message{
		{Role: models.RoleUser, Content: "count the files"},
		{Role: models.RoleAssistant, Content: "Looking.", Calls: []models.ToolCall{{ID: "c0", Name: "list_dir", Args: json.RawMessage(`{"path":"."}`)}}},
		{Role: models.RoleTool, CallID: "c0", Content: "a.txt\nb.txt"},
	}, Tools: []models.ToolInfo{
		{Name: "list_dir", Description: "Lists a folder.", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)},
		{Name: "read_file", Description: "Reads a file.", Parameters: json.RawMessage(`{"type":"object"}`)},
	}}
}

func TestTurn(t *testing.T) {
	for _, stream := range []bool{false, true} {
		name := "whole"
		if stream {
			name = "streamed"
		}
		t.Run(name, func(t *testing.T) {
			srv := serve(t, func(int, fakellm.Request) fakellm.Reply {
				return fakellm.Reply{Text: "Reading both.", ToolCalls: []fakellm.ToolCall{
					{ID: "call_a", Name: "read_file", Arguments: `{"path":"a.txt"}`},
					{ID: "call_b", Name: "read_file", Arguments: `{"path":"b.txt"}`}},
					Usage: fakellm.Usage{Prompt: 120, Completion: 30, Cached: 64}}
			})
			seed := int64(7)
			m := compile(t, srv, openai.Config{Model: "fake-1", SystemPrompt: "You count files.", MaxTokens: 100, Seed: &seed, Stream: stream})
			reply, err := m.Turn(context.Background(), &models.State{}, view())
			if err != nil {
				t.Fatal(err)
			}
			if reply.Text != "Reading both." || len(reply.Calls) != 2 || reply.Calls[1].ID != "call_b" ||
				reply.Calls[1].Name != "read_file" || string(reply.Calls[1].Args) != `{"path":"b.txt"}` {
				t.Fatalf("reply %+v", reply)
			}
			if want := (models.Usage{Prompt: 120, Completion: 30, CacheRead: 64}); reply.Usage != want {
				t.Fatalf("usage %+v, want %+v", reply.Usage, want)
			}
			reqs := srv.Requests()
			if len(reqs) != 1 {
				t.Fatalf("%d requests", len(reqs))
			}
			r := reqs[0]
			roles := []string{}
			for _, msg := range r.Messages {
				roles = append(roles, msg.Role)
			}
			if strings.Join(roles, ",") != "system,user,assistant,tool" || r.Messages[0].Content != "You count files." ||
				r.Messages[2].ToolCalls[0].Name != "list_dir" || r.Messages[3].ToolCallID != "c0" || r.Messages[3].Content != "a.txt\nb.txt" {
				t.Fatalf("messages %+v", r.Messages)
			}
			if strings.Join(r.Tools, ",") != "list_dir,read_file" || r.Stream != stream || *r.MaxTokens != 100 || *r.Seed != 7 || !r.Authorized {
				t.Fatalf("request %+v", r)
			}
		})
	}
}

// TestFailures: a provider's failure is the turn's error, saying the status and never the key;
// a stream cut short is an error, not half an answer.
func TestFailures(t *testing.T) {
	for _, tc := range []struct {
		name      string
		reply     fakellm.Reply
		stream    bool
		want      string
		status    int
		wait      time.Duration
		temporary bool
	}{
		{"429", fakellm.Reply{Status: 429, RetryAfter: "2"}, false, "openai: status 429", 429, 2 * time.Second, true},
		{"500", fakellm.Reply{Status: 500}, false, "openai: status 500", 500, 0, true},
		{"400", fakellm.Reply{Status: 400}, false, "openai: status 400", 400, 0, false},
		{"cut stream", fakellm.Reply{Text: "half of it", Cut: true}, true, "the stream ended before the answer did", 0, 0, true},
		{"malformed", fakellm.Reply{Malformed: true}, false, "openai:", 0, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := serve(t, func(int, fakellm.Request) fakellm.Reply { return tc.reply })
			m := compile(t, srv, openai.Config{Model: "fake-1", Stream: tc.stream})
			_, err := m.Turn(context.Background(), &models.State{}, view())
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "sk-secret-42") {
				t.Fatalf("err = %v, want %q and no key", err, tc.want)
			}
			var pe *models.ProviderError
			if !errors.As(err, &pe) || pe.Status != tc.status || pe.RetryAfter != tc.wait || pe.Temporary() != tc.temporary {
				t.Fatalf("err = %#v, want status %d, retry after %v, temporary %v", err, tc.status, tc.wait, tc.temporary)
			}
		})
	}
	srv := serve(t, func(int, fakellm.Request) fakellm.Reply { return fakellm.Reply{Hang: true} })
	m := compile(t, srv, openai.Config{Model: "fake-1", Timeout: "200ms"})
	_, err := m.Turn(context.Background(), &models.State{}, view())
	var pe *models.ProviderError
	if !errors.As(err, &pe) || !pe.Timeout || !pe.RealTime() || !pe.Temporary() {
		t.Fatalf("a hung request: %#v, want a timeout, measured in real time", err)
	}
}

func TestCompileErrors(t *testing.T) {
	temp := 3.0
	_, err := (&openai.Config{BaseURL: "ftp://x", Timeout: "soon", MaxTokens: -1, Temperature: &temp,
		ContextTokens: -5, ContextOverflow: "truncate", ResponseFormat: "yaml"}).Compile(&models.KindEnv{ID: "openai:x"})
	var problems models.KeyErrors
	if !errors.As(err, &problems) || len(problems) != 8 {
		t.Fatalf("err = %v", err)
	}
	for _, key := range []string{"model", "base_url", "timeout", "max_tokens", "temperature", "context_tokens", "context_overflow: \"truncate\": valid rules are drop_oldest_turns, fail", "response_format"} {
		if !strings.Contains(err.Error(), key) {
			t.Errorf("no problem at %s: %v", key, err)
		}
	}
}

// TestServedClientReachesOnlyPublicAddresses: a model given host serve's client
// (models.KindEnv.HTTPClient, netguard.ServedClient) is refused the connection to its loopback
// base_url unless the client allows that host; refused, the server gets nothing.
func TestServedClientReachesOnlyPublicAddresses(t *testing.T) {
	srv := serve(t, func(int, fakellm.Request) fakellm.Reply { return fakellm.Reply{Text: "hello"} })
	host := strings.TrimPrefix(srv.URL, "http://")
	host = host[:strings.IndexByte(host, '/')]
	for _, tc := range []struct {
		name    string
		allowed bool
	}{{"not allowed", false}, {"allowed", true}} {
		t.Run(tc.name, func(t *testing.T) {
			srv.Forget()
			cfg := openai.Config{Model: "fake-1", MaxTokens: 10, BaseURL: srv.URL}
			client := netguard.ServedClient(func(h string) bool { return tc.allowed && h == host })
			m, err := cfg.Compile(&models.KindEnv{Key: "live", Path: "models.live", ID: "openai:live", HTTPClient: client})
			if err != nil {
				t.Fatal(err)
			}
			reply, err := m.Turn(context.Background(), &models.State{}, view())
			switch {
			case tc.allowed && (err != nil || reply.Text != "hello"):
				t.Fatalf("allowed: %+v, %v", reply, err)
			case !tc.allowed && (err == nil || !strings.Contains(err.Error(), "a non-public address (loopback)")):
				t.Fatalf("not allowed: %v, want the loopback refusal", err)
			case !tc.allowed && len(srv.Requests()) != 0:
				t.Fatalf("the refused server got %d requests", len(srv.Requests()))
			}
		})
	}
}
