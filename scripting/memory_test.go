package scripting

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/warrenhq/warren/models"
	"github.com/warrenhq/warren/tools"
)

// The stated bounds on what one entry of the escape corpus may grow the heap by. Every entry but
// a doubled string stays within corpusPeakFactor times the heap watch's line (twice MaxMemory,
// at least 64 MiB: it judges plain JavaScript there, and stops it unjudged at twice the line). A string
// doubled by concatenation grows by powers of two whatever the budget, and each step copies all
// the steps before it in one instruction no interrupt splits: it is stopped after the step during
// which the heap watch's sampler runs, and a sampler kept off the CPU (by the collector, or by
// other processes on a busy machine) lets it take one or two more steps, so its bound is
// absolute, corpusDoublingBound (measured at the default 64 MiB: 448 or 896 MiB on an idle
// machine, up to 3.5 GiB with five processes competing for two cores). Before the budget and the
// heap watch, the same scripts reached 0.2 to 1.8 GiB within the default 2 s call budget.
//
// Both bounds hold while the sampler gets the CPU every heapWatchPeriod. On a machine busy enough
// to keep it off the CPU longer, a call allocates unwatched for as long as it is kept off, so the
// test adds to the bound corpusAllocRate for every second of the sampler's longest lateness (which
// the heap watch keeps): the bound stays the watch's, stretched by what the machine withheld.
const (
	corpusPeakFactor    = 4
	corpusDoublingBound = 4 << 30
	// corpusAllocRate is twice goja's fastest allocation measured on the reference machine
	// (about 1 GB/s of closures), in bytes per second.
	corpusAllocRate = 2 << 30
)

// corpusMaxMemory is the budget the test runs the corpus under: a quarter of the default, so the
// hostile loops (slow under the race detector) have a quarter as much to build.
// BenchmarkMemoryEscapeCorpus measures them at the default.
const corpusMaxMemory = 16 << 20

// Messages of the two ways a call is stopped for memory.
const (
	budgetMessage = "memory budget (max_memory in [scripting])"
	heapMessage   = "the heap watch stopped it"
)

// corpusEntry is one file of testdata/memory and what its first line says of it.
type corpusEntry struct {
	name, file string
	expect     string // budget, heap or ok
	doubling   bool   // "heap (doubling)": a string doubled by concatenation
	src        []byte
}

// loadCorpus reads testdata/memory; each file starts with "// expect: <budget|heap|ok>." (or
// "heap (doubling).").
func loadCorpus(t testing.TB) []corpusEntry {
	t.Helper()
	files, err := filepath.Glob("testdata/memory/*.js")
	if err != nil || len(files) == 0 {
		t.Fatalf("no corpus: %v", err)
	}
	var out []corpusEntry
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		first, _, _ := strings.Cut(string(src), "\n")
		expect, ok := strings.CutPrefix(first, "// expect: ")
		expect, _, _ = strings.Cut(expect, ".")
		expect, doubling := strings.CutSuffix(expect, " (doubling)")
		if !ok || (expect != "budget" && expect != "heap" && expect != "ok") {
			t.Fatalf("%s: the first line must say // expect: budget, heap, heap (doubling) or ok", f)
		}
		out = append(out, corpusEntry{name: strings.TrimSuffix(filepath.Base(f), ".js"), file: f,
			expect: expect, doubling: doubling, src: src})
	}
	return out
}

// corpusExec is an agent's context for the corpus: a workdir holding a 4 MiB big.txt, every
// host function allowed.
func corpusExec(t testing.TB) *tools.ExecContext {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "big.txt"), []byte(strings.Repeat("0123456789abcdef", 1<<18)), 0o644); err != nil {
		t.Fatal(err)
	}
	ec := tools.NewExecContext(context.Background(), "c1", 1, tools.AgentRef{ID: 1, Name: "a"}, dir)
	ec.ScriptPermit = func(string) error { return nil }
	ec.Seed = 7
	return ec
}

