package scripting

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dlclark/regexp2/v2"
)

// TestGuardedBuiltinsKeepTheirMeaning checks the reimplemented and wrapped built-ins against
// what JavaScript specifies, on ordinary inputs.
func TestGuardedBuiltinsKeepTheirMeaning(t *testing.T) {
	tests := []struct{ name, expr, want string }{
		{"join", `[1, null, "a", undefined, [2, 3], { toString() { return "o" } }].join("-")`, "1--a--2,3-o"},
		{"join default separator", `[1, 2].join()`, "1,2"},
		{"join of a cycle", `(() => { const a = [1]; a.push(a, 2); return a.join() })()`, "1,,2"},
		{"join of an array-like", `Array.prototype.join.call({ length: 3, 0: "x", 2: "z" }, "+")`, "x++z"},
		{"toString of nested arrays", `String([1, [2, [3, [4]]]])`, "1,2,3,4"},
		{"toLocaleString", `[1, "a", null].toLocaleString()`, "1,a,"},
		{"flat", `JSON.stringify([1, [2, [3, [4]]], , 5].flat())`, "[1,2,[3,[4]],5]"},
		{"flat depth", `JSON.stringify([1, [2, [3, [4]]]].flat(2))`, "[1,2,3,[4]]"},
		{"flat Infinity", `JSON.stringify([1, [2, [3, [4]]]].flat(Infinity))`, "[1,2,3,4]"},
		{"flat zero", `JSON.stringify([1, [2]].flat(0))`, "[1,[2]]"},
		{"flatMap", `JSON.stringify([1, 2, 3].flatMap((x, i) => i === 1 ? [x, [x]] : x * 10))`, "[10,2,[2],30]"},
		{"flatMap this", `JSON.stringify([1].flatMap(function () { return this.v }, { v: 7 }))`, "[7]"},
		{"repeat", `"ab".repeat(3)`, "ababab"},
		{"padStart", `"5".padStart(3, "0")`, "005"},
		{"padEnd", `"5".padEnd(3)`, "5  "},
		{"concat", `"a".concat(1, null, [2])`, "a1null2"},
		{"replace $ patterns", `"John Smith".replace(/(\w+)\s(\w+)/, "$2, $1 ($&) [$$] <$3>")`, "Smith, John (John Smith) [$] <$3>"},
		{"replace around the match", "\"abc\".replace(\"b\", \"[$`|$']\")", "a[a|c]c"},
		{"replace two-digit capture", `"abcdefghijk".replace(/(a)(b)(c)(d)(e)(f)(g)(h)(i)(j)(k)/, "$11-$10-$01-$0")`, "k-j-a-$0"},
		{"replace named groups", `"2030-01".replace(/(?<y>\d+)-(?<m>\d+)/, "$<m>/$<y> $<none>.")`, "01/2030 ."},
		{"replace with a function", `"a1b2".replace(/\d/g, (d, at, s) => "[" + d * 2 + at + s.length + "]")`, "a[214]b[434]"},
		{"replaceAll", `"a.b.c".replaceAll(".", "$&$&")`, "a..b..c"},
		{"Symbol.replace", `/o/g[Symbol.replace]("foo", "0")`, "f00"},
		{"custom Symbol.replace", `"abc".replace({ [Symbol.replace](s, r) { return typeof r + ":" + s + r } }, "x")`, "string:abcx"},
		{"split", `"a,b,,c".split(",").length`, "4"},
		{"String.raw", "String.raw`a\\n${1 + 1}b${\"c\"}`", `a\n2bc`},
		{"String.raw call", `String.raw({ raw: ["x", "y", "z"] }, 1)`, "x1yz"},
		{"JSON.stringify indent", `JSON.stringify({ a: [1, { b: 2 }] }, null, 1)`, "{\n \"a\": [\n  1,\n  {\n   \"b\": 2\n  }\n ]\n}"},
		{"JSON.stringify replacer", `JSON.stringify({ a: 1, b: "x", c: { a: 2 } }, (k, v) => typeof v === "number" ? v * 10 : v)`, `{"a":10,"b":"x","c":{"a":20}}`},
		{"JSON.stringify property list", `JSON.stringify({ a: 1, b: 2, c: { a: 3, d: 4 }, l: [{ a: 5, z: 6 }] }, ["a", "c", "l"])`, `{"a":1,"c":{"a":3},"l":[{"a":5}]}`},
		{"JSON.stringify toJSON", `JSON.stringify({ d: new Date(0), t: { toJSON() { return "tj" } } })`, `{"d":"1970-01-01T00:00:00.000Z","t":"tj"}`},
		{"JSON.stringify top-level", `[JSON.stringify("s"), JSON.stringify(undefined), JSON.stringify(() => 1)].join("|")`, `"s"||`},
		{"JSON.parse reviver", `JSON.parse('{"a":[1,{"b":2}]}', (k, v) => typeof v === "number" ? v + 1 : v).a[1].b`, "3"},
		{"JSON.parse strings with brackets", `JSON.parse('["[[[{", "\\"]"]').length`, "2"},
		{"Array.from", `Array.from({ length: 3 }, (_, i) => i * 2).join()`, "0,2,4"},
		{"apply", `Math.max.apply(null, [1, 5, 3])`, "5"},
		{"Reflect.apply", `Reflect.apply(String.prototype.slice, "hello", [1, 3])`, "el"},
		{"spread and for-of", `(() => { let n = 0; for (const x of new Set([1, 2])) n += x; return n + [..."ab"].length + [...new Map([[1, 2]])].length })()`, "6"},
		{"Object.keys", `Object.keys("ab").concat(Object.entries({ a: 1 })).join("|")`, "0|1|a,1"},
		{"encodeURIComponent", `encodeURIComponent("a b/é")`, "a%20b%2F%C3%A9"},
		{"sort default order", `[10, 9, "b", undefined, "a", 1, null, , "é", "\u{1F600}", "\uFFFF"].sort().map(String).join()`, "1,10,9,a,b,null,é,\U0001F600,\uffff,undefined,"},
		{"toSorted default order", `[3, 20, 100].toSorted().join()`, "100,20,3"},
		{"sort with a comparator", `[3, 20, 100].sort((a, b) => a - b).join()`, "3,20,100"},
		{"sort is stable", `[{k: 1, v: "a"}, {k: 0, v: "b"}, {k: 1, v: "c"}].sort((x, y) => x.k - y.k).map(o => o.v).join("")`, "bac"},
		{"sort of an array-like", `Array.prototype.sort.call({0: "b", 1: "a", length: 2}).length`, "2"},
		{"names kept", `[[].join.name, "".repeat.name, JSON.stringify.name, [].map.length].join()`, "join,repeat,stringify,1"},
	}
	e := NewEngine(Limits{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := runTool(t, e, tool(`() => String(`+tt.expr+`)`), "", nil)
			if err != nil || out != tt.want {
				t.Errorf("%s = %q, %v; want %q", tt.expr, out, err, tt.want)
			}
		})
	}
}

