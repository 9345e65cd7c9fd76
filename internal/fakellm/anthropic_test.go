package fakellm_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	aopt "github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/warrenhq/warren/internal/fakellm"
)

// startAnthropic runs a fake server for the test and returns an Anthropic SDK client of it,
// reading nothing from the environment, its own retries off.
func startAnthropic(t *testing.T, script fakellm.Script) (*fakellm.Server, anthropic.Client) {
	t.Helper()
	srv, err := fakellm.Start(script)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	return srv, anthropic.NewClient(aopt.WithoutEnvironmentDefaults(), aopt.WithBaseURL(srv.AnthropicURL),
		aopt.WithAPIKey("sk-ant-test"), aopt.WithMaxRetries(0), aopt.WithoutOpenTelemetry())
}

// messageParams is a turn after one tool call came back, with cache_control markers on the last
// tool, the system prompt and the last message.
func messageParams() anthropic.MessageNewParams {
	eph := anthropic.NewCacheControlEphemeralParam()
	result := anthropic.NewToolResultBlock("toolu_0", "a.txt\nb.txt", false)
	result.OfToolResult.CacheControl = eph
	return anthropic.MessageNewParams{
		Model:     "fake-claude",
		MaxTokens: 64,
		System:    []anthropic.TextBlockParam{{Text: "You are a tester.", CacheControl: eph}},
		Messages: []anthropic.MessageParam{
			anthropic.NewUserMessage(anthropic.NewTextBlock("count the files")),
			anthropic.NewAssistantMessage(anthropic.NewTextBlock("Looking."), anthropic.NewToolUseBlock("toolu_0", map[string]any{"path": "."}, "list_dir")),
			anthropic.NewUserMessage(result),
		},
		Tools: []anthropic.ToolUnionParam{
			{OfTool: &anthropic.ToolParam{Name: "list_dir", InputSchema: anthropic.ToolInputSchemaParam{}}},
			{OfTool: &anthropic.ToolParam{Name: "read_file", InputSchema: anthropic.ToolInputSchemaParam{}, CacheControl: eph}},
		},
		StopSequences: []string{"END"},
	}
}

var claudeAnswer = fakellm.Reply{Text: "Reading both, ✓.", Usage: fakellm.Usage{Prompt: 120, Completion: 30, Cached: 64, CacheWrite: 16},
	ToolCalls: []fakellm.ToolCall{{ID: "toolu_1", Name: "read_file", Arguments: `{"path":"a.txt"}`}, {ID: "toolu_2", Name: "read_file", Arguments: `{"path":"b.txt"}`}}}

// checkAnswer fails unless msg is claudeAnswer as the Messages API sends it: a text block, two
// tool_use blocks, the tool_use stop reason and the usage in Anthropic's meanings.
func checkAnswer(t *testing.T, msg *anthropic.Message) {
	t.Helper()
	if len(msg.Content) != 3 || msg.Content[0].Type != "text" || msg.Content[0].Text != claudeAnswer.Text ||
		msg.Content[2].Type != "tool_use" || msg.Content[2].ID != "toolu_2" || msg.Content[2].Name != "read_file" ||
		string(msg.Content[2].Input) != `{"path":"b.txt"}` || msg.StopReason != anthropic.StopReasonToolUse {
		t.Fatalf("answer %+v", msg.Content)
	}
	// input_tokens exclude cache reads and writes: 120 - 64 - 16.
	if u := msg.Usage; u.InputTokens != 40 || u.CacheReadInputTokens != 64 || u.CacheCreationInputTokens != 16 || u.OutputTokens != 30 {
		t.Fatalf("usage %+v", u)
	}
}

