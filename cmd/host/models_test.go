package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	aopt "github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

// serveFake starts host models serve-fake with args, as main would, and returns the base URLs
// it printed, a function that interrupts it and waits for its exit code, and its stderr.
func serveFake(t *testing.T, args ...string) (openaiURL, anthropicURL string, stop func() int, stderr *bytes.Buffer) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out, w := io.Pipe()
	stderr = new(bytes.Buffer)
	code := make(chan int, 1)
	go func() {
		code <- run(&env{stdout: w, stderr: stderr, ctx: ctx}, append([]string{"models", "serve-fake"}, args...))
		_ = w.Close()
	}()
	stop = func() int {
		cancel()
		select {
		case c := <-code:
			return c
		case <-time.After(10 * time.Second):
			t.Fatal("host models serve-fake did not stop when interrupted")
			return -1
		}
	}
	t.Cleanup(func() { cancel() })
	lines := bufio.NewScanner(out)
	for lines.Scan() {
		if v, ok := strings.CutPrefix(lines.Text(), "OPENAI_BASE_URL="); ok {
			openaiURL = v
		}
		if v, ok := strings.CutPrefix(lines.Text(), "ANTHROPIC_BASE_URL="); ok {
			anthropicURL = v
			break
		}
	}
	if openaiURL == "" || anthropicURL == "" {
		t.Fatalf("serve-fake printed no base URLs; exit %d, stderr %q", stop(), stderr)
	}
	go func() { _, _ = io.Copy(io.Discard, out) }()
	return openaiURL, anthropicURL, stop, stderr
}

// TestModelsServeFake: host models serve-fake prints a base URL for each wire format, answers
// the OpenAI and the Anthropic SDK over loopback by its rules file, and stops when interrupted.
func TestModelsServeFake(t *testing.T) {
	rules := filepath.Join(t.TempDir(), "rules.toml")
	if err := os.WriteFile(rules, []byte(`
[[reply]]
when_tool_offered = "read_file"
text = "Reading."
[[reply.calls]]
name = "read_file"
args = {path = "notes.md"}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	openaiURL, anthropicURL, stop, stderr := serveFake(t, "--listen", "127.0.0.1:0", "--rules", rules)
	if !strings.HasPrefix(openaiURL, "http://127.0.0.1:") || !strings.HasSuffix(openaiURL, "/v1") || openaiURL != anthropicURL+"/v1" {
		t.Fatalf("base URLs %q and %q", openaiURL, anthropicURL)
	}
	ctx := context.Background()

	oc := openai.NewClient(option.WithBaseURL(openaiURL), option.WithAPIKey("k"), option.WithMaxRetries(0))
	got, err := oc.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "fake",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("read my notes")},
		Tools:    []openai.ChatCompletionToolUnionParam{openai.ChatCompletionFunctionTool(openai.FunctionDefinitionParam{Name: "read_file"})}})
	if err != nil {
		t.Fatal(err)
	}
	if msg := got.Choices[0].Message; msg.Content != "Reading." || len(msg.ToolCalls) != 1 || msg.ToolCalls[0].Function.Arguments != `{"path":"notes.md"}` {
		t.Fatalf("OpenAI answer %+v", msg)
	}

	ac := anthropic.NewClient(aopt.WithoutEnvironmentDefaults(), aopt.WithBaseURL(anthropicURL), aopt.WithAPIKey("k"), aopt.WithMaxRetries(0))
	msg, err := ac.Messages.New(ctx, anthropic.MessageNewParams{Model: "fake", MaxTokens: 64,
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hello"))}})
	if err != nil {
		t.Fatal(err)
	}
	if len(msg.Content) != 1 || msg.Content[0].Text != "I have nothing to add." {
		t.Fatalf("Anthropic answer %+v", msg.Content)
	}

	if code := stop(); code != exitOK {
		t.Fatalf("exit %d after an interrupt, want 0; stderr %q", code, stderr)
	}
	if !strings.Contains(stderr.String(), "1 rules, then the default rule") {
		t.Errorf("stderr %q does not say what it answers by", stderr)
	}
	if _, err := http.Post(anthropicURL+"/v1/messages", "application/json", strings.NewReader("{}")); err == nil {
		t.Fatal("the fake still answers after serve-fake stopped")
	}
}

// TestModelsServeFakeRefuses: a listen address another machine could reach, or a bad rules file,
// is bad input, said before anything is served.
func TestModelsServeFakeRefuses(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:8089", ":8089", "192.0.2.7:8089"} {
		r := host(t, "models", "serve-fake", "--listen", addr)
		wantCode(t, r, exitBadInput)
		if !strings.Contains(r.stderr, "is not a loopback address") || r.stdout != "" {
			t.Errorf("--listen %s: stdout %q, stderr %q", addr, r.stdout, r.stderr)
		}
	}
	rules := filepath.Join(t.TempDir(), "rules.toml")
	if err := os.WriteFile(rules, []byte("[[reply]]\ntxt = \"x\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := host(t, "models", "serve-fake", "--listen", "127.0.0.1:0", "--rules", rules)
	wantCode(t, r, exitBadInput)
	if !strings.Contains(r.stderr, rules+":2:1: reply[0].txt: unknown key; valid keys here: calls, delay") {
		t.Errorf("stderr %q", r.stderr)
	}
}

// TestModelsCheck: host models check asks each pool once, over both wire formats, and reports the
// model, usage and whether it called the tool; a pool whose endpoint is down fails the check
// (exit 1) with the reason, and the others are still checked.
func TestModelsCheck(t *testing.T) {
	dir := t.TempDir()
	rules := writeFile(t, dir, "rules.toml", `
[[reply]]
when_tool_offered = "ping"
usage = { prompt = 30, completion = 4 }
  [[reply.calls]]
  name = "ping"
  args = {}
`)
	oa, an, stop, _ := serveFake(t, "--listen", "127.0.0.1:0", "--rules", rules)
	defer stop()
	config := writeFile(t, dir, "host.toml", `
[[inference_pools]]
name = "local"
endpoint = "`+oa+`"
models = ["fake-1"]
[[inference_pools]]
name = "claude"
api = "anthropic"
endpoint = "`+an+`"
models = ["fake-claude"]
[[inference_pools]]
name = "down"
endpoint = "http://127.0.0.1:1/v1"
models = ["gone"]
[[inference_pools]]
name = "spare"
`)
	var out, errb bytes.Buffer
	code := run(&env{stdout: &out, stderr: &errb, ctx: context.Background()}, []string{"models", "check", "--config", config})
	if code != 1 {
		t.Fatalf("exit %d, want 1 (one pool is down); stderr %s", code, errb.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 5 || !strings.HasPrefix(lines[0], "POOL") {
		t.Fatalf("output:\n%s", out.String())
	}
	for i, want := range [][]string{
		{"local", "openai", "fake-1", "30+4", "yes", "ok"},
		{"claude", "anthropic", "fake-claude", "30+4", "yes", "ok"},
		{"down", "openai", "gone", "-", "openai:"},
		{"spare", "nothing to check the pool with"},
	} {
		for _, w := range want {
			if !strings.Contains(lines[i+1], w) {
				t.Errorf("line %q lacks %q", lines[i+1], w)
			}
		}
	}
}
