package scenarios_test

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/warrenhq/warren"
	"github.com/warrenhq/warren/components"
	"github.com/warrenhq/warren/scenarios"
)

// benchmarkSteps runs the ten-step scenario (testdata/bench/steps.toml: each call of todo_add
// decodes its arguments and grows the agent's checklist) at the given scale and reports
// agent-steps per second, a step being one model turn (eleven per agent: ten with a call, and
// the last, which ends the stage), over the wall time of the whole run: building the world and
// spawning its agents included, loading the file not.
func benchmarkSteps(b *testing.B, agents int, traced bool) {
	sc, err := scenarios.Load("testdata/bench/steps.toml", scenarios.KnownTools())
	if err != nil {
		b.Fatal(err)
	}
	var steps uint64
	var elapsed time.Duration
	for b.Loop() {
		opt := warren.Options{Agents: agents}
		if traced {
			opt.Trace = io.Discard
		}
		start := time.Now()
		sum, err := warren.Run(context.Background(), sc, opt)
		elapsed += time.Since(start)
		if err != nil {
			b.Fatal(err)
		}
		if sum.ByStatus[components.Done] != agents || sum.ToolErrors != 0 || sum.ModelTurns != uint64(11*agents) {
			b.Fatalf("%d of %d agents done, %d tool errors, %d model turns", sum.ByStatus[components.Done], agents, sum.ToolErrors, sum.ModelTurns)
		}
		steps += sum.ModelTurns
	}
	b.ReportMetric(float64(steps)/elapsed.Seconds(), "steps/s")
}

func BenchmarkSteps100k(b *testing.B)       { benchmarkSteps(b, 100_000, false) }
func BenchmarkSteps100kTraced(b *testing.B) { benchmarkSteps(b, 100_000, true) }

// BenchmarkSteps100kNoArgs is the figure reported before issue 13, kept as a labelled second
// row: the tool takes no arguments (an empty object skips decoding) and changes nothing, a step
// is a tool call (ten per agent, the final turn not counted), and the time is the ticking alone
// (Summary.Elapsed: spawning excluded).
func BenchmarkSteps100kNoArgs(b *testing.B) {
	sc, err := scenarios.Load("testdata/bench/steps_noargs.toml", scenarios.KnownTools())
	if err != nil {
		b.Fatal(err)
	}
	const agents = 100_000
	var steps uint64
	var elapsed float64
	for b.Loop() {
		sum, err := warren.Run(context.Background(), sc, warren.Options{Agents: agents})
		if err != nil {
			b.Fatal(err)
		}
		if sum.ByStatus[components.Done] != agents {
			b.Fatalf("only %d of %d agents done", sum.ByStatus[components.Done], agents)
		}
		steps += sum.ToolCalls
		elapsed += sum.Elapsed.Seconds()
	}
	b.ReportMetric(float64(steps)/elapsed, "steps/s")
}

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
