package recording

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// decodeLine decodes one line into v strictly, and says what is wrong in the recording's terms:
// the field (its key path, such as calls[1].args) and what it holds against what is valid. A key
// v does not have is an error listing the keys it has; a key written twice in one object (which
// Go's decoder would resolve by taking the last, and other readers by taking the first) is an
// error too, outside the payloads the recording keeps as they came (payloadKeys).
func decodeLine(raw []byte, v any) error {
	if err := duplicateKeys(raw); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return explain(err, v)
	}
	if dec.More() {
		return errors.New("more than one JSON value on the line")
	}
	return nil
}

// explain rewrites a decoder's error about v.
func explain(err error, v any) error {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syntax):
		return fmt.Errorf("not JSON at byte %d: %s", syntax.Offset, strings.TrimPrefix(syntax.Error(), "json: "))
	case errors.As(err, &typ):
		field := fieldPath(v, typ.Field)
		if field == "" {
			return fmt.Errorf("the line is a JSON %s, want an object", typ.Value)
		}
		return fmt.Errorf("%s: a JSON %s, want %s", field, typ.Value, kindOf(typ.Type))
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		key, _ := strconv.Unquote(strings.TrimPrefix(err.Error(), "json: unknown field "))
		return fmt.Errorf("unknown key %q; valid keys: %s", key, strings.Join(keysOf(reflect.TypeOf(v)), ", "))
	case strings.HasPrefix(err.Error(), "json: "):
		return errors.New(strings.TrimPrefix(err.Error(), "json: "))
	}
	return err
}

// fieldPath is a decoder's field path (Go field names, dot separated, from the type of v) as the
// line's keys: embedded structs dropped, each field by its JSON key.
func fieldPath(v any, field string) string {
	t := reflect.TypeOf(v)
	var keys []string
	for _, name := range strings.Split(field, ".") {
		for t != nil && (t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array || t.Kind() == reflect.Map) {
			t = t.Elem()
		}
		if name == "" {
			continue
		}
		var f reflect.StructField
		ok := t != nil && t.Kind() == reflect.Struct
		if ok {
			f, ok = t.FieldByName(name)
		}
		if !ok {
			// Not a Go name: already the line's key (the decoder names tagged fields by tag).
			keys = append(keys, name)
			t = nil
			continue
		}
		t = f.Type
		if f.Anonymous {
			continue
		}
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if tag == "" {
			tag = strings.ToLower(f.Name)
		}
		keys = append(keys, tag)
	}
	return strings.Join(keys, ".")
}

// kindOf says what a Go type takes, in JSON's terms.
func kindOf(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uint:
		return fmt.Sprintf("a whole number from 0 to %d", ^uint64(0)>>(64-t.Bits()))
	case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Int:
		return fmt.Sprintf("a whole number from %d to %d", -(int64(1) << (t.Bits() - 1)), int64(uint64(1)<<(t.Bits()-1)-1))
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return "JSON"
		}
		return "an array"
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Pointer:
		return kindOf(t.Elem())
	}
	return t.String()
}

// keysOf lists the JSON keys of a struct type, embedded structs' included, sorted.
func keysOf(t reflect.Type) []string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return nil
	}
	var keys []string
	for i := range t.NumField() {
		f := t.Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case tag == "-":
		case f.Anonymous && tag == "":
			keys = append(keys, keysOf(f.Type)...)
		case !f.IsExported():
		case tag != "":
			keys = append(keys, tag)
		default:
			keys = append(keys, strings.ToLower(f.Name))
		}
	}
	slices.Sort(keys)
	return slices.Compact(keys)
}

// payloadKeys hold what the recording keeps as it came (tool arguments, a script op's answer, an
// MCP tool's parameters): their objects are the tools', duplicate keys and all.
var payloadKeys = map[string]bool{"args": true, "out": true, "parameters": true}

// duplicateKeys reports a key written twice in one object of a line (valid JSON), naming its
// path. Keys are compared as Go's decoder matches them, ignoring case.
func duplicateKeys(raw []byte) error {
	s := &keyScanner{data: raw}
	return s.value()
}

