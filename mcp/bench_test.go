package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/warrenhq/warren/mcp"
	"github.com/warrenhq/warren/tools"
)

// benchCall runs echo round trips through Tool.Execute on a warm session and reports the p50
// and p99 latency in µs.
func benchCall(b *testing.B, transport string) {
	m := newManager(b, mcp.Options{}, configFor(b, transport, "kv"))
	echo := toolOf(m, "kv", "echo")
	ec := tools.NewExecContext(context.Background(), "c", 1, tools.AgentRef{ID: 1}, "")
	args := json.RawMessage(`{"text":"ping"}`)
	mustOK(b, call(b, echo, string(args))) // warm: the session is started
	latencies := make([]time.Duration, 0, 1<<16)
	b.ReportAllocs()
	for b.Loop() {
		start := time.Now()
		res, err := echo.Execute(ec, args)
		latencies = append(latencies, time.Since(start))
		if err != nil || res.IsError {
			b.Fatalf("echo: %v %s", err, res.Content)
		}
	}
	slices.Sort(latencies)
	b.ReportMetric(float64(latencies[len(latencies)/2].Nanoseconds())/1e3, "p50-µs")
	b.ReportMetric(float64(latencies[len(latencies)*99/100].Nanoseconds())/1e3, "p99-µs")
}

func BenchmarkCallStdio(b *testing.B) { benchCall(b, "stdio") }

func BenchmarkCallHTTP(b *testing.B) { benchCall(b, "http") }

// BenchmarkConcurrent1000 has 1,000 goroutines each make one kv_set call per iteration on one
// server (default max_concurrency 64) and reports calls/s.
func BenchmarkConcurrent1000(b *testing.B) {
	const callers = 1000
	for _, transport := range transports {
		b.Run(transport, func(b *testing.B) {
			m := newManager(b, mcp.Options{}, configFor(b, transport, "kv"))
			set := toolOf(m, "kv", "kv_set")
			mustOK(b, call(b, set, `{"key":"warm","value":"up"}`))
			args := make([]json.RawMessage, callers)
			for i := range args {
				args[i] = json.RawMessage(fmt.Sprintf(`{"key":"k%d","value":"v"}`, i))
			}
			ec := tools.NewExecContext(context.Background(), "c", 1, tools.AgentRef{ID: 1}, "")
			start := time.Now()
			iterations := 0
			for b.Loop() {
				iterations++
				var wg sync.WaitGroup
				for i := range callers {
					wg.Go(func() {
						if res, err := set.Execute(ec, args[i]); err != nil || res.IsError {
							b.Errorf("kv_set: %v %s", err, res.Content)
						}
					})
				}
				wg.Wait()
			}
			b.ReportMetric(float64(iterations*callers)/time.Since(start).Seconds(), "calls/s")
		})
	}
}
