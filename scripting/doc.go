// Package scripting runs the tools a blueprint ships as JavaScript files, in goja.
//
// A tool file calls defineTool exactly once at its top level:
//
//	defineTool({
//	  name: "word_count",                       // ^[a-z][a-z0-9_]*$, unique among all tools
//	  description: "Counts the words of a file in the workdir.",
//	  parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
//	  run: function (args, host) {              // may be async and await host calls
//	    const text = host.readFile(args.path);
//	    host.log("counting " + args.path);
//	    return { words: text.split(/\s+/).filter(Boolean).length };
//	  },
//	});
//
// The same engine runs JavaScript policies, a model back end (see CompilePolicy): a file that
// calls definePolicy(function decide(obs) {...}) and returns the agent's next text and tool
// calls from a read-only observation of its view, fast enough to run 10^4 simulated agents.
//
// Compile compiles a file once per world and reads its definition; Discover compiles every
// *.js of a directory. An Engine runs calls: each call runs the file's top level afresh and then
// run(args, host), where host reaches the calling agent's Host (readFile, writeFile, listDir,
// shell, httpGet and httpPost returning promises, env, callTool, log). The result is run's value,
// awaited if it is a promise: a string as is, undefined as "", anything else JSON-encoded.
//
// # Isolation and determinism
//
// No state survives a call, whichever runtime serves it. The file is wrapped in a function at
// compile time (line numbers unchanged), so its top-level declarations live in a scope created
// per call (top-level code runs on every call: keep it light); the code runs in strict mode (no
// implicit globals); and every runtime is locked down
// before its first call: the global object and everything reachable from it (prototypes,
// constructors, the hidden iterator prototypes, the host object) are frozen. A few inherited
// properties scripts commonly assign on their own objects (toString, valueOf, constructor, an
// Error's name and message) are accessors whose setter defines an own property, so
// `this.name = "MyError"` still works. Code cannot be built from strings: eval is removed and the
// Function, AsyncFunction and GeneratorFunction constructors throw an EvalError (instanceof
// Function still works). Binary data types (ArrayBuffer, DataView, typed arrays) are removed.
// Date and Math.random read the call's CallEnv: the virtual clock's time and the agent's seeded
// source. Date's local-time methods (getHours, toString) use the process's time zone, which goja
// reads from time.Local: a host that wants traces identical across machines sets time.Local to
// UTC before it starts (host run does).
//
// # Limits
//
// A call has a CPU-time budget (Limits.CallTimeout: the time its own thread spends running, so
// the machine's load never counts) and a wall-clock backstop (Limits.WallTimeout, for a call that
// waits on a host function) enforced with goja's interrupt and with the
// caller's context; a maximum call depth; caps on the arguments, on the result, and on strings
// crossing to the host and back. A call runs on its caller's goroutine (a tool lane worker, or
// the world's goroutine for a policy): a watchdog timer and the caller's context interrupt it,
// and cancel the context its blocking host functions (shell, HTTP, call_tool) were given. goja
// has no memory limit and its built-ins are Go loops that ignore interrupts, so the engine
// replaces the built-ins a script could use to exhaust the host, or to run for ever, in one
// native call (see guards.go): string builders stop at MaxStringBytes, built-ins refuse
// array-likes longer than MaxStringBytes elements, native recursion stops at 1000 levels,
// built-in iterators observe the interrupt, and a regular-expression operation (goja's
// backtracking engine, regexp2, can take exponential time) fails the call after 250 ms of CPU
// time (regexp2's own wall-clock timeout, 10 s, is only a backstop). What
// remains is bounded by those caps: a single native step over a capped input finishes before the
// interrupt lands (measured worst, 4 s for Object.keys of a 4-million-element array).
//
// Memory is bounded per call by Limits.MaxMemory (64 MiB), two ways (memory.go, heapwatch.go):
// the built-ins and host functions charge what they build, by fixed costs, and the call fails
// with ErrMemory when the count passes the budget, the same way on every machine; and a heap
// watch, sampling the process's heap while calls run, stops a call whose own JavaScript (object
// literals, closures, string concatenation, which no built-in sees) grows the heap past twice
// the budget (at least 64 MiB). The watch's verdict depends on timing; docs/scripting.md says when it can decide
// a trace.
// A script that a call runs through callTool (on the same goroutine, under the context its host
// function was given) builds on its caller's count, so a call and the scripts it calls share one
// budget, and Limits.MaxTotalMemory bounds what the engine's calls may build at once: each call
// reserves its budget from it while it runs, waiting for room before its budget starts
// (docs/scripting.md, "Run-wide memory").
//
// Errors are *Error values positioned in the file (file:line:col: message) whose Kind is one of
// the Err* sentinels, or the context's error for a cancelled call.
//
// # Runtimes: a pool, not one per agent
//
// Measured on the reference 2-vCPU machine (go test -bench . ./scripting):
//
//   - a locked-down runtime holds about 440 KiB of live heap (BenchmarkRuntimeMemory: 1000
//     runtimes that each served one call of a small script);
//   - building one takes about 5.2 ms and 2 MiB of allocation (BenchmarkNewRuntime: the
//     lockdown touches every built-in);
//   - a call costs about 7–8 µs when its script only returns an argument (BenchmarkCall/overhead:
//     the pool, the watchdog, the file's top level, the arguments in and the result out),
//     10–11 µs through the host's script tool (BenchmarkToolCall), 21–24 µs for a small loop
//     returning an object (BenchmarkCall/small); an async call awaiting a host function about
//     35 µs (BenchmarkCallAsync).
//
// A runtime per agent would hold 4.4 GB for 10^4 agents and 44 GB for 10^5, idle almost all the
// time, for no gain per call. Since no state survives a call, any runtime can serve any agent,
// so the Engine keeps a sync.Pool of runtimes sized by demand: as many as calls run at once (at
// most the tool lane's workers, 4×GOMAXPROCS by default), released by the garbage collector when
// idle. A runtime has no goroutine of its own: an earlier design ran each call on its runtime's
// goroutine, so a caller could walk away from a built-in stuck past the budget, but the two
// goroutine hand-offs cost about half of a small call, and the walked-away runtime went on
// burning a core; bounding every built-in step serves both better.
package scripting
