package tomlfile

import (
	"errors"
	"fmt"
	"github.com/warrenhq/warren/internal/golden"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// testScenario mirrors the shape of a Warren scenario file, so the corpus
// exercises arrays of tables, maps, nested structs and sized integers.
type testScenario struct {
	Name    string            `toml:"name"`
	Seed    int64             `toml:"seed"`
	Groups  []testGroup       `toml:"groups"`
	Answers map[string]string `toml:"answers"`
	Limits  testLimits        `toml:"limits"`
}

type testGroup struct {
	Name      string   `toml:"name"`
	Count     int      `toml:"count"`
	Blueprint string   `toml:"blueprint"`
	Model     string   `toml:"model"`
	Workdir   string   `toml:"workdir"`
	Tags      []string `toml:"tags"`
}

type testLimits struct {
	MaxAgents uint8 `toml:"max_agents"`
}

// TestDecodeCorpus decodes every file under testdata/decode into a
// testScenario and compares the full error text with the .err golden file.
func TestDecodeCorpus(t *testing.T) {
	for _, file := range golden.Corpus(t, "decode", "*.toml") {
		name := strings.TrimSuffix(filepath.Base(file), ".toml")
		t.Run(name, func(t *testing.T) {
			var got string
			var sc testScenario
			if _, err := ReadFile(file, &sc); err != nil {
				got = err.Error() + "\n"
				var errs Errors
				if !errors.As(err, &errs) {
					t.Fatalf("error %T is not Errors: %v", err, err)
				}
				for _, e := range errs {
					if e.File != file {
						t.Errorf("error %q names file %q, want %q", e, e.File, file)
					}
				}
			}
			golden.Check(t, strings.TrimSuffix(file, ".toml")+".err", got)
		})
	}
}

// dumpIndex renders a Doc's index one path per line, sorted, for goldens.
func dumpIndex(d *Doc) string {
	entries := make(map[string]entry, len(d.nodes))
	for id := 1; id < len(d.nodes); id++ {
		entries[d.path(int32(id))] = d.nodes[id].entry
	}
	var b strings.Builder
	for _, path := range slices.Sorted(maps.Keys(entries)) {
		e := entries[path]
		fmt.Fprintf(&b, "%s %d:%d %s\n", path, e.line, e.col, e.kind)
	}
	return b.String()
}

// TestIndexCorpus indexes every file under testdata/index (decoding into an
// untyped map, which accepts any key) and compares the path index with the
// .pos golden file.
func TestIndexCorpus(t *testing.T) {
	for _, file := range golden.Corpus(t, "index", "*.toml") {
		name := strings.TrimSuffix(filepath.Base(file), ".toml")
		t.Run(name, func(t *testing.T) {
			var v map[string]any
			doc, err := ReadFile(file, &v)
			if err != nil {
				t.Fatal(err)
			}
			golden.Check(t, strings.TrimSuffix(file, ".toml")+".pos", dumpIndex(doc))
		})
	}
}

const blueprintLike = `name = "worker"
[tool_permissions]
read_file = "allow"
"odd tool" = "ask"
[[stages]]
name = "gather"
available_tools = ["read_file", "write_file",
  "shell"]
[stages.tool_permissions]
write_file = "ask"
[[stages.transitions]]
on = "done"
to = "report"
[[stages]]
name = "report"
[[stages.transitions]]
on = "error"
to = "gather"
[[stages.transitions]]
on = "always"
to = "report"
`

func TestPos(t *testing.T) {
	var v map[string]any
	doc, err := Decode("bp.toml", []byte(blueprintLike), &v)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		path      string
		line, col int
		ok        bool
	}{
		{name: "top-level key", path: "name", line: 1, col: 1, ok: true},
		{name: "table", path: "tool_permissions", line: 2, col: 2, ok: true},
		{name: "key in table", path: "tool_permissions.read_file", line: 3, col: 1, ok: true},
		{name: "quoted key", path: `tool_permissions."odd tool"`, line: 4, col: 1, ok: true},
		{name: "array of tables", path: "stages", line: 5, col: 3, ok: true},
		{name: "first element", path: "stages[0]", line: 5, col: 3, ok: true},
		{name: "second element", path: "stages[1]", line: 14, col: 3, ok: true},
		{name: "array value", path: "stages[0].available_tools", line: 7, col: 1, ok: true},
		{name: "array element", path: "stages[0].available_tools[1]", line: 7, col: 33, ok: true},
		{name: "array element on next line", path: "stages[0].available_tools[2]", line: 8, col: 3, ok: true},
		{name: "sub-table of last element", path: "stages[0].tool_permissions.write_file", line: 10, col: 1, ok: true},
		{name: "nested array of tables", path: "stages[0].transitions[0].to", line: 13, col: 1, ok: true},
		{name: "nested array in second element", path: "stages[1].transitions[1].on", line: 20, col: 1, ok: true},
		{name: "missing key", path: "stages[1].max_iterations", ok: false},
		{name: "missing element", path: "stages[2]", ok: false},
		{name: "malformed path", path: "stages..name", ok: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			line, col, ok := doc.Pos(tt.path)
			if ok != tt.ok || line != tt.line || col != tt.col {
				t.Errorf("Pos(%q) = %d, %d, %v; want %d, %d, %v", tt.path, line, col, ok, tt.line, tt.col, tt.ok)
			}
		})
	}
}

