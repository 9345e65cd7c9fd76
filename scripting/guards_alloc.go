package scripting

import (
	"strings"

	"github.com/dop251/goja"
)

// This file charges the memory budget (memory.go) on the built-ins' growth paths. The rule:
// what a built-in returns is charged after it returns, since it cannot be much larger than the
// input the script already paid for (a string method's result, a mapped array) and the caps
// bound one step; where one step can build far more than its input cost (a split or a match
// into millions of pieces, JSON.parse of millions of empty objects, the keys of a filled array,
// fill itself, an array-like's length turned into elements) the cost is charged before the step,
// exactly when it can be known (a count of the separators) and as an upper bound otherwise.

// arrayMethodGuard is the guard of an Array.prototype method without a guard of its own: the
// receiver's length is capped (arrayReceiverGuard) and what the method builds is charged.
func (w *worker) arrayMethodGuard(name string) func(nativeFunc) nativeFunc {
	fn := "Array.prototype." + name
	return func(orig nativeFunc) nativeFunc {
		guarded := w.arrayReceiverGuard(orig)
		switch name {
		case "push", "unshift":
			return func(call goja.FunctionCall) goja.Value {
				w.charge(costSlot*int64(len(call.Arguments)), fn)
				return guarded(call)
			}
		case "fill":
			return func(call goja.FunctionCall) goja.Value {
				n := w.lengthOf(call.This.ToObject(w.vm), "Array.prototype method")
				start, end := relativeIndex(call.Argument(1), n, 0), relativeIndex(call.Argument(2), n, n)
				w.charge(costSlot*max(0, end-start), fn)
				return guarded(call)
			}
		case "toReversed", "toSorted", "toSpliced", "with", "slice":
			// These copy the receiver and materialize its holes: new Array(4e6).toReversed() is
			// four million undefineds.
			return func(call goja.FunctionCall) goja.Value {
				n := w.lengthOf(call.This.ToObject(w.vm), "Array.prototype method")
				if name == "slice" {
					n = max(0, relativeIndex(call.Argument(1), n, n)-relativeIndex(call.Argument(0), n, 0))
				}
				w.charge(costArray+costSlot*(n+int64(len(call.Arguments))), fn)
				return guarded(call)
			}
		case "map", "filter", "splice":
			return func(call goja.FunctionCall) goja.Value {
				if name == "splice" {
					w.charge(costSlot*int64(max(0, len(call.Arguments)-2)), fn)
				}
				out := guarded(call)
				w.chargeResult(out, fn)
				return out
			}
		}
		return guarded
	}
}

// relativeIndex is a relative index argument of an array method (negative counts from the end),
// clamped to [0, n]; def when the argument is undefined.
func relativeIndex(arg goja.Value, n, def int64) int64 {
	if arg == nil || goja.IsUndefined(arg) {
		return def
	}
	f := arg.ToFloat()
	switch {
	case f != f: // NaN
		return 0
	case f < 0:
		return max(0, n+int64(max(f, -float64(n))))
	}
	return min(n, int64(min(f, float64(n))))
}

// stringMethodGuard is the guard of a String.prototype method without a guard of its own: the
// receiver's length is capped and a string result is charged (its characters only: a method
// returning one character costs two bytes, so a parser walking a text with charAt stays cheap).
func (w *worker) stringMethodGuard(name string) func(nativeFunc) nativeFunc {
	fn := "String.prototype." + name
	return func(orig nativeFunc) nativeFunc {
		guarded := w.stringReceiverGuard(orig)
		if name == "split" {
			return func(call goja.FunctionCall) goja.Value { return w.split(guarded, call) }
		}
		return func(call goja.FunctionCall) goja.Value {
			out := guarded(call)
			if s, ok := out.(goja.String); ok {
				w.charge(costChar*int64(s.Length()), fn)
			}
			return out
		}
	}
}

// costPiece is what one element of a split or match result costs: its slot and its string.
const costPiece = costSlot + costString

