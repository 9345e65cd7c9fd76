package metrics

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/warrenhq/warren/internal/docgen"
	"github.com/warrenhq/warren/table"
)

// schemaDoc renders every table of Schema as the section of docs/metrics.md that lists them: a
// heading, what a row is, and a table of its columns with their types and meanings.
func schemaDoc(tables []table.Table) string {
	cell := func(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
	var b strings.Builder
	for _, tab := range tables {
		b.WriteString("### " + docgen.Code(tab.Name) + "\n\n" + tab.Doc + "\n\n")
		b.WriteString("| column | type | meaning |\n|---|---|---|\n")
		for _, c := range tab.Columns {
			b.WriteString("| " + docgen.Code(c.Name) + " | " + string(c.Type) + " | " + cell(c.Doc) + " |\n")
		}
		b.WriteString("\n")
	}
	return b.String()
}

// TestDocsListTables checks the tables section of docs/metrics.md against Schema, so that the
// documentation of a column cannot drift from the code (-update rewrites it), and that Schema
// documents every table and column once.
func TestDocsListTables(t *testing.T) {
	tables := Schema()
	for _, tab := range tables {
		if tab.Doc == "" {
			t.Errorf("table %s has no Doc", tab.Name)
		}
		seen := map[string]bool{}
		for _, c := range tab.Columns {
			if c.Doc == "" || c.Type == "" || seen[c.Name] {
				t.Errorf("table %s: column %q is undocumented, untyped or repeated", tab.Name, c.Name)
			}
			seen[c.Name] = true
		}
	}
	docgen.CheckBlock(t, filepath.Join("..", "docs", "metrics.md"), "metrics-tables", schemaDoc(tables))
}

// TestTablesFollowSchema checks that Tables gives the tables Schema documents, in its order, with
// its columns, and that every value has its column's type (or is nil).
func TestTablesFollowSchema(t *testing.T) {
	schema := Schema()
	got := handTables(t, true, handSamples())
	if len(got) != len(schema) {
		t.Fatalf("%d tables, Schema has %d", len(got), len(schema))
	}
	goType := map[table.Type]reflect.Type{
		table.Integer: reflect.TypeFor[int64](), table.String: reflect.TypeFor[string](), table.Decimal: reflect.TypeFor[string](),
		table.Float: reflect.TypeFor[float64](), table.Boolean: reflect.TypeFor[bool](),
	}
	for i, tab := range got {
		if tab.Name != schema[i].Name || !reflect.DeepEqual(tab.Columns, schema[i].Columns) {
			t.Errorf("table %d is %s with other columns than Schema's %s", i, tab.Name, schema[i].Name)
		}
		if len(tab.Rows) == 0 {
			t.Errorf("the hand trace gives no %s rows", tab.Name)
		}
		for n, row := range tab.Rows {
			for k, v := range row {
				if v != nil && reflect.TypeOf(v) != goType[tab.Columns[k].Type] {
					t.Errorf("%s row %d %s holds a %T, its type is %s", tab.Name, n, tab.Columns[k].Name, v, tab.Columns[k].Type)
				}
			}
		}
	}
}
