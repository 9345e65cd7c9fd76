package scripting

import (
	"context"
	"encoding/json"
	"runtime"
	"testing"
)

// benchTool is the small script of the call benchmarks: it reads its arguments, loops a little
// and returns an object (JSON-encoded).
const benchTool = `defineTool({ name: "bench", description: "d", parameters: { type: "object" },
  run(args, host) {
    let total = 0;
    for (const n of args.numbers) total += n;
    return { count: args.numbers.length, total };
  } });`

var benchArgs = json.RawMessage(`{"numbers":[1,2,3,4,5,6,7,8]}`)

// BenchmarkCall measures one small call: through the engine's pool (how the host runs scripts)
// and on a runtime dedicated to the caller (what a runtime per agent would cost per call).
func BenchmarkCall(b *testing.B) {
	s := mustCompile(b, "bench.js", benchTool)
	b.Run("pool", func(b *testing.B) {
		e := NewEngine(Limits{})
		defer e.Close()
		b.ReportAllocs()
		for b.Loop() {
			if _, err := e.Run(context.Background(), s, benchArgs, nil, fixedEnv()); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("dedicated", func(b *testing.B) {
		w := newWorker(DefaultLimits())
		defer w.retire()
		b.ReportAllocs()
		for b.Loop() {
			w.begin(s, benchArgs, nil, fixedEnv(), modeRun)
			if _, err := w.supervise(context.Background()); err != nil {
				b.Fatal(err)
			}
			w.end()
		}
	})
}

// BenchmarkCallAsync measures a call whose run is async and awaits a host function.
func BenchmarkCallAsync(b *testing.B) {
	s := compileFile(b, "testdata/good/fetch_status.js")
	host := &fakeHost{response: HTTPResponse{Status: 200, Body: "ok"}}
	e := NewEngine(Limits{})
	defer e.Close()
	b.ReportAllocs()
	for b.Loop() {
		host.calls = host.calls[:0]
		if _, err := e.Run(context.Background(), s, nil, host, fixedEnv()); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkNewRuntime measures building one sandboxed runtime (guards and lockdown included):
// what the pool saves on every call it serves from an idle runtime.
func BenchmarkNewRuntime(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		newWorker(DefaultLimits()).retire()
	}
}

// BenchmarkRuntimeMemory measures the live heap of 1000 runtimes that each served one call of
// a small script: the memory a runtime per agent would cost per agent, and the pool per runtime
// it keeps.
func BenchmarkRuntimeMemory(b *testing.B) {
	const runtimes = 1000
	s := mustCompile(b, "bench.js", benchTool)
	for b.Loop() {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		workers := make([]*worker, runtimes)
		for i := range workers {
			w := newWorker(DefaultLimits())
			w.begin(s, benchArgs, nil, fixedEnv(), modeRun)
			if _, err := w.supervise(context.Background()); err != nil {
				b.Fatal(err)
			}
			w.end()
			workers[i] = w
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/runtimes, "heap-B/runtime")
		for _, w := range workers {
			w.retire()
		}
	}
}
