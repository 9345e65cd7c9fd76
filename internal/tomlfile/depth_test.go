package tomlfile

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// deepFile is a document whose deepest path has parts parts, in one of the shapes a hostile
// file nests with: a dotted key, a table header, inline tables, arrays, an array of tables.
func deepFile(shape string, parts int) string {
	switch shape {
	case "dotted":
		return strings.Repeat("a.", parts-1) + "a = 1\n"
	case "header":
		// The header has parts-1 keys, x is the last part.
		return "[" + strings.Repeat("a.", parts-2) + "a]\nx = 1\n"
	case "array_header":
		// [[a.….a]] is parts-2 keys and the element's index; x is the last part.
		return "[[" + strings.Repeat("a.", parts-3) + "a]]\nx = 1\n"
	case "inline":
		return "x = " + strings.Repeat("{a = ", parts-1) + "1" + strings.Repeat("}", parts-1) + "\n"
	case "array":
		return "x = " + strings.Repeat("[", parts-1) + "1" + strings.Repeat("]", parts-1) + "\n"
	case "mixed":
		// A header, a dotted key, then rounds of an array holding an inline table with a
		// dotted key: 3 parts a round.
		rounds, rest := (parts-2)/3, (parts-2)%3
		return "[t]\n" + "k" + strings.Repeat(".k", rest) + " = " + strings.Repeat("[{a.b = ", rounds) + "1" + strings.Repeat("}]", rounds) + "\n"
	}
	panic(shape)
}

var deepShapes = []string{"dotted", "header", "array_header", "inline", "array"}

// TestDepthCap checks that every way of nesting is accepted up to MaxDepth parts and refused one
// part past it, with an Error wrapping ErrTooDeep that names the file, the line and column of the
// part past the cap, the key as far as read and the cap; and that a file 20,000 deep is refused
// the same way (it cost a minute and a gigabyte before the cap).
func TestDepthCap(t *testing.T) {
	for _, shape := range deepShapes {
		t.Run(shape, func(t *testing.T) {
			var v map[string]any
			if _, err := Decode("deep.toml", []byte(deepFile(shape, MaxDepth)), &v); err != nil {
				t.Fatalf("%d parts: %v", MaxDepth, err)
			}
			for _, parts := range []int{MaxDepth + 1, 20000} {
				data := deepFile(shape, parts)
				_, err := Decode("deep.toml", []byte(data), &v)
				e := tooDeep(t, err, "deep.toml")
				if e.Line < 1 || e.Column < 1 {
					t.Fatalf("%d parts: %v: no position", parts, e)
				}
				// The position is the part past the cap: the 65th key or bracket.
				line := strings.Split(data, "\n")[e.Line-1]
				if c := line[e.Column-1]; c != 'a' && c != '[' && c != 'x' {
					t.Errorf("%d parts: %v: points at %q, not at a key or a bracket", parts, e, c)
				}
				if shape != "dotted" && shape != "header" && shape != "array_header" && !strings.HasPrefix(e.Key, "x") {
					t.Errorf("%d parts: key %q does not start with the value's key x", parts, e.Key)
				}
				if len(e.Key) > maxKeyInError+3 {
					t.Errorf("%d parts: key of %d bytes", parts, len(e.Key))
				}
			}
		})
	}
	t.Run("mixed", func(t *testing.T) {
		var v map[string]any
		if _, err := Decode("deep.toml", []byte(deepFile("mixed", MaxDepth)), &v); err != nil {
			t.Fatal(err)
		}
		_, err := Decode("deep.toml", []byte(deepFile("mixed", MaxDepth+1)), &v)
		if e := tooDeep(t, err, "deep.toml"); !strings.HasPrefix(e.Key, "t.k[0].a.b[0].a.b") {
			t.Errorf("key %q, want the path as far as read, t.k[0].a.b[0]…", e.Key)
		}
	})
}

