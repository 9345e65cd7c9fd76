package runview_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/warrenhq/warren"
	"github.com/warrenhq/warren/runview"
)

// quickstart runs scenarios/examples/quickstart.toml at n agents and writes its trace to w:
// the real trace a live server would be fed.
func quickstart(tb testing.TB, n int, w *bufio.Writer) {
	tb.Helper()
	sc, err := warren.Load("../scenarios/examples/quickstart.toml")
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := warren.Run(context.Background(), sc, warren.Options{Agents: n, Trace: w}); err != nil {
		tb.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
}

var (
	quickOnce  sync.Once
	quickLines [][]byte
)

// quickstartLines is the quickstart's trace at 2,000 agents, made once per test binary.
func quickstartLines(b *testing.B) [][]byte {
	quickOnce.Do(func() {
		var buf bytes.Buffer
		quickstart(b, 2000, bufio.NewWriter(&buf))
		quickLines = bytes.SplitAfter(bytes.TrimSuffix(buf.Bytes(), []byte("\n")), []byte("\n"))
	})
	return quickLines
}

// BenchmarkApply measures Apply per event (one op is one line, the newline included as
// warren.Options.Events gives it) on real traces, with everything a View does: decode, check,
// state, log encoding. When the trace is used up a new View starts, so the cost of growing a
// View's tables is in the figure.
//
//	go test ./runview/ -run '^$' -bench BenchmarkApply -benchmem -count 3
func BenchmarkApply(b *testing.B) {
	traces := []struct {
		name  string
		lines func(*testing.B) [][]byte
	}{
		{"quickstart-2000", quickstartLines},
		{"gossip", func(b *testing.B) [][]byte { return golden(b, "gossip") }},
		{"wait_storm", func(b *testing.B) [][]byte { return golden(b, "wait_storm") }},
	}
	for _, tr := range traces {
		b.Run(tr.name, func(b *testing.B) {
			lines := tr.lines(b)
			v := runview.New(runview.Options{})
			i := 0
			b.ReportAllocs()
			for b.Loop() {
				if i == len(lines) {
					v, i = runview.New(runview.Options{}), 0
				}
				if err := v.Apply(lines[i]); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}

// BenchmarkMemory feeds the quickstart's trace at 10^4 and 10^5 agents (made by warren.Run
// into a temporary file first) and reports the heap the View holds afterwards, per agent, with
// the default Options, and the Apply time per event. One op is the whole trace: run it once.
// Making the 10^5-agent trace (2.2 million events, about 440 MB) takes minutes on a 2-core
// machine; select one size with -bench 'BenchmarkMemory/agents=10000$'.
//
//	go test ./runview/ -run '^$' -bench BenchmarkMemory -benchtime 1x -timeout 30m
func BenchmarkMemory(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("agents=%d", n), func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "quickstart.jsonl")
			f, err := os.Create(path)
			if err != nil {
				b.Fatal(err)
			}
			quickstart(b, n, bufio.NewWriterSize(f, 1<<20))
			if err := f.Close(); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				before := heap()
				v, events, took := feedFile(b, path)
				after := heap()
				runtime.KeepAlive(v)
				if c := v.Counts(); c.Agents != n {
					b.Fatalf("%d agents, want %d", c.Agents, n)
				}
				b.ReportMetric(float64(after-before)/float64(n), "bytes/agent")
				b.ReportMetric(float64(took.Nanoseconds())/float64(events), "ns/event")
				b.ReportMetric(float64(events), "events")
			}
		})
	}
}

// feedFile applies a trace file line by line, as a server following a finished trace would.
func feedFile(b *testing.B, path string) (*runview.View, int, time.Duration) {
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	v := runview.New(runview.Options{})
	r := bufio.NewReaderSize(f, 1<<20)
	events := 0
	start := time.Now()
	for {
		line, err := r.ReadSlice('\n')
		if len(line) > 0 {
			if err := v.Apply(line); err != nil {
				b.Fatal(err)
			}
			events++
		}
		if err != nil {
			break
		}
	}
	return v, events - 1, time.Since(start)
}

// heap is the live heap after a full collection.
func heap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