var errSentinel = errors.New("sentinel")

func TestErrorf(t *testing.T) {
	var v map[string]any
	doc, err := Decode("bp.toml", []byte(blueprintLike), &v)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		path string
		want string
	}{
		{name: "existing path", path: "stages[0].transitions[0].to", want: "bp.toml:13:1: stages[0].transitions[0].to: bad: x"},
		{name: "falls back to parent", path: "stages[1].max_iterations", want: "bp.toml:14:3: stages[1].max_iterations: bad: x"},
		{name: "falls back two levels", path: "stages[1].transitions[5].on", want: "bp.toml:16:10: stages[1].transitions[5].on: bad: x"},
		{name: "no parent gives no line", path: "entry", want: "bp.toml: entry: bad: x"},
		{name: "malformed path uses valid prefix", path: "stages[1]..x", want: "bp.toml:14:3: stages[1]..x: bad: x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := doc.Errorf(tt.path, "bad: %s", "x")
			if got := e.Error(); got != tt.want {
				t.Errorf("Errorf(%q) = %q, want %q", tt.path, got, tt.want)
			}
		})
	}
	t.Run("wraps with %w", func(t *testing.T) {
		e := doc.Errorf("name", "%w: %q", errSentinel, "v")
		if !errors.Is(e, errSentinel) || !errors.Is(Errors{e}, errSentinel) {
			t.Errorf("errors.Is(%v, errSentinel) = false", e)
		}
		if e.Msg != `sentinel: "v"` {
			t.Errorf("Msg = %q", e.Msg)
		}
	})
	t.Run("nil doc", func(t *testing.T) {
		var d *Doc
		if got := d.Errorf("x", "m").Error(); got != "x: m" {
			t.Errorf("got %q", got)
		}
	})
}

