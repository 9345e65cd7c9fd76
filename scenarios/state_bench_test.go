package scenarios_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/warrenhq/warren"
	"github.com/warrenhq/warren/scenarios"
)

// BenchmarkStateOverhead runs three workloads: the quickstart pipeline at 2,000 agents (files:
// write_file, read_file and the checklist, so every agent makes side-effecting calls the effect
// journal takes and creates files), the ten-step scenario at 10^4 agents (checklist: todo_add
// with arguments, state that changes inside the world), the long one at 2,000 agents (twenty
// file calls each, 40 ticks apiece, about 900 ticks with calls always on the tool lane) and the
// long checklist at 10^4 agents (150 todo_add steps each, about 150 ticks, no file), each of
// these ways: its trace written to a file, the same with the trace and the recording written
// (what a run that can be replayed costs), and with a state directory (the trace, the recording,
// the effect journal and the commits; no world snapshot), committing at the default interval
// (syncing everything, and syncing nothing: --state-sync process) and at every tick, and with a
// world snapshot every 100 ticks as well. It reports agent-steps per second; the ratios are the
// figure (docs/performance.md).
func BenchmarkStateOverhead(b *testing.B) {
	for _, w := range []struct {
		name, file string
		agents     int
	}{
		{"files", "examples/quickstart.toml", 2000},
		{"checklist", "testdata/bench/steps.toml", 10_000},
		{"long", "testdata/bench/long.toml", 2000},
		{"checklist-long", "testdata/bench/steps_long.toml", 10_000},
	} {
		sc, err := scenarios.Load(w.file, scenarios.KnownTools())
		if err != nil {
			b.Fatal(err)
		}
		b.Run(w.name, func(b *testing.B) { benchmarkStateOverhead(b, sc, w.agents) })
	}
}

func benchmarkStateOverhead(b *testing.B, sc *warren.Scenario, agents int) {
	for _, c := range []struct {
		name  string
		setup func(dir string, opt *warren.Options) func()
	}{
		{"traced", func(dir string, opt *warren.Options) func() {
			f, err := os.Create(filepath.Join(dir, "t.jsonl"))
			if err != nil {
				b.Fatal(err)
			}
			opt.Trace = f
			return func() { f.Close() }
		}},
		{"recorded", func(dir string, opt *warren.Options) func() {
			f, err := os.Create(filepath.Join(dir, "t.jsonl"))
			if err != nil {
				b.Fatal(err)
			}
			r, err := os.Create(filepath.Join(dir, "r.jsonl"))
			if err != nil {
				b.Fatal(err)
			}
			opt.Trace, opt.Record = f, r
			return func() { f.Close(); r.Close() }
		}},
		{"state", func(dir string, opt *warren.Options) func() {
			opt.State = &warren.StateOptions{Dir: filepath.Join(dir, "state"), SnapshotEvery: -1}
			return func() {}
		}},
		{"state-sync-process", func(dir string, opt *warren.Options) func() {
			opt.State = &warren.StateOptions{Dir: filepath.Join(dir, "state"), Sync: "process", SnapshotEvery: -1}
			return func() {}
		}},
		{"state-every-tick", func(dir string, opt *warren.Options) func() {
			opt.State = &warren.StateOptions{Dir: filepath.Join(dir, "state"), CommitEvery: -1, SnapshotEvery: -1}
			return func() {}
		}},
		{"state-snapshot-100", func(dir string, opt *warren.Options) func() {
			opt.State = &warren.StateOptions{Dir: filepath.Join(dir, "state"), SnapshotTicks: 100}
			return func() {}
		}},
		{"state-sync-process-snapshot-100", func(dir string, opt *warren.Options) func() {
			opt.State = &warren.StateOptions{Dir: filepath.Join(dir, "state"), Sync: "process", SnapshotTicks: 100}
			return func() {}
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			var steps uint64
			var elapsed time.Duration
			for b.Loop() {
				dir := b.TempDir()
				opt := warren.Options{Agents: agents, WorkRoot: filepath.Join(dir, "work")}
				done := c.setup(dir, &opt)
				start := time.Now()
				sum, err := warren.Run(context.Background(), sc, opt)
				elapsed += time.Since(start)
				done()
				if err != nil || sum.Status != warren.RunFinished {
					b.Fatalf("%v %v", err, sum)
				}
				steps += sum.ModelTurns
			}
			b.ReportMetric(float64(steps)/elapsed.Seconds(), "steps/s")
		})
	}
}