// tooDeep returns the one Error in err, failing unless it wraps ErrTooDeep, names file and says
// the cap.
func tooDeep(t *testing.T, err error, file string) *Error {
	t.Helper()
	if !errors.Is(err, ErrTooDeep) {
		t.Fatalf("err = %v, want ErrTooDeep", err)
	}
	var errs Errors
	if !errors.As(err, &errs) || len(errs) != 1 {
		t.Fatalf("err = %#v, want one Error", err)
	}
	e := errs[0]
	if e.File != file || !strings.Contains(e.Msg, fmt.Sprintf("more than %d levels deep", MaxDepth)) ||
		!strings.Contains(e.Msg, "flatten") {
		t.Fatalf("error %q: want the file, the cap and what to do", e)
	}
	return e
}

// TestDepthCapIgnoresText checks that brackets, braces and dots inside strings (all four kinds)
// and comments do not count: only structure does.
func TestDepthCapIgnoresText(t *testing.T) {
	deep := strings.Repeat("[{a.", 200)
	doc := "# " + deep + "\n" +
		"a = \"" + deep + "\\\"" + deep + "\"\n" +
		"b = '" + deep + "'\n" +
		"c = \"\"\"\n" + deep + "\n\\\"\"\"" + deep + "\"\"\"\n" +
		"d = '''" + deep + "\n" + deep + "''''\n" +
		"\"" + deep + "\" = 1 # " + deep + "\n" +
		"e = [ # " + deep + "\n  \"" + deep + "\",\n  '" + deep + "', # x\n]\n" +
		"f = {\"" + deep + "\" = 1, g = '" + deep + "'}\n" +
		"[\"" + deep + "x\".'" + deep + "']\n" +
		"[[ \"" + deep + "y\" ]]\n" +
		"date = 1979-05-27 07:32:00Z\r\n" +
		"list = [1979-05-27 07:32:00Z, 1, 2.5, true, [], {}, [ ], { }, [1,],]\n"
	var v map[string]any
	if _, err := Decode("text.toml", []byte(doc), &v); err != nil {
		t.Fatal(err)
	}
	// The check read to the end: it did not stop at anything it does not understand, which
	// would leave the document's depth to the index alone.
	ix := newIndexer("text.toml", []byte(doc))
	s := &depthScan{ix: ix, data: ix.data}
	if err, ok := s.run(); err != nil || !ok {
		t.Fatalf("the depth check stopped at byte %d (%v): %q", s.i, err, doc[s.i:])
	}
}

// TestDepthCapBackstop checks a document the byte check counts less deep than it is (a header
// through an array of tables gains an index part the header does not show): the index refuses
// it with the same error.
func TestDepthCapBackstop(t *testing.T) {
	// MaxDepth keys, and a[0]'s index.
	doc := "[[a]]\n[" + strings.Repeat("a.", MaxDepth-1) + "a]\n"
	var v map[string]any
	_, err := Decode("aot.toml", []byte(doc), &v)
	e := tooDeep(t, err, "aot.toml")
	if e.Line != 2 || !strings.HasPrefix(e.Key, "a[0].a.a") {
		t.Errorf("error %q: want line 2, key a[0].a.a…", e)
	}
	if _, err := Decode("aot.toml", []byte("[[a]]\n["+strings.Repeat("a.", MaxDepth-2)+"a]\n"), &v); err != nil {
		t.Errorf("%d parts: %v", MaxDepth, err)
	}
}

// TestDepthCapEverywhere checks that every entry point refuses a deep document: ReadFile,
// Override and DecodeTable (whose table a caller took from an earlier decoding).
func TestDepthCapEverywhere(t *testing.T) {
	path := filepath.Join(t.TempDir(), "deep.toml")
	data := "name = \"n\"\n" + deepFile("dotted", 20000)
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	var sc testScenario
	_, err := ReadFile(path, &sc)
	if e := tooDeep(t, err, path); e.Line != 2 {
		t.Errorf("ReadFile: %v: want line 2", e)
	}
	if _, err := Override(path, []byte(data), "name", "m"); !errors.Is(err, ErrTooDeep) {
		t.Errorf("Override: %v, want ErrTooDeep", err)
	}
	doc, err := Decode("ok.toml", []byte("[m]\nkind = \"k\"\n"), new(map[string]any))
	if err != nil {
		t.Fatal(err)
	}
	table := map[string]any{"kind": "k"}
	for range MaxDepth + 1 {
		table = map[string]any{"a": table}
	}
	var into struct {
		A map[string]any `toml:"a"`
	}
	if errs := doc.DecodeTable("m", table, &into); !errors.Is(errs.Err(), ErrTooDeep) {
		t.Errorf("DecodeTable: %v, want ErrTooDeep", errs)
	}
}