func TestErrorFormat(t *testing.T) {
	tests := []struct {
		name string
		err  *Error
		want string
	}{
		{name: "everything", err: &Error{File: "f.toml", Line: 3, Column: 7, Key: "a.b", Msg: "m"}, want: "f.toml:3:7: a.b: m"},
		{name: "no column", err: &Error{File: "f.toml", Line: 3, Key: "a", Msg: "m"}, want: "f.toml:3: a: m"},
		{name: "no line", err: &Error{File: "f.toml", Key: "a", Msg: "m"}, want: "f.toml: a: m"},
		{name: "no key", err: &Error{File: "f.toml", Line: 1, Column: 2, Msg: "m"}, want: "f.toml:1:2: m"},
		{name: "no file", err: &Error{Line: 1, Column: 2, Key: "k", Msg: "m"}, want: "1:2: k: m"},
		{name: "message only", err: &Error{Msg: "m"}, want: "m"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.err.Error(); got != tt.want {
				t.Errorf("Error() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestErrorsSortedAndUnwrapped(t *testing.T) {
	errs := Errors{
		{File: "f", Line: 9, Column: 1, Msg: "late"},
		{File: "f", Msg: "no line"},
		{File: "f", Line: 2, Column: 5, Msg: "second", Err: errSentinel},
		{File: "f", Line: 2, Column: 1, Msg: "first"},
	}
	want := "f: no line\nf:2:1: first\nf:2:5: second\nf:9:1: late"
	if got := errs.Error(); got != want {
		t.Errorf("Error() =\n%s\nwant\n%s", got, want)
	}
	if errs[0].Msg != "late" {
		t.Error("Error() reordered the receiver")
	}
	if !errors.Is(errs, errSentinel) {
		t.Error("errors.Is does not see through Errors")
	}
	if len(errs.Unwrap()) != 4 {
		t.Errorf("Unwrap() has %d errors, want 4", len(errs.Unwrap()))
	}
	if (Errors{}).Err() != nil || errs.Err() == nil {
		t.Error("Err() must be nil exactly when there are no errors")
	}
}

func TestDecodeClassifiesErrors(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		want error
	}{
		{name: "syntax", doc: "name = \n", want: ErrSyntax},
		{name: "duplicate key", doc: "name = 'a'\nname = 'b'\n", want: ErrSyntax},
		{name: "unknown key", doc: "nmae = 'a'\n", want: ErrUnknownKey},
		{name: "wrong type", doc: "seed = 'a'\n", want: ErrType},
		{name: "overflow", doc: "limits.max_agents = 256\n", want: ErrType},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var sc testScenario
			_, err := Decode("s.toml", []byte(tt.doc), &sc)
			if !errors.Is(err, tt.want) {
				t.Errorf("Decode error %v is not %v", err, tt.want)
			}
		})
	}
}

func TestDecodeUnknownKeysStillDecodes(t *testing.T) {
	var sc testScenario
	doc, err := Decode("s.toml", []byte("name = 'a'\nbogus = 1\n[[groups]]\ncount = 2\n"), &sc)
	if !errors.Is(err, ErrUnknownKey) {
		t.Fatalf("err = %v, want ErrUnknownKey", err)
	}
	if doc == nil {
		t.Fatal("Doc is nil after unknown keys")
	}
	if sc.Name != "a" || len(sc.Groups) != 1 || sc.Groups[0].Count != 2 {
		t.Errorf("known keys were not decoded: %+v", sc)
	}
}

func TestDecodeNonPointer(t *testing.T) {
	var sc testScenario
	_, err := Decode("s.toml", []byte("name = 'a'\n"), sc)
	if err == nil || !strings.Contains(err.Error(), "s.toml") {
		t.Errorf("err = %v, want an error naming the file", err)
	}
}

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	t.Run("missing file", func(t *testing.T) {
		path := filepath.Join(dir, "absent.toml")
		var sc testScenario
		_, err := ReadFile(path, &sc)
		if !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("err = %v, want fs.ErrNotExist", err)
		}
		if want := path + ": file does not exist"; err == nil || err.Error() != want {
			t.Errorf("err = %v, want %q", err, want)
		}
	})
	t.Run("directory", func(t *testing.T) {
		var sc testScenario
		_, err := ReadFile(dir, &sc)
		if err == nil || !strings.HasPrefix(err.Error(), dir+": cannot read file: ") {
			t.Errorf("err = %v, want a read error naming %s", err, dir)
		}
	})
	t.Run("present file", func(t *testing.T) {
		path := filepath.Join(dir, "s.toml")
		if err := os.WriteFile(path, []byte("name = 'x'\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		var sc testScenario
		doc, err := ReadFile(path, &sc)
		if err != nil || sc.Name != "x" || doc.File != path {
			t.Errorf("ReadFile = %+v, %v; want name x from %s", sc, err, path)
		}
	})
}

func TestJoinAndSplitPath(t *testing.T) {
	tests := []struct {
		name string
		path string
		want []string // segments rendered as key or [n]
		ok   bool
	}{
		{name: "simple", path: "a.b", want: []string{"a", "b"}, ok: true},
		{name: "indices", path: "stages[1].transitions[0].to", want: []string{"stages", "[1]", "transitions", "[0]", "to"}, ok: true},
		{name: "nested indices", path: "m[0][2]", want: []string{"m", "[0]", "[2]"}, ok: true},
		{name: "quoted", path: JoinKey(JoinKey("t", "a.b c"), "x"), want: []string{"t", "a.b c", "x"}, ok: true},
		{name: "quoted with escapes", path: JoinKey("", `q"\`), want: []string{`q"\`}, ok: true},
		{name: "empty path", path: "", ok: true},
		{name: "double dot", path: "a..b", want: []string{"a"}},
		{name: "trailing dot", path: "a.", want: []string{"a"}},
		{name: "leading index", path: "[0]"},
		{name: "index after dot", path: "a.[0]", want: []string{"a"}},
		{name: "bad index", path: "a[x]", want: []string{"a"}},
		{name: "unterminated quote", path: `a."b`, want: []string{"a"}},
		{name: "junk after key", path: "a b", want: []string{"a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			segs, ok := splitPath(tt.path)
			var got []string
			for _, s := range segs {
				if s.isIndex {
					got = append(got, fmt.Sprintf("[%d]", s.index))
				} else {
					got = append(got, s.key)
				}
			}
			if ok != tt.ok || !slices.Equal(got, tt.want) {
				t.Errorf("splitPath(%q) = %q, %v; want %q, %v", tt.path, got, ok, tt.want, tt.ok)
			}
		})
	}
	if got := JoinIndex(JoinKey("", "stages"), 3); got != "stages[3]" {
		t.Errorf("JoinIndex = %q", got)
	}
}

// FuzzDecode checks that no input makes Decode panic and that every reported
// error carries the file name. Run with: go test -fuzz=FuzzDecode ./internal/tomlfile
func FuzzDecode(f *testing.F) {
	f.Add([]byte(blueprintLike))
	for _, dir := range []string{"decode", "index"} {
		files, _ := filepath.Glob(filepath.Join("testdata", dir, "*.toml"))
		for _, file := range files {
			data, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var sc testScenario
		_, err := Decode("fuzz.toml", data, &sc)
		var errs Errors
		if errors.As(err, &errs) {
			for _, e := range errs {
				if e.File != "fuzz.toml" {
					t.Errorf("error without file: %v", e)
				}
			}
		}
		var v map[string]any
		_, _ = Decode("fuzz.toml", data, &v)
	})
}

// BenchmarkDecode is the one-off load of a blueprint-sized file, index
// included.
func BenchmarkDecode(b *testing.B) {
	data := []byte(blueprintLike)
	b.ReportAllocs()
	for b.Loop() {
		var v map[string]any
		if _, err := Decode("bp.toml", data, &v); err != nil {
			b.Fatal(err)
		}
	}
}