// TestAmplifiersFailFast checks that the built-ins a script could use to exhaust the host's
// memory or stack in one native call fail the call at once, with an error naming the cap (here
// a 64 KiB MaxStringBytes, so the tests stay fast).
func TestAmplifiersFailFast(t *testing.T) {
	tests := []struct{ name, expr, message string }{
		{"repeat", `"x".repeat(2 ** 30)`, "repeat: a string of 1073741824 characters"},
		{"padEnd", `"".padEnd(2 ** 40)`, "pad: a string of 1099511627776 characters"},
		{"join of a huge sparse array", `new Array(2 ** 32 - 1).join("x")`, "join: 4294967295 elements"},
		{"join of repeated big strings", `new Array(1000).fill("x".repeat(4096)).join("")`, "join: a string of 69632 characters"},
		{"join with a big separator", `new Array(1000).join("x".repeat(4096))`, "join: a string of 69632 characters"},
		{"toString of repeated big strings", `String(new Array(1000).fill("x".repeat(4096)))`, "join: a string of 65551 characters"},
		{"fill of a huge array", `new Array(2 ** 32 - 1).fill(0)`, "Array.prototype method: 4294967295 elements"},
		{"array-like", `Array.prototype.indexOf.call({ length: 2 ** 53 - 1 }, 1)`, "Array.prototype method: 9007199254740991 elements"},
		{"Array.from", `Array.from({ length: 2 ** 32 })`, "argument list: 4294967296 elements"},
		{"apply", `Math.max.apply(null, { length: 2 ** 31 })`, "argument list: 2147483648 elements"},
		{"concat", `[].concat(new Array(2 ** 16), [1])`, "concat: 65537 elements"},
		{"replaceAll", `"ab".repeat(1000).replaceAll("a", "x".repeat(4096))`, "replace: a string of 4097000 characters"},
		{"replaceAll with a template", `"ab".repeat(1000).replaceAll("a", "$&".repeat(4096))`, "replace: a string of 67536 characters"},
		{"replace with $'", "\"x\".repeat(4096).replace(/x/g, \"$'\")", "replace: a string of 69496 characters"},
		{"replace with a function", `"ab".repeat(1000).replace(/a/g, () => "x".repeat(4096))`, "replace: a string of 67536 characters"},
		{"Symbol.replace", `/a/g[Symbol.replace]("a".repeat(100), "x".repeat(4096))`, "replace: a string of 65636 characters"},
		{"String.raw", `String.raw({ raw: new Array(1000).fill("x".repeat(4096)) })`, "String.raw: a string of 69632 characters"},
		{"concat of strings", `"".concat(...new Array(20).fill("y".repeat(4096)))`, "concat: a string of 69632 characters"},
		{"JSON.stringify of repeated big strings", `JSON.stringify(new Array(1000).fill("x".repeat(4096)))`, "JSON.stringify: a string of 65590 characters"},
		{"JSON.stringify of a deep object", `(() => { let o = {}; for (let i = 0; i < 5000; i++) o = { o }; return JSON.stringify(o) })()`,
			"JSON.stringify: the value nests deeper than 1000 levels"},
		{"JSON.parse of a deep text", `JSON.parse("[".repeat(30000) + "]".repeat(30000))`, "JSON.parse: the text nests deeper than 1000 levels"},
		{"nested arrays joined", `(() => { let a = []; for (let i = 0; i < 5000; i++) a = [a]; return String(a) })()`, "join: arrays nested deeper than 1000 levels"},
		{"flat of a deep array", `(() => { let a = []; for (let i = 0; i < 5000; i++) a = [a]; return a.flat(Infinity) })()`, "flat: arrays nested deeper than 1000 levels"},
		{"flat of repeated arrays", `new Array(300).fill(new Array(300).fill(0)).flat()`, "flat: 65537 elements"},
		{"flatMap of repeated arrays", `(() => { const a = new Array(300).fill(0); return a.flatMap(() => a) })()`, "flatMap: 65537 elements"},
		{"method of a huge string", `(() => { let s = "x".repeat(2 ** 16); s += s; return s.split("") })()`, "String.prototype method: a string of 131072 characters"},
		{"keys of a huge string", `(() => { let s = "x".repeat(2 ** 16); s += s; return Object.keys(s) })()`, "string argument: a string of 131072 characters"},
		{"URI encoding of a huge string", `(() => { let s = "é".repeat(2 ** 16); s += s; return encodeURIComponent(s) })()`, "string argument: a string of 131072 characters"},
	}
	e := NewEngine(Limits{MaxStringBytes: 1 << 16})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			_, err := runTool(t, e, tool(`() => `+tt.expr), "", nil)
			if elapsed := time.Since(start); elapsed > time.Second {
				t.Errorf("the call took %v", elapsed)
			}
			want := tt.message
			if !strings.Contains(want, "nest") {
				want += " over the scripts' cap of 65536"
				want = strings.Replace(want, " characters over", " characters is over", 1)
				want = strings.Replace(want, " elements over", " elements are over", 1)
			}
			var serr *Error
			if !errors.As(err, &serr) || !errors.Is(err, ErrRuntime) || !strings.HasSuffix(serr.Message, want) {
				t.Errorf("error = %v\nwant a message ending %s", err, want)
			}
		})
	}
}

