package scripting

import (
	"math"

	"github.com/dop251/goja"
)

// This file holds the guarded built-ins that walk nested values: Array.prototype.join,
// toLocaleString, flat and flatMap (reimplemented: their cost depends on what the elements
// render to, which only the walk itself learns), JSON.parse and JSON.stringify (wrapped), and
// GetSubstitution for the bounded replace.

// checkEvery is how many elements a reimplemented loop handles between checkpoints.
const checkEvery = 1024

// arrayJoin is Array.prototype.join, with the cap on its result, on the nesting of arrays
// joining arrays, and the usual "" for a cycle.
func (w *worker) arrayJoin(call goja.FunctionCall) goja.Value {
	o := call.This.ToObject(w.vm)
	n := w.lengthOf(o, "join")
	sep := w.vm.ToValue(",").(goja.String)
	if arg := call.Argument(0); !goja.IsUndefined(arg) {
		sep = w.str(arg)
	}
	return w.joinElements(o, n, sep, "join", w.str)
}

// arrayToLocaleString is Array.prototype.toLocaleString, bounded like join.
func (w *worker) arrayToLocaleString(call goja.FunctionCall) goja.Value {
	o := call.This.ToObject(w.vm)
	n := w.lengthOf(o, "toLocaleString")
	return w.joinElements(o, n, w.vm.ToValue(",").(goja.String), "toLocaleString", func(el goja.Value) goja.String {
		method, ok := goja.AssertFunction(el.ToObject(w.vm).Get("toLocaleString"))
		if !ok {
			panic(w.jsError(w.typeErrorCtor, "toLocaleString: an element's toLocaleString is not a function"))
		}
		v, err := method(el)
		w.must(err)
		return w.str(v)
	})
}

// joinElements renders the n elements of o (undefined and null as "") separated by sep.
func (w *worker) joinElements(o *goja.Object, n int64, sep goja.String, fn string, render func(goja.Value) goja.String) goja.Value {
	for _, outer := range w.nested {
		if outer == o {
			return w.vm.ToValue("") // a cycle: what V8 and goja answer
		}
	}
	if len(w.nested) >= maxNesting {
		panic(w.overLimit("%s: arrays nested deeper than %d levels", fn, maxNesting))
	}
	w.nested = append(w.nested, o)
	defer func() { w.nested = w.nested[:len(w.nested)-1] }()

	var b goja.StringBuilder
	var total int64
	for i := int64(0); i < n; i++ {
		if i%checkEvery == 0 {
			w.checkpoint()
		}
		if i > 0 {
			total += int64(sep.Length())
			w.checkChars(total, fn)
			b.WriteString(sep)
		}
		el := o.Get(index(i))
		if el == nil || goja.IsUndefined(el) || goja.IsNull(el) {
			continue
		}
		s := render(el)
		total += int64(s.Length())
		w.checkChars(total, fn)
		b.WriteString(s)
	}
	out := b.String()
	w.chargeResult(out, "Array.prototype."+fn)
	return out
}

// arrayFlat is Array.prototype.flat(depth), bounded in nesting and in the result's length.
func (w *worker) arrayFlat(call goja.FunctionCall) goja.Value {
	o := call.This.ToObject(w.vm)
	n := w.lengthOf(o, "flat")
	depth := 1.0
	if arg := call.Argument(0); !goja.IsUndefined(arg) {
		if depth = arg.ToFloat(); math.IsNaN(depth) {
			depth = 0
		}
	}
	var out elements
	w.flatten(&out, o, n, depth, 0, "flat")
	return w.vm.NewArray(out.all()...)
}

// elements accumulates a result array in chunks of growing size, so building millions of
// elements never copies a huge slice over and over as append would.
type elements struct {
	full  [][]any
	chunk []any
	n     int
}

// maxChunk bounds the chunks of elements.
const maxChunk = 1 << 16

