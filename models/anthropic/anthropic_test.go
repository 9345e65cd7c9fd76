package anthropic_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/warrenhq/warren/internal/fakellm"
	"github.com/warrenhq/warren/models"
	"github.com/warrenhq/warren/models/anthropic"
)

const secret = "sk-ant-secret-42"

// compile builds an anthropic model of cfg against srv, its key in a variable of the test's.
func compile(t *testing.T, srv *fakellm.Server, cfg anthropic.Config) models.Live {
	t.Helper()
	cfg.BaseURL = srv.AnthropicURL
	if cfg.APIKeyEnv == "" {
		cfg.APIKeyEnv = "WARREN_TEST_ANTHROPIC_KEY"
	}
	t.Setenv("WARREN_TEST_ANTHROPIC_KEY", secret)
	m, err := cfg.Compile(&models.KindEnv{Key: "live", Path: "models.live", ID: "anthropic:live"})
	if err != nil {
		t.Fatal(err)
	}
	return m.(models.Live)
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

// answer is every test's reply: text and two parallel calls.
func answer(int, fakellm.Request) fakellm.Reply {
	return fakellm.Reply{Text: "Reading both.", ToolCalls: []fakellm.ToolCall{
		{ID: "toolu_a", Name: "read_file", Arguments: `{"path":"a.txt"}`},
		{ID: "toolu_b", Name: "read_file", Arguments: `{"path":"b.txt"}`}},
		Usage: fakellm.Usage{Prompt: 1200, Completion: 30, Cached: 1000, CacheWrite: 150}}
}

// view is a turn after two parallel tool calls came back (one failed), a system message and an
// inbox message.
func view() *models.View {
	return &models.View{Stage: "work", System: "Stage: work.", Messages: []models.Message{
		{Role: models.RoleUser, Content: "count the files"},
		{Role: models.RoleAssistant, Content: "Looking.", Calls: []models.ToolCall{
			{ID: "c0", Name: "list_dir", Args: json.RawMessage(`{"path":"."}`)},
			{ID: "c1", Name: "list_dir", Args: json.RawMessage(`{"path":"missing"}`)}}},
		{Role: models.RoleTool, CallID: "c0", Content: "a.txt\nb.txt"},
		{Role: models.RoleTool, CallID: "c1", Content: "no such folder", IsError: true},
		{Role: models.RoleSystem, Content: "Two minutes left."},
		{Role: models.RoleUser, Content: "from lead: hurry"},
	}, Tools: []models.ToolInfo{
		{Name: "list_dir", Description: "Lists a folder.", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"],"additionalProperties":false}`)},
		{Name: "read_file", Description: "Reads a file.", Parameters: json.RawMessage(`{"type":"object"}`)},
	}}
}

// TestTurn: a whole and a streamed turn come back as the turn's text and parallel calls, with
// the usage normalised (Prompt counts every input token, cached or not); the provider sees the
// system prompt as two blocks, the conversation with roles alternating (both tool results, the
// system message and the inbox message in the one user message after the calls), the tools in
// order, and the cache breakpoints on the last tool, the last system block and the last block.
func TestTurn(t *testing.T) {
	for _, stream := range []bool{false, true} {
		name := "whole"
		if stream {
			name = "streamed"
		}
		t.Run(name, func(t *testing.T) {
			srv := serve(t, answer)
			m := compile(t, srv, anthropic.Config{Model: "claude-fake", SystemPrompt: "You count files.", Stop: []string{"END"}, Stream: stream})
			reply, err := m.Turn(context.Background(), &models.State{}, view())
			if err != nil {
				t.Fatal(err)
			}
			if reply.Text != "Reading both." || len(reply.Calls) != 2 || reply.Calls[1].ID != "toolu_b" ||
				reply.Calls[1].Name != "read_file" || string(reply.Calls[1].Args) != `{"path":"b.txt"}` {
				t.Fatalf("reply %+v", reply)
			}
			// The wire said input_tokens 50, cache reads 1000, cache writes 150.
			if want := (models.Usage{Prompt: 1200, Completion: 30, CacheRead: 1000, CacheWrite: 150}); reply.Usage != want {
				t.Fatalf("usage %+v, want %+v", reply.Usage, want)
			}
			reqs := srv.Requests()
			if len(reqs) != 1 {
				t.Fatalf("%d requests", len(reqs))
			}
			r := reqs[0]
			if r.Wire != fakellm.WireAnthropic || r.Model != "claude-fake" || r.System != "You count files.\nStage: work." || r.Stream != stream ||
				*r.MaxTokens != anthropic.DefaultMaxTokens || !slices.Equal(r.Stop, []string{"END"}) || !r.Authorized ||
				!slices.Equal(r.Tools, []string{"list_dir", "read_file"}) || r.Temperature != nil {
				t.Fatalf("request %+v", r)
			}
			var roles []string
			for _, msg := range r.Messages {
				roles = append(roles, msg.Role)
			}
			if strings.Join(roles, ",") != "user,assistant,user" {
				t.Fatalf("roles %q, want them alternating", roles)
			}
			if b := r.Messages[1].Blocks; len(b) != 3 || b[0].Type != "text" || b[0].Text != "Looking." ||
				b[1].Type != "tool_use" || b[1].ID != "c0" || b[1].Name != "list_dir" || b[1].Input != `{"path":"."}` || b[2].ID != "c1" {
				t.Fatalf("assistant blocks %+v", b)
			}
			b := r.Messages[2].Blocks
			if len(b) != 4 || b[0].Type != "tool_result" || b[0].ToolUseID != "c0" || b[0].Text != "a.txt\nb.txt" || b[0].IsError ||
				b[1].ToolUseID != "c1" || !b[1].IsError || b[1].Text != "no such folder" ||
				b[2].Type != "text" || b[2].Text != "[system] Two minutes left." || b[3].Text != "from lead: hurry" {
				t.Fatalf("user blocks after the calls %+v", b)
			}
			if want := []string{"tools[1]", "system[1]", "messages[2].content[3]"}; !slices.Equal(r.CacheMarks, want) {
				t.Fatalf("cache breakpoints %q, want %q", r.CacheMarks, want)
			}
		})
	}
}

// TestCacheOff: cache = false sends no breakpoint.
func TestCacheOff(t *testing.T) {
	srv := serve(t, answer)
	off := false
	m := compile(t, srv, anthropic.Config{Model: "claude-fake", SystemPrompt: "s", Cache: &off})
	if _, err := m.Turn(context.Background(), &models.State{}, view()); err != nil {
		t.Fatal(err)
	}
	if marks := srv.Requests()[0].CacheMarks; len(marks) != 0 {
		t.Fatalf("cache = false sent breakpoints at %q", marks)
	}
}

// TestMapping: an assistant message with neither text nor calls and an empty user message are
// left out (the API refuses empty content) and the messages around them merge; a call whose
// arguments are not a JSON object is sent, and read back, as {}; a tool result with no output is
// sent with no content; with no system prompt and no tools, neither is sent, and the breakpoint
// is on the last message alone.
func TestMapping(t *testing.T) {
	srv := serve(t, func(int, fakellm.Request) fakellm.Reply {
		return fakellm.Reply{ToolCalls: []fakellm.ToolCall{{ID: "toolu_x", Name: "read_file", Arguments: `{"path": "a.t`}}}
	})
	m := compile(t, srv, anthropic.Config{Model: "claude-fake", Stream: true})
	v := &models.View{Messages: []models.Message{
		{Role: models.RoleUser, Content: "one"},
		{Role: models.RoleAssistant},
		{Role: models.RoleUser, Content: ""},
		{Role: models.RoleUser, Content: "two"},
		{Role: models.RoleAssistant, Calls: []models.ToolCall{{ID: "c9", Name: "run", Args: json.RawMessage(`not json`)}}},
		{Role: models.RoleTool, CallID: "c9"},
	}}
	reply, err := m.Turn(context.Background(), &models.State{}, v)
	if err != nil {
		t.Fatal(err)
	}
	if len(reply.Calls) != 1 || string(reply.Calls[0].Args) != "{}" || reply.Text != "" {
		t.Fatalf("a garbled call: %+v", reply)
	}
	r := srv.Requests()[0]
	if len(r.Messages) != 3 || r.Messages[0].Content != "one\ntwo" || r.Messages[1].Blocks[0].Input != "{}" ||
		r.Messages[2].Blocks[0].Type != "tool_result" || r.Messages[2].Blocks[0].Text != "" || r.System != "" || len(r.Tools) != 0 {
		t.Fatalf("messages %+v", r.Messages)
	}
	if want := []string{"messages[2].content[0]"}; !slices.Equal(r.CacheMarks, want) {
		t.Fatalf("cache breakpoints %q, want %q", r.CacheMarks, want)
	}
}

// TestFailures: a provider's failure is the turn's error, a *models.ProviderError with the status
// and Retry-After the host's retry policy decides on, saying the status and never the key; a
// stream cut short is an error, not half an answer; a hang past the timeout is a timeout,
// measured in real time.
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
		{"429", fakellm.Reply{Status: 429, RetryAfter: "2"}, false, "anthropic: status 429: fake provider", 429, 2 * time.Second, true},
		{"529", fakellm.Reply{Status: 529}, false, "anthropic: status 529", 529, 0, true},
		{"500", fakellm.Reply{Status: 500}, true, "anthropic: status 500", 500, 0, true},
		{"400", fakellm.Reply{Status: 400}, false, "anthropic: status 400", 400, 0, false},
		{"401", fakellm.Reply{Status: 401}, true, "anthropic: status 401", 401, 0, false},
		{"cut stream", fakellm.Reply{Text: "half of it", Cut: true}, true, "anthropic: the stream ended before the answer did", 0, 0, true},
		{"overloaded in the stream", fakellm.Reply{Text: "half of it", StreamError: 529}, true, "anthropic: status 529: fake provider: status 529 in the stream (in the stream)", 529, 0, true},
		{"malformed", fakellm.Reply{Malformed: true}, false, "anthropic:", 0, 0, true},
		{"malformed stream", fakellm.Reply{Malformed: true}, true, "anthropic:", 0, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := serve(t, func(int, fakellm.Request) fakellm.Reply { return tc.reply })
			m := compile(t, srv, anthropic.Config{Model: "claude-fake", Stream: tc.stream})
			reply, err := m.Turn(context.Background(), &models.State{}, view())
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), secret) {
				t.Fatalf("err = %v, want %q and no key", err, tc.want)
			}
			if reply.Text != "" || len(reply.Calls) != 0 {
				t.Fatalf("a failed turn answered %+v", reply)
			}
			var pe *models.ProviderError
			if !errors.As(err, &pe) || pe.Provider != "anthropic" || pe.Status != tc.status || pe.RetryAfter != tc.wait || pe.Temporary() != tc.temporary || pe.Timeout {
				t.Fatalf("err = %#v, want status %d, retry after %v, temporary %v", err, tc.status, tc.wait, tc.temporary)
			}
			if !srv.Requests()[0].Authorized {
				t.Fatal("the key was not sent")
			}
		})
	}
	for _, stream := range []bool{false, true} {
		srv := serve(t, func(int, fakellm.Request) fakellm.Reply { return fakellm.Reply{Hang: true} })
		m := compile(t, srv, anthropic.Config{Model: "claude-fake", Timeout: "200ms", Stream: stream})
		_, err := m.Turn(context.Background(), &models.State{}, view())
		var pe *models.ProviderError
		if !errors.As(err, &pe) || !pe.Timeout || !pe.RealTime() || !pe.Temporary() || err.Error() != "anthropic: no answer in time" {
			t.Fatalf("a hung request (stream %v): %#v, want a timeout, measured in real time", stream, err)
		}
	}
	// A turn the host no longer wants ends with its context, and is not a provider's failure.
	srv := serve(t, func(int, fakellm.Request) fakellm.Reply { return fakellm.Reply{Hang: true} })
	m := compile(t, srv, anthropic.Config{Model: "claude-fake"})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	_, err := m.Turn(ctx, &models.State{}, view())
	var pe *models.ProviderError
	if !errors.Is(err, context.Canceled) || errors.As(err, &pe) {
		t.Fatalf("a cancelled turn: %v", err)
	}
}

