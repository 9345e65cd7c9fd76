package scripting

import (
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// update rewrites the golden .err files of testdata/bad from what Compile reports.
var update = flag.Bool("update", false, "rewrite testdata/bad/*.err")

func TestCompileGoodTools(t *testing.T) {
	tests := []struct {
		file, name, description string
		required                []string
	}{
		{"word_count.js", "word_count", "Counts the words of a file in the workdir.", []string{"path"}},
		{"fetch_status.js", "fetch_status", "Fetches a URL and reports its HTTP status and body length.", nil},
		{"today.js", "today", "Tells the date of the virtual clock.", nil},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			file := filepath.Join("testdata", "good", tt.file)
			s := compileFile(t, file)
			if s.Name != tt.name || s.Description != tt.description || s.File != file {
				t.Fatalf("definition = %q, %q, %q; want %q, %q, %q", s.Name, s.Description, s.File, tt.name, tt.description, file)
			}
			var schema struct {
				Type     string   `json:"type"`
				Required []string `json:"required"`
			}
			if err := json.Unmarshal(s.Parameters, &schema); err != nil {
				t.Fatalf("parameters %s: %v", s.Parameters, err)
			}
			if schema.Type != "object" || strings.Join(schema.Required, ",") != strings.Join(tt.required, ",") {
				t.Errorf("parameters = %s", s.Parameters)
			}
		})
	}
}

// TestCompileBadTools checks every file of the bad corpus against its golden .err (the exact
// file:line:col: message) and the Kind callers test with errors.Is.
func TestCompileBadTools(t *testing.T) {
	kinds := map[string]error{
		"bad_name.js":              ErrDefinition,
		"break_out.js":             ErrSyntax,
		"defined_twice.js":         ErrDefinition,
		"implicit_global.js":       ErrRuntime,
		"invalid_utf8.js":          ErrSyntax,
		"long_name.js":             ErrDefinition,
		"no_define.js":             ErrDefinition,
		"no_description.js":        ErrDefinition,
		"not_an_object.js":         ErrDefinition,
		"parameters_bad_schema.js": ErrDefinition,
		"parameters_string.js":     ErrDefinition,
		"recursion.js":             ErrStackOverflow,
		"redeclared.js":            ErrSyntax,
		"run_not_function.js":      ErrDefinition,
		"syntax.js":                ErrSyntax,
		"syntax_line1.js":          ErrSyntax,
		"throws.js":                ErrRuntime,
		"uses_eval.js":             ErrRuntime,
	}
	files, err := filepath.Glob(filepath.Join("testdata", "bad", "*.js"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != len(kinds) {
		t.Fatalf("the corpus has %d files, the table %d", len(files), len(kinds))
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			kind, ok := kinds[filepath.Base(file)]
			if !ok {
				t.Fatalf("no expected kind for %s", file)
			}
			src, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			s, err := Compile(file, src)
			if err == nil {
				t.Fatalf("Compile accepted %s as tool %q", file, s.Name)
			}
			if !errors.Is(err, kind) {
				t.Errorf("error %v is not %v", err, kind)
			}
			var serr *Error
			if !errors.As(err, &serr) || serr.File != file || serr.Line == 0 || serr.Column == 0 {
				t.Errorf("error %#v is not an *Error positioned in %s", err, file)
			}
			golden := strings.TrimSuffix(file, ".js") + ".err"
			if *update {
				if err := os.WriteFile(golden, []byte(err.Error()+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, rerr := os.ReadFile(golden)
			if rerr != nil {
				t.Fatalf("%v (run go test -run TestCompileBadTools -update)", rerr)
			}
			if got := err.Error() + "\n"; got != string(want) {
				t.Errorf("error:\n got %s want %s", got, want)
			}
		})
	}
}

func TestCompileDoesNotFollowSourceMaps(t *testing.T) {
	dir := t.TempDir()
	secret := filepath.Join(dir, "secret.map")
	if err := os.WriteFile(secret, []byte("not a source map"), 0o600); err != nil {
		t.Fatal(err)
	}
	src := "defineTool({ name: \"mapped\", description: \"d\", parameters: { type: \"object\" }, run() { return 1; } });\n" +
		"//# sourceMappingURL=" + secret + "\n"
	if _, err := Compile(filepath.Join(dir, "mapped.js"), []byte(src)); err != nil {
		t.Fatalf("a sourceMappingURL comment broke the tool: %v", err)
	}
}

func TestValidToolName(t *testing.T) {
	tests := []struct {
		name string
		ok   bool
	}{
		{"word_count", true},
		{"a", true},
		{"v2_tool", true},
		{"", false},
		{"2fast", false},
		{"_private", false},
		{"Upper", false},
		{"kebab-case", false},
		{"dotted.name", false},
		{strings.Repeat("a", 64), true},
		{strings.Repeat("a", 65), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := validToolName(tt.name); got != tt.ok {
				t.Errorf("validToolName(%q) = %v, want %v", tt.name, got, tt.ok)
			}
		})
	}
}

// compileFile compiles a testdata file, failing the test on any error.
func compileFile(t testing.TB, file string) *Script {
	t.Helper()
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Compile(file, src)
	if err != nil {
		t.Fatalf("Compile(%s): %v", file, err)
	}
	return s
}

// mustCompile compiles an inline tool for a test.
func mustCompile(t testing.TB, file, src string) *Script {
	t.Helper()
	s, err := Compile(file, []byte(src))
	if err != nil {
		t.Fatalf("Compile(%s): %v", file, err)
	}
	return s
}