// add appends v.
func (e *elements) add(v any) {
	if len(e.chunk) == cap(e.chunk) {
		if e.chunk != nil {
			e.full = append(e.full, e.chunk)
		}
		e.chunk = make([]any, 0, min(max(16, 2*cap(e.chunk)), maxChunk))
	}
	e.chunk = append(e.chunk, v)
	e.n++
}

// all returns the elements in order, in one slice of the exact size.
func (e *elements) all() []any {
	out := make([]any, 0, e.n)
	for _, c := range e.full {
		out = append(out, c...)
	}
	return append(out, e.chunk...)
}

// flatten appends the elements of src, descending into arrays while depth lasts; fn names the
// built-in in errors.
func (w *worker) flatten(out *elements, src *goja.Object, n int64, depth float64, level int, fn string) {
	for i := int64(0); i < n; i++ {
		if i%checkEvery == 0 {
			w.checkpoint()
		}
		el := src.Get(index(i))
		if el == nil {
			continue // a hole
		}
		if inner, ok := isArray(el); ok && depth >= 1 {
			if level+1 > maxNesting {
				panic(w.overLimit("%s: arrays nested deeper than %d levels", fn, maxNesting))
			}
			w.flatten(out, inner, w.lengthOf(inner, fn), depth-1, level+1, fn)
			continue
		}
		out.add(el)
		w.checkElements(int64(out.n), fn)
		w.charge(costSlot, "Array.prototype."+fn)
	}
}

// arrayFlatMap is Array.prototype.flatMap, bounded in the result's length.
func (w *worker) arrayFlatMap(call goja.FunctionCall) goja.Value {
	o := call.This.ToObject(w.vm)
	n := w.lengthOf(o, "flatMap")
	mapper, ok := goja.AssertFunction(call.Argument(0))
	if !ok {
		panic(w.jsError(w.typeErrorCtor, "flatMap: the mapper is not a function"))
	}
	var out elements
	for i := int64(0); i < n; i++ {
		el := o.Get(index(i))
		if el == nil {
			continue
		}
		mapped, err := mapper(call.Argument(1), el, w.vm.ToValue(i), o)
		w.must(err)
		if inner, ok := isArray(mapped); ok {
			w.flatten(&out, inner, w.lengthOf(inner, "flatMap"), 0, 1, "flatMap")
			continue
		}
		out.add(mapped)
		w.checkElements(int64(out.n), "flatMap")
		w.charge(costSlot, "Array.prototype.flatMap")
	}
	return w.vm.NewArray(out.all()...)
}

// jsonParseGuard bounds JSON.parse by the text's length and nesting (goja parses recursively).
func (w *worker) jsonParseGuard(orig nativeFunc) nativeFunc {
	return func(call goja.FunctionCall) goja.Value {
		w.checkpoint()
		text := w.str(call.Argument(0))
		w.checkChars(int64(text.Length()), "JSON.parse")
		shape := jsonShapeOf(text.String())
		if shape.depth > maxNesting {
			panic(w.jsError(w.syntaxErrorCtor, "JSON.parse: the text nests deeper than 1000 levels"))
		}
		w.charge(shape.cost(), "JSON.parse")
		call.Arguments = append([]goja.Value{text}, call.Arguments[min(1, len(call.Arguments)):]...)
		return orig(call)
	}
}

// jsonShape is what JSON.parse of a text would build, read off the text in one pass before
// parsing it: its deepest nesting, and how many objects, arrays, members (the commas and the
// first member of every non-empty container) and strings it holds, and their characters. A text
// that is not JSON gets a shape too; the parse then fails without building it.
type jsonShape struct {
	depth                             int
	objects, arrays, members, strings int64
	chars                             int64
}

// cost is what the parse builds, by the budget's costs: an upper bound for the characters of
// strings (an escape such as \n counts twice).
func (s jsonShape) cost() int64 {
	return costObject*s.objects + costArray*s.arrays + costProperty*s.members +
		costString*s.strings + costChar*s.chars
}