// allocated returns the bytes allocated by one call of f.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// linearShapes are documents of about n bytes that cost more than linear memory before the
// index was a tree: many keys under one long header, many deep keys, arrays of tables.
var linearShapes = map[string]func(n int) string{
	// A header key of n/2 bytes and n/16 keys under it, in tables of a thousand keys (MaxTableKeys)
	// (each key's path copied the header's).
	"long header": func(n int) string {
		var b strings.Builder
		long := "\"" + strings.Repeat("h", n/2) + "\""
		b.WriteString("[" + long + "]\n")
		for i := 0; b.Len() < n; i++ {
			if i > 0 && i%1000 == 0 {
				fmt.Fprintf(&b, "[%s.t%d]\n", long, i)
			}
			fmt.Fprintf(&b, "k%d = %d\n", i, i)
		}
		return b.String()
	},
	// Tables of MaxTableKeys keys each, as many as fit: go-toml's decoder compares each key with
	// its table's, so this is the widest the cap lets a table be.
	"wide tables": func(n int) string {
		var b strings.Builder
		for i := 0; b.Len() < n; i++ {
			if i%MaxTableKeys == 0 {
				fmt.Fprintf(&b, "[t%d]\n", i/MaxTableKeys)
			}
			fmt.Fprintf(&b, "k%d = %d\n", i, i)
		}
		return b.String()
	},
	// Keys 60 parts deep, as many as fit, a thousand a table (MaxTableKeys).
	"deep keys": func(n int) string {
		var b strings.Builder
		for i := 0; b.Len() < n; i++ {
			if i%1000 == 0 {
				fmt.Fprintf(&b, "[t%d]\n", i/1000)
			}
			fmt.Fprintf(&b, "k%d.%s = 1\n", i, strings.Repeat("a.", 57)+"a")
		}
		return b.String()
	},
	// A blueprint's stages, as many as fit.
	"stages": func(n int) string {
		var b strings.Builder
		b.WriteString("name = \"w\"\n")
		for i := 0; b.Len() < n; i++ {
			fmt.Fprintf(&b, "[[stages]]\nname = \"s%d\"\navailable_tools = [\"a\", \"b\"]\n[stages.tool_permissions]\na = \"ask\"\n[[stages.transitions]]\non = \"done\"\nto = \"s%d\"\n", i, i+1)
		}
		return b.String()
	},
}

// TestLoadMemoryLinear checks that decoding allocates in proportion to the document: the bytes
// allocated per byte of input stay within a factor of 2 from 16 KiB to 256 KiB, in every shape
// (the long header's grew 16-fold before). Allocation counts, not time, so the test does not
// depend on the machine's load.
func TestLoadMemoryLinear(t *testing.T) {
	for name, gen := range linearShapes {
		t.Run(name, func(t *testing.T) {
			perByte := func(n int) float64 {
				data := []byte(gen(n))
				bytes := allocated(func() {
					var v map[string]any
					if _, err := Decode("big.toml", data, &v); err != nil {
						t.Fatal(err)
					}
				})
				return float64(bytes) / float64(len(data))
			}
			small, large := perByte(16<<10), perByte(256<<10)
			t.Logf("%.0f B/byte at 16 KiB, %.0f at 256 KiB", small, large)
			if large > 2*small {
				t.Errorf("%.0f bytes allocated per byte at 256 KiB, %.0f at 16 KiB: not linear", large, small)
			}
		})
	}
}

