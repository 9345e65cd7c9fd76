package scenarios_test

import (
	"context"
	"io"
	"testing"

	"github.com/warrenhq/warren"
	"github.com/warrenhq/warren/scenarios"
)

// benchmarkSteps runs the ten-step scenario at the given scale and reports agent-steps per
// second (a step is one model turn plus its tool call).
func benchmarkSteps(b *testing.B, agents int, traced bool) {
	sc, err := scenarios.Load("testdata/bench/steps.toml", scenarios.KnownTools())
	if err != nil {
		b.Fatal(err)
	}
	var steps uint64
	var elapsed float64
	for b.Loop() {
		opt := warren.Options{Agents: agents}
		if traced {
			opt.Trace = io.Discard
		}
		sum, err := warren.Run(context.Background(), sc, opt)
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

// BenchmarkMCPScenario runs the shipped MCP scenario (1,000 clients and an auditor sharing one
// stdio server, 3,002 calls) and reports MCP calls per second of run time, the whole world
// included: dispatch, the gate, the lane, the session and the trace.
func BenchmarkMCPScenario(b *testing.B) {
	sc, err := scenarios.Load("examples/mcp.toml", scenarios.KnownTools())
	if err != nil {
		b.Fatal(err)
	}
	var calls uint64
	var elapsed float64
	for b.Loop() {
		sum, err := warren.Run(context.Background(), sc, warren.Options{Trace: io.Discard})
		if err != nil {
			b.Fatal(err)
		}
		if sum.ByStatus[2] != 1001 || sum.ToolErrors != 0 {
			b.Fatalf("%v done, %d tool errors", sum.ByStatus, sum.ToolErrors)
		}
		calls += sum.ToolCalls
		elapsed += sum.Elapsed.Seconds()
	}
	b.ReportMetric(float64(calls)/elapsed, "calls/s")
}
