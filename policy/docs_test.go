package policy

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/warrenhq/warren/internal/docgen"
)

// TestDocsListCodeRunners checks the list of code runners in docs/permissions.md against
// CodeRunners, so the page cannot drift from the table the scan uses (-update rewrites it).
func TestDocsListCodeRunners(t *testing.T) {
	names := CodeRunners()
	for k, n := range names {
		names[k] = "`" + n + "`"
	}
	docgen.CheckBlock(t, filepath.Join("..", "docs", "permissions.md"), "code-runners", strings.Join(names, ", ")+".\n")
}

// TestDocsListExecOptions checks the table of ways modelled programs run commands in
// docs/permissions.md against ExecOptions (-update rewrites it).
func TestDocsListExecOptions(t *testing.T) {
	var sb strings.Builder
	sb.WriteString("| program | option or form | the scan |\n|---|---|---|\n")
	for _, o := range ExecOptions() {
		sb.WriteString("| `" + o.Program + "` | `" + strings.ReplaceAll(o.Option, "|", `\|`) + "` | " + o.Handling + " |\n")
	}
	docgen.CheckBlock(t, filepath.Join("..", "docs", "permissions.md"), "exec-options", sb.String())
}

// TestDocsListLookupVariables checks the list of variables a line may not set in
// docs/permissions.md against LookupVariables (-update rewrites it).
func TestDocsListLookupVariables(t *testing.T) {
	names := LookupVariables()
	for k, n := range names {
		names[k] = "`" + n + "`"
	}
	docgen.CheckBlock(t, filepath.Join("..", "docs", "permissions.md"), "lookup-variables", strings.Join(names, ", ")+".\n")
}
