package subagents

import (
	"path/filepath"
	"testing"

	"github.com/warrenhq/warren/internal/docgen"
	"github.com/warrenhq/warren/tools"
)

// TestDocsListSubagentTools checks the table of sub-agent tools in docs/tools.md against the
// built-in registry's namespace "subagents", which this package's init fills: every tool has a
// row, no row names a tool that is not registered, and each row's id, arguments (from the
// schema) and effects are what the tool says; the last column is prose, kept as written. The
// test lives here, not in package tools, because tools cannot import this package. Run with
// -update to regenerate the table, then write the new row's prose.
func TestDocsListSubagentTools(t *testing.T) {
	var rows []docgen.Row
	for _, info := range tools.BuiltinInfos(Namespace) {
		tool := info.New()
		args, err := docgen.Arguments(tool.Spec().Parameters)
		if err != nil {
			t.Fatalf("%s: %v", info.ID, err)
		}
		rows = append(rows, docgen.Row{Key: docgen.Code(info.Name()), Cells: []string{docgen.Code(info.ID), args, tools.EffectsOf(tool).String()}})
	}
	docgen.CheckTable(t, filepath.Join("..", "docs", "tools.md"), "subagent-tools",
		[]string{"tool", "id", "arguments", "effects", "what it does"}, rows)
}