// jsonShapeOf scans a JSON text for its shape (strings skipped but counted).
func jsonShapeOf(text string) jsonShape {
	var s jsonShape
	depth := 0
	inString, escaped, empty := false, false, false
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case inString && escaped:
			escaped = false
			s.chars++
		case inString && c == '\\':
			escaped = true
		case inString && c == '"':
			inString = false
		case inString:
			s.chars++
		case c == '"':
			inString = true
			s.strings++
		case c == '[' || c == '{':
			if c == '[' {
				s.arrays++
			} else {
				s.objects++
			}
			depth++
			s.depth = max(s.depth, depth)
			empty = true
			continue
		case c == ']' || c == '}':
			depth--
			empty = false
			continue
		case c == ',':
			s.members++
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			continue
		}
		if empty {
			s.members++ // the first member of the container just opened
			empty = false
		}
	}
	return s
}

// jsonStringifyGuard runs JSON.stringify with a replacer of its own that sees every value the
// serialization visits: it chains the script's replacer (a function, or a property list whose
// filtering it applies — keys then come in the object's order rather than the list's), checks
// for interrupts, and throws past maxNesting levels or once the output would exceed the cap.
// The replacer is one function object per runtime (w.visit) following w.tracker, which nests
// when a replacer or toJSON calls JSON.stringify again.
func (w *worker) jsonStringifyGuard(orig nativeFunc) nativeFunc {
	return func(call goja.FunctionCall) goja.Value {
		w.checkpoint()
		t := &stringifyTracker{w: w, indent: w.indentWidth(call.Argument(2))}
		switch r := call.Argument(1).(type) {
		case *goja.Object:
			if fn, ok := goja.AssertFunction(r); ok {
				t.user = fn
			} else if r.ClassName() == "Array" {
				t.allowed = w.propertyList(r)
			}
		}
		outer := w.tracker
		w.tracker = t
		defer func() { w.tracker = outer }()
		call.Arguments = []goja.Value{call.Argument(0), w.visit, call.Argument(2)}
		out := orig(call)
		w.chargeResult(out, "JSON.stringify")
		return out
	}
}

// stringifyTracker follows one JSON.stringify: stack holds the objects being serialized,
// outermost first (the holder of each visit is on it), size a lower bound of the output.
type stringifyTracker struct {
	w       *worker
	user    goja.Callable
	allowed map[string]bool
	indent  int
	stack   []*goja.Object
	size    int64
}

// visit is the replacer JSON.stringify calls for every key and value, with the holder as this.
func (t *stringifyTracker) visit(call goja.FunctionCall) goja.Value {
	w := t.w
	w.checkpoint()
	holder, _ := call.This.(*goja.Object)
	key, value := w.str(call.Argument(0)), call.Argument(1)
	for len(t.stack) > 0 && t.stack[len(t.stack)-1] != holder {
		t.stack = t.stack[:len(t.stack)-1]
	}
	_, inArray := isArray(holder)
	if t.allowed != nil && len(t.stack) > 0 && !inArray && !t.allowed[key.String()] {
		return goja.Undefined()
	}
	if t.user != nil {
		v, err := t.user(holder, key, value)
		w.must(err)
		value = v
	}
	// A lower bound of what this visit writes: a comma, the key in quotes and a colon outside
	// arrays, the indentation, then at least one character of value (two quotes around a string,
	// two brackets around an object).
	t.size++
	if !inArray {
		t.size += int64(key.Length() + 3)
	}
	if t.indent > 0 {
		t.size += int64(1 + t.indent*len(t.stack))
	}
	switch v := value.(type) {
	case goja.String:
		t.size += int64(v.Length() + 2)
	case *goja.Object:
		if _, callable := goja.AssertFunction(v); !callable {
			t.size += 2
			t.stack = append(t.stack, v)
			if len(t.stack) > maxNesting {
				panic(w.overLimit("JSON.stringify: the value nests deeper than %d levels", maxNesting))
			}
		}
	default:
		t.size++
	}
	w.checkChars(t.size, "JSON.stringify")
	return value
}