// peakGrowth runs f and returns how far the heap grew above what it held before, sampled every
// millisecond (what the heap watch reads, more often).
func peakGrowth(f func()) int64 {
	runtime.GC()
	base := readHeap()
	var peak atomic.Uint64
	peak.Store(base)
	done := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			if h := readHeap(); h > peak.Load() {
				peak.Store(h)
			}
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	f()
	close(done)
	<-sampled
	return int64(peak.Load()) - int64(base)
}

// corpusLimits are the limits of a corpus run: a one-minute time budget, so that only memory can
// stop a hostile script however slow the machine, and the given memory budget.
func corpusLimits(maxMemory int64) Limits {
	limits := DefaultLimits()
	limits.CallTimeout = time.Minute
	limits.MaxMemory = maxMemory
	return limits
}

// runCorpusEntry runs one entry as the host does and reports how it ended ("budget", "heap
// watch", "other error" or "finished"), its result and the peak growth of the heap.
func runCorpusEntry(t testing.TB, engine *Engine, ec *tools.ExecContext, entry corpusEntry) (string, tools.Result, int64) {
	t.Helper()
	s, err := Compile(entry.file, entry.src)
	if err != nil {
		t.Fatal(err)
	}
	hostile := &Tool{Script: s, Engine: engine}
	args := json.RawMessage(fmt.Sprintf(`{"budget":%d}`, engine.limits.MaxMemory))
	var res tools.Result
	peak := peakGrowth(func() { res, err = hostile.Execute(ec, args) })
	if err != nil {
		t.Fatal(err)
	}
	switch {
	case res.IsError && strings.Contains(res.Content, budgetMessage):
		return "budget", res, peak
	case res.IsError && strings.Contains(res.Content, heapMessage):
		return "heap watch", res, peak
	case res.IsError:
		return "other error", res, peak
	}
	return "finished", res, peak
}

// TestMemoryEscapeCorpus runs every hostile script of testdata/memory through the script tool
// path the host uses (Tool.Execute with an agent's context, real goja) under corpusLimits: each
// must fail with the memory error its first line names (or finish, for "ok"), the heap must
// grow by at most corpusPeakFactor times the heap watch's line, and the engine must serve the
// next call.
// A "budget" entry fails with exactly the same message, position included, when run again: the
// budget is deterministic. go test -v prints each entry's peak.
func TestMemoryEscapeCorpus(t *testing.T) {
	limits := corpusLimits(corpusMaxMemory)
	engine := NewEngine(limits)
	defer engine.Close()
	ec := corpusExec(t)
	healthy := &Tool{Script: mustCompile(t, "healthy.js", tool(`(args) => "fine " + args.n`)), Engine: engine}
	for _, entry := range loadCorpus(t) {
		t.Run(entry.name, func(t *testing.T) {
			if raceDetector && entry.expect == "heap" {
				// Whether the heap watch's line or the minute's budget comes first depends on how
				// fast the script allocates; the race pass is for data races, and the plain pass
				// runs these entries.
				t.Skip("under the race detector goja allocates about ten times slower, so a heap-watch entry races its time budget")
			}
			theHeapWatch.late.Store(0)
			outcome, res, peak := runCorpusEntry(t, engine, ec, entry)
			late := time.Duration(theHeapWatch.late.Load())
			t.Logf("%-22s expect %-6s  %-10s peak heap growth %4d MiB (sampler late by %v)", entry.name, entry.expect, outcome, peak>>20, late)
			switch entry.expect {
			case "budget":
				if outcome != "budget" {
					t.Errorf("%s, want the budget's memory error", res.Content)
				}
			case "heap":
				// The heap watch's domain, though a built-in the script also calls may charge
				// the budget past its limit first.
				if outcome != "heap watch" && outcome != "budget" {
					t.Errorf("%s, want a memory error", res.Content)
				}
			case "ok":
				if res.IsError {
					t.Errorf("%s, want it to finish", res.Content)
				}
			}
			bound := corpusPeakFactor * heapWatchLine(limits.MaxMemory)
			if entry.doubling {
				bound = corpusDoublingBound
			}
			bound += int64(late.Seconds() * corpusAllocRate)
			if peak > bound {
				t.Errorf("the heap grew by %d MiB, over the %d MiB bound (the sampler was %v late)", peak>>20, bound>>20, late)
			}
			if entry.expect == "budget" {
				_, again, _ := runCorpusEntry(t, engine, ec, entry)
				if again.Content != res.Content {
					t.Errorf("a second run failed otherwise:\n%s\n%s", res.Content, again.Content)
				}
			}
			for n := range 2 {
				out, _ := healthy.Execute(ec, json.RawMessage(fmt.Sprintf(`{"n":%d}`, n)))
				if out.IsError || out.Content != fmt.Sprintf("fine %d", n) {
					t.Errorf("the next call: %+v", out)
				}
			}
		})
	}
}