// split is String.prototype.split by a string (a RegExp separator goes to its Symbol.split,
// guarded on its own): the pieces are counted first (strings.Count, linear), charged, and only
// then built. The count reads the strings as UTF-8, which splits them at the same places except
// around a lone surrogate; the charge is corrected to the real result's length afterwards.
func (w *worker) split(guarded nativeFunc, call goja.FunctionCall) goja.Value {
	sep := call.Argument(0)
	if _, isObject := sep.(*goja.Object); isObject || goja.IsUndefined(sep) || goja.IsNull(sep) {
		return guarded(call)
	}
	subject := w.str(call.This)
	separator := w.str(sep)
	var pieces int64
	switch {
	case subject.Length() == 0:
		pieces = 1
	case separator.Length() == 0:
		pieces = int64(subject.Length())
	default:
		pieces = int64(strings.Count(subject.String(), separator.String())) + 1
	}
	if limit := call.Argument(1); !goja.IsUndefined(limit) {
		pieces = min(pieces, int64(uint32(limit.ToInteger())))
	}
	const fn = "String.prototype.split"
	estimate := costArray + costPiece*pieces
	w.charge(estimate, fn)
	out := guarded(call)
	w.charge(w.piecesCost(out)-estimate, fn)
	return out
}

// piecesCost is what a split or match result costs (nothing for null, no match).
func (w *worker) piecesCost(v goja.Value) int64 {
	o, ok := v.(*goja.Object)
	if !ok {
		return 0
	}
	return costArray + costPiece*toLength(o.Get("length"))
}

// regexpPiecesGuard guards RegExp.prototype[Symbol.match] and [Symbol.split], whose one step can
// turn a string into as many pieces as it has characters. When even that many fit the budget,
// the step runs and its result is charged. Otherwise it is built only as far as the budget
// allows: a split is asked for one piece more than fits (its limit argument), and a global
// match is made one exec at a time, each piece charged as it is added; either way a result that
// does not fit fails the call before it is built past the budget. A match without the g flag
// returns one match, charged like any result.
func (w *worker) regexpPiecesGuard(split bool) func(nativeFunc) nativeFunc {
	fn := "RegExp.prototype[Symbol.match]"
	if split {
		fn = "RegExp.prototype[Symbol.split]"
	}
	return func(orig nativeFunc) nativeFunc {
		guarded := w.subjectGuard(orig)
		return func(call goja.FunctionCall) goja.Value {
			rx, ok := call.This.(*goja.Object)
			if !ok || (!split && !rx.Get("global").ToBoolean()) {
				return guarded(call)
			}
			subject := w.str(call.Argument(0))
			if w.fits(costArray + costPiece*int64(subject.Length()+1)) {
				out := guarded(call)
				w.charge(w.piecesCost(out), fn)
				return out
			}
			if !split {
				return w.matchWithinBudget(rx, subject, fn)
			}
			fit := max(0, (w.limits.MaxMemory-w.used-costArray)/costPiece)
			if limit := call.Argument(1); goja.IsUndefined(limit) || int64(uint32(limit.ToInteger())) > fit {
				call.Arguments = []goja.Value{subject, w.vm.ToValue(fit + 1)}
			}
			out := guarded(call)
			w.charge(w.piecesCost(out), fn) // one piece past fit is over the budget
			return out
		}
	}
}

// matchWithinBudget is RegExp.prototype[Symbol.match] of a global rx, as the specification
// writes it (exec until it fails, an empty match advancing lastIndex), charging each piece as it
// is added, so a match that does not fit fails when it reaches the budget.
func (w *worker) matchWithinBudget(rx *goja.Object, subject goja.String, fn string) goja.Value {
	exec, ok := goja.AssertFunction(rx.Get("exec"))
	if !ok {
		panic(w.jsError(w.typeErrorCtor, fn+": exec is not a function"))
	}
	unicode := rx.Get("unicode").ToBoolean()
	w.must(rx.Set("lastIndex", 0))
	w.charge(costArray, fn)
	var pieces []any
	for {
		w.checkpoint()
		m, err := exec(rx, subject)
		w.must(err)
		match, ok := m.(*goja.Object)
		if !ok {
			break
		}
		piece := w.str(match.Get("0"))
		w.charge(costPiece, fn)
		pieces = append(pieces, piece)
		if piece.Length() == 0 {
			w.must(rx.Set("lastIndex", advance(subject, toLength(rx.Get("lastIndex")), unicode)))
		}
	}
	if len(pieces) == 0 {
		return goja.Null()
	}
	return w.vm.NewArray(pieces...)
}

