package models

import (
	"bytes"
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"sync"
)

// argNode is one compiled value of a scripted call's arguments. Exactly one form is set:
// raw (a constant subtree, marshalled once), text (a templated string), or children (an
// object or array containing at least one templated string).
type argNode struct {
	raw      []byte
	text     *textTemplate
	path     string   // key path, for render errors
	keys     [][]byte // object members' pre-marshalled `"key":`, sorted; nil for arrays
	children []argNode
}

// compiledArgs is a call's arguments: constant is shared by every call when nothing is
// templated; otherwise root is rendered per call.
type compiledArgs struct {
	constant json.RawMessage
	root     *argNode
}

// emptyArgs is what a call without arguments sends: tools expect a JSON object.
var emptyArgs = json.RawMessage(`{}`)

// compileArgs compiles a call's arguments; path prefixes error messages.
func compileArgs(path string, args map[string]any) (compiledArgs, error) {
	if len(args) == 0 {
		return compiledArgs{constant: emptyArgs}, nil
	}
	node, err := compileValue(path, reflect.ValueOf(args))
	if err != nil {
		return compiledArgs{}, err
	}
	if node.raw != nil {
		return compiledArgs{constant: node.raw}, nil
	}
	return compiledArgs{root: &node}, nil
}

var (
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
	jsonMarshalerType = reflect.TypeFor[json.Marshaler]()
)

// compileValue compiles one value. Objects and arrays whose members are all constant
// collapse into a single raw node, so only the templated spine is walked per call.
func compileValue(path string, v reflect.Value) (argNode, error) {
	if !v.IsValid() {
		return argNode{raw: []byte("null")}, nil
	}
	if v.Kind() == reflect.Interface {
		if v.IsNil() {
			return argNode{raw: []byte("null")}, nil
		}
		return compileValue(path, v.Elem())
	}
	t := v.Type()
	if t.Implements(jsonMarshalerType) || t.Implements(textMarshalerType) {
		return marshalLeaf(path, v)
	}
	switch v.Kind() {
	case reflect.String:
		tmpl, err := compileTemplate(v.String())
		if err != nil {
			return argNode{}, fmt.Errorf("%s: %w", path, err)
		}
		if tmpl.isConstant() {
			return marshalLeaf(path, v)
		}
		return argNode{text: &tmpl, path: path}, nil
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		return marshalLeaf(path, v)
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			return argNode{}, fmt.Errorf("%s: unsupported map key type %s (keys must be strings)", path, t.Key())
		}
		if v.IsNil() {
			return argNode{raw: []byte("null")}, nil
		}
		return compileObject(path, v)
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 || v.IsNil() {
			return marshalLeaf(path, v)
		}
		return compileArray(path, v)
	case reflect.Array:
		return compileArray(path, v)
	default:
		return argNode{}, fmt.Errorf("%s: unsupported argument type %s (use strings, numbers, booleans, tables and arrays)", path, t)
	}
}

// marshalLeaf pre-marshals a constant value with encoding/json.
func marshalLeaf(path string, v reflect.Value) (argNode, error) {
	raw, err := json.Marshal(v.Interface())
	if err != nil {
		return argNode{}, fmt.Errorf("%s: %w", path, err)
	}
	return argNode{raw: raw}, nil
}

func compileObject(path string, v reflect.Value) (argNode, error) {
	names := make([]string, 0, v.Len())
	for _, k := range v.MapKeys() {
		names = append(names, k.String())
	}
	slices.Sort(names)
	node := argNode{path: path, keys: make([][]byte, len(names)), children: make([]argNode, len(names))}
	templated := false
	for i, name := range names {
		key, err := json.Marshal(name)
		if err != nil {
			return argNode{}, fmt.Errorf("%s: key %q: %w", path, name, err)
		}
		node.keys[i] = append(key, ':')
		child, err := compileValue(path+"."+name, v.MapIndex(reflect.ValueOf(name).Convert(v.Type().Key())))
		if err != nil {
			return argNode{}, err
		}
		node.children[i] = child
		templated = templated || child.raw == nil
	}
	if !templated {
		return argNode{raw: node.appendConstant(nil)}, nil
	}
	return node, nil
}

func compileArray(path string, v reflect.Value) (argNode, error) {
	node := argNode{path: path, children: make([]argNode, v.Len())}
	templated := false
	for i := range v.Len() {
		child, err := compileValue(path+"["+strconv.Itoa(i)+"]", v.Index(i))
		if err != nil {
			return argNode{}, err
		}
		node.children[i] = child
		templated = templated || child.raw == nil
	}
	if !templated {
		return argNode{raw: node.appendConstant(nil)}, nil
	}
	return node, nil
}

// appendConstant joins the raw members of an object or array whose members are all raw.
func (n *argNode) appendConstant(dst []byte) []byte {
	open, closing := byte('['), byte(']')
	if n.keys != nil {
		open, closing = '{', '}'
	}
	dst = append(dst, open)
	for i := range n.children {
		if i > 0 {
			dst = append(dst, ',')
		}
		if n.keys != nil {
			dst = append(dst, n.keys[i]...)
		}
		dst = append(dst, n.children[i].raw...)
	}
	return append(dst, closing)
}

// renderScratch is the per-call working memory of argument rendering, pooled because
// one Scripted value serves many goroutines.
type renderScratch struct {
	json bytes.Buffer // the JSON document being built
	text bytes.Buffer // one templated string before quoting
}

var scratchPool = sync.Pool{New: func() any { return new(renderScratch) }}

// render appends the node's JSON encoding for d to sc.json.
func (n *argNode) render(sc *renderScratch, d *templateData) error {
	switch {
	case n.raw != nil:
		sc.json.Write(n.raw)
	case n.text != nil:
		sc.text.Reset()
		if err := n.text.render(&sc.text, d); err != nil {
			return fmt.Errorf("%s: %w", n.path, err)
		}
		appendJSONString(&sc.json, sc.text.Bytes())
	default:
		open, closing := byte('['), byte(']')
		if n.keys != nil {
			open, closing = '{', '}'
		}
		sc.json.WriteByte(open)
		for i := range n.children {
			if i > 0 {
				sc.json.WriteByte(',')
			}
			if n.keys != nil {
				sc.json.Write(n.keys[i])
			}
			if err := n.children[i].render(sc, d); err != nil {
				return err
			}
		}
		sc.json.WriteByte(closing)
	}
	return nil
}

// appendJSONString writes s as a JSON string exactly as encoding/json would (so rendered
// and constant strings encode alike). Printable ASCII that json leaves alone is copied
// directly; anything else goes through json.Marshal.
func appendJSONString(buf *bytes.Buffer, s []byte) {
	if isPlainJSON(s) {
		buf.WriteByte('"')
		buf.Write(s)
		buf.WriteByte('"')
		return
	}
	// Marshalling a string cannot fail: invalid UTF-8 becomes U+FFFD.
	quoted, _ := json.Marshal(string(s))
	buf.Write(quoted)
}

// isPlainJSON reports whether encoding/json would copy s verbatim between quotes.
func isPlainJSON(s []byte) bool {
	for _, c := range s {
		if c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}
