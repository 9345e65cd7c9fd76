// Package docgen keeps tables in the docs in step with the code, for tests. A table lives between
// two HTML comments in a Markdown page:
//
//	<!-- name: generated from ...; TestX checks it, -update rewrites it -->
//	| key | generated ... | prose |
//	|---|---|---|
//	| `a` | ... | written by hand |
//	<!-- /name -->
//
// CheckTable compares the block with rows the test builds from the code: one row per key, the
// key cell and the generated cells exactly as the code gives them, and a last column of prose that
// only a person can write, kept from the page as it is. A documented key the code lacks, a key
// the code has that the page lacks, or a generated cell that changed fails the test; with
// -update (internal/golden's flag) the block is rewritten instead: rows keep the page's order,
// rows of keys the code no longer has go, new keys are appended with a placeholder prose cell,
// which still fails until someone writes it. So a maintainer regenerates the table rather than
// edits it by hand, and a page cannot claim what the code does not do.
package docgen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/warrenhq/warren/internal/golden"
)

// Placeholder is the prose cell -update gives a new row. CheckTable fails while one is left, so
// a new tool or kind cannot be documented by the generator alone.
const Placeholder = "TODO: describe"

// Row is one row of a generated table as the code gives it.
type Row struct {
	// Key is the first cell, such as "`read_file`", which matches a row of the page with a row
	// of the code. Keys are unique.
	Key string
	// Cells are the generated cells after the key. The prose cell, last, is not in them: it
	// comes from the page.
	Cells []string
}

// CheckTable checks the table between "<!-- marker: ... -->" and "<!-- /marker -->" in the page
// at path against header (every column, the key's first and the prose last) and rows, as the
// package documentation describes, rewriting it with -update.
func CheckTable(t testing.TB, path, marker string, header []string, rows []Row) {
	t.Helper()
	// Every Fatal below is followed by return, so a TB that records failures without stopping
	// the goroutine (as this package's tests use) never reads past one.
	doc, start, j, ok := findBlock(t, path, marker)
	if !ok {
		return
	}
	got := doc[start:j]

	prose := map[string]string{}
	var order []string
	lines := 0
	for _, line := range strings.Split(got, "\n") {
		cells := SplitRow(line)
		if cells == nil {
			continue
		}
		if lines++; lines <= 2 {
			continue // the header and the separator
		}
		if _, dup := prose[cells[0]]; dup {
			t.Errorf("%s: %s is listed twice in the %q table", path, cells[0], marker)
			continue
		}
		order = append(order, cells[0])
		prose[cells[0]] = ""
		if len(cells) > 1 {
			prose[cells[0]] = cells[len(cells)-1] // the last cell, however many columns the page had
		}
	}

	byKey := map[string]Row{}
	for _, r := range rows {
		if len(r.Cells) != len(header)-2 {
			t.Fatalf("row %s has %d generated cells, the header wants %d", r.Key, len(r.Cells), len(header)-2)
			return
		}
		byKey[r.Key] = r
	}
	var extra, missing []string
	var final []Row
	for _, key := range order {
		if r, ok := byKey[key]; ok {
			final = append(final, r)
		} else {
			extra = append(extra, key)
		}
	}
	for _, r := range rows {
		if _, ok := prose[r.Key]; !ok {
			missing = append(missing, r.Key)
			final = append(final, r)
		}
	}

	var b strings.Builder
	b.WriteString(renderRow(header) + "\n")
	b.WriteString(strings.Repeat("|---", len(header)) + "|\n")
	var unwritten []string
	for _, r := range final {
		p, ok := prose[r.Key]
		if !ok || p == "" {
			p = Placeholder
		}
		if p == Placeholder {
			unwritten = append(unwritten, r.Key)
		}
		cells := append([]string{r.Key}, r.Cells...)
		for n, c := range cells {
			cells[n] = escapeCell(c)
		}
		b.WriteString("| " + strings.Join(append(cells, p), " | ") + " |\n")
	}
	want := b.String()

	if got != want {
		if golden.Updating() {
			if err := os.WriteFile(path, []byte(doc[:start]+want+doc[j:]), 0o644); err != nil {
				t.Fatal(err)
				return
			}
		} else {
			var why []string
			if len(extra) > 0 {
				why = append(why, "documented but not in the code: "+strings.Join(extra, ", "))
			}
			if len(missing) > 0 {
				why = append(why, "in the code but not documented: "+strings.Join(missing, ", "))
			}
			if len(why) == 0 {
				why = append(why, "generated cells differ")
			}
			t.Errorf("%s: the %q table is out of step with the code (%s).\n--- the page has\n%s--- the code gives\n%s(go test -run '^%s$' -update rewrites it; the last column stays as written)",
				path, marker, strings.Join(why, "; "), got, want, t.Name())
		}
	}
	for _, key := range unwritten {
		t.Errorf("%s: in the %q table, %s has no %q yet: write it in place of %q", path, marker, key, header[len(header)-1], Placeholder)
	}
}

