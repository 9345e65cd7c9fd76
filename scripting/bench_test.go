package scripting

import (
	"context"
	"encoding/json"
	"runtime"
	"testing"

	"github.com/warrenhq/warren/tools"
)

// overheadTool does nothing but read an argument: its calls cost what the engine adds.
const overheadTool = `defineTool({ name: "echo", description: "d", parameters: { type: "object" },
  run(args) { return args.text; } });`

var overheadArgs = json.RawMessage(`{"text":"hello","n":1}`)

// benchTool is the small script of the call benchmarks: it reads its arguments, loops a little
// and returns an object (JSON-encoded).
const benchTool = `defineTool({ name: "bench", description: "d", parameters: { type: "object" },
  run(args, host) {
    let total = 0;
    for (const n of args.numbers) total += n;
    return { count: args.numbers.length, total };
  } });`

var benchArgs = json.RawMessage(`{"numbers":[1,2,3,4,5,6,7,8]}`)

// BenchmarkCall measures one call on a warm runtime of the engine's pool: overhead is a script
// that only returns an argument (what the engine adds to any call: the pool, the watchdog, the
// file's top level, the arguments in and the result out); small also loops over an array and
// returns an object; parallel runs the overhead call from 4 goroutines per core, as the tool lane
// does.
func BenchmarkCall(b *testing.B) {
	overhead := mustCompile(b, "echo.js", overheadTool)
	small := mustCompile(b, "bench.js", benchTool)
	run := func(b *testing.B, s *Script, args json.RawMessage) {
		e := NewEngine(Limits{})
		defer e.Close()
		b.ReportAllocs()
		for b.Loop() {
			if _, err := e.Run(context.Background(), s, args, nil, fixedEnv()); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("overhead", func(b *testing.B) { run(b, overhead, overheadArgs) })
	b.Run("small", func(b *testing.B) { run(b, small, benchArgs) })
	b.Run("parallel", func(b *testing.B) {
		e := NewEngine(Limits{})
		defer e.Close()
		b.ReportAllocs()
		b.SetParallelism(4)
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := e.Run(context.Background(), overhead, overheadArgs, nil, fixedEnv()); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
}

// BenchmarkToolCall measures the overhead call as the host makes it: scripting.Tool.Execute with
// an agent's context (Layer 3 callback, seeded random source, cancellable context), which adds
// the host functions' per-call state to Engine.Run.
func BenchmarkToolCall(b *testing.B) {
	tool := &Tool{Script: mustCompile(b, "echo.js", overheadTool), Engine: NewEngine(Limits{})}
	defer tool.Engine.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ec := tools.NewExecContext(ctx, "c1", 1, tools.AgentRef{ID: 1, Name: "a"}, b.TempDir())
	ec.ScriptPermit = func(string) error { return nil }
	ec.Seed = 7
	b.ReportAllocs()
	for b.Loop() {
		res, err := tool.Execute(ec, overheadArgs)
		if err != nil || res.IsError || res.Content != "hello" {
			b.Fatalf("%+v, %v", res, err)
		}
	}
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
		newWorker(DefaultLimits())
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
			if _, err := w.call(context.Background()); err != nil {
				b.Fatal(err)
			}
			w.end()
			workers[i] = w
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/runtimes, "heap-B/runtime")
		runtime.KeepAlive(workers)
	}
}
