package scripting

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/dlclark/regexp2/v2"
	"github.com/dop251/goja"
)

// goja has no memory limit, and its built-ins are Go loops that do not observe interrupts: one
// call such as 'x'.repeat(2**40), new Array(2**32-1).fill(0), Array(1e7).fill(s).join('') or a
// JSON.stringify of a deeply nested object can exhaust the host's memory, or its goroutine stack
// (a fatal error no recover catches), before the budget's interrupt lands. The guards below
// replace the built-ins whose work is not bounded by memory the script already paid for:
//
//   - string builders (repeat, padStart, padEnd, concat, replace/replaceAll and
//     RegExp.prototype[Symbol.replace], String.raw, Array.prototype.join and toLocaleString,
//     JSON.stringify) throw a RangeError rather than build more than MaxStringBytes;
//   - every String.prototype and RegExp matching method, Object.keys and its kin, and the URI
//     functions refuse a string longer than MaxStringBytes (a string that long can only come
//     from concatenating in a loop); every Array.prototype method, Array.from,
//     Function.prototype.apply, Reflect.apply and Reflect.construct refuse an array-like longer
//     than MaxStringBytes elements (new Array(n) costs nothing, walking it costs n);
//   - native recursion (nested arrays joined, flat, JSON.parse and JSON.stringify) stops at
//     maxNesting levels;
//   - the guards and the built-in iterators' next check the call's stop flag, so a spread or a
//     guarded loop stops as soon as the call is interrupted;
//   - a regular-expression operation stops after regexpStepLimit and fails the call;
//   - a sort without a comparator gets a native comparator with the default order that checks
//     the interrupt (goja's own comparison loop took 25 s for 4 million numbers).
//
// Calls run on their caller's goroutine, so what remains unguarded is bounded by the caps rather
// than by the budget: a single native step over at most MaxStringBytes elements or characters
// (Object.keys of a huge array, fill, reverse, compiling a huge pattern) runs to its end before
// the interrupt lands; docs/scripting.md gives measured worst cases.

// regexpStepLimit bounds the CPU time of one regular-expression operation (a match, or a whole
// replace, split or matchAll over a string). goja runs a pattern Go's regexp cannot
// (backreferences, lookaround, or a search from an offset) on regexp2, which backtracks, so a
// pattern like /^(a+)+\1$/ can run for ever inside one native call that no interrupt reaches.
// The guards measure each operation on the call's thread clock, as the call's budget is, so a
// loaded machine never makes an operation fail.
const regexpStepLimit = 250 * time.Millisecond

// regexpWallLimit is regexp2's own timeout, which it measures in wall time: past it regexp2 gives
// up on a match and goja reports "no match". It is only a backstop for the one thing no interrupt
// reaches, a pattern backtracking inside regexp2: the CPU limit above is what decides (a
// catastrophic pattern has used its 250 ms of CPU long before), and the backstop sits forty times
// above it, so an operation meets it only when the machine gave its thread less than a fortieth
// of a core for ten seconds (an operation of 340 ms of CPU took at most 1.9 s of wall time here
// with four busy loops at GOMAXPROCS=1). The guards then fail the call too, marked as a real-time limit, so
// a wrong answer never reaches the script. It is a variable so that a test can reach it quickly.
var regexpWallLimit = 40 * regexpStepLimit

// errRegexpLimit is the interrupt of a call whose regular expression used regexpStepLimit of
// CPU time; errRegexpWaited that of one whose operation ran past regexpWallLimit of wall time
// before using it.
var (
	errRegexpLimit  = fmt.Errorf("a regular expression ran past the %v CPU limit of one operation (catastrophic backtracking?)", regexpStepLimit)
	errRegexpWaited = fmt.Errorf("a regular expression operation ran past regexp2's wall-clock backstop before it used its %v of CPU time (the machine starved it), so its answer cannot be trusted", regexpStepLimit)
)

// regexp2's timeout is read when a pattern is compiled, so it is set before any runtime exists.
// It is process-wide: goja, through this package, is regexp2's only user in the host.
func init() { regexp2.DefaultMatchTimeout = regexpWallLimit }

// maxNesting bounds the native recursion of the built-ins that walk nested values.
const maxNesting = 1000

// nativeFunc is the Go shape of a goja built-in: Export of a native function returns it, so a
// guard calls the original directly, without another trip through the VM.
type nativeFunc = func(goja.FunctionCall) goja.Value

