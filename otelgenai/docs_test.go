package otelgenai

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warrenhq/warren/internal/docgen"
)

// page is the documentation of the spans.
var page = filepath.Join("..", "docs", "opentelemetry.md")

// TestDocsListAttributes checks docs/opentelemetry.md's attribute table against attributeDocs,
// the package's list of what it sets (which TestSpansMatchTrace checks against the spans runs
// export): every attribute, the spans that carry it and its type, so the page cannot drift from
// the code; -update rewrites all but the meaning column.
func TestDocsListAttributes(t *testing.T) {
	rows := make([]docgen.Row, len(attributeDocs))
	for i, d := range attributeDocs {
		ops := make([]string, len(d.ops))
		for j, op := range d.ops {
			ops[j] = docgen.Code(op)
		}
		rows[i] = docgen.Row{Key: docgen.Code(string(d.key)), Cells: []string{strings.Join(ops, ", "), d.typ}}
	}
	docgen.CheckTable(t, page, "otel-attributes", []string{"attribute", "spans", "type", "meaning"}, rows)
}

// TestDocsPinVersion checks that the page names the semantic conventions' version the package
// pins, and the semconv package it comes from.
func TestDocsPinVersion(t *testing.T) {
	doc, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"**v" + SemconvVersion + "**", "go.opentelemetry.io/otel/semconv/v" + SemconvVersion, schemaURL} {
		if !strings.Contains(string(doc), want) {
			t.Errorf("%s does not say %q", page, want)
		}
	}
}