// TestMessages: a whole answer with parallel tool_use blocks and usage reaches the SDK as the
// Messages API would send it, and the server keeps what was asked: the system text, each
// message's blocks, the tools, where the cache markers were, and that a key came (not the key).
func TestMessages(t *testing.T) {
	srv, client := startAnthropic(t, func(int, fakellm.Request) fakellm.Reply { return claudeAnswer })
	msg, err := client.Messages.New(context.Background(), messageParams())
	if err != nil {
		t.Fatal(err)
	}
	checkAnswer(t, msg)
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests", len(reqs))
	}
	r := reqs[0]
	if r.Wire != fakellm.WireAnthropic || r.Seq != 1 || r.Arrived.IsZero() || r.Model != "fake-claude" || r.System != "You are a tester." ||
		*r.MaxTokens != 64 || r.Stream || !r.Authorized || !slices.Equal(r.Stop, []string{"END"}) || !slices.Equal(r.Tools, []string{"list_dir", "read_file"}) {
		t.Fatalf("request %+v", r)
	}
	if want := []string{"tools[1]", "system[0]", "messages[2].content[0]"}; !slices.Equal(r.CacheMarks, want) {
		t.Fatalf("cache marks %q, want %q", r.CacheMarks, want)
	}
	if len(r.Messages) != 3 || r.Messages[1].Role != "assistant" || r.Messages[1].Content != "Looking." ||
		len(r.Messages[1].ToolCalls) != 1 || r.Messages[1].ToolCalls[0].Arguments != `{"path":"."}` {
		t.Fatalf("messages %+v", r.Messages)
	}
	if b := r.Messages[2].Blocks; len(b) != 1 || b[0].Type != "tool_result" || b[0].ToolUseID != "toolu_0" || b[0].Text != "a.txt\nb.txt" ||
		b[0].IsError || !b[0].Cached || r.Messages[2].Content != "a.txt\nb.txt" {
		t.Fatalf("tool result %+v", r.Messages[2])
	}
}

// TestMessagesStream: a streamed answer (message_start, content blocks with text_delta and
// input_json_delta, message_delta, message_stop) assembles through the SDK's Accumulate into the
// same answer, usage included; a cut stream ends without message_stop, and a malformed one is
// the stream's error.
func TestMessagesStream(t *testing.T) {
	srv, client := startAnthropic(t, func(n int, _ fakellm.Request) fakellm.Reply {
		r := claudeAnswer
		r.Cut = n == 2
		r.Malformed = n == 3
		if n == 4 {
			r.StreamError = 529
		}
		return r
	})
	read := func() (anthropic.Message, []string, error) {
		stream := client.Messages.NewStreaming(context.Background(), messageParams())
		var msg anthropic.Message
		var events []string
		for stream.Next() {
			ev := stream.Current()
			events = append(events, string(ev.Type))
			if err := msg.Accumulate(ev); err != nil {
				t.Fatal(err)
			}
		}
		return msg, events, stream.Err()
	}
	msg, events, err := read()
	if err != nil {
		t.Fatal(err)
	}
	checkAnswer(t, &msg)
	if events[0] != "message_start" || events[len(events)-1] != "message_stop" || !slices.Contains(events, "message_delta") {
		t.Fatalf("events %q", events)
	}
	if !srv.Requests()[0].Stream {
		t.Fatal("the request was not seen as streamed")
	}
	cut, events, err := read()
	if err != nil || slices.Contains(events, "message_stop") || cut.Content[0].Text == claudeAnswer.Text {
		t.Fatalf("a cut stream must end without message_stop: %q, %+v, %v", events, cut.Content, err)
	}
	if _, _, err := read(); err == nil {
		t.Fatal("a malformed stream must be an error")
	}
	_, _, err = read()
	var apiErr *anthropic.Error
	if !errors.As(err, &apiErr) || apiErr.Type() != anthropic.ErrorTypeOverloadedError || apiErr.StatusCode != 200 {
		t.Fatalf("an error event in the stream: %v", err)
	}
}

// TestMessagesFailures: the ways the Messages API fails reach the SDK as they would from the
// real one: the status, the error type in Anthropic's body, Retry-After.
func TestMessagesFailures(t *testing.T) {
	for _, tc := range []struct {
		name   string
		reply  fakellm.Reply
		status int
		typ    string
	}{
		{"429 with Retry-After", fakellm.Reply{Status: http.StatusTooManyRequests, RetryAfter: "2"}, 429, "rate_limit_error"},
		{"529 overloaded", fakellm.Reply{Status: 529}, 529, "overloaded_error"},
		{"500", fakellm.Reply{Status: http.StatusInternalServerError}, 500, "api_error"},
		{"400", fakellm.Reply{Status: http.StatusBadRequest}, 400, "invalid_request_error"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, client := startAnthropic(t, func(int, fakellm.Request) fakellm.Reply { return tc.reply })
			_, err := client.Messages.New(context.Background(), messageParams())
			var apiErr *anthropic.Error
			if !errors.As(err, &apiErr) || apiErr.StatusCode != tc.status || string(apiErr.Type()) != tc.typ ||
				apiErr.Response.Header.Get("Retry-After") != tc.reply.RetryAfter || !strings.Contains(apiErr.Message, "fake provider") {
				t.Fatalf("err = %v", err)
			}
		})
	}
	_, client := startAnthropic(t, func(int, fakellm.Request) fakellm.Reply { return fakellm.Reply{Malformed: true} })
	if _, err := client.Messages.New(context.Background(), messageParams()); err == nil {
		t.Fatal("a body that is not JSON must be an error")
	}
	_, client = startAnthropic(t, func(int, fakellm.Request) fakellm.Reply { return fakellm.Reply{Hang: true} })
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if _, err := client.Messages.New(ctx, messageParams()); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a hang: err = %v, want the client's deadline", err)
	}
}