// SplitRow splits a Markdown table row into its cells, trimmed, at the pipes not escaped with a
// backslash; a line that is not a row ("|" first and last) gives nil.
func SplitRow(line string) []string {
	line = strings.TrimSpace(line)
	if len(line) < 2 || line[0] != '|' || line[len(line)-1] != '|' || strings.HasSuffix(line, `\|`) {
		return nil
	}
	line = line[1 : len(line)-1]
	var cells []string
	last := 0
	for n := 0; n < len(line); n++ {
		switch line[n] {
		case '\\':
			n++ // the next byte is escaped
		case '|':
			cells = append(cells, strings.TrimSpace(line[last:n]))
			last = n + 1
		}
	}
	return append(cells, strings.TrimSpace(line[last:]))
}

// renderRow renders cells as one Markdown table row.
func renderRow(cells []string) string {
	esc := make([]string, len(cells))
	for n, c := range cells {
		esc[n] = escapeCell(c)
	}
	return "| " + strings.Join(esc, " | ") + " |"
}

// escapeCell escapes the pipes of a generated cell, which would otherwise split it.
func escapeCell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

// Code renders s as inline code.
func Code(s string) string { return "`" + s + "`" }

// Arguments renders the arguments of a tool's JSON Schema (an object schema) in the order its
// "properties" list them: "`path`" for a required one, "`offset?`" for an optional one, "`a` or
// `b`" for properties a oneOf of single-property "required" lists chooses between, and "none"
// for a schema without properties. It reads the raw schema, not a decoded map, because the order
// the tool's author chose is the order a reader expects.
func Arguments(schema json.RawMessage) (string, error) {
	var s struct {
		Properties json.RawMessage `json:"properties"`
		Required   []string        `json:"required"`
		OneOf      []struct {
			Required []string `json:"required"`
		} `json:"oneOf"`
	}
	if err := json.Unmarshal(schema, &s); err != nil {
		return "", err
	}
	names, err := objectKeys(s.Properties)
	if err != nil {
		return "", err
	}
	var choice []string // properties exactly one of which is required
	for _, branch := range s.OneOf {
		if len(branch.Required) != 1 {
			choice = nil
			break
		}
		choice = append(choice, branch.Required[0])
	}
	var out []string
	for _, name := range names {
		switch {
		case slices.Contains(s.Required, name):
			out = append(out, Code(name))
		case len(choice) > 1 && name == choice[0]:
			alts := make([]string, len(choice))
			for n, c := range choice {
				alts[n] = Code(c)
			}
			out = append(out, strings.Join(alts, " or "))
		case slices.Contains(choice, name):
			// listed with the first of its choice
		default:
			out = append(out, Code(name+"?"))
		}
	}
	if len(out) == 0 {
		return "none", nil
	}
	return strings.Join(out, ", "), nil
}

// objectKeys returns the member names of a JSON object in written order (none for an absent one).
func objectKeys(raw json.RawMessage) ([]string, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, fmt.Errorf("properties is not an object")
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return nil, err
		}
	}
	return keys, nil
}

// CheckBlock checks that the text between "<!-- marker: ... -->\n" and "<!-- /marker -->" in the
// page at path is exactly want: a block generated whole from the code (a list, a table without
// prose), which -update rewrites. CheckTable is for tables that keep a column of prose.
func CheckBlock(t testing.TB, path, marker, want string) {
	t.Helper()
	doc, start, j, ok := findBlock(t, path, marker)
	if !ok {
		return
	}
	if got := doc[start:j]; got != want {
		if golden.Updating() {
			if err := os.WriteFile(path, []byte(doc[:start]+want+doc[j:]), 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		t.Errorf("%s's %q block reads\n%s\nbut the code gives\n%s\n(go test -run %s -update rewrites it)", path, marker, got, want, t.Name())
	}
}

// findBlock reads the page at path and finds the block between "<!-- marker: ... -->\n" and
// "<!-- /marker -->": the page, and where the block's text starts and ends. It fails t, saying
// what is missing, and returns false when there is no such block.
func findBlock(t testing.TB, path, marker string) (doc string, start, end int, ok bool) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
		return "", 0, 0, false
	}
	doc = string(data)
	open, closing := "<!-- "+marker+":", "<!-- /"+marker+" -->"
	i := strings.Index(doc, open)
	if i < 0 {
		t.Fatalf("%s has no %q block (it starts with a line %q...)", path, marker, open)
		return "", 0, 0, false
	}
	k := strings.Index(doc[i:], "-->\n")
	end = strings.Index(doc, closing)
	if k < 0 || end < i+k {
		t.Fatalf("%s: the %q block is not closed by %q", path, marker, closing)
		return "", 0, 0, false
	}
	return doc, i + k + len("-->\n"), end, true
}
