package fakellm_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/warrenhq/warren/internal/fakellm"
)

// start runs a fake server for the test and returns an SDK client of it with the SDK's own
// retries off (the host does its own).
func start(t *testing.T, script fakellm.Script) (*fakellm.Server, openai.Client) {
	t.Helper()
	srv, err := fakellm.Start(script)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	return srv, openai.NewClient(option.WithBaseURL(srv.URL), option.WithAPIKey("sk-test"), option.WithMaxRetries(0))
}

func params(stream bool) openai.ChatCompletionNewParams {
	p := openai.ChatCompletionNewParams{
		Model: "fake-1",
		Messages: []openai.ChatCompletionMessageParamUnion{
			openai.SystemMessage("You are a tester."),
			openai.UserMessage("count the files"),
		},
		Tools: []openai.ChatCompletionToolUnionParam{
			openai.ChatCompletionFunctionTool(openai.FunctionDefinitionParam{Name: "list_dir", Parameters: openai.FunctionParameters{"type": "object"}}),
			openai.ChatCompletionFunctionTool(openai.FunctionDefinitionParam{Name: "read_file", Parameters: openai.FunctionParameters{"type": "object"}}),
		},
		MaxTokens: openai.Int(64),
		Seed:      openai.Int(7),
	}
	if stream {
		p.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
	}
	return p
}

var answer = fakellm.Reply{Text: "Two calls, in parallel.", Usage: fakellm.Usage{Prompt: 30, Completion: 12, Cached: 8},
	ToolCalls: []fakellm.ToolCall{{ID: "call_1", Name: "list_dir", Arguments: `{"path":"."}`}, {ID: "call_2", Name: "read_file", Arguments: `{"path":"a.txt"}`}}}

// TestChatCompletion: a whole answer with parallel tool calls and usage reaches the SDK as the
// provider would send it, and the server keeps what was asked.
func TestChatCompletion(t *testing.T) {
	srv, client := start(t, func(int, fakellm.Request) fakellm.Reply { return answer })
	got, err := client.Chat.Completions.New(context.Background(), params(false))
	if err != nil {
		t.Fatal(err)
	}
	msg := got.Choices[0].Message
	if msg.Content != answer.Text || len(msg.ToolCalls) != 2 || msg.ToolCalls[1].Function.Name != "read_file" ||
		msg.ToolCalls[1].Function.Arguments != `{"path":"a.txt"}` || got.Choices[0].FinishReason != "tool_calls" {
		t.Fatalf("answer %+v", got.Choices[0])
	}
	if u := got.Usage; u.PromptTokens != 30 || u.CompletionTokens != 12 || u.PromptTokensDetails.CachedTokens != 8 {
		t.Fatalf("usage %+v", u)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 || reqs[0].Model != "fake-1" || len(reqs[0].Messages) != 2 || reqs[0].Messages[1].Content != "count the files" ||
		len(reqs[0].Tools) != 2 || reqs[0].Tools[0] != "list_dir" || !reqs[0].Authorized || *reqs[0].MaxTokens != 64 || *reqs[0].Seed != 7 {
		t.Fatalf("requests %+v", reqs)
	}
}

// TestStream: a streamed answer assembles, through the SDK's accumulator, into the same answer,
// usage included; a stream cut short ends without its finish.
func TestStream(t *testing.T) {
	_, client := start(t, func(n int, _ fakellm.Request) fakellm.Reply {
		r := answer
		r.Cut = n == 2
		return r
	})
	stream := client.Chat.Completions.NewStreaming(context.Background(), params(true))
	var acc openai.ChatCompletionAccumulator
	for stream.Next() {
		acc.AddChunk(stream.Current())
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	msg := acc.Choices[0].Message
	if msg.Content != answer.Text || len(msg.ToolCalls) != 2 || msg.ToolCalls[0].Function.Arguments != `{"path":"."}` ||
		acc.Choices[0].FinishReason != "tool_calls" || acc.Usage.CompletionTokens != 12 {
		t.Fatalf("assembled %+v, usage %+v", acc.Choices[0], acc.Usage)
	}
	cut := client.Chat.Completions.NewStreaming(context.Background(), params(true))
	var part openai.ChatCompletionAccumulator
	for cut.Next() {
		part.AddChunk(cut.Current())
	}
	if len(part.Choices) == 0 || part.Choices[0].FinishReason != "" || part.Choices[0].Message.Content == answer.Text {
		t.Fatalf("a cut stream must end without its finish: %+v", part.Choices)
	}
}

// TestFailures: the ways a provider fails reach the SDK as they would from a real one.
func TestFailures(t *testing.T) {
	for _, tc := range []struct {
		name  string
		reply fakellm.Reply
		check func(t *testing.T, err error)
	}{
		{"429 with Retry-After", fakellm.Reply{Status: http.StatusTooManyRequests, RetryAfter: "3"}, func(t *testing.T, err error) {
			var apiErr *openai.Error
			if !errors.As(err, &apiErr) || apiErr.StatusCode != 429 || apiErr.Response.Header.Get("Retry-After") != "3" {
				t.Fatalf("err = %v", err)
			}
		}},
		{"500", fakellm.Reply{Status: http.StatusInternalServerError}, func(t *testing.T, err error) {
			var apiErr *openai.Error
			if !errors.As(err, &apiErr) || apiErr.StatusCode != 500 {
				t.Fatalf("err = %v", err)
			}
		}},
		{"malformed body", fakellm.Reply{Malformed: true}, func(t *testing.T, err error) {
			if err == nil {
				t.Fatal("a body that is not JSON must be an error")
			}
		}},
		{"hang", fakellm.Reply{Hang: true}, func(t *testing.T, err error) {
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("err = %v, want the client's deadline", err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, client := start(t, func(int, fakellm.Request) fakellm.Reply { return tc.reply })
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			_, err := client.Chat.Completions.New(ctx, params(false))
			tc.check(t, err)
		})
	}
}
