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
// reads from time.Local: a host that wants traces identical across machines runs with TZ=UTC.
//
// # Limits
//
// A call has a wall-time budget (Limits.CallTimeout) enforced with goja's interrupt and with the
// caller's context; a maximum call depth; caps on the arguments, on the result, and on strings
// crossing to the host and back. goja has no memory limit and its built-ins are Go loops that
// ignore interrupts, so the engine replaces the built-ins a script could use to exhaust the
// host in one native call (see guards.go): string builders stop at MaxStringBytes, built-ins
// refuse array-likes longer than MaxStringBytes elements, native recursion stops at 1000 levels,
// and built-in iterators observe the interrupt. What remains (string concatenation in a loop, a
// catastrophic regular expression) is bounded by the budget: the engine waits a short grace
// after interrupting, then returns the timeout and abandons the runtime to finish on its own
// (it never reaches the host again and is never reused). Doubling a string in a loop reaches
// about 290 MiB of heap at the default 2s budget.
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
//   - a small call costs about 33 µs, 13 KiB and 210 allocations through the pool, and 32 µs on a
//     runtime dedicated to the caller (BenchmarkCall/pool and /dedicated); an async call awaiting
//     a host function about 42 µs (BenchmarkCallAsync).
//
// A runtime per agent would hold 4.4 GB for 10^4 agents and 44 GB for 10^5, idle almost all the
// time, for no gain per call. Since no state survives a call, any runtime can serve any agent,
// so the Engine keeps a sync.Pool of runtimes sized by demand: as many as calls run at once (at
// most the tool lane's workers, 4×GOMAXPROCS by default), released by the garbage collector when
// idle. Each runtime keeps a goroutine of its own, so its stack (grown by goja) is reused and a
// caller can give up on a call stuck in a native loop.
package scripting