// propertyList reads a replacer array into the set of property names it allows (strings and
// numbers, as JSON.stringify takes them).
func (w *worker) propertyList(list *goja.Object) map[string]bool {
	n := w.lengthOf(list, "JSON.stringify")
	allowed := make(map[string]bool, n)
	for i := int64(0); i < n; i++ {
		switch v := list.Get(index(i)); {
		case v == nil:
		case goja.IsString(v) || goja.IsNumber(v):
			allowed[v.String()] = true
		case isBoxed(v, "String") || isBoxed(v, "Number"):
			allowed[w.str(v).String()] = true
		}
	}
	return allowed
}

// isBoxed reports whether v is a String or Number wrapper object of the given class.
func isBoxed(v goja.Value, class string) bool {
	o, ok := v.(*goja.Object)
	return ok && o.ClassName() == class
}

// indentWidth is how many characters JSON.stringify's space argument indents by (0 to 10).
func (w *worker) indentWidth(space goja.Value) int {
	switch {
	case goja.IsNumber(space) || isBoxed(space, "Number"):
		return int(math.Max(0, math.Min(10, space.ToFloat())))
	case goja.IsString(space) || isBoxed(space, "String"):
		return min(10, w.str(space).Length())
	}
	return 0
}

// substitute is ECMAScript's GetSubstitution: the text a replacement template stands for, given
// the arguments a replace callback receives (matched, captures..., position, string[, groups]).
func (w *worker) substitute(template goja.String, args []goja.Value) goja.String {
	n := len(args)
	var groups *goja.Object
	if n > 0 {
		if g, ok := args[n-1].(*goja.Object); ok {
			groups, n = g, n-1
		}
	}
	if n < 3 {
		return template
	}
	matched, str := w.str(args[0]), w.str(args[n-1])
	pos := int(min(max(args[n-2].ToInteger(), 0), int64(str.Length())))
	captures := args[1 : n-2]
	var b goja.StringBuilder
	length, last := template.Length(), 0
	for i := 0; i+1 < length; i++ {
		if template.CharAt(i) != '$' {
			continue
		}
		var piece goja.Value
		consumed := 2
		switch c := template.CharAt(i + 1); {
		case c == '$':
			piece = template.Substring(i, i+1)
		case c == '&':
			piece = matched
		case c == '`':
			piece = str.Substring(0, pos)
		case c == '\'':
			piece = str.Substring(min(pos+matched.Length(), str.Length()), str.Length())
		case '0' <= c && c <= '9':
			k, width := captureIndex(template, i+1, len(captures))
			if width == 0 {
				continue
			}
			piece, consumed = captures[k-1], 1+width
		case c == '<' && groups != nil:
			end := -1
			for j := i + 2; j < length; j++ {
				if template.CharAt(j) == '>' {
					end = j
					break
				}
			}
			if end < 0 {
				continue
			}
			piece, consumed = groups.Get(template.Substring(i+2, end).String()), end-i+1
		default:
			continue
		}
		b.WriteSubstring(template, last, i)
		if piece != nil && !goja.IsUndefined(piece) {
			b.WriteString(w.str(piece))
		}
		last = i + consumed
		i = last - 1
	}
	b.WriteSubstring(template, last, length)
	return b.String()
}

// captureIndex reads the capture number after a '$' at template[at:]: two digits when they name
// an existing capture, else one; width 0 when neither does (the '$' stays literal).
func captureIndex(template goja.String, at, captures int) (k, width int) {
	d1 := int(template.CharAt(at) - '0')
	if at+1 < template.Length() {
		if c := template.CharAt(at + 1); '0' <= c && c <= '9' {
			if nn := d1*10 + int(c-'0'); nn >= 1 && nn <= captures {
				return nn, 2
			}
		}
	}
	if d1 >= 1 && d1 <= captures {
		return d1, 1
	}
	return 0, 0
}