// BenchmarkMemoryEscapeCorpus measures the corpus at the default limits (64 MiB), one run per
// entry: peak-MiB is how far the heap grew, the figure docs/scripting.md tabulates.
//
//	go test ./scripting/ -run '^$' -bench MemoryEscapeCorpus -benchtime 1x
func BenchmarkMemoryEscapeCorpus(b *testing.B) {
	engine := NewEngine(corpusLimits(DefaultMaxMemory))
	defer engine.Close()
	ec := corpusExec(b)
	for _, entry := range loadCorpus(b) {
		b.Run(entry.name, func(b *testing.B) {
			var worst int64
			for b.Loop() {
				outcome, res, peak := runCorpusEntry(b, engine, ec, entry)
				if (entry.expect == "ok") != (outcome == "finished") {
					b.Fatalf("%s: %s", outcome, res.Content)
				}
				worst = max(worst, peak)
			}
			b.ReportMetric(float64(worst)/(1<<20), "peak-MiB")
		})
	}
}

// TestMemoryBudgetErrors: the budget's error is an ErrMemory positioned where the budget ran out,
// the same in a tool and in a policy (whose turn then fails), and it cannot be caught.
func TestMemoryBudgetErrors(t *testing.T) {
	limits := Limits{MaxMemory: 1 << 20, CallTimeout: time.Minute} // memory decides, however slow
	src := tool(`() => {
  const kept = [];
  try {
    for (;;) kept.push("x".repeat(1 << 16));
  } catch (e) {
    return "caught " + e;
  }
}`)
	_, err := NewEngine(limits).Run(context.Background(), mustCompile(t, "keep.js", src), nil, nil, fixedEnv())
	want := "keep.js:4:34: String.prototype.repeat: the call's built-ins built more than its 1 MiB memory budget (max_memory in [scripting]); build less, or keep less of it"
	var serr *Error
	if !errors.Is(err, ErrMemory) || !errors.As(err, &serr) || err.Error() != want {
		t.Errorf("tool: %v\nwant %s", err, want)
	}
	p, err := CompilePolicy("js:p", "p.js", []byte(decideBody(`const kept = []; for (;;) kept.push("x".repeat(1 << 16));`)), limits)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if _, err := p.Turn(context.Background(), &models.State{}, testView(1)); !errors.Is(err, ErrMemory) || !strings.Contains(err.Error(), "1 MiB memory budget") {
		t.Errorf("policy: %v", err)
	}
}