func TestGuardsObserveInterrupts(t *testing.T) {
	// Each of these spends seconds inside native built-ins, called in a loop or walking a long
	// array-like. The guards' checkpoints let the interrupt stop them at the next step, so the
	// call ends soon after its budget (an unguarded built-in would run its whole loop first).
	tests := []struct{ name, run string }{
		{"join", `() => { for (;;) { new Array(4000000).join(",") } }`},
		{"spread", `() => [...new Array(2 ** 32 - 1)].length`},
		{"JSON.stringify", `() => { const a = Array.from({ length: 100000 }, (_, i) => i); for (;;) { JSON.stringify(a) } }`},
		{"replaceAll", `() => { const s = "ab".repeat(50000); for (;;) { s.replaceAll("a", "x") } }`},
		{"flat", `() => { const a = new Array(300).fill(new Array(300).fill(1)); for (;;) { a.flat() } }`},
		{"sort", `() => Array.from({ length: 4000000 }, (_, i) => (i * 7919) % 1000003).sort().length`},
	}
	limits := DefaultLimits()
	limits.CallTimeout = 200 * time.Millisecond
	limits.MaxMemory = 1 << 30 // the sort builds four million elements: a test of the interrupt
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := mustCompile(t, "native.js", tool(tt.run))
			w := newWorker(limits)
			w.begin(s, nil, nil, fixedEnv(), modeRun)
			start := time.Now()
			_, err := w.call(context.Background())
			if !errors.Is(err, ErrTimeout) {
				t.Errorf("error = %v, want a timeout", err)
			}
			// A bound with room for a loaded machine and the race detector; the step itself is
			// milliseconds.
			if elapsed := time.Since(start); elapsed > limits.CallTimeout+time.Second {
				t.Errorf("the call took %v: the built-in did not observe the interrupt", elapsed)
			}
		})
	}
}

