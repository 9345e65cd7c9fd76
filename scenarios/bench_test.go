package scenarios

import (
	"context"
	"io"
	"testing"
)

// benchmarkSteps runs the ten-step scenario at the given scale and reports agent-steps per
// second (a step is one model turn plus its tool call).
func benchmarkSteps(b *testing.B, agents int, traced bool) {
	sc, err := Load("testdata/bench/steps.toml", KnownTools())
	if err != nil {
		b.Fatal(err)
	}
	var steps uint64
	var elapsed float64
	for b.Loop() {
		opt := Options{Agents: agents}
		if traced {
			opt.Trace = io.Discard
		}
		sum, err := Run(context.Background(), sc, opt)
		if err != nil {
			b.Fatal(err)
		}
		if sum.ByStatus[2] != agents {
			b.Fatalf("only %d of %d agents done", sum.ByStatus[2], agents)
		}
		steps += sum.ToolCalls
		elapsed += sum.Elapsed.Seconds()
	}
	b.ReportMetric(float64(steps)/elapsed, "steps/s")
}

func BenchmarkSteps100k(b *testing.B)       { benchmarkSteps(b, 100_000, false) }
func BenchmarkSteps100kTraced(b *testing.B) { benchmarkSteps(b, 100_000, true) }