// TestBudgetChargesEveryGrowthPath keeps what each growth path builds until the budget (1 MiB
// here) runs out, and checks that the error names the built-in that passed it: every path the
// corpus does not already cover.
func TestBudgetChargesEveryGrowthPath(t *testing.T) {
	tests := []struct{ name, build, fn string }{
		{"unshift", `a.unshift(...src)`, "Array.prototype.unshift"},
		{"splice", `a.splice(0, 0, ...src)`, "Array.prototype.splice"},
		{"toSorted", `new Array(1000).fill(3).toSorted()`, "Array.prototype.toSorted"},
		{"toSpliced", `new Array(1000).toSpliced(0, 0, 1)`, "Array.prototype.toSpliced"},
		{"with", `new Array(1000).with(0, 1)`, "Array.prototype.with"},
		{"map", `src.map((x) => x)`, "Array.prototype.map"},
		{"filter", `src.filter(() => true)`, "Array.prototype.filter"},
		{"Array.of", `Array.of(...src)`, "Array.of"},
		{"Object.values", `Object.values(src)`, "Object.values"},
		{"Object.getOwnPropertyNames", `Object.getOwnPropertyNames(src)`, "Object.getOwnPropertyNames"},
		{"Object.getOwnPropertyDescriptors", `Object.getOwnPropertyDescriptors(obj)`, "Object.getOwnPropertyDescriptors"},
		{"Object.assign", `Object.assign({}, src)`, "Object.assign"},
		{"Reflect.ownKeys", `Reflect.ownKeys(src)`, "Reflect.ownKeys"},
		{"String.fromCharCode", `String.fromCharCode(...src)`, "String.fromCharCode"},
		{"String.raw", "String.raw({ raw: [text, text] }, 1)", "String.raw"},
		{"concat", `text.concat(text)`, "String.prototype.concat"},
		{"toUpperCase", `text.toUpperCase()`, "String.prototype.toUpperCase"},
		{"replace with a template", `text.replace(/a/g, "$&$&")`, "RegExp.prototype[Symbol.replace]"},
		{"encodeURIComponent", `encodeURIComponent(text)`, "encodeURIComponent"},
		{"JSON.stringify", `JSON.stringify(src)`, "JSON.stringify"},
		{"JSON.parse", `JSON.parse("[" + "1,".repeat(999) + "1]")`, "JSON.parse"},
	}
	engine := NewEngine(Limits{MaxMemory: 1 << 20, CallTimeout: time.Minute}) // memory decides, however slow
	defer engine.Close()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := tool(`() => {
  const src = Array.from({ length: 1000 }, (_, i) => i % 100), text = "a".repeat(1000);
  const obj = Object.fromEntries(src.map((v, i) => ["k" + i, v]));
  const a = [], kept = [];
  for (;;) kept.push(` + tt.build + `);
}`)
			_, err := engine.Run(context.Background(), mustCompile(t, "grow.js", src), nil, nil, fixedEnv())
			if !errors.Is(err, ErrMemory) || !strings.Contains(err.Error(), ": "+tt.fn+": the call's built-ins built more than its 1 MiB") {
				t.Errorf("%v\nwant the budget's error naming %s", err, tt.fn)
			}
		})
	}
}

// A budget smaller than what the runtime's own set-up charges (the lockdown, before any script
// runs) neither crashes the host nor fails a call that builds nothing; a call that builds more
// than the budget fails with its error.
func TestMemoryBudgetBelowTheRuntimesSetUp(t *testing.T) {
	limits := Limits{MaxMemory: 64 << 10, CallTimeout: time.Minute}
	engine := NewEngine(limits)
	defer engine.Close()
	out, err := engine.Run(context.Background(), mustCompile(t, "small.js", tool(`() => "ok"`)), nil, nil, fixedEnv())
	if err != nil || out != "ok" {
		t.Fatalf("a call that builds nothing: %q, %v", out, err)
	}
	_, err = engine.Run(context.Background(), mustCompile(t, "big.js", tool(`() => "x".repeat(1 << 17)`)), nil, nil, fixedEnv())
	if !errors.Is(err, ErrMemory) || !strings.Contains(err.Error(), "64 KiB memory budget") {
		t.Fatalf("a call that builds 128 KiB: %v, want the memory budget's error", err)
	}
}
