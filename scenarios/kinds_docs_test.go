package scenarios

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/warrenhq/warren/internal/docgen"
	"github.com/warrenhq/warren/models"
)

// TestDocsListModelKinds checks the table of model kinds in docs/scenarios.md against the
// registry (models.Kinds, with every kind this package links: scripted, and js from scripting),
// so the page cannot drift from what a scenario may name (-update rewrites it).
func TestDocsListModelKinds(t *testing.T) {
	var b strings.Builder
	b.WriteString("| kind | id | what its models do |\n|---|---|---|\n")
	for _, id := range models.Kinds() {
		k, _ := models.LookupKind(id)
		b.WriteString("| `" + k.Name() + "` | `" + k.ID + "` | " + k.Summary + " |\n")
	}
	docgen.CheckBlock(t, filepath.Join("..", "docs", "scenarios.md"), "model-kinds", b.String())
}
