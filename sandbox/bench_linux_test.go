package sandbox

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"
)

// startLatencyRuns is how many commands BenchmarkStartLatency times per mode and iteration.
const startLatencyRuns = 300

// BenchmarkStartLatency times startLatencyRuns `true` commands one after another in each mode
// and reports the median and the 99th percentile of start to collected outcome (the issue's
// start-up cost per mode): go test ./sandbox/ -run '^$' -bench StartLatency -benchtime 1x
func BenchmarkStartLatency(b *testing.B) {
	for _, m := range allModes {
		b.Run(m.String(), func(b *testing.B) {
			mgr := newTestManager(b, m, nil)
			ctx := context.Background()
			durations := make([]time.Duration, 0, startLatencyRuns)
			for b.Loop() {
				durations = durations[:0]
				for range startLatencyRuns {
					start := time.Now()
					if o, err := mgr.Run(ctx, "true"); err != nil || o.ExitCode != 0 {
						b.Fatalf("Run: %+v, %v", o, err)
					}
					durations = append(durations, time.Since(start))
				}
			}
			slices.Sort(durations)
			b.ReportMetric(float64(durations[len(durations)/2].Microseconds())/1000, "median-ms")
			b.ReportMetric(float64(durations[len(durations)*99/100].Microseconds())/1000, "p99-ms")
		})
	}
}

// throughputAgents is how many agents BenchmarkThroughput runs commands for at once.
const throughputAgents = 100

// BenchmarkThroughput runs short commands (`echo ok`) for 100 agents at once, each with its own
// manager, 5 commands each per op, and reports commands per second in each mode:
// go test ./sandbox/ -run '^$' -bench Throughput -benchtime 3x
func BenchmarkThroughput(b *testing.B) {
	const perAgent = 5
	for _, m := range allModes {
		b.Run(m.String(), func(b *testing.B) {
			managers := make([]*Manager, throughputAgents)
			for i := range managers {
				managers[i] = newTestManager(b, m, nil)
			}
			ctx := context.Background()
			start := time.Now()
			for b.Loop() {
				var wg sync.WaitGroup
				for _, mgr := range managers {
					wg.Go(func() {
						for range perAgent {
							if o, err := mgr.Run(ctx, "echo ok"); err != nil || o.ExitCode != 0 {
								b.Errorf("Run: %+v, %v", o, err)
								return
							}
						}
					})
				}
				wg.Wait()
			}
			commands := float64(b.N * throughputAgents * perAgent)
			b.ReportMetric(commands/time.Since(start).Seconds(), "commands/s")
		})
	}
}
