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
