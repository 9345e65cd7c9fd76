package docgen

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// recorder captures failures so a test can assert that CheckTable fails, and why.
type recorder struct {
	testing.TB
	msgs []string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, a ...any) {
	r.msgs = append(r.msgs, fmt.Sprintf(format, a...))
}
func (r *recorder) Fatalf(format string, a ...any) {
	r.msgs = append(r.msgs, fmt.Sprintf(format, a...))
}
func (r *recorder) Fatal(a ...any) { r.msgs = append(r.msgs, fmt.Sprint(a...)) }

const page = `# Page

<!-- things: generated from the code; TestThings checks it -->
| thing | size | what |
|---|---|---|
| ` + "`b`" + ` | 2 | the second, \| piped |
| ` + "`gone`" + ` | 9 | no longer in the code |
| ` + "`a`" + ` | 1 | the first |
<!-- /things -->

after
`

var header = []string{"thing", "size", "what"}

func writePage(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "page.md")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestCheckTableAgrees(t *testing.T) {
	path := writePage(t, strings.Replace(page, "| `gone` | 9 | no longer in the code |\n", "", 1))
	r := &recorder{TB: t}
	CheckTable(r, path, "things", header, []Row{{Key: "`a`", Cells: []string{"1"}}, {Key: "`b`", Cells: []string{"2"}}})
	if len(r.msgs) > 0 {
		t.Fatalf("CheckTable failed on a page that agrees (rows in the page's order):\n%s", strings.Join(r.msgs, "\n"))
	}
}

func TestCheckTableReportsDrift(t *testing.T) {
	path := writePage(t, page)
	rows := []Row{{Key: "`a`", Cells: []string{"1"}}, {Key: "`b`", Cells: []string{"3"}}, {Key: "`c`", Cells: []string{"4"}}}
	r := &recorder{TB: t}
	CheckTable(r, path, "things", header, rows)
	all := strings.Join(r.msgs, "\n")
	for _, want := range []string{"documented but not in the code: `gone`", "in the code but not documented: `c`", "-update rewrites it", "`c` has no \"what\" yet"} {
		if !strings.Contains(all, want) {
			t.Errorf("the report lacks %q:\n%s", want, all)
		}
	}
	if data, _ := os.ReadFile(path); string(data) != page {
		t.Error("CheckTable changed the page without -update")
	}

	if err := flag.Set("update", "true"); err != nil {
		t.Fatal(err)
	}
	defer flag.Set("update", "false")
	r = &recorder{TB: t}
	CheckTable(r, path, "things", header, rows)
	data, _ := os.ReadFile(path)
	want := strings.Replace(page, "| `gone` | 9 | no longer in the code |\n", "", 1)
	want = strings.Replace(want, "| `b` | 2 |", "| `b` | 3 |", 1)
	want = strings.Replace(want, "<!-- /things -->", "| `c` | 4 | "+Placeholder+" |\n<!-- /things -->", 1)
	if string(data) != want {
		t.Errorf("-update wrote\n%s\nwant\n%s", data, want)
	}
	if len(r.msgs) != 1 || !strings.Contains(r.msgs[0], "`c` has no") {
		t.Errorf("after -update only the placeholder should fail, got %q", r.msgs)
	}
}

func TestCheckTableNeedsItsBlock(t *testing.T) {
	r := &recorder{TB: t}
	CheckTable(r, writePage(t, "no table here\n"), "things", header, nil)
	if len(r.msgs) != 1 || !strings.Contains(r.msgs[0], `has no "things" block`) {
		t.Fatalf("got %q", r.msgs)
	}
}

func TestSplitRow(t *testing.T) {
	for _, tc := range []struct {
		line string
		want []string
	}{
		{"| a | b |", []string{"a", "b"}},
		{"|a|`x \\| y`| c |", []string{"a", "`x \\| y`", "c"}},
		{"|---|---|", []string{"---", "---"}},
		{"not a row", nil},
		{"| a", nil},
	} {
		if got := SplitRow(tc.line); !slices.Equal(got, tc.want) {
			t.Errorf("SplitRow(%q) = %q, want %q", tc.line, got, tc.want)
		}
	}
}

func TestArguments(t *testing.T) {
	for _, tc := range []struct{ schema, want string }{
		{`{"type":"object","properties":{"path":{},"offset":{},"limit":{}},"required":["path"]}`, "`path`, `offset?`, `limit?`"},
		{`{"type":"object","additionalProperties":false}`, "none"},
		{`{"properties":{"items":{},"items_file":{},"blueprint":{},"max":{}},"required":["blueprint"],"oneOf":[{"required":["items"]},{"required":["items_file"]}]}`,
			"`items` or `items_file`, `blueprint`, `max?`"},
		{`{"properties":{"b":{},"a":{}},"required":["a","b"]}`, "`b`, `a`"},
	} {
		got, err := Arguments(json.RawMessage(tc.schema))
		if err != nil || got != tc.want {
			t.Errorf("Arguments(%s) = %q, %v; want %q", tc.schema, got, err, tc.want)
		}
	}
	if _, err := Arguments(json.RawMessage(`{"properties":[1]}`)); err == nil {
		t.Error("Arguments accepted properties that are not an object")
	}
}

// CheckBlock passes a block equal to what the code gives, and fails one that is not, or a page
// without the block, saying where.
func TestCheckBlock(t *testing.T) {
	path := writePage(t, "# Page\n\n<!-- list: generated -->\n`a`, `b`.\n<!-- /list -->\nafter\n")
	for _, tc := range []struct {
		name, marker, want, failure string
	}{
		{"agrees", "list", "`a`, `b`.\n", ""},
		{"differs", "list", "`a`.\n", "\"list\" block reads\n`a`, `b`.\n\nbut the code gives\n`a`.\n"},
		{"missing", "other", "", "has no \"other\" block"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &recorder{TB: t}
			CheckBlock(r, path, tc.marker, tc.want)
			got := strings.Join(r.msgs, "\n")
			if (tc.failure == "") != (got == "") || !strings.Contains(got, tc.failure) {
				t.Fatalf("CheckBlock reported %q, want %q", got, tc.failure)
			}
		})
	}
}
