package tools_test

import (
	"path/filepath"
	"testing"

	"github.com/warrenhq/warren/internal/docgen"
	"github.com/warrenhq/warren/tools"
)

// TestDocsListBuiltinTools checks the table of built-in tools in docs/tools.md against the
// built-in registry: every tool registered in namespace "tools" has a row, no row names a tool
// that is not registered, and each row's id, arguments (from the schema), inline flag and
// effects are what the tool says; the result column is prose, kept as written. Run with -update
// to regenerate the table after adding or changing a tool, then write the new row's result.
func TestDocsListBuiltinTools(t *testing.T) {
	var rows []docgen.Row
	for _, info := range tools.BuiltinInfos(tools.Namespace) {
		h, err := tools.NewHandle(info.New())
		if err != nil {
			t.Fatal(err)
		}
		args, err := docgen.Arguments(h.Spec().Parameters)
		if err != nil {
			t.Fatalf("%s: %v", info.ID, err)
		}
		inline := "no"
		if h.Inline() {
			inline = "yes"
		}
		rows = append(rows, docgen.Row{Key: docgen.Code(info.Name()), Cells: []string{docgen.Code(info.ID), args, inline, h.Effects().String()}})
	}
	docgen.CheckTable(t, filepath.Join("..", "docs", "tools.md"), "builtin-tools",
		[]string{"tool", "id", "arguments", "inline", "effects", "result"}, rows)
}
