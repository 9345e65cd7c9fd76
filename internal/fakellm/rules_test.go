package fakellm_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	aopt "github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/warrenhq/warren/internal/fakellm"
	"github.com/warrenhq/warren/internal/tomlfile"
)

const rulesFile = `
[[reply]]
when_turn = 3
text = "Third answer."

[[reply]]
when_last_contains = "boom"
status = 429
retry_after = 2

[[reply]]
when_system_contains = "slow"
text = "Slowly."
delay = "60ms"

[[reply]]
when_tool_offered = "read_file"
text = "Reading."
usage = {prompt = 120, completion = 30, cached = 64}
[[reply.calls]]
name = "read_file"
args = {path = "notes.md", lines = [1, 2]}
[[reply.calls]]
name = "read_file"
args = {path = "b.md"}
`

// serveRules loads rules from a file holding src and serves them, returning OpenAI and
// Anthropic clients of the server.
func serveRules(t *testing.T, src string) (*fakellm.Server, openai.Client, anthropic.Client) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "rules.toml")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	srv, err := fakellm.StartRules(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	return srv, openai.NewClient(option.WithBaseURL(srv.URL), option.WithAPIKey("k"), option.WithMaxRetries(0)),
		anthropic.NewClient(aopt.WithoutEnvironmentDefaults(), aopt.WithBaseURL(srv.AnthropicURL), aopt.WithAPIKey("k"), aopt.WithMaxRetries(0))
}

// chat is a Chat Completions request: the system text, the conversation (alternating user and
// assistant from a user message) and the tools offered.
func chat(system string, conversation []string, tools ...string) openai.ChatCompletionNewParams {
	p := openai.ChatCompletionNewParams{Model: "fake"}
	if system != "" {
		p.Messages = append(p.Messages, openai.SystemMessage(system))
	}
	for i, text := range conversation {
		if i%2 == 0 {
			p.Messages = append(p.Messages, openai.UserMessage(text))
		} else {
			p.Messages = append(p.Messages, openai.AssistantMessage(text))
		}
	}
	for _, name := range tools {
		p.Tools = append(p.Tools, openai.ChatCompletionFunctionTool(openai.FunctionDefinitionParam{Name: name}))
	}
	return p
}