// advance is the specification's AdvanceStringIndex: past one code unit, or past a surrogate
// pair when the pattern is unicode.
func advance(s goja.String, i int64, unicode bool) int64 {
	n := int64(s.Length())
	if unicode && i+1 < n && isHighSurrogate(s.CharAt(int(i))) && isLowSurrogate(s.CharAt(int(i+1))) {
		return i + 2
	}
	return i + 1
}

// isHighSurrogate reports whether c leads a UTF-16 surrogate pair.
func isHighSurrogate(c uint16) bool { return c >= 0xD800 && c <= 0xDBFF }

// isLowSurrogate reports whether c ends a UTF-16 surrogate pair.
func isLowSurrogate(c uint16) bool { return c >= 0xDC00 && c <= 0xDFFF }

// collectionGuard charges a Map.prototype.set or Set.prototype.add that adds an entry (one that
// replaces a value costs nothing), reading the size before and after through size's own getter.
func (w *worker) collectionGuard(fn string, size nativeFunc) func(nativeFunc) nativeFunc {
	return func(orig nativeFunc) nativeFunc {
		return func(call goja.FunctionCall) goja.Value {
			w.checkpoint()
			before := size(goja.FunctionCall{This: call.This}).ToInteger()
			out := orig(call)
			if size(goja.FunctionCall{This: call.This}).ToInteger() > before {
				w.charge(costEntry, fn)
			}
			return out
		}
	}
}

// Per-key costs of the Object functions that list an object's properties.
const (
	costKey        = costSlot + costString                          // keys, getOwnPropertyNames, Reflect.ownKeys
	costPair       = costSlot + costArray + 2*costSlot + costString // entries: a [key, value] array
	costDescriptor = costSlot + costObject + costString             // getOwnPropertyDescriptors
	costProperty   = 96                                             // assign: a property of the target
)

// listingGuard guards an Object function that lists the properties of its arguments: for an
// array argument, whose length says how many elements it has, the listing is charged before it
// is built (Object.keys of a filled array of four million elements builds four million strings);
// for any other object, the result is charged after (its properties were paid for when they were
// made). String arguments stay capped (stringArgumentsGuard).
func (w *worker) listingGuard(fn string, perKey int64) func(nativeFunc) nativeFunc {
	return func(orig nativeFunc) nativeFunc {
		guarded := w.stringArgumentsGuard(orig)
		return func(call goja.FunctionCall) goja.Value {
			counted := false
			for i, a := range call.Arguments {
				if i == 0 && fn == "Object.assign" {
					continue // the target
				}
				if arr, ok := isArray(a); ok {
					w.charge(perKey*w.lengthOf(arr, fn), fn)
					counted = true
				}
			}
			out := guarded(call)
			if o, ok := out.(*goja.Object); ok && !counted && fn != "Object.assign" {
				if o.ClassName() == "Array" {
					w.charge(costArray+perKey*toLength(o.Get("length")), fn)
				} else {
					w.charge(costObject+perKey*int64(len(o.Keys())), fn)
				}
			}
			return out
		}
	}
}

// resultGuard charges what orig returns (String.raw, the URI functions, Array.from's elements
// beyond what argumentLengthGuard charged).
func (w *worker) resultGuard(fn string) func(nativeFunc) nativeFunc {
	return func(orig nativeFunc) nativeFunc {
		return func(call goja.FunctionCall) goja.Value {
			out := orig(call)
			w.chargeResult(out, fn)
			return out
		}
	}
}

// chained applies guards to orig innermost first.
func chained(guards ...func(nativeFunc) nativeFunc) func(nativeFunc) nativeFunc {
	return func(orig nativeFunc) nativeFunc {
		for _, g := range guards {
			orig = g(orig)
		}
		return orig
	}
}