// keyScanner walks a JSON value (already known to be valid, or the decoder says why it is not),
// keeping the path to where it is, which an error names.
type keyScanner struct {
	data []byte
	i    int
	path []pathPart
}

// pathPart is one step of a key path: an object's key, or an array's index.
type pathPart struct {
	key   []byte
	index int
}

// at is the path of key in the object the scanner is in.
func (s *keyScanner) at(key []byte) string {
	var b strings.Builder
	for _, p := range s.path {
		if p.key == nil {
			fmt.Fprintf(&b, "[%d]", p.index)
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.Write(p.key)
	}
	if b.Len() > 0 {
		b.WriteByte('.')
	}
	b.Write(key)
	return b.String()
}

func (s *keyScanner) space() {
	for s.i < len(s.data) && (s.data[s.i] == ' ' || s.data[s.i] == '\t' || s.data[s.i] == '\n' || s.data[s.i] == '\r') {
		s.i++
	}
}

// str reads a string and returns its text: the bytes between the quotes when it has no escape
// (no copy), else the text it stands for.
func (s *keyScanner) str() ([]byte, bool) {
	start := s.i
	s.i++ // the opening quote
	escaped := false
	for s.i < len(s.data) {
		switch c := s.data[s.i]; {
		case c == '\\':
			escaped = true
			s.i += 2
			continue
		case c == '"':
			s.i++
			if !escaped {
				return s.data[start+1 : s.i-1], true
			}
			var out string
			if json.Unmarshal(s.data[start:s.i], &out) != nil {
				return nil, false
			}
			return []byte(out), true
		}
		s.i++
	}
	return nil, false
}

// value walks one value; an invalid one ends the walk (the decoder reports it).
func (s *keyScanner) value() error {
	s.space()
	if s.i >= len(s.data) {
		return nil
	}
	switch s.data[s.i] {
	case '{':
		s.i++
		var seen [][]byte // an object's keys are few: a list is cheaper than a map
		for {
			s.space()
			if s.i >= len(s.data) || s.data[s.i] == '}' {
				s.i++
				return nil
			}
			if s.data[s.i] == ',' {
				s.i++
				continue
			}
			if s.data[s.i] != '"' {
				return nil
			}
			key, ok := s.str()
			if !ok {
				return nil
			}
			for _, first := range seen {
				if bytes.EqualFold(first, key) {
					return fmt.Errorf("%s: the key is written twice in one object (as %q and %q): a line says each thing once", s.at(key), first, key)
				}
			}
			seen = append(seen, key)
			s.space()
			if s.i < len(s.data) && s.data[s.i] == ':' {
				s.i++
			}
			if payloadKeys[string(key)] {
				s.skip()
				continue
			}
			s.path = append(s.path, pathPart{key: key})
			err := s.value()
			s.path = s.path[:len(s.path)-1]
			if err != nil {
				return err
			}
		}
	case '[':
		s.i++
		for n := 0; ; {
			s.space()
			if s.i >= len(s.data) || s.data[s.i] == ']' {
				s.i++
				return nil
			}
			if s.data[s.i] == ',' {
				s.i++
				n++
				continue
			}
			before := s.i
			s.path = append(s.path, pathPart{index: n})
			err := s.value()
			s.path = s.path[:len(s.path)-1]
			if err != nil {
				return err
			}
			if s.i == before {
				return nil
			}
		}
	case '"':
		s.str()
	default:
		for s.i < len(s.data) && !bytes.ContainsRune([]byte(",]} \t\r\n"), rune(s.data[s.i])) {
			s.i++
		}
	}
	return nil
}

// skip walks over one value without looking at its keys.
func (s *keyScanner) skip() {
	s.space()
	depth := 0
	for s.i < len(s.data) {
		switch c := s.data[s.i]; c {
		case '"':
			s.str()
			if depth == 0 {
				return
			}
			continue
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				return
			}
			depth--
			if depth == 0 {
				s.i++
				return
			}
		case ',':
			if depth == 0 {
				return
			}
		}
		s.i++
	}
}