// BenchmarkResume is the ten-step scenario at 10^5 agents with a state directory: run whole
// (uninterrupted), and stopped at a tick boundary (an interrupt, after 10 of its 12 ticks) and
// then resumed, the resume timed: from the run's start (no snapshot: every committed tick is
// replayed) or from the world snapshot taken after 8 ticks (restored, then the 2 committed ticks
// after it replayed), every committed trace and recording byte compared, and the rest of the run
// live. It reports wall time per agent.
func BenchmarkResume(b *testing.B) {
	sc, err := scenarios.Load("testdata/bench/steps.toml", scenarios.KnownTools())
	if err != nil {
		b.Fatal(err)
	}
	const agents, stopAt = 100_000, 10
	b.Run("uninterrupted", func(b *testing.B) {
		var took time.Duration
		for i := 0; i < b.N; i++ {
			opt := warren.Options{Agents: agents, State: &warren.StateOptions{Dir: filepath.Join(b.TempDir(), "state")}}
			start := time.Now()
			sum, err := warren.Run(context.Background(), sc, opt)
			took += time.Since(start)
			if err != nil || sum.Status != warren.RunFinished {
				b.Fatalf("%v %v", err, sum.Status)
			}
		}
		b.ReportMetric(float64(took.Nanoseconds())/float64(b.N)/agents, "ns/agent")
	})
	for _, c := range []struct {
		name string
		so   warren.StateOptions
	}{
		{"resumed-from-start", warren.StateOptions{CommitEvery: -1, SnapshotEvery: -1}},
		{"resumed-from-snapshot", warren.StateOptions{CommitEvery: -1, SnapshotTicks: 8}},
	} {
		b.Run(c.name, func(b *testing.B) {
			var took time.Duration
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				dir := filepath.Join(b.TempDir(), "state")
				ctx, cancel := context.WithCancel(context.Background())
				ticks := 0
				so := c.so
				so.Dir = dir
				opt := warren.Options{Agents: agents, State: &so,
					Progress: func(int, int) {
						if ticks++; ticks == stopAt {
							cancel()
						}
					}}
				sum, err := warren.Run(ctx, sc, opt)
				cancel()
				if err != nil || sum.Status != warren.RunStopped {
					b.Fatalf("the stop: %v %v", err, sum.Status)
				}
				if want := c.so.SnapshotTicks > 0; (sum.Snapshots.Taken > 0) != want {
					b.Fatalf("the stopped run took %d snapshots (%s)", sum.Snapshots.Taken, sum.Snapshots.Why)
				}
				b.StartTimer()
				start := time.Now()
				sum, err = warren.Resume(context.Background(), dir, warren.ResumeOptions{})
				took += time.Since(start)
				if err != nil || sum.Status != warren.RunFinished || sum.Agents != agents {
					b.Fatalf("the resume: %v %+v", err, sum)
				}
			}
			b.ReportMetric(float64(took.Nanoseconds())/float64(b.N)/agents, "ns/agent")
		})
	}
}

// BenchmarkSnapshot takes world snapshots of the ten-step scenario at 10^4, 10^5 and 10^6 agents
// (after 3 and 6 of its ticks: every agent has a conversation and a checklist) and reports, per
// agent, the pause the world waited for while one was copied, the time its encoding and writing
// took beside the world, and its size.
func BenchmarkSnapshot(b *testing.B) {
	loaded, err := scenarios.Load("testdata/bench/steps.toml", scenarios.KnownTools())
	if err != nil {
		b.Fatal(err)
	}
	sc := *loaded
	sc.MaxTicks = 8
	for _, agents := range []int{10_000, 100_000, 1_000_000} {
		b.Run(fmt.Sprintf("agents=%d", agents), func(b *testing.B) {
			var st warren.SnapshotStats
			for b.Loop() {
				opt := warren.Options{Agents: agents, State: &warren.StateOptions{Dir: filepath.Join(b.TempDir(), "state"), SnapshotTicks: 3}}
				sum, err := warren.Run(context.Background(), &sc, opt)
				if err != nil || sum.Snapshots.Taken < 2 {
					b.Fatalf("%v: %d snapshots (%s %s)", err, sum.Snapshots.Taken, sum.Snapshots.Why, sum.Snapshots.Failed)
				}
				n := sum.Snapshots
				st.Taken += n.Taken
				st.Copied += n.Copied
				st.TotalPause += n.TotalPause
				st.MaxPause = max(st.MaxPause, n.MaxPause)
				st.TotalWrite += n.TotalWrite
				st.LastBytes, st.LastAgents = n.LastBytes, n.LastAgents
			}
			per := float64(st.Copied) * float64(agents)
			b.ReportMetric(float64(st.TotalPause.Nanoseconds())/per, "pause-ns/agent")
			b.ReportMetric(float64(st.MaxPause.Nanoseconds())/float64(agents), "max-pause-ns/agent")
			b.ReportMetric(float64(st.TotalWrite.Nanoseconds())/per, "write-ns/agent")
			b.ReportMetric(float64(st.LastBytes)/float64(st.LastAgents), "bytes/agent")
		})
	}
}