func TestJSONDepth(t *testing.T) {
	tests := []struct {
		text string
		want int
	}{
		{`1`, 0},
		{`[]`, 1},
		{`{"a":[{"b":[]}]}`, 4},
		{`["[[[", "\"[[", {"x": "]]]"}]`, 2},
		{strings.Repeat("[", 3) + strings.Repeat("]", 3), 3},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			if got := jsonShapeOf(tt.text).depth; got != tt.want {
				t.Errorf("the depth of %s = %d, want %d", tt.text, got, tt.want)
			}
		})
	}
}

func TestCatastrophicRegexpFailsTheCall(t *testing.T) {
	// A catastrophic regular expression backtracks inside one native call, where no interrupt
	// reaches it: 2^24 steps with this subject, about 1.4 s of CPU time on the reference machine
	// (2^18 under the race detector, which runs it some thirty times slower). The guard sees that the
	// operation used more than regexpStepLimit of CPU time and fails the call rather than let the
	// script read its answer; the wall-clock backstop, forty times the limit, is not what decides,
	// even on a loaded machine.
	steps := 24
	if raceDetector {
		steps = 18
	}
	s := mustCompile(t, "regex.js", tool(`() => { const r = /^(a+)+\1$/.test("a".repeat(`+strconv.Itoa(steps)+`) + "b"); return "matched: " + r }`))
	e := warmEngine(t, Limits{CallTimeout: 5 * time.Second})
	out, err := e.Run(context.Background(), s, nil, nil, fixedEnv())
	var se *Error
	if !errors.Is(err, ErrTimeout) || !errors.As(err, &se) || !strings.Contains(err.Error(), "ran past the 250ms CPU limit") {
		t.Fatalf("Run = %q, %v; want the regular expression's CPU limit", out, err)
	}
	if se.WallClock {
		t.Errorf("the CPU limit is marked wall-clock: %v", err)
	}
	// The runtime serves the next call normally.
	ok := mustCompile(t, "ok.js", tool(`() => /^(a+)+$/.test("aaa") ? "yes" : "no"`))
	if out, err := e.Run(context.Background(), ok, nil, nil, fixedEnv()); err != nil || out != "yes" {
		t.Errorf("the next call: %q, %v", out, err)
	}
}

// withRegexpWallLimit lowers the wall-clock backstop of regular expressions to d for one test
// (the package's tests do not run in parallel; patterns compiled from now on use it).
func withRegexpWallLimit(t *testing.T, d time.Duration) {
	t.Helper()
	was := regexpWallLimit
	regexpWallLimit, regexp2.DefaultMatchTimeout = d, d
	t.Cleanup(func() { regexpWallLimit, regexp2.DefaultMatchTimeout = was, was })
}

func TestRegexpWallBackstop(t *testing.T) {
	// A pattern that would backtrack for hours, under a backstop shorter than the CPU limit (one
	// thread cannot use 250 ms of CPU in 100 ms): regexp2 gives up and goja would read "no
	// match"; the guard fails the call instead, marked as a limit measured in real time.
	withRegexpWallLimit(t, 100*time.Millisecond)
	s := mustCompile(t, "regex.js", tool(`() => { const r = /^(a+)+\1$/.test("a".repeat(40) + "b"); return "matched: " + r }`))
	e := warmEngine(t, Limits{CallTimeout: 5 * time.Second})
	out, err := e.Run(context.Background(), s, nil, nil, fixedEnv())
	var se *Error
	if !errors.Is(err, ErrTimeout) || !errors.As(err, &se) || !strings.Contains(err.Error(), "wall-clock backstop") {
		t.Fatalf("Run = %q, %v; want the regular expression's wall-clock backstop", out, err)
	}
	if !se.WallClock {
		t.Errorf("the backstop is not marked wall-clock: %v", err)
	}
}