// installGuards replaces the risky built-ins of w's runtime (before the lockdown freezes them).
func (w *worker) installGuards(intrinsics *goja.Object) {
	global := w.vm.GlobalObject()
	object := func(o *goja.Object, name string) *goja.Object { return o.Get(name).(*goja.Object) }
	stringCtor, arrayCtor := object(global, "String"), object(global, "Array")
	stringProto, arrayProto := object(stringCtor, "prototype"), object(arrayCtor, "prototype")
	regexpProto := object(object(global, "RegExp"), "prototype")
	reflect, json := object(global, "Reflect"), object(global, "JSON")

	stringGuards := map[string]func(nativeFunc) nativeFunc{
		"repeat":     w.repeatGuard,
		"padStart":   w.padGuard,
		"padEnd":     w.padGuard,
		"concat":     w.stringConcatGuard,
		"replace":    w.stringReplaceGuard(false),
		"replaceAll": w.stringReplaceGuard(true),
	}
	for _, name := range stringProto.GetOwnPropertyNames() {
		switch guard, special := stringGuards[name]; {
		case special:
			w.guardMethod(stringProto, name, guard)
		case isFunction(stringProto.Get(name)) && name != "constructor" && name != "toString" && name != "valueOf":
			w.guardMethod(stringProto, name, w.stringMethodGuard(name))
		}
	}
	w.guardMethod(stringCtor, "raw", w.replacement(w.stringRaw))
	for _, name := range []string{"fromCharCode", "fromCodePoint"} {
		w.guardMethod(stringCtor, name, w.resultGuard("String."+name))
	}

	arrayGuards := map[string]func(nativeFunc) nativeFunc{
		"concat":         w.arrayConcatGuard,
		"join":           w.replacement(w.arrayJoin),
		"toLocaleString": w.replacement(w.arrayToLocaleString),
		"flat":           w.replacement(w.arrayFlat),
		"flatMap":        w.replacement(w.arrayFlatMap),
		"sort":           w.sortGuard,
		"toSorted":       chained(w.sortGuard, w.arrayMethodGuard("toSorted")),
	}
	for _, name := range arrayProto.GetOwnPropertyNames() {
		switch guard, special := arrayGuards[name]; {
		case special:
			w.guardMethod(arrayProto, name, guard)
		case isFunction(arrayProto.Get(name)) && name != "constructor":
			w.guardMethod(arrayProto, name, w.arrayMethodGuard(name))
		}
	}
	objectCtor := object(global, "Object")
	for name, perKey := range map[string]int64{"keys": costKey, "values": costSlot, "entries": costPair,
		"getOwnPropertyNames": costKey, "getOwnPropertyDescriptors": costDescriptor, "assign": costProperty} {
		w.guardMethod(objectCtor, name, w.listingGuard("Object."+name, perKey))
	}
	w.guardMethod(reflect, "ownKeys", w.listingGuard("Reflect.ownKeys", costKey))
	for _, name := range []string{"encodeURI", "encodeURIComponent", "decodeURI", "decodeURIComponent", "escape", "unescape"} {
		w.guardMethod(global, name, chained(w.stringArgumentsGuard, w.resultGuard(name)))
	}
	w.guardMethod(arrayCtor, "from", chained(w.argumentLengthGuard(0), w.resultGuard("Array.from")))
	w.guardMethod(arrayCtor, "of", w.resultGuard("Array.of"))
	for _, c := range []struct{ ctor, adder string }{{"Map", "set"}, {"Set", "add"}} {
		proto := object(object(global, c.ctor), "prototype")
		_, size := originalOf(intrinsics.Get(strings.ToLower(c.ctor)+"Size"), c.ctor+".prototype.size")
		w.guardMethod(proto, c.adder, w.collectionGuard(c.ctor+".prototype."+c.adder, size))
	}
	w.guardMethod(object(object(global, "Function"), "prototype"), "apply", w.argumentLengthGuard(1))
	w.guardMethod(reflect, "apply", w.argumentLengthGuard(2))
	w.guardMethod(reflect, "construct", w.argumentLengthGuard(1))

	for _, name := range []string{"exec", "test"} {
		w.guardMethod(regexpProto, name, w.subjectGuard)
	}
	for _, sym := range []*goja.Symbol{goja.SymMatchAll, goja.SymSearch} {
		w.guardSymbolMethod(regexpProto, sym, w.subjectGuard)
	}
	w.guardSymbolMethod(regexpProto, goja.SymMatch, w.regexpPiecesGuard(false))
	w.guardSymbolMethod(regexpProto, goja.SymSplit, w.regexpPiecesGuard(true))
	w.guardSymbolMethod(regexpProto, goja.SymReplace, w.regexpReplaceGuard)

	w.guardMethod(json, "parse", w.jsonParseGuard)
	w.guardMethod(json, "stringify", w.jsonStringifyGuard)

	for _, name := range []string{"arrayIterator", "mapIterator", "setIterator", "stringIterator", "regexpStringIterator"} {
		w.guardMethod(object(intrinsics, name), "next", w.checkpointGuard)
	}
}

