package policy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warrenhq/warren/internal/golden"
)

// TestDocsListCodeRunners checks the list of code runners in docs/permissions.md against
// CodeRunners, so the page cannot drift from the table the scan uses (-update rewrites it).
func TestDocsListCodeRunners(t *testing.T) {
	const begin = "<!-- code-runners: generated from policy.CodeRunners(); TestDocsListCodeRunners checks it -->\n"
	const end = "\n<!-- /code-runners -->"
	path := filepath.Join("..", "docs", "permissions.md")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	i, j := strings.Index(doc, begin), strings.Index(doc, end)
	if i < 0 || j < i {
		t.Fatalf("%s has no code-runners block", path)
	}
	names := CodeRunners()
	for k, n := range names {
		names[k] = "`" + n + "`"
	}
	want := strings.Join(names, ", ") + "."
	if got := doc[i+len(begin) : j]; got != want {
		if golden.Updating() {
			if err := os.WriteFile(path, []byte(doc[:i+len(begin)]+want+doc[j:]), 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		t.Errorf("%s lists the code runners as\n%s\nbut CodeRunners() gives\n%s\n(go test ./policy -run TestDocsListCodeRunners -update rewrites it)", path, got, want)
	}
}