// BenchmarkDecodeSize decodes documents of growing size in each shape of linearShapes, reporting
// ns/byte and B/byte, which stay flat when loading is linear:
//
//	go test ./internal/tomlfile/ -run '^$' -bench DecodeSize
func BenchmarkDecodeSize(b *testing.B) {
	for _, name := range []string{"long header", "wide tables", "deep keys", "stages"} {
		for _, n := range []int{16 << 10, 64 << 10, 256 << 10, 1 << 20} {
			data := []byte(linearShapes[name](n))
			b.Run(fmt.Sprintf("%s/%dKiB", name, n>>10), func(b *testing.B) {
				b.ReportAllocs()
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				for b.Loop() {
					var v map[string]any
					if _, err := Decode("big.toml", data, &v); err != nil {
						b.Fatal(err)
					}
				}
				runtime.ReadMemStats(&after)
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(data)), "ns/byte")
				b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(b.N)/float64(len(data)), "B/byte")
			})
		}
	}
}

// FuzzTOMLLoad fuzzes the whole load path a Warren file takes through this package, with the
// nesting cap: Read from disk and Decode (ReadFile) into a scenario-shaped struct and into a map,
// placing an error at every key reported, Override of a key, DecodeTable of a table. No input may
// panic; every problem is an Error naming the file; a document past MaxDepth is refused with
// ErrTooDeep at a line; and whenever a document is valid TOML, the depth check read it to the end
// (it understood every byte, so its count is the one that held). Seeds: the hostile shapes 2,000
// deep and the shipped scenarios and blueprints. Run with:
//
//	go test ./internal/tomlfile/ -run '^$' -fuzz '^FuzzTOMLLoad$' -fuzztime 20s -parallel 1
func FuzzTOMLLoad(f *testing.F) {
	for _, shape := range append(deepShapes, "mixed") {
		f.Add([]byte(deepFile(shape, 2000)))
		f.Add([]byte(deepFile(shape, MaxDepth)))
	}
	f.Add([]byte("[[a]]\n[" + strings.Repeat("a.", MaxDepth-1) + "a]\n"))
	var seeds []string
	for _, glob := range []string{"../../scenarios/examples/*.toml", "../../scenarios/examples/*/*.toml", "../../blueprint/testdata/*/*.toml", "testdata/*/*.toml"} {
		files, err := filepath.Glob(glob)
		if err != nil {
			f.Fatal(err)
		}
		seeds = append(seeds, files...)
	}
	if len(seeds) < 20 {
		f.Fatalf("only %d seed files: the shipped scenarios moved?", len(seeds))
	}
	for _, file := range seeds {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(dir, "fuzz.toml")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		check := func(what string, err error) {
			t.Helper()
			if err == nil {
				return
			}
			var errs Errors
			if !errors.As(err, &errs) {
				t.Fatalf("%s: %T is not Errors: %v", what, err, err)
			}
			for _, e := range errs {
				if e.File != path {
					t.Errorf("%s: error without the file: %v", what, e)
				}
				if errors.Is(e, ErrTooDeep) && (e.Line < 1 || !strings.Contains(e.Msg, "levels deep")) {
					t.Errorf("%s: depth error without a line or the cap: %v", what, e)
				}
			}
		}
		var sc testScenario
		doc, err := ReadFile(path, &sc)
		check("scenario", err)
		if doc != nil {
			var errs Errors
			if errors.As(err, &errs) {
				for _, e := range errs {
					_ = doc.Errorf(e.Key, "again")
				}
			}
		}
		var v map[string]any
		doc, err = ReadFile(path, &v)
		check("map", err)
		if err != nil {
			return
		}
		// Valid TOML: the depth check must have understood all of it.
		ix := newIndexer(path, data)
		s := &depthScan{ix: ix, data: data}
		if e, ok := s.run(); e != nil || !ok {
			t.Fatalf("valid TOML, but the depth check stopped at byte %d (%v): %q", s.i, e, data[s.i:min(s.i+40, len(data))])
		}
		// A few keys (each Override reads the whole document again).
		for _, key := range slices.Sorted(maps.Keys(v))[:min(3, len(v))] {
			val, path := v[key], JoinKey("", key)
			_, _ = Override("fuzz.toml", data, path, "1")
			if table, ok := val.(map[string]any); ok {
				var into map[string]any
				_ = doc.DecodeTable(path, table, &into)
			}
		}
	})
}