// guardMethod replaces obj[name] with guard(original), keeping the original's name and length.
func (w *worker) guardMethod(obj *goja.Object, name string, guard func(nativeFunc) nativeFunc) {
	fn, orig := originalOf(obj.Get(name), name)
	w.must(obj.DefineDataProperty(name, w.guarded(fn, orig, guard), goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE))
}

// guardSymbolMethod is guardMethod for a symbol-keyed method.
func (w *worker) guardSymbolMethod(obj *goja.Object, sym *goja.Symbol, guard func(nativeFunc) nativeFunc) {
	fn, orig := originalOf(obj.GetSymbol(sym), sym.String())
	w.must(obj.DefineDataPropertySymbol(sym, w.guarded(fn, orig, guard), goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE))
}

// originalOf returns a built-in's function object and its Go implementation. A guarded
// built-in that is not a native function means goja changed under the sandbox: building the
// runtime fails loudly rather than leave the built-in unguarded.
func originalOf(v goja.Value, name string) (*goja.Object, nativeFunc) {
	fn, _ := v.(*goja.Object)
	var orig nativeFunc
	if fn != nil {
		orig, _ = fn.Export().(nativeFunc)
	}
	if orig == nil {
		panic("scripting: the built-in " + name + " is not a native function; the sandbox cannot guard it")
	}
	return fn, orig
}

// isFunction reports whether v is callable.
func isFunction(v goja.Value) bool {
	_, ok := goja.AssertFunction(v)
	return ok
}

// guarded builds the replacement function object.
func (w *worker) guarded(fn *goja.Object, orig nativeFunc, guard func(nativeFunc) nativeFunc) *goja.Object {
	return w.native(fn.Get("name").String(), int(fn.Get("length").ToInteger()), guard(orig))
}

// replacement adapts a reimplemented built-in to guardMethod (the original is not called).
func (w *worker) replacement(impl nativeFunc) func(nativeFunc) nativeFunc {
	return func(nativeFunc) nativeFunc { return impl }
}

// checkpointGuard only makes orig interruptible between calls (iterator steps).
func (w *worker) checkpointGuard(orig nativeFunc) nativeFunc {
	return func(call goja.FunctionCall) goja.Value {
		w.checkpoint()
		return orig(call)
	}
}

// overLimit is the RangeError of a built-in asked to produce or walk more than the caps allow.
func (w *worker) overLimit(format string, args ...any) *goja.Object {
	return w.jsError(w.rangeErrorCtor, fmt.Sprintf(format, args...))
}

// checkChars throws when a built-in would build a string of n characters, over MaxStringBytes.
func (w *worker) checkChars(n int64, fn string) {
	if n > int64(w.limits.MaxStringBytes) {
		panic(w.overLimit("%s: a string of %d characters is over the scripts' cap of %d", fn, n, w.limits.MaxStringBytes))
	}
}

// checkElements throws when a built-in would walk or build n elements, over MaxStringBytes.
func (w *worker) checkElements(n int64, fn string) {
	if n > int64(w.limits.MaxStringBytes) {
		panic(w.overLimit("%s: %d elements are over the scripts' cap of %d", fn, n, w.limits.MaxStringBytes))
	}
}

// str is ToString, typed: goja's ToString leaves numbers as numbers.
func (w *worker) str(v goja.Value) goja.String {
	if v == nil {
		v = goja.Undefined()
	}
	if s, ok := v.(goja.String); ok {
		return s
	}
	v = v.ToString()
	if s, ok := v.(goja.String); ok {
		return s
	}
	return w.vm.ToValue(v.String()).(goja.String)
}

// toLength is the ECMAScript ToLength of v.
func toLength(v goja.Value) int64 {
	if v == nil {
		return 0
	}
	f := v.ToFloat()
	switch {
	case math.IsNaN(f) || f <= 0:
		return 0
	case f >= 1<<53-1:
		return 1<<53 - 1
	}
	return int64(f)
}

