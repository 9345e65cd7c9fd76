package scenarios_test

import (
	"context"
	"testing"
	"time"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"

	"github.com/warrenhq/warren"
	"github.com/warrenhq/warren/components"
	"github.com/warrenhq/warren/internal/fakellm"
)

// BenchmarkLiveTurn compares one live model turn through the host (an agent spawned, its turn
// queued in a pool of one, sent, answered, applied, the agent reaped) with the bare SDK call to
// the same loopback server, one request at a time both ways. host-ns/turn minus sdk-ns/turn is
// what the host adds to a turn; overhead-% is that over the SDK's own cost.
//
//	go test ./scenarios/ -run '^$' -bench BenchmarkLiveTurn -benchtime 2000x
func BenchmarkLiveTurn(b *testing.B) {
	srv := startFake(b, func(int, fakellm.Request) fakellm.Reply {
		return fakellm.Reply{Text: "Nothing to write.", Usage: fakellm.Usage{Prompt: 120, Completion: 5}}
	})
	n := b.N
	client := sdk.NewClient(option.WithBaseURL(srv.URL), option.WithAPIKey("none"), option.WithMaxRetries(0))
	params := sdk.ChatCompletionNewParams{Model: shared.ChatModel("fake-1"), Messages: []sdk.ChatCompletionMessageParamUnion{
		sdk.UserMessage("say something, askers-0")},
		Tools: []sdk.ChatCompletionToolUnionParam{sdk.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
			Name: "write_file", Description: sdk.String("Writes a file."),
			Parameters: shared.FunctionParameters{"type": "object", "properties": map[string]any{"path": map[string]any{"type": "string"}}}})}}
	sc := liveScenario(b, srv.URL, n, "max_tokens = 64", `
[[host.inference_pools]]
name = "one"
models = ["fake-1"]
max_concurrency = 1
`)
	b.ResetTimer()
	start := time.Now()
	for range n {
		if _, err := client.Chat.Completions.New(context.Background(), params); err != nil {
			b.Fatal(err)
		}
	}
	raw := time.Since(start)
	start = time.Now()
	sum, err := warren.Run(context.Background(), sc, warren.Options{})
	host := time.Since(start)
	b.StopTimer()
	if err != nil || sum.ByStatus[components.Done] != n || sum.Spend.Turns != uint32(n) {
		b.Fatalf("run: %v, %d done of %d", err, sum.ByStatus[components.Done], n)
	}
	perRaw, perHost := float64(raw.Nanoseconds())/float64(n), float64(host.Nanoseconds())/float64(n)
	b.ReportMetric(perRaw, "sdk-ns/turn")
	b.ReportMetric(perHost, "host-ns/turn")
	b.ReportMetric((perHost-perRaw)/1e3, "overhead-µs/turn")
	b.ReportMetric(100*(perHost-perRaw)/perRaw, "overhead-%")
}
