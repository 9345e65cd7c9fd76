package scripting

import (
	"bytes"
	"encoding/json"

	"github.com/dop251/goja"
	"github.com/valyala/fastjson"
)

// The arguments of a call reach run as the value JSON.parse would give, built in Go: goja's
// JSON.parse tokenizes with encoding/json's Decoder, which cost about 6 µs for a 30-byte
// document, more than the rest of a small call. encoding/json's Valid keeps the strictness of
// JSON.parse (fastjson alone accepts a few things JSON does not, such as nan), and a document
// escaping a UTF-16 surrogate (\uD800-\uDFFF, rare outside emoji) still goes through JSON.parse,
// whose handling of a lone surrogate differs from fastjson's.

// maxPooledArgBytes is the largest argument document whose parse buffers a pooled runtime keeps
// for its next call; a larger one is released at the end of the call.
const maxPooledArgBytes = 64 << 10

// argumentsValue converts the call's arguments into run's first parameter: an empty document is
// an empty object, anything else the value of the JSON text. Invalid JSON throws a SyntaxError
// into the call, as JSON.parse would.
func (w *worker) argumentsValue() goja.Value {
	doc := bytes.TrimSpace(w.args)
	if len(doc) == 0 {
		return w.vm.NewObject()
	}
	if !json.Valid(doc) {
		panic(w.jsError(w.syntaxErrorCtor, "the arguments are not valid JSON"))
	}
	if escapesSurrogate(doc) {
		parsed, err := w.jsonParse(goja.Undefined(), w.vm.ToValue(string(doc)))
		w.must(err)
		return parsed
	}
	parsed, err := w.parser.ParseBytes(doc)
	if err != nil { // json.Valid accepted it: fastjson's nesting cap (300 levels)
		panic(w.jsError(w.syntaxErrorCtor, "the arguments cannot be read: "+err.Error()))
	}
	value := w.jsValue(parsed)
	if len(doc) > maxPooledArgBytes {
		w.parser = fastjson.Parser{}
	}
	return value
}

// escapesSurrogate reports whether a JSON text contains a \u escape of a UTF-16 surrogate.
func escapesSurrogate(doc []byte) bool {
	for {
		i := bytes.Index(doc, []byte(`\u`))
		if i < 0 || i+2 >= len(doc) {
			return false
		}
		if c := doc[i+2]; c == 'd' || c == 'D' {
			if i+3 < len(doc) {
				switch doc[i+3] {
				case '8', '9', 'a', 'b', 'c', 'd', 'e', 'f', 'A', 'B', 'C', 'D', 'E', 'F':
					return true
				}
			}
		}
		doc = doc[i+2:]
	}
}

// argumentsFn names the arguments in a memory error: what they build counts against the call's
// budget like anything else it holds (a megabyte of empty objects is 350,000 objects).
const argumentsFn = "the call's arguments"

// jsValue builds the JavaScript value of a parsed JSON value. Object keys keep their order,
// and every key becomes an own data property (as JSON.parse's CreateDataProperty does: a key
// named __proto__ does not set the prototype, and a key shadowing a frozen built-in such as
// hasOwnProperty does not hit the override mistake).
func (w *worker) jsValue(v *fastjson.Value) goja.Value {
	switch v.Type() {
	case fastjson.TypeObject:
		obj := w.vm.NewObject()
		members, _ := v.Object()
		w.charge(costObject+costProperty*int64(members.Len()), argumentsFn)
		members.Visit(func(key []byte, member *fastjson.Value) {
			w.must(obj.DefineDataProperty(string(key), w.jsValue(member), goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_TRUE))
		})
		return obj
	case fastjson.TypeArray:
		items, _ := v.Array()
		w.charge(costArray+costSlot*int64(len(items)), argumentsFn)
		values := make([]any, len(items))
		for i, item := range items {
			values[i] = w.jsValue(item)
		}
		return w.vm.NewArray(values...)
	case fastjson.TypeString:
		text, _ := v.StringBytes()
		w.chargeHostString(string(text), argumentsFn)
		return w.vm.ToValue(string(text))
	case fastjson.TypeNumber:
		f, _ := v.Float64() // json.Valid accepted it; out of range is ±Inf, as in JavaScript
		return w.vm.ToValue(f)
	case fastjson.TypeTrue:
		return w.vm.ToValue(true)
	case fastjson.TypeFalse:
		return w.vm.ToValue(false)
	}
	return goja.Null()
}
