package scripting

import (
	"fmt"

	"github.com/dop251/goja"
)

// goja has no heap limit, so a call's memory is bounded in two ways (docs/scripting.md, "Memory"):
//
//   - the budget: every built-in and host function whose output grows with its input charges
//     what it builds to the call, by the fixed costs below, and the call fails once the count
//     passes Limits.MaxMemory. The count is deterministic (the same script and arguments charge
//     the same bytes on any machine), so it may decide a trace like any other result. It counts
//     what is built, garbage included: which of it is still alive only the garbage collector
//     knows, and its timing is not deterministic;
//   - the heap watch (heapwatch.go): what plain JavaScript allocates (object and array literals,
//     closures, an element assigned past an array's end, string concatenation) passes through no
//     built-in, so a sampler stops a call whose share of the process's heap growth passes
//     twice MaxMemory (at least 64 MiB). That threshold is above anything the budget lets
//     built-ins build, so the budget decides first wherever both could.
//
// The costs approximate what goja allocates on amd64, measured with the escape corpus
// (testdata/memory): they are part of the budget's meaning, so changing one changes which calls
// fail, and docs/scripting.md lists them.
const (
	// costSlot is one element of an array or of a Map or Set's order: a goja.Value (16 bytes)
	// and its share of the backing slice's spare capacity.
	costSlot = 32
	// costString is a string value apart from its characters: the boxed header each element of
	// a split or match result carries.
	costString = 32
	// costChar is one UTF-16 unit of a string a built-in builds. goja stores ASCII in one byte a
	// character and anything else in two; the budget charges two for both, so a count never
	// depends on a string's content beyond its length.
	costChar = 2
	// costObject is a plain object a built-in creates (a JSON.parse object, a match's groups).
	costObject = 192
	// costArray is an array object apart from its elements (a JSON.parse array, an entries pair).
	costArray = 512
	// costEntry is a Map or Set entry (key, value, order links and the hash slot).
	costEntry = 112
)

// memoryError is the interrupt of a call over its memory budget: the whole message (the
// budget's names the built-in) and the place in the script where the budget ran out (0 for the
// heap watch, whose place depends on timing).
type memoryError struct {
	message      string
	line, column int
}

// Error implements error.
func (e *memoryError) Error() string { return e.message }

// errHeapWatch is the interrupt the heap watch delivers. Its message carries no figure: what the
// sampler saw depends on timing, and the message reaches the trace.
var errHeapWatch = &memoryError{message: "the script's own JavaScript (objects, arrays, closures, string concatenation) grew the host's heap past twice its memory budget (max_memory); the heap watch stopped it"}

// sizeWords renders a byte count the way the config writes it ("64 MiB", "1536 KiB", "100 bytes").
func sizeWords(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// charge counts n bytes built by fn against the call's budget, and stops the call when the total
// passes MaxMemory: through the interrupt, so a script cannot catch it and keep allocating.
func (w *worker) charge(n int64, fn string) {
	w.used += n
	if w.used <= w.limits.MaxMemory {
		return
	}
	at := w.callerPosition()
	w.interrupt(nil, &memoryError{
		message: fmt.Sprintf("%s: the call's built-ins built more than its %s memory budget (max_memory in [scripting]); build less, or keep less of it",
			fn, sizeWords(w.limits.MaxMemory)),
		line: at.line, column: at.column,
	})
	w.checkpoint()
}

// fits reports whether n more bytes stay within the call's budget.
func (w *worker) fits(n int64) bool { return w.used+n <= w.limits.MaxMemory }

// stringCost is what a string of n UTF-16 units costs.
func stringCost(n int) int64 { return costString + costChar*int64(n) }

// chargeResult charges what a built-in returned: a string's characters, or an array's slots
// (elements that are themselves new strings or arrays are charged by the caller that knows).
func (w *worker) chargeResult(v goja.Value, fn string) {
	switch r := v.(type) {
	case goja.String:
		w.charge(stringCost(r.Length()), fn)
	case *goja.Object:
		if r.ClassName() == "Array" {
			w.charge(costArray+costSlot*toLength(r.Get("length")), fn)
		}
	}
}

// chargeHostString charges a string a host function hands to the script.
func (w *worker) chargeHostString(s string, fn string) {
	w.charge(stringCost(len(s)), fn)
}