// lengthOf reads an array-like's length and throws over MaxStringBytes elements.
func (w *worker) lengthOf(o *goja.Object, fn string) int64 {
	n := toLength(o.Get("length"))
	w.checkElements(n, fn)
	return n
}

// isArray reports whether v is an Array object.
func isArray(v goja.Value) (*goja.Object, bool) {
	o, ok := v.(*goja.Object)
	return o, ok && o.ClassName() == "Array"
}

// index is the property key of element i.
func index(i int64) string { return strconv.FormatInt(i, 10) }

// stringReceiverGuard refuses a receiver string over the cap. The receiver is converted once,
// here, and the original gets the primitive, so a receiver's toString runs once as usual.
func (w *worker) stringReceiverGuard(orig nativeFunc) nativeFunc {
	return func(call goja.FunctionCall) goja.Value {
		w.checkpoint()
		call.This = w.receiverString(call.This, "String.prototype method")
		return orig(call)
	}
}

// receiverString converts an object receiver with ToString and checks the string's length;
// undefined and null pass through for the original to reject.
func (w *worker) receiverString(this goja.Value, fn string) goja.Value {
	if this == nil || goja.IsUndefined(this) || goja.IsNull(this) {
		return this
	}
	s := w.str(this)
	w.checkChars(int64(s.Length()), fn)
	return s
}

// repeatGuard bounds String.prototype.repeat by the result's length.
func (w *worker) repeatGuard(orig nativeFunc) nativeFunc {
	return func(call goja.FunctionCall) goja.Value {
		w.checkpoint()
		call.This = w.receiverString(call.This, "repeat")
		count := call.Argument(0).ToNumber()
		if s, ok := call.This.(goja.String); ok {
			if f := count.ToFloat(); f > 0 && !math.IsInf(f, 1) && s.Length() > 0 {
				w.checkChars(int64(math.Min(f*float64(s.Length()), math.MaxInt64/2)), "repeat")
			}
		}
		call.Arguments = []goja.Value{count}
		out := orig(call)
		w.chargeResult(out, "String.prototype.repeat")
		return out
	}
}

// padGuard bounds padStart and padEnd by their target length.
func (w *worker) padGuard(orig nativeFunc) nativeFunc {
	return func(call goja.FunctionCall) goja.Value {
		w.checkpoint()
		call.This = w.receiverString(call.This, "pad")
		target := call.Argument(0).ToNumber()
		w.checkChars(toLength(target), "pad")
		call.Arguments = append([]goja.Value{target}, call.Arguments[min(1, len(call.Arguments)):]...)
		out := orig(call)
		w.chargeResult(out, "String.prototype.padStart/padEnd")
		return out
	}
}

// stringConcatGuard bounds String.prototype.concat by the sum of its parts.
func (w *worker) stringConcatGuard(orig nativeFunc) nativeFunc {
	return func(call goja.FunctionCall) goja.Value {
		w.checkpoint()
		call.This = w.receiverString(call.This, "concat")
		var total int64
		if s, ok := call.This.(goja.String); ok {
			total = int64(s.Length())
		}
		parts := make([]goja.Value, len(call.Arguments))
		for i, a := range call.Arguments {
			s := w.str(a)
			total += int64(s.Length())
			w.checkChars(total, "concat")
			parts[i] = s
		}
		call.Arguments = parts
		w.charge(stringCost(int(total)), "String.prototype.concat")
		return orig(call)
	}
}

// stringReplaceGuard bounds replace and replaceAll with a string pattern by what the
// replacements add. A RegExp pattern goes through RegExp.prototype[Symbol.replace], guarded on
// its own; any other object pattern's Symbol.replace is script code, and gets the replacement
// as given.
//
// A string pattern replaced by a string without "$" (the common case) needs no replacer: the
// result's length follows from a count of the pattern, so it is checked and charged first, and
// when all three strings are ASCII the result is built in Go (goja's own replaceAll of 500,000
// occurrences made 165 MiB of garbage for a 2 MiB result).
func (w *worker) stringReplaceGuard(all bool) func(nativeFunc) nativeFunc {
	return func(orig nativeFunc) nativeFunc {
		return func(call goja.FunctionCall) goja.Value {
			w.checkpoint()
			call.This = w.receiverString(call.This, "replace")
			subject, ok := call.This.(goja.String)
			if _, patternIsObject := call.Argument(0).(*goja.Object); !ok || patternIsObject {
				return orig(call)
			}
			if n, literal := w.literalReplacement(subject, call.Argument(0), call.Argument(1), all); literal {
				w.checkChars(n, "replace")
				w.charge(stringCost(int(n)), "String.prototype.replace")
				text, pattern, with := subject.String(), w.str(call.Argument(0)).String(), w.str(call.Argument(1)).String()
				if !isASCII(text) || !isASCII(pattern) || !isASCII(with) {
					return orig(call)
				}
				if all {
					return w.vm.ToValue(strings.ReplaceAll(text, pattern, with))
				}
				return w.vm.ToValue(strings.Replace(text, pattern, with, 1))
			}
			call.Arguments = []goja.Value{call.Argument(0), w.boundedReplacer(subject.Length(), call.Argument(1))}
			out := orig(call)
			w.chargeResult(out, "String.prototype.replace")
			return out
		}
	}
}

