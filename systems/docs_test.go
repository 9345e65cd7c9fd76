package systems_test

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/warrenhq/warren/internal/docgen"
	"github.com/warrenhq/warren/systems"
)

// TestDocsListSystems keeps docs/architecture.md's table of the tick's systems in step with the
// registry: every registered system, in the order it runs, with its order number and id (-update
// rewrites them; the description is written by hand).
func TestDocsListSystems(t *testing.T) {
	infos := systems.Registered()
	var rows []docgen.Row
	var names []string
	for _, info := range infos {
		name := strings.TrimPrefix(info.ID, systems.IDPrefix)
		if got := info.New().Name(); got != name {
			t.Errorf("%s: the system calls itself %q, want the id's name %q", info.ID, got, name)
		}
		names = append(names, name)
		rows = append(rows, docgen.Row{Key: docgen.Code(name), Cells: []string{strconv.Itoa(info.Order), docgen.Code(info.ID)}})
	}
	page := filepath.Join("..", "docs", "architecture.md")
	docgen.CheckTable(t, page, "tick-systems", []string{"system", "order", "id", "takes → moves to"}, rows)
	if t.Failed() {
		return
	}
	// CheckTable keeps the page's row order: check that it is the order the systems run in.
	data, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	block := string(data)
	block = block[strings.Index(block, "<!-- tick-systems:"):strings.Index(block, "<!-- /tick-systems -->")]
	var documented []string
	for _, line := range strings.Split(block, "\n")[3:] {
		if cells := docgen.SplitRow(line); len(cells) > 0 {
			documented = append(documented, strings.Trim(cells[0], "`"))
		}
	}
	var running []string
	for _, p := range systems.Pipeline() {
		running = append(running, p.Name())
	}
	if !slices.Equal(documented, names) || !slices.Equal(running, names) {
		t.Fatalf("the page lists %q, Pipeline runs %q, the registry lists %q: all three must agree", documented, running, names)
	}
}
