package scenarios_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/warrenhq/warren"
	"github.com/warrenhq/warren/components"
	"github.com/warrenhq/warren/internal/fakellm"
	"github.com/warrenhq/warren/models"
	"github.com/warrenhq/warren/models/openai"
	"github.com/warrenhq/warren/tools"
)

// BenchmarkLiveTurn measures one live model turn two ways against the same loopback server, one
// request at a time: sdk is the bare SDK call with the very request the host sends (the task and
// the stage's write_file tool, as the openai kind encodes them); host is the turn through the
// host (an agent spawned, its turn queued in a pool of one, sent, answered, applied, the agent
// reaped). host ns/op minus sdk ns/op is what the host adds to a turn; cpu-µs/turn is the
// process's CPU time per turn (client, server and host), steadier than wall time on a shared
// machine. Each runs in its own pass so neither pays for the other's garbage.
//
//	go test ./scenarios/ -run '^$' -bench BenchmarkLiveTurn -benchtime 3000x -count 5
func BenchmarkLiveTurn(b *testing.B) {
	srv := startFake(b, func(int, fakellm.Request) fakellm.Reply {
		return fakellm.Reply{Text: "Nothing to write.", Usage: fakellm.Usage{Prompt: 120, Completion: 5}}
	})
	srv.Forget() // the fake keeping every request would make later runs pay for more GC
	b.Run("sdk", func(b *testing.B) {
		client := sdk.NewClient(option.WithBaseURL(srv.URL), option.WithAPIKey("none"), option.WithMaxRetries(0))
		var write models.ToolInfo
		for _, tool := range tools.Builtins() {
			if spec := tool.Spec(); spec.Name == "write_file" {
				write = models.ToolInfo{Name: spec.Name, Description: spec.Description, Parameters: spec.Parameters}
			}
		}
		m, err := (&openai.Config{Model: "fake-1", BaseURL: srv.URL, MaxTokens: 64}).Compile(&models.KindEnv{ID: "openai:live"})
		if err != nil {
			b.Fatal(err)
		}
		body, err := m.(models.Live).Request(&models.View{Messages: []models.Message{{Role: models.RoleUser, Content: "say something, askers-0"}}, Tools: []models.ToolInfo{write}})
		if err != nil {
			b.Fatal(err)
		}
		var params sdk.ChatCompletionNewParams
		if err := json.Unmarshal(body, &params); err != nil || len(params.Tools) != 1 {
			b.Fatalf("decoding the host's request: %v", err)
		}
		runtime.GC()
		b.ResetTimer()
		cpu0 := cpuTime()
		for range b.N {
			if _, err := client.Chat.Completions.New(context.Background(), params); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(b.N)/1e3, "cpu-µs/turn")
	})
	b.Run("host", func(b *testing.B) {
		sc := liveScenario(b, srv.URL, b.N, "max_tokens = 64", `
[[host.inference_pools]]
name = "one"
models = ["fake-1"]
max_concurrency = 1
`)
		runtime.GC()
		b.ResetTimer()
		cpu0 := cpuTime()
		sum, err := warren.Run(context.Background(), sc, warren.Options{})
		b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(b.N)/1e3, "cpu-µs/turn")
		if err != nil || sum.ByStatus[components.Done] != b.N || sum.Spend.Turns != uint32(b.N) {
			b.Fatalf("run: %v, %d done of %d", err, sum.ByStatus[components.Done], b.N)
		}
	})
}

// cpuTime is the CPU time this process has used, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkPoolThroughput runs 10⁴ agents, one live turn each, through one pool of 64 against the
// fake provider (which answers at once): requests a second of wall time, the most the server
// served at once, and how full the pool stayed while turns waited (the requests in flight at the
// end of each admission pass, over the cap).
//
//	go test ./scenarios/ -run '^$' -bench BenchmarkPoolThroughput -benchtime 1x
func BenchmarkPoolThroughput(b *testing.B) {
	for _, delay := range []time.Duration{0, 5 * time.Millisecond} {
		b.Run("provider_latency="+delay.String(), func(b *testing.B) { poolThroughput(b, delay) })
	}
}

