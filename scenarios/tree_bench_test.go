package scenarios_test

import (
	"context"
	"io"
	"path/filepath"
	"testing"

	"github.com/warrenhq/warren"
	"github.com/warrenhq/warren/components"
	"github.com/warrenhq/warren/scenarios"
)

// treeBench is one shipped sub-agent scenario to benchmark.
type treeBench struct {
	file string
	// done and failed are the agents that end done and failed in one copy of the scenario.
	done, failed int
}

var (
	plannerBench = treeBench{file: "planner.toml", done: 101}
	fanOutBench  = treeBench{file: "fanout.toml", done: 981, failed: 20}
)

// benchmarkTree runs a shipped tree scenario through scenarios.Load and warren.Run, scaled to copies of its one
// top-level group (1: as shipped, when its expectations must hold too), traced to io.Discard
// when traced, and reports agents (top-level and sub-agents) per wall-clock second of ticking,
// and ticks per run.
func benchmarkTree(b *testing.B, tb treeBench, copies int, traced bool) {
	sc, err := scenarios.Load(filepath.Join("examples", tb.file), scenarios.KnownTools())
	if err != nil {
		b.Fatal(err)
	}
	var agents int
	var ticks uint64
	var elapsed float64
	for b.Loop() {
		opt := warren.Options{WorkRoot: b.TempDir()}
		if copies > 1 {
			opt.Agents = copies
		}
		if traced {
			opt.Trace = io.Discard
		}
		sum, err := warren.Run(context.Background(), sc, opt)
		if err != nil {
			b.Fatal(err)
		}
		done, failed := sum.ByStatus[components.Done], sum.ByStatus[components.Failed]
		if done != tb.done*copies || failed != tb.failed*copies || sum.Agents != (tb.done+tb.failed)*copies {
			b.Fatalf("%d agents: %d done, %d failed; want %d done, %d failed", sum.Agents, done, failed, tb.done*copies, tb.failed*copies)
		}
		if copies == 1 && len(sum.Failures) > 0 {
			b.Fatalf("expectations failed: %v", sum.Failures)
		}
		agents += sum.Agents
		ticks += sum.Ticks
		elapsed += sum.Elapsed.Seconds()
	}
	b.ReportMetric(float64(agents)/elapsed, "agents/s")
	b.ReportMetric(float64(ticks)/float64(b.N), "ticks")
}

// BenchmarkPlannerScenario runs planner.toml (one planner, a hundred spawned workers) as shipped,
// traced, and with a hundred planners (10,100 agents).
func BenchmarkPlannerScenario(b *testing.B) {
	b.Run("shipped", func(b *testing.B) { benchmarkTree(b, plannerBench, 1, false) })
	b.Run("shipped/traced", func(b *testing.B) { benchmarkTree(b, plannerBench, 1, true) })
	b.Run("planners=100", func(b *testing.B) { benchmarkTree(b, plannerBench, 100, false) })
}

// BenchmarkFanOutScenario runs fanout.toml (one splitter fanning out a thousand items, twenty of
// which fail) as shipped, traced, and with ten splitters (10,010 agents).
func BenchmarkFanOutScenario(b *testing.B) {
	b.Run("shipped", func(b *testing.B) { benchmarkTree(b, fanOutBench, 1, false) })
	b.Run("shipped/traced", func(b *testing.B) { benchmarkTree(b, fanOutBench, 1, true) })
	b.Run("splitters=10", func(b *testing.B) { benchmarkTree(b, fanOutBench, 10, false) })
}