// isASCII reports whether s is all ASCII: goja keeps such a string as its Go bytes, so a Go
// string function computes exactly what the JavaScript one would.
func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// literalReplacement is the length of subject with pattern replaced by replacement (once, or
// everywhere when all is set), when both are strings and the replacement has no "$" pattern;
// literal is false otherwise. The count reads the strings as UTF-8, which finds the same
// occurrences except around a lone surrogate (an estimate then; the cap still applies).
func (w *worker) literalReplacement(subject goja.String, pattern, replacement goja.Value, all bool) (n int64, literal bool) {
	p, ok := pattern.(goja.String)
	r, isString := replacement.(goja.String)
	if !ok || !isString {
		return 0, false
	}
	text := r.String()
	if strings.Contains(text, "$") {
		return 0, false
	}
	var count int64
	switch {
	case p.Length() == 0 && all:
		count = int64(subject.Length()) + 1
	case p.Length() == 0:
		count = 1
	default:
		count = int64(strings.Count(subject.String(), p.String()))
		if !all {
			count = min(count, 1)
		}
	}
	return int64(subject.Length()) + count*int64(r.Length()-p.Length()), true
}

// regexpReplaceGuard is stringReplaceGuard for RegExp.prototype[Symbol.replace](string, replacement).
func (w *worker) regexpReplaceGuard(orig nativeFunc) nativeFunc {
	return func(call goja.FunctionCall) goja.Value {
		w.checkpoint()
		subject := w.str(call.Argument(0))
		w.checkChars(int64(subject.Length()), "replace")
		call.Arguments = []goja.Value{subject, w.boundedReplacer(subject.Length(), call.Argument(1))}
		out := w.timedRegexp(orig, call)
		w.chargeResult(out, "RegExp.prototype[Symbol.replace]")
		return out
	}
}

// subjectGuard refuses a RegExp method's subject string over the cap, and bounds its time.
func (w *worker) subjectGuard(orig nativeFunc) nativeFunc {
	return func(call goja.FunctionCall) goja.Value {
		w.checkpoint()
		subject := w.str(call.Argument(0))
		w.checkChars(int64(subject.Length()), "RegExp method")
		args := append([]goja.Value{subject}, call.Arguments[min(1, len(call.Arguments)):]...)
		call.Arguments = args
		return w.timedRegexp(orig, call)
	}
}

// timedRegexp runs a RegExp operation and fails the call if it used regexpStepLimit of the call
// thread's CPU time, or else ran past regexpWallLimit (then regexp2 may have given up on a match
// and reported none). The CPU limit is checked first: it is what decides on any machine.
func (w *worker) timedRegexp(orig nativeFunc, call goja.FunctionCall) goja.Value {
	started := time.Now()
	cpuStarted, _ := w.clock.elapsed()
	out := orig(call)
	cpuNow, _ := w.clock.elapsed()
	switch {
	case time.Duration(cpuNow-cpuStarted) >= regexpStepLimit:
		w.interrupt(nil, errRegexpLimit)
		w.checkpoint()
	case time.Since(started) >= regexpWallLimit:
		w.interrupt(nil, errRegexpWaited)
		w.checkpoint()
	}
	return out
}

// boundedReplacer turns a replacement (a function, or a template with $-patterns) into a
// function that computes the same text and throws once the replacements would grow the result
// past the cap.
func (w *worker) boundedReplacer(subjectLength int, replacement goja.Value) goja.Value {
	total := int64(subjectLength)
	account := func(s goja.String) goja.String {
		total += int64(s.Length())
		w.checkChars(total, "replace")
		return s
	}
	if fn, ok := goja.AssertFunction(replacement); ok {
		return w.vm.ToValue(func(call goja.FunctionCall) goja.Value {
			w.checkpoint()
			v, err := fn(goja.Undefined(), call.Arguments...)
			w.must(err)
			return account(w.str(v))
		})
	}
	template := w.str(replacement)
	return w.vm.ToValue(func(call goja.FunctionCall) goja.Value {
		w.checkpoint()
		return account(w.substitute(template, call.Arguments))
	})
}