func poolThroughput(b *testing.B, delay time.Duration) {
	srv := startFake(b, func(int, fakellm.Request) fakellm.Reply {
		return fakellm.Reply{Text: "ok", Delay: delay, Usage: fakellm.Usage{Prompt: 40, Completion: 2}}
	})
	srv.Forget()
	const agents, capacity = 10_000, 64
	sc := liveScenario(b, srv.URL, agents, "max_tokens = 16", fmt.Sprintf(`
[[host.inference_pools]]
name = "shared"
models = ["fake-1"]
max_concurrency = %d
`, capacity))
	var sent uint64
	var fill float64
	start := time.Now()
	for range b.N {
		sum, err := warren.Run(context.Background(), sc, warren.Options{})
		if err != nil || sum.ByStatus[components.Done] != agents {
			b.Fatalf("run: %v", err)
		}
		st := sum.Pools[0].Stats
		sent += st.Sent
		fill = float64(st.BusyInFlight) / float64(st.BusyPasses) / capacity
	}
	elapsed := time.Since(start)
	b.ReportMetric(float64(sent)/elapsed.Seconds(), "requests/s")
	b.ReportMetric(float64(srv.MaxInFlight()), "max-in-flight")
	b.ReportMetric(100*fill, "pool-fill-%")
}

// BenchmarkLiveConversationMemory measures the heap each agent holds with a 21-message live
// conversation (its task, then ten turns of a write_file call and its result): 1,000 agents run
// ten live turns, then each asks a question nobody answers and parks; with every agent parked the
// heap is measured, against the heap before the run.
//
//	go test ./scenarios/ -run '^$' -bench BenchmarkLiveConversationMemory -benchtime 1x
func BenchmarkLiveConversationMemory(b *testing.B) {
	srv := startFake(b, func(n int, req fakellm.Request) fakellm.Reply {
		turn := 0
		for _, m := range req.Messages {
			if m.Role == "assistant" {
				turn++
			}
		}
		if turn == 10 {
			return fakellm.Reply{ToolCalls: []fakellm.ToolCall{{ID: "ask", Name: "ask_user_text", Arguments: `{"question":"Shall I go on?"}`}},
				Usage: fakellm.Usage{Prompt: 900, Completion: 20}}
		}
		if turn > 10 {
			return fakellm.Reply{Text: "done"}
		}
		return fakellm.Reply{ToolCalls: []fakellm.ToolCall{{ID: fmt.Sprintf("w%d", turn), Name: "write_file",
			Arguments: fmt.Sprintf(`{"path":"notes/%d.md","content":"finding %d: the sources agree on this point"}`, turn, turn)}},
			Text: "Writing down finding " + fmt.Sprint(turn) + ".", Usage: fakellm.Usage{Prompt: 80 * (turn + 1), Completion: 30}}
	})
	srv.Forget() // the fake's own memory is not the host's
	const agents = 1000
	dir := b.TempDir()
	mustWrite(b, filepath.Join(dir, "note.toml"), `
name = "note"
description = "Notes down findings, then asks."
max_messages = 64
[[stages]]
name = "work"
available_tools = ["write_file", "ask_user_text"]
max_iterations = 20
`)
	path := filepath.Join(dir, "mem.toml")
	mustWrite(b, path, fmt.Sprintf(`
name = "mem"
[blueprints]
note = "note.toml"
[host.tool_permissions]
write_file = "allow"
[host.interaction]
timeout_ticks = 100000
[[host.inference_pools]]
name = "p"
models = ["fake-1"]
max_concurrency = 64
[models.live]
kind = "openai"
model = "fake-1"
base_url = %q
[[groups]]
name = "g"
count = %d
blueprint = "note"
model = "live"
task = "Note down what you find, {{.Name}}."
`, srv.URL, agents))
	sc, err := warren.Load(path)
	if err != nil {
		b.Fatal(err)
	}
	var perAgent float64
	for range b.N {
		var before, during runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		prompts := 0
		measured := false
		_, err := warren.Run(context.Background(), sc, warren.Options{Events: func(line []byte) {
			if bytes.Contains(line, []byte(`"kind":"prompt"`)) {
				if prompts++; prompts == agents {
					runtime.GC()
					runtime.ReadMemStats(&during)
					measured = true
				}
			}
		}})
		if err != nil || !measured {
			b.Fatalf("run: %v (measured %v, %d prompts)", err, measured, prompts)
		}
		perAgent = float64(int64(during.HeapAlloc)-int64(before.HeapAlloc)) / agents
	}
	b.ReportMetric(perAgent, "heap-bytes/agent")
}
