package scripting

import (
	"context"
	"strings"
	"testing"
)

func TestCodeFromStringsIsUnavailable(t *testing.T) {
	tests := []struct{ name, expr string }{
		{"eval", `eval("1 + 1")`},
		{"indirect eval", `globalThis["ev" + "al"]("1 + 1")`},
		{"Function", `Function("return 1")()`},
		{"new Function", `new Function("return 1")()`},
		{"function constructor", `(function () {}).constructor("return 1")()`},
		{"arrow constructor", `(() => 1).constructor("return 1")()`},
		{"array constructor's constructor", `[].constructor.constructor("return 1")()`},
		{"async function constructor", `(async function () {}).constructor("return 1")()`},
		{"generator function constructor", `(function* () {}).constructor("yield 1")().next().value`},
		{"prototype's constructor", `Object.getPrototypeOf(async () => {}).constructor("return 1")()`},
		{"Reflect.construct", `Reflect.construct(Function, ["return 1"])()`},
		{"bound Function", `Function.bind(null, "return 1")()()`},
	}
	e := NewEngine(Limits{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := runTool(t, e, tool(`() => { try { return String(`+tt.expr+`) } catch (e) { return "refused: " + e.name } }`), "", nil)
			if err != nil {
				t.Fatal(err)
			}
			if out != "refused: EvalError" && out != "refused: ReferenceError" && out != "refused: TypeError" {
				t.Errorf("%s = %q, want it refused", tt.expr, out)
			}
		})
	}
	// What still works: instanceof Function, and the functions themselves.
	out, err := runTool(t, e, tool(`() => [(() => 1) instanceof Function, typeof Function, (async () => 1) instanceof Function].join()`), "", nil)
	if err != nil || out != "true,function,true" {
		t.Errorf("instanceof Function: %q, %v", out, err)
	}
}

// leakyTool tries every way a call could leave state behind for the next call in the same
// runtime; probeTool reports what it finds. Neither may see the other's traces.
const leakyTool = `let counter = 0;
var seen = [];
defineTool({ name: "leaky", description: "d", parameters: { type: "object" }, run() {
  counter++;
  seen.push(counter);
  const attempts = [
    () => { globalThis.leak = 1 },
    () => { Object.prototype.polluted = 1 },
    () => { Array.prototype.extra = 1 },
    () => { JSON.stringify = () => "hijacked" },
    () => { Math.random = () => 4 },
    () => { String.prototype.trim = () => "hijacked" },
    () => { Object.defineProperty(Array.prototype, "map", { value: () => [] }) },
    () => { Object.setPrototypeOf(Object.prototype, {}) },
    () => { Error.prototype.name = "Hijacked" },
    () => { delete Array.prototype.push },
    () => { Symbol.iterator.description = "x" },
    () => { Object.getPrototypeOf([][Symbol.iterator]()).next = () => ({ done: true }) },
    () => { Object.getPrototypeOf(function* () {}).prototype.next = () => ({ done: true }) },
    () => { implicit = 1 },
  ];
  let refused = 0;
  for (const attempt of attempts) {
    try { attempt() } catch (e) { if (e instanceof TypeError || e instanceof ReferenceError) refused++ }
  }
  return counter + "/" + seen.length + "/" + refused + "/" + attempts.length;
} });`

const probeTool = `defineTool({ name: "probe", description: "d", parameters: { type: "object" }, run() {
  return [typeof leak, ({}).polluted, [].extra, JSON.stringify([1]), Math.random(), " a ".trim(),
    [1].map((x) => x + 1)[0], Error.prototype.name, typeof [].push, [...[1, 2]].length,
    [...(function* () { yield 1 })()].length, typeof implicit].join();
} });`

func TestNoStateSurvivesACall(t *testing.T) {
	leaky := mustCompile(t, "leaky.js", leakyTool)
	probe := mustCompile(t, "probe.js", probeTool)
	// One worker, so every call is served by the same runtime.
	w := newWorker(DefaultLimits())
	call := func(s *Script) string {
		t.Helper()
		w.begin(s, nil, nil, fixedEnv(), modeRun)
		out, err := w.call(context.Background())
		w.end()
		if err != nil {
			t.Fatalf("%s: %v", s.File, err)
		}
		return out
	}
	const clean = "undefined,,,[1],0.1, a ,2,Error,function,2,1,undefined"
	if got := call(probe); got != strings.Replace(clean, " a ", "a", 1) {
		t.Fatalf("probe before any leak = %q", got)
	}
	for range 3 {
		if got := call(leaky); got != "1/1/14/14" {
			t.Errorf("leaky tool = %q, want a fresh counter and every attempt refused", got)
		}
		if got := call(probe); got != strings.Replace(clean, " a ", "a", 1) {
			t.Errorf("probe after a leaky call = %q", got)
		}
	}
}

func TestOverridingInheritedPropertiesStillWorks(t *testing.T) {
	tests := []struct{ name, run, want string }{
		{"error subclass name", `() => { class MyError extends Error { constructor(m) { super(m); this.name = "MyError"; } }
			return String(new MyError("bad")) }`, "MyError: bad"},
		{"error message assigned", `() => { const e = new Error(); e.message = "later"; return e.message }`, "later"},
		{"own toString", `() => { const o = {}; o.toString = () => "custom"; return String(o) }`, "custom"},
		{"own valueOf", `() => { const o = {}; o.valueOf = () => 41; return o + 1 }`, "42"},
		{"own constructor", `() => { const o = {}; o.constructor = "mine"; return o.constructor }`, "mine"},
		{"prototype stays", `() => { try { Object.prototype.toString = null } catch (e) { return e.name + " " + typeof ({}).toString } }`, "TypeError function"},
	}
	e := NewEngine(Limits{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := runTool(t, e, tool(tt.run), "", nil)
			if err != nil || out != tt.want {
				t.Errorf("result = %q, %v; want %q", out, err, tt.want)
			}
		})
	}
}

func TestSandboxRemovesBinaryData(t *testing.T) {
	out, err := runTool(t, NewEngine(Limits{}), tool(`() => [typeof ArrayBuffer, typeof Uint8Array, typeof DataView, typeof SharedArrayBuffer].join()`), "", nil)
	if err != nil || out != "undefined,undefined,undefined,undefined" {
		t.Errorf("binary data types = %q, %v", out, err)
	}
}