// TestWrongPath: a base URL the SDK turns into another path (an Anthropic base URL ending in
// /v1) gets a 404 saying which base URLs the server wants.
func TestWrongPath(t *testing.T) {
	srv, _ := startAnthropic(t, func(int, fakellm.Request) fakellm.Reply { return claudeAnswer })
	client := anthropic.NewClient(aopt.WithoutEnvironmentDefaults(), aopt.WithBaseURL(srv.URL), aopt.WithAPIKey("k"), aopt.WithMaxRetries(0))
	_, err := client.Messages.New(context.Background(), messageParams())
	var apiErr *anthropic.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 404 || !strings.Contains(apiErr.Message, "/v1/v1/messages") || !strings.Contains(apiErr.Message, "without /v1") {
		t.Fatalf("err = %v", err)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Fatalf("a request to a wrong path was recorded: %d", n)
	}
}

// TestDelayAndInFlight: a delayed reply answers after its delay; requests served at once are
// counted (InFlight now, MaxInFlight ever), numbered in arrival order and timed; a client that
// gives up during a delay gets nothing and frees its slot.
func TestDelayAndInFlight(t *testing.T) {
	release := make(chan struct{})
	srv, client := startAnthropic(t, func(n int, _ fakellm.Request) fakellm.Reply {
		if n <= 3 {
			<-release // the first three are held together
		}
		return fakellm.Reply{Text: "ok", Delay: 50 * time.Millisecond}
	})
	errs := make(chan error, 3)
	for range 3 {
		go func() {
			_, err := client.Messages.New(context.Background(), messageParams())
			errs <- err
		}()
	}
	deadline := time.Now().Add(5 * time.Second)
	for srv.InFlight() < 3 {
		if time.Now().After(deadline) {
			t.Fatalf("in flight %d, want 3", srv.InFlight())
		}
		time.Sleep(5 * time.Millisecond)
	}
	close(release)
	for range 3 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if srv.InFlight() != 0 || srv.MaxInFlight() != 3 {
		t.Fatalf("in flight %d, max %d; want 0 and 3", srv.InFlight(), srv.MaxInFlight())
	}
	start := time.Now()
	if _, err := client.Messages.New(context.Background(), messageParams()); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < 50*time.Millisecond {
		t.Fatalf("a reply delayed 50ms came after %v", took)
	}
	reqs := srv.Requests()
	for i, r := range reqs {
		if r.Seq != i+1 || (i > 0 && r.Arrived.Before(reqs[i-1].Arrived)) {
			t.Fatalf("request %d: seq %d, arrived %v after %v", i, r.Seq, r.Arrived, reqs[max(0, i-1)].Arrived)
		}
	}

	slow, client := startAnthropic(t, func(int, fakellm.Request) fakellm.Reply { return fakellm.Reply{Text: "late", Delay: time.Hour} })
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := client.Messages.New(ctx, messageParams()); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want the client's deadline", err)
	}
	for deadline := time.Now().Add(5 * time.Second); slow.InFlight() != 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("a request whose client gave up is still in flight")
		}
	}
}

// TestListenLoopbackOnly: the server listens on loopback addresses only.
func TestListenLoopbackOnly(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", ":0", "192.0.2.1:0", "example.com:0"} {
		if srv, err := fakellm.Listen(addr, nil); err == nil || !strings.Contains(err.Error(), "not a loopback address") {
			if srv != nil {
				_ = srv.Close()
			}
			t.Errorf("Listen(%q) = %v, want a refusal", addr, err)
		}
	}
	for _, addr := range []string{"127.0.0.1:0", "localhost:0"} {
		srv, err := fakellm.Listen(addr, func(int, fakellm.Request) fakellm.Reply { return fakellm.Reply{Text: "hi"} })
		if err != nil {
			t.Fatalf("Listen(%q): %v", addr, err)
		}
		resp, err := http.Post(srv.AnthropicURL+"/v1/messages", "application/json", strings.NewReader(`{"model":"m","max_tokens":1,"messages":[]}`))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !strings.Contains(string(body), `"text":"hi"`) {
			t.Fatalf("%s: %s", addr, body)
		}
		_ = srv.Close()
	}
}
