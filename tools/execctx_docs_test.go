package tools

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/warrenhq/warren/internal/docgen"
)

// TestDocsListExecContext keeps docs/tools.md's table of ExecContext fields in step with the
// struct: every field, with its type, and nothing the struct does not have.
func TestDocsListExecContext(t *testing.T) {
	typ := reflect.TypeFor[ExecContext]()
	var rows []docgen.Row
	for i := range typ.NumField() {
		f := typ.Field(i)
		if !f.IsExported() {
			continue
		}
		rows = append(rows, docgen.Row{Key: docgen.Code(f.Name), Cells: []string{docgen.Code(typeName(f.Type))}})
	}
	docgen.CheckTable(t, filepath.Join("..", "docs", "tools.md"), "exec-context", []string{"field", "type", "what it carries"}, rows)
}

// typeName is how the docs write a field's type: package-qualified, with this package as tools.
func typeName(t reflect.Type) string {
	if t.Kind() == reflect.Func {
		var in, out []string
		for i := range t.NumIn() {
			in = append(in, typeName(t.In(i)))
		}
		for i := range t.NumOut() {
			out = append(out, typeName(t.Out(i)))
		}
		s := "func(" + strings.Join(in, ", ") + ")"
		switch len(out) {
		case 0:
		case 1:
			s += " " + out[0]
		default:
			s += " (" + strings.Join(out, ", ") + ")"
		}
		return s
	}
	return t.String()
}
