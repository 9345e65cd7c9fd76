package trace

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/warrenhq/warren/internal/docgen"
)

// commonNames are the names of the fields that start every event, in order.
func commonNames() []string {
	var out []string
	for _, c := range CommonFields() {
		out = append(out, c.Name)
	}
	return out
}

// emission is one event a Writer method wrote: its kind and its own fields, in written order.
type emission struct {
	method string
	kind   string
	fields []string
	// values are the fields' JSON values, in the same order.
	values []json.RawMessage
}

// argValue builds an argument of type t: its zero value, or with full set a value with every
// string, number, bool and slice non-empty, so that fields written only when set are written.
func argValue(t reflect.Type, full bool) reflect.Value {
	v := reflect.New(t).Elem()
	if !full {
		return v
	}
	switch {
	case t == reflect.TypeFor[json.RawMessage]():
		v.SetBytes([]byte(`{"a":1}`))
	case t.Kind() == reflect.String:
		v.SetString("x")
	case t.Kind() == reflect.Bool:
		v.SetBool(true)
	case t.Kind() >= reflect.Int && t.Kind() <= reflect.Int64:
		v.SetInt(1)
	case t.Kind() >= reflect.Uint && t.Kind() <= reflect.Uint64:
		v.SetUint(1)
	case t.Kind() == reflect.Float64:
		v.SetFloat(1)
	case t.Kind() == reflect.Pointer:
		v.Set(reflect.New(t.Elem()))
		v.Elem().Set(argValue(t.Elem(), true))
	case t.Kind() == reflect.Slice:
		v.Set(reflect.Append(v, argValue(t.Elem(), true)))
	case t.Kind() == reflect.Struct:
		for i := range t.NumField() {
			v.Field(i).Set(argValue(t.Field(i).Type, true))
		}
	}
	return v
}

// emissions calls every exported Writer method that takes a tick first (the event methods) once
// with zero arguments and once with full ones, each on a fresh Writer, and returns what each call
// wrote. A method added to the Writer is driven here without anyone listing it. Every call must
// write exactly one event that starts with the common fields.
func emissions(t *testing.T) []emission {
	t.Helper()
	var out []emission
	wt := reflect.TypeFor[*Writer]()
	for i := range wt.NumMethod() {
		m := wt.Method(i)
		if m.Type.NumIn() < 2 || m.Type.In(1) != reflect.TypeFor[uint64]() {
			continue // not an event method: Enabled, Events, Flush, Close
		}
		for _, full := range []bool{false, true} {
			var buf bytes.Buffer
			w, err := NewWriter(&buf, Header{Scenario: "kinds", Clock: ClockVirtual})
			if err != nil {
				t.Fatal(err)
			}
			args := []reflect.Value{reflect.ValueOf(w)}
			for k := 1; k < m.Type.NumIn(); k++ {
				args = append(args, argValue(m.Type.In(k), full))
			}
			m.Func.Call(args)
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			_, events, err := ReadAll(&buf)
			if err != nil {
				t.Fatalf("%s: %v", m.Name, err)
			}
			if len(events) != 1 {
				t.Fatalf("Writer.%s wrote %d events, want 1", m.Name, len(events))
			}
			fields, err := parseFields(events[0])
			if err != nil {
				t.Fatal(err)
			}
			var keys []string
			var values []json.RawMessage
			for _, f := range fields {
				keys = append(keys, f.key)
				values = append(values, f.value)
			}
			common := commonNames()
			if len(keys) < len(common) || !slices.Equal(keys[:len(common)], common) {
				t.Fatalf("Writer.%s wrote fields %v, which do not start with %v", m.Name, keys, common)
			}
			var kind string
			if err := json.Unmarshal(fields[len(common)-1].value, &kind); err != nil {
				t.Fatalf("Writer.%s: kind: %v", m.Name, err)
			}
			out = append(out, emission{method: m.Name, kind: kind, fields: keys[len(common):], values: values[len(common):]})
		}
	}
	if len(out) == 0 {
		t.Fatal("found no event methods on Writer")
	}
	return out
}

// TestKinds checks Kinds against the Writer: it is sorted without repeats, every event method
// writes a listed kind, and every listed kind is written by some method.
func TestKinds(t *testing.T) {
	listed := Kinds()
	if !slices.IsSorted(listed) || len(slices.Compact(slices.Clone(listed))) != len(listed) {
		t.Fatalf("Kinds() is not sorted and unique: %v", listed)
	}
	written := map[string]bool{}
	for _, e := range emissions(t) {
		if !slices.Contains(listed, e.kind) {
			t.Errorf("Writer.%s writes kind %q, which Kinds() does not list", e.method, e.kind)
		}
		written[e.kind] = true
	}
	for _, k := range listed {
		if !written[k] {
			t.Errorf("Kinds() lists %q, which no Writer method writes", k)
		}
	}
	listed[0] = "changed"
	if Kinds()[0] == "changed" {
		t.Error("Kinds() returned the package's own slice")
	}
}

// kindFields renders the fields each kind's events carry, in written order, from what the
// Writer wrote: "`f`" for a field every event of the kind has, "`f?`" for one only some have
// (written only when set, or only by one of two methods, like a child's spawn).
func kindFields(ems []emission) map[string]string {
	type seen struct {
		order []string
		count map[string]int
		total int
	}
	byKind := map[string]*seen{}
	for _, e := range ems {
		s := byKind[e.kind]
		if s == nil {
			s = &seen{count: map[string]int{}}
			byKind[e.kind] = s
		}
		s.total++
		for _, f := range e.fields {
			if s.count[f] == 0 {
				s.order = append(s.order, f)
			}
			s.count[f]++
		}
	}
	out := map[string]string{}
	for kind, s := range byKind {
		var cells []string
		for _, f := range s.order {
			if s.count[f] < s.total {
				f += "?"
			}
			cells = append(cells, docgen.Code(f))
		}
		out[kind] = strings.Join(cells, ", ")
	}
	return out
}

// TestDocsListKinds checks the table of event kinds in docs/trace.md against the Writer: one row
// per kind of Kinds(), none for a kind it does not list, and each row's fields exactly those the
// Writer writes, in order; the meaning column is prose, kept as written. It also checks that the
// package documentation lists the kinds, all of them and no other. Run with -update to
// regenerate the table after changing the Writer, then write the new row's meaning (the list in
// doc.go is written by hand: the failure gives it).
func TestDocsListKinds(t *testing.T) {
	fields := kindFields(emissions(t))
	var rows []docgen.Row
	for _, k := range Kinds() {
		rows = append(rows, docgen.Row{Key: docgen.Code(k), Cells: []string{fields[k]}})
	}
	docgen.CheckTable(t, filepath.Join("..", "docs", "trace.md"), "trace-kinds", []string{"kind", "fields", "meaning"}, rows)

	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	var text []string
	for _, line := range strings.Split(string(doc), "\n") {
		text = append(text, strings.TrimSpace(strings.TrimPrefix(line, "//")))
	}
	if want := "[Kinds] returns them: " + strings.Join(Kinds(), ", ") + "."; !strings.Contains(strings.Join(text, " "), want) {
		t.Errorf("trace/doc.go does not list the kinds as %q", want)
	}
}