// stringRaw reimplements String.raw with the cap on its result.
func (w *worker) stringRaw(call goja.FunctionCall) goja.Value {
	raw := call.Argument(0).ToObject(w.vm).Get("raw")
	if raw == nil {
		raw = goja.Undefined()
	}
	segments := raw.ToObject(w.vm)
	n := w.lengthOf(segments, "String.raw")
	substitutions := call.Arguments[min(1, len(call.Arguments)):]
	var b goja.StringBuilder
	var total int64
	add := func(s goja.String) {
		total += int64(s.Length())
		w.checkChars(total, "String.raw")
		w.charge(costChar*int64(s.Length()), "String.raw")
		b.WriteString(s)
	}
	for i := int64(0); i < n; i++ {
		w.checkpoint()
		add(w.str(segments.Get(index(i))))
		if i+1 < n && i < int64(len(substitutions)) {
			add(w.str(substitutions[i]))
		}
	}
	return b.String()
}

// arrayReceiverGuard refuses a receiver array-like longer than the cap.
func (w *worker) arrayReceiverGuard(orig nativeFunc) nativeFunc {
	return func(call goja.FunctionCall) goja.Value {
		w.checkpoint()
		w.lengthOf(call.This.ToObject(w.vm), "Array.prototype method")
		return orig(call)
	}
}

// sortGuard makes a sort without a comparator interruptible: goja's default order is a Go
// comparison inside sort.Stable (O(n log² n) of them; 25 s for 4 million numbers), so the guard
// passes a native comparator with the same order (undefined is placed last by goja before any
// comparator runs; the rest compare as strings, by UTF-16 code units) that checks the interrupt.
func (w *worker) sortGuard(orig nativeFunc) nativeFunc {
	guarded := w.arrayReceiverGuard(orig)
	return func(call goja.FunctionCall) goja.Value {
		if goja.IsUndefined(call.Argument(0)) {
			call.Arguments = []goja.Value{w.defaultOrder}
		}
		return guarded(call)
	}
}

// compareAsStrings is the default sort order as a comparator (see sortGuard).
func (w *worker) compareAsStrings(call goja.FunctionCall) goja.Value {
	w.checkpoint()
	return w.vm.ToValue(w.str(call.Argument(0)).CompareTo(w.str(call.Argument(1))))
}

// argumentLengthGuard refuses an array-like argument (at position at) longer than the cap:
// Array.from's source, apply's argument list.
func (w *worker) argumentLengthGuard(at int) func(nativeFunc) nativeFunc {
	return func(orig nativeFunc) nativeFunc {
		return func(call goja.FunctionCall) goja.Value {
			w.checkpoint()
			switch v := call.Argument(at).(type) {
			case *goja.Object:
				w.charge(costSlot*w.lengthOf(v, "argument list"), "argument list")
			case goja.String:
				w.checkChars(int64(v.Length()), "argument list")
			}
			return orig(call)
		}
	}
}

// stringArgumentsGuard refuses a string argument (or String object) over the cap, for the
// built-ins whose work or output grows with a string's length (Object.keys of a string, the URI
// encoders).
func (w *worker) stringArgumentsGuard(orig nativeFunc) nativeFunc {
	return func(call goja.FunctionCall) goja.Value {
		w.checkpoint()
		for _, a := range call.Arguments {
			switch v := a.(type) {
			case goja.String:
				w.checkChars(int64(v.Length()), "string argument")
			case *goja.Object:
				if v.ClassName() == "String" {
					w.checkChars(toLength(v.Get("length")), "string argument")
				}
			}
		}
		return orig(call)
	}
}

// arrayConcatGuard bounds Array.prototype.concat by the sum of its parts.
func (w *worker) arrayConcatGuard(orig nativeFunc) nativeFunc {
	return func(call goja.FunctionCall) goja.Value {
		w.checkpoint()
		total := w.lengthOf(call.This.ToObject(w.vm), "concat")
		for _, a := range call.Arguments {
			if arr, ok := isArray(a); ok {
				total += w.lengthOf(arr, "concat")
			} else {
				total++
			}
			w.checkElements(total, "concat")
		}
		w.charge(costArray+costSlot*total, "Array.prototype.concat")
		return orig(call)
	}
}