// TestNoKey: with the key's variable unset, nothing is sent as a key (a local server needs none),
// and nothing is read from the SDK's own variables.
func TestNoKey(t *testing.T) {
	srv := serve(t, answer)
	t.Setenv("ANTHROPIC_AUTH_TOKEN", "from-the-environment")
	t.Setenv("ANTHROPIC_API_KEY", "from-the-environment")
	m := compile(t, srv, anthropic.Config{Model: "claude-fake", APIKeyEnv: "WARREN_TEST_UNSET_KEY"})
	if _, err := m.Turn(context.Background(), &models.State{}, view()); err != nil {
		t.Fatal(err)
	}
	if srv.Requests()[0].Authorized {
		t.Fatal("a key was sent though api_key_env names an unset variable")
	}
}

// TestVia: Via points the model at another endpoint (base URL, model and key variable), with a
// new client; the model it came from is unchanged; a base URL ending in /v1 is refused.
func TestVia(t *testing.T) {
	first, second := serve(t, answer), serve(t, answer)
	m := compile(t, first, anthropic.Config{Model: "claude-fake"})
	t.Setenv("WARREN_TEST_POOL_KEY", "sk-pool")
	pooled, err := m.Via(models.Endpoint{BaseURL: second.AnthropicURL, Model: "claude-other", APIKeyEnv: "WARREN_TEST_POOL_KEY"})
	if err != nil {
		t.Fatal(err)
	}
	if s := pooled.Spec(); s.Provider != "anthropic" || s.Model != "claude-other" || s.BaseURL != second.AnthropicURL || s.MaxTokens != anthropic.DefaultMaxTokens {
		t.Fatalf("spec %+v", s)
	}
	if _, err := pooled.Turn(context.Background(), &models.State{}, view()); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Turn(context.Background(), &models.State{}, view()); err != nil {
		t.Fatal(err)
	}
	if r := second.Requests(); len(r) != 1 || r[0].Model != "claude-other" || !r[0].Authorized {
		t.Fatalf("the pool's endpoint got %+v", r)
	}
	if r := first.Requests(); len(r) != 1 || r[0].Model != "claude-fake" {
		t.Fatalf("the model's own endpoint got %+v", r)
	}
	if m.Spec().Model != "claude-fake" || pooled.ID() != "anthropic:live" {
		t.Fatal("Via changed the model it came from, or the id")
	}
	if _, err := m.Via(models.Endpoint{BaseURL: second.URL}); err == nil || !strings.Contains(err.Error(), "ends in /v1") {
		t.Fatalf("Via to a base URL ending in /v1: %v", err)
	}
}

