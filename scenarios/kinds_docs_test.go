package scenarios

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warrenhq/warren/internal/golden"
	"github.com/warrenhq/warren/models"
)

// TestDocsListModelKinds checks the table of model kinds in docs/scenarios.md against the
// registry (models.Kinds, with every kind this package links: scripted, and js from scripting),
// so the page cannot drift from what a scenario may name (-update rewrites it).
func TestDocsListModelKinds(t *testing.T) {
	const begin = "<!-- model-kinds: generated from models.Kinds(); TestDocsListModelKinds checks it -->\n"
	const end = "<!-- /model-kinds -->"
	path := filepath.Join("..", "docs", "scenarios.md")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	i, j := strings.Index(doc, begin), strings.Index(doc, end)
	if i < 0 || j < i {
		t.Fatalf("%s has no model-kinds block", path)
	}
	var b strings.Builder
	b.WriteString("| kind | id | what its models do |\n|---|---|---|\n")
	for _, id := range models.Kinds() {
		k, _ := models.LookupKind(id)
		b.WriteString("| `" + k.Name() + "` | `" + k.ID + "` | " + k.Summary + " |\n")
	}
	want := b.String()
	if got := doc[i+len(begin) : j]; got != want {
		if golden.Updating() {
			if err := os.WriteFile(path, []byte(doc[:i+len(begin)]+want+doc[j:]), 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		t.Errorf("%s lists the model kinds as\n%s\nbut the registry has\n%s\n(go test ./scenarios -run TestDocsListModelKinds -update rewrites it)", path, got, want)
	}
}
