package archtest

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The checkers themselves, on made-up graphs: what TestImportGraph and TestImportRules print
// when the module breaks them.

func TestParseAllowed(t *testing.T) {
	doc := "# Doc\n\n```\nnot: the block\n```\n\n```imports\nb: -\n\na: b c\n. : a\n```\n"
	got, err := parseAllowed(doc)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{"b": nil, "a": {"b", "c"}, ".": {"a"}}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for k, v := range want {
		if g, ok := got[k]; !ok || !slices.Equal(g, v) {
			t.Errorf("%s: got %v, want %v", k, g, v)
		}
	}
}

func TestParseAllowedErrors(t *testing.T) {
	cases := []struct{ name, doc, want string }{
		{"no block", "# Doc\n```\na: b\n```\n", `no fenced code block with info string "imports"`},
		{"two blocks", "```imports\na: -\n```\n```imports\nb: -\n```\n", `2 fenced code blocks with info string "imports"; keep the allowed graph in one`},
		{"unclosed", "```imports\na: -\n", "a fenced code block is not closed"},
		{"no colon", "```imports\na b\n```\n", `line 2: "a b" is not "pkg: dep1 dep2 ..."`},
		{"no deps", "```imports\na:\n```\n", `line 2: package a lists no imports; write "a: -" for none`},
		{"dash and deps", "```imports\na: - b\n```\n", `line 2: package a: "-" (no imports) stands alone`},
		{"twice", "```imports\na: -\na: b\n```\n", "line 3: package a is listed twice"},
		{"dep twice", "```imports\na: b b\n```\n", "line 2: package a lists b twice"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := parseAllowed(c.doc)
			if err == nil || err.Error() != c.want {
				t.Errorf("got %v, want %q", err, c.want)
			}
		})
	}
}

func TestCheckGraph(t *testing.T) {
	imports := map[string][]string{
		"a":     {"b"},
		"b":     {},
		"c":     {"a", "b"},
		"fresh": {"a"},
	}
	allowed := map[string][]string{
		"a":    {"b"},
		"b":    nil,
		"c":    {"a", "gone"},
		"gone": nil,
	}
	got := checkGraph(imports, allowed)
	want := []string{
		`package c imports b, which the "imports" block of docs/architecture.md does not allow; remove the import, or if the edge is intended, add b to the line of c in docs/architecture.md`,
		`package fresh is missing from the "imports" block of docs/architecture.md; add the line "fresh: a" (its imports today) if that is what it may import`,
		`the "imports" block of docs/architecture.md allows c to import gone, which is not a package of the module; remove it from the line`,
		`the "imports" block of docs/architecture.md lists package gone, which is not a package of the module; remove its line`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if got := checkGraph(map[string][]string{"a": {}, "b": {}}, map[string][]string{"a": {"b"}, "b": nil}); len(got) != 0 {
		t.Errorf("an allowed edge the code does not use is fine: got %q", got)
	}
}

func TestCheckRules(t *testing.T) {
	imports := map[string][]string{
		"hostconfig":       {"policy"},
		"policy":           {"mcp"},
		"mcp":              {"internal/mcpdemo"},
		"mcp/mcpconfig":    {},
		"internal/mcpdemo": {"mcp/mcpconfig"},
		"cmd/host":         {"internal/mcpdemo", "mcp"},
		"internal/other":   {"internal/mcpdemo"},
	}
	g := graph{imports: imports, deps: map[string][]string{
		"hostconfig":       {"internal/mcpdemo", "mcp", "mcp/mcpconfig", "policy"},
		"policy":           {"internal/mcpdemo", "mcp", "mcp/mcpconfig"},
		"mcp":              {"internal/mcpdemo", "mcp/mcpconfig"},
		"mcp/mcpconfig":    {},
		"internal/mcpdemo": {"mcp/mcpconfig"},
		"cmd/host":         {"internal/mcpdemo", "mcp", "mcp/mcpconfig"},
		"internal/other":   {"internal/mcpdemo", "mcp/mcpconfig"},
	}}
	got := checkRules(g)
	want := []string{
		"config package hostconfig depends on the client package mcp (hostconfig → policy → mcp); the client may import the config, never the other way round",
		"package hostconfig depends on the test server internal/mcpdemo (hostconfig → policy → mcp → internal/mcpdemo); only cmd/ binaries and tests may link it",
		"package mcp depends on the test server internal/mcpdemo (mcp → internal/mcpdemo); only cmd/ binaries and tests may link it",
		"package policy depends on the test server internal/mcpdemo (policy → mcp → internal/mcpdemo); only cmd/ binaries and tests may link it",
	}
	if !slices.Equal(got, want) {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, p := range []string{"hostconfig", "mcp/mcpconfig", "blueprint", "x/blueprint"} {
		if !isConfig(p) {
			t.Errorf("isConfig(%q) = false", p)
		}
	}
	for _, p := range []string{"mcp", "gate", "configs"} {
		if isConfig(p) {
			t.Errorf("isConfig(%q) = true", p)
		}
	}
	if !isTestServer("internal/mcpdemo") || isTestServer("mcpdemo") || isTestServer("internal/golden") {
		t.Error("isTestServer: only internal packages named ...demo are test servers")
	}
}

func TestModuleRootAndPath(t *testing.T) {
	root := t.TempDir()
	sub := filepath.Join(root, "a", "b")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	mod := filepath.Join(root, "go.mod")
	if err := os.WriteFile(mod, []byte("// a comment\nmodule \"example.com/m\" // the module\n\ngo 1.26\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := moduleRoot(sub)
	if err != nil || got != root {
		t.Fatalf("moduleRoot(%s) = %q, %v; want %q", sub, got, err, root)
	}
	if p, err := modulePath(mod); err != nil || p != "example.com/m" {
		t.Errorf("modulePath = %q, %v; want example.com/m", p, err)
	}
	if rel, ok := relative("example.com/m", "example.com/m"); !ok || rel != "." {
		t.Errorf("the root package is %q, %v; want \".\"", rel, ok)
	}
	if _, ok := relative("example.com/mod", "example.com/m"); ok {
		t.Error("example.com/mod is not a package of example.com/m")
	}
}
