package trace

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// jsonType names the JSON type of a value as the schema's types are written in JSON.
func jsonType(raw json.RawMessage) string {
	switch raw[0] {
	case '"':
		return "string"
	case 't', 'f':
		return "bool"
	case '[':
		return "array"
	case '{':
		return "object"
	case 'n':
		return "null"
	}
	return "number"
}

// fits reports whether a field's JSON value is one its schema type allows.
func fits(t FieldType, raw json.RawMessage) bool {
	switch t {
	case TypeInteger:
		var n int64
		return json.Unmarshal(raw, &n) == nil
	case TypeString:
		return jsonType(raw) == "string"
	case TypeDecimal:
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return false
		}
		return strings.Trim(s, "-0123456789.") == "" && s != ""
	case TypeBoolean:
		return jsonType(raw) == "bool"
	case TypeStrings:
		var ss []string
		return json.Unmarshal(raw, &ss) == nil
	case TypeJSON:
		return json.Valid(raw)
	}
	return false
}

// TestSchemaMatchesWriter checks the schema against what the Writer writes: every event method,
// called with zero and with full arguments, writes its kind's fields in the schema's order, each
// of the schema's type; a field the schema calls optional is left out by some call, and one it
// does not is written by every call.
func TestSchemaMatchesWriter(t *testing.T) {
	type seen struct {
		order []string
		count map[string]int
		total int
	}
	byKind := map[string]*seen{}
	for _, e := range emissions(t) {
		want, ok := KindFields(e.kind)
		if !ok {
			t.Errorf("Writer.%s writes kind %q, which the schema lacks", e.method, e.kind)
			continue
		}
		s := byKind[e.kind]
		if s == nil {
			s = &seen{count: map[string]int{}}
			byKind[e.kind] = s
		}
		s.total++
		pos := 0
		for i, name := range e.fields {
			for pos < len(want) && want[pos].Name != name {
				pos++
			}
			if pos == len(want) {
				t.Errorf("Writer.%s writes %s.%s out of the schema's order %v (or it is not in the schema)", e.method, e.kind, name, want)
				break
			}
			if !fits(want[pos].Type, e.values[i]) {
				t.Errorf("Writer.%s writes %s.%s as %s, which is not a %s", e.method, e.kind, name, e.values[i], want[pos].Type)
			}
			if s.count[name] == 0 {
				s.order = append(s.order, name)
			}
			s.count[name]++
		}
	}
	for _, k := range Schema() {
		s := byKind[k.Kind]
		if s == nil {
			t.Errorf("no Writer method writes kind %q of the schema", k.Kind)
			continue
		}
		for _, fl := range k.Fields {
			switch n := s.count[fl.Name]; {
			case n == 0:
				t.Errorf("the schema gives %s.%s, which no Writer method writes", k.Kind, fl.Name)
			case fl.Optional && n == s.total:
				t.Errorf("the schema says %s.%s is optional, but every event of the kind has it", k.Kind, fl.Name)
			case !fl.Optional && n < s.total:
				t.Errorf("the schema says every %s has %s, but %d of %d written lack it", k.Kind, fl.Name, s.total-n, s.total)
			}
		}
	}
}

// TestColumnsHaveOneType checks that a field name has one type across the kinds, so Columns (and
// the header's fields) can give each a single column type, and that the header carries them.
func TestColumnsHaveOneType(t *testing.T) {
	types := map[string]FieldType{}
	for _, c := range CommonFields() {
		types[c.Name] = c.Type
	}
	for _, k := range Schema() {
		if !slices.IsSortedFunc(Schema(), func(a, b KindSchema) int { return strings.Compare(a.Kind, b.Kind) }) {
			t.Fatal("the schema is not sorted by kind")
		}
		for _, fl := range k.Fields {
			if prev, ok := types[fl.Name]; ok && prev != fl.Type {
				t.Errorf("field %q is a %s in %s but a %s elsewhere", fl.Name, fl.Type, k.Kind, prev)
			}
			types[fl.Name] = fl.Type
		}
	}
	cols := Columns()
	if len(cols) != len(types) {
		t.Errorf("Columns gives %d fields, the kinds have %d names", len(cols), len(types))
	}
	var buf bytes.Buffer
	w, err := NewWriter(&buf, Header{Scenario: "cols", Clock: ClockVirtual})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	h, _, err := ReadAll(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(h.Fields, cols) {
		t.Errorf("the header's fields are %v, want %v", h.Fields, cols)
	}
}