// TestRules: each request gets the answer of the first rule whose conditions all hold, over
// either wire format, and the default answer when none does; every key of a rule does what it
// says.
func TestRules(t *testing.T) {
	_, oc, ac := serveRules(t, rulesFile)
	ctx := context.Background()

	// when_tool_offered, text, [[reply.calls]] with args tables, usage.
	got, err := oc.Chat.Completions.New(ctx, chat("", []string{"hello"}, "list_dir", "read_file"))
	if err != nil {
		t.Fatal(err)
	}
	msg := got.Choices[0].Message
	if msg.Content != "Reading." || len(msg.ToolCalls) != 2 || msg.ToolCalls[0].ID != "call_1_1" || msg.ToolCalls[1].ID != "call_1_2" ||
		msg.ToolCalls[0].Function.Name != "read_file" || msg.ToolCalls[0].Function.Arguments != `{"lines":[1,2],"path":"notes.md"}` ||
		msg.ToolCalls[1].Function.Arguments != `{"path":"b.md"}` {
		t.Fatalf("when_tool_offered: %+v", msg)
	}
	if u := got.Usage; u.PromptTokens != 120 || u.CompletionTokens != 30 || u.PromptTokensDetails.CachedTokens != 64 {
		t.Fatalf("usage %+v", u)
	}

	// when_last_contains, status, retry_after; the first match wins over when_tool_offered.
	_, err = oc.Chat.Completions.New(ctx, chat("", []string{"it went boom"}, "read_file"))
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 429 || apiErr.Response.Header.Get("Retry-After") != "2" {
		t.Fatalf("when_last_contains: err = %v", err)
	}

	// when_system_contains, delay.
	start := time.Now()
	got, err = oc.Chat.Completions.New(ctx, chat("be slow", []string{"hi"}))
	if err != nil || got.Choices[0].Message.Content != "Slowly." || time.Since(start) < 60*time.Millisecond {
		t.Fatalf("when_system_contains: %v after %v, err %v", got, time.Since(start), err)
	}

	// when_turn: the third answer is asked for after two assistant messages, whatever the rest
	// says (it would match when_last_contains).
	got, err = oc.Chat.Completions.New(ctx, chat("", []string{"a", "b", "c", "d", "boom"}))
	if err != nil || got.Choices[0].Message.Content != "Third answer." {
		t.Fatalf("when_turn: %v, %v", got, err)
	}

	// No rule matches: the default answer, usage estimated from the bytes: "sys" and "hello" are
	// 8 bytes, 2 tokens; the answer's 22 bytes are 6.
	got, err = oc.Chat.Completions.New(ctx, chat("sys", []string{"hello"}))
	if err != nil || got.Choices[0].Message.Content != fakellm.DefaultText || len(got.Choices[0].Message.ToolCalls) != 0 ||
		got.Usage.PromptTokens != 2 || got.Usage.CompletionTokens != 6 {
		t.Fatalf("default: %+v, %v", got, err)
	}
	// The same over the Messages API.
	am, err := ac.Messages.New(ctx, anthropic.MessageNewParams{Model: "fake", MaxTokens: 10,
		System:   []anthropic.TextBlockParam{{Text: "sys"}},
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hello"))}})
	if err != nil || am.Content[0].Text != fakellm.DefaultText || am.Usage.InputTokens != 2 || am.Usage.OutputTokens != 6 {
		t.Fatalf("default over Anthropic: %+v, %v", am, err)
	}
	// A tool result is the last input Anthropic sends, inside a user message.
	am, err = ac.Messages.New(ctx, anthropic.MessageNewParams{Model: "fake", MaxTokens: 10, Messages: []anthropic.MessageParam{
		anthropic.NewUserMessage(anthropic.NewTextBlock("go")),
		anthropic.NewAssistantMessage(anthropic.NewToolUseBlock("call_1_1", map[string]any{}, "run")),
		anthropic.NewUserMessage(anthropic.NewToolResultBlock("call_1_1", "boom: exit 1", true))}})
	if !errors.As(err, new(*anthropic.Error)) || !strings.Contains(err.Error(), "429") {
		t.Fatalf("when_last_contains over a tool result: %+v, %v", am, err)
	}
}

// TestDefaultRules: with no file, every request is answered DefaultText with no calls.
func TestDefaultRules(t *testing.T) {
	rules, err := fakellm.LoadRules("")
	if err != nil {
		t.Fatal(err)
	}
	r := rules.Reply(1, fakellm.Request{Tools: []string{"read_file"}, Messages: []fakellm.Message{{Role: "user", Content: "do it"}}})
	if r.Text != fakellm.DefaultText || len(r.ToolCalls) != 0 || r.Status != 0 || r.Usage != (fakellm.Usage{Prompt: 2, Completion: 6}) {
		t.Fatalf("default reply %+v", r)
	}
}

// TestRulesErrors: unknown keys, at any depth, are errors naming the file, line, key and the
// valid keys; the other problems of the file are reported with them, each at its key.
func TestRulesErrors(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bad.toml")
	src := `[[reply]]
whn_turn = 2
text = "x"

[[reply]]
status = 700
text = "and text"
retry_after = -1
delay = "soon"
usage = {prompt = 1, cached = 2, cahced = 3}
[[reply.calls]]
args = {a = 1}
nme = "x"

[[reply]]
when_turn = 0
when_tool_offered = ""
retry_after = 3
`
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := fakellm.LoadRules(path)
	var problems tomlfile.Errors
	if !errors.As(err, &problems) {
		t.Fatalf("err = %v", err)
	}
	want := []string{
		path + ":2:1: reply[0].whn_turn: unknown key; valid keys here: calls, delay, retry_after, status, text, usage, when_last_contains, when_system_contains, when_tool_offered, when_turn",
		path + ":6:1: reply[1].status: 700: a failing answer's status is from 400 to 599",
		path + ":6:1: reply[1].status: a failing answer has no text or calls",
		path + ":8:1: reply[1].retry_after: -1: give a number of seconds",
		path + ":9:1: reply[1].delay: \"soon\": give a Go duration",
		path + ":10:1: reply[1].usage: cached (2) and cache_write (0) are parts of prompt (1)",
		path + ":10:34: reply[1].usage.cahced: unknown key; valid keys here: cache_write, cached, completion, prompt",
		path + ":11:9: reply[1].calls[0].name: missing: name the tool to call",
		path + ":13:1: reply[1].calls[0].nme: unknown key; valid keys here: args, name",
		path + ":16:1: reply[2].when_turn: 0: turns count from 1",
		path + ":17:1: reply[2].when_tool_offered: an empty string matches every request",
		path + ":18:1: reply[2].retry_after: is the Retry-After of a failing answer; set status too",
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != len(want) {
		t.Fatalf("got %d problems, want %d:\n%v", len(lines), len(want), err)
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("problem %d:\n got %s\nwant %s...", i, lines[i], w)
		}
	}
	if _, err := fakellm.LoadRules(filepath.Join(t.TempDir(), "missing.toml")); err == nil || !strings.Contains(err.Error(), "file does not exist") {
		t.Errorf("a missing file: %v", err)
	}
	if _, err := fakellm.ParseRules("syntax.toml", []byte("[[reply]\ntext = 1")); err == nil || !strings.HasPrefix(err.Error(), "syntax.toml:1:") {
		t.Errorf("a syntax error: %v", err)
	}
	if _, err := fakellm.ParseRules("type.toml", []byte("[[reply]]\nwhen_turn = \"two\"")); err == nil || !strings.Contains(err.Error(), "type.toml:2:") {
		t.Errorf("a type error: %v", err)
	}
}
