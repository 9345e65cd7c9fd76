package scripting

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeFiles creates files (name → content) under dir.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// named is a valid tool file defining name.
func named(name string) string {
	return `defineTool({ name: "` + name + `", description: "d", parameters: { type: "object" }, run() { return "` + name + `"; } });`
}

func TestDiscover(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		want  []string // tool names, in the order Discover returns them
	}{
		{"sorted by file name, not tool name", map[string]string{
			"b.js": named("alpha"), "a.js": named("zulu"), "c.js": named("mike"),
		}, []string{"zulu", "alpha", "mike"}},
		{"only *.js directly in the directory", map[string]string{
			"tool.js": named("tool"), "notes.txt": "not a tool", "tool.js.bak": "nor this",
			"sub/nested.js": named("nested"), "dir.js/inner.js": named("inner"),
		}, []string{"tool"}},
		{"empty directory", map[string]string{}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFiles(t, dir, tt.files)
			scripts, err := Discover(dir)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, s := range scripts {
				got = append(got, s.Name)
				if filepath.Dir(s.File) != dir {
					t.Errorf("%s: File = %s, want it in %s", s.Name, s.File, dir)
				}
			}
			if strings.Join(got, ",") != strings.Join(tt.want, ",") {
				t.Errorf("tools = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestDiscoverMissingDirectory(t *testing.T) {
	scripts, err := Discover(filepath.Join(t.TempDir(), "tools"))
	if scripts != nil || err != nil {
		t.Errorf("Discover(missing) = %v, %v; want nil, nil", scripts, err)
	}
}

func TestDiscoverReportsEveryProblem(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"a_good.js":   named("shared"),
		"b_syntax.js": "defineTool({\n  name: \"broken\"\n  description: \"no comma\",\n});",
		"c_dup.js":    "// the same name again\n" + named("shared"),
		"d_none.js":   "const nothing = 1;",
		"e_good.js":   named("fine"),
	})
	scripts, err := Discover(dir)
	if scripts != nil {
		t.Errorf("scripts = %v, want none when a file is bad", scripts)
	}
	joined, ok := err.(interface{ Unwrap() []error })
	if !ok {
		t.Fatalf("error %v is not a joined error", err)
	}
	want := []struct {
		file string
		kind error
		text string
	}{
		{"b_syntax.js", ErrSyntax, "b_syntax.js:3:3: Unexpected identifier"},
		{"c_dup.js", ErrDuplicate, `c_dup.js:2:14: tool name "shared" is already defined by ` + filepath.Join(dir, "a_good.js")},
		{"d_none.js", ErrDefinition, "d_none.js:1:1: the file never calls defineTool({name, description, parameters, run})"},
	}
	errs := joined.Unwrap()
	if len(errs) != len(want) {
		t.Fatalf("%d errors, want %d: %v", len(errs), len(want), err)
	}
	for i, w := range want {
		var serr *Error
		if !errors.As(errs[i], &serr) || !errors.Is(errs[i], w.kind) || serr.File != filepath.Join(dir, w.file) {
			t.Errorf("error %d = %v, want a %v in %s", i, errs[i], w.kind, w.file)
		}
		if got := strings.TrimPrefix(errs[i].Error(), dir+string(filepath.Separator)); got != w.text {
			t.Errorf("error %d = %s\nwant %s", i, got, w.text)
		}
	}
	if !errors.Is(err, ErrDuplicate) || !errors.Is(err, ErrSyntax) {
		t.Errorf("the joined error does not match its parts: %v", err)
	}
}

func TestDiscoverUnreadableDirectory(t *testing.T) {
	file := filepath.Join(t.TempDir(), "not_a_dir")
	writeFiles(t, filepath.Dir(file), map[string]string{"not_a_dir": "x"})
	if _, err := Discover(file); err == nil || !strings.Contains(err.Error(), "discover script tools") {
		t.Errorf("Discover(a file) = %v, want an error", err)
	}
}