// TestRequest: Request is the request a turn sends, canonically encoded, so a recording's hash
// of it is stable, and changes when the prompt, the conversation or the tools do.
func TestRequest(t *testing.T) {
	srv := serve(t, answer)
	m := compile(t, srv, anthropic.Config{Model: "claude-fake", SystemPrompt: "You count files.", Stream: true})
	first, err := m.Request(view())
	if err != nil {
		t.Fatal(err)
	}
	for range 20 {
		again, _ := m.Request(view())
		if string(again) != string(first) {
			t.Fatalf("Request is not stable:\n%s\n%s", first, again)
		}
	}
	var body struct {
		Model     string            `json:"model"`
		MaxTokens int               `json:"max_tokens"`
		Stream    bool              `json:"stream"`
		System    []json.RawMessage `json:"system"`
		Messages  []json.RawMessage `json:"messages"`
		Tools     []struct {
			Name        string          `json:"name"`
			InputSchema json.RawMessage `json:"input_schema"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(first, &body); err != nil {
		t.Fatal(err)
	}
	if body.Model != "claude-fake" || body.MaxTokens != 1024 || !body.Stream || len(body.System) != 2 || len(body.Messages) != 3 ||
		len(body.Tools) != 2 || string(body.Tools[0].InputSchema) != `{"additionalProperties":false,"properties":{"path":{"type":"string"}},"required":["path"],"type":"object"}` ||
		string(body.Tools[1].InputSchema) != `{"properties":{},"type":"object"}` { // the API requires one
		t.Fatalf("request %s", first)
	}
	if !strings.Contains(string(first), `"cache_control":{"type":"ephemeral"}`) {
		t.Fatalf("the request has no cache breakpoints: %s", first)
	}
	v := view()
	v.Messages = v.Messages[:1]
	if other, _ := m.Request(v); string(other) == string(first) {
		t.Fatal("a shorter conversation gives the same request")
	}
	v = view()
	v.Tools = v.Tools[:1]
	if other, _ := m.Request(v); string(other) == string(first) {
		t.Fatal("fewer tools give the same request")
	}
	v = view()
	v.Tools[1].Parameters = json.RawMessage(`[1]`)
	if _, err := m.Request(v); err == nil || !strings.Contains(err.Error(), "tool read_file") {
		t.Fatalf("a tool whose parameters are not an object: %v", err)
	}
}

// TestCompileErrors: every bad key of a table is reported at once.
func TestCompileErrors(t *testing.T) {
	zero, temp := int64(0), 0.5
	_, err := (&anthropic.Config{BaseURL: "ftp://x", Timeout: "soon", MaxTokens: &zero, Temperature: &temp, Stop: []string{"END", " "},
		ContextTokens: -1}).Compile(&models.KindEnv{ID: "anthropic:x"})
	var problems models.KeyErrors
	if !errors.As(err, &problems) || len(problems) != 7 {
		t.Fatalf("err = %v", err)
	}
	for i, key := range []string{"model", "base_url", "timeout", "max_tokens", "temperature", "stop[1]", "context_tokens"} {
		if problems[i].Key != key {
			t.Errorf("problem %d is at %s, want %s: %v", i, problems[i].Key, key, problems[i])
		}
	}
	if !strings.Contains(err.Error(), "temperature: the Messages API (version 2026-10-21") {
		t.Errorf("temperature: %v", err)
	}
	_, err = (&anthropic.Config{Model: "m", BaseURL: "http://127.0.0.1:8089/v1/"}).Compile(&models.KindEnv{})
	if err == nil || !strings.Contains(err.Error(), `base_url: "http://127.0.0.1:8089/v1/" ends in /v1, which the SDK adds itself (it asks for /v1/messages): give "http://127.0.0.1:8089"`) {
		t.Fatalf("a base URL ending in /v1: %v", err)
	}
}

// TestDefaults: the base URL comes from the table, else ANTHROPIC_BASE_URL, else the API's; the
// kind is registered under its name.
func TestDefaults(t *testing.T) {
	t.Setenv("ANTHROPIC_BASE_URL", "")
	m, err := (&anthropic.Config{Model: "m"}).Compile(&models.KindEnv{ID: "anthropic:m"})
	if err != nil {
		t.Fatal(err)
	}
	if s := m.(models.Live).Spec(); s.BaseURL != anthropic.DefaultBaseURL || s.MaxTokens != 1024 || s.Provider != "anthropic" {
		t.Fatalf("spec %+v", s)
	}
	t.Setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:8089")
	tokens := int64(64)
	m, err = (&anthropic.Config{Model: "m", MaxTokens: &tokens, ContextTokens: 200000}).Compile(&models.KindEnv{ID: "anthropic:m"})
	if err != nil {
		t.Fatal(err)
	}
	if s := m.(models.Live).Spec(); s.BaseURL != "http://127.0.0.1:8089" || s.MaxTokens != 64 || s.ContextTokens != 200000 {
		t.Fatalf("spec %+v", s)
	}
	k, ok := models.LookupKind(models.KindNamespace + "anthropic")
	if !ok || k.Name() != "anthropic" {
		t.Fatal("the anthropic kind is not registered")
	}
	if _, ok := k.New().(*anthropic.Config); !ok {
		t.Fatal("the kind's table is not a Config")
	}
}
