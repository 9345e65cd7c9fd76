// Package golden compares test output with golden files under testdata, and rewrites them when
// the tests run with -update. Every package with golden files uses it, so the flag and the
// comparison are defined once.
package golden

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata instead of comparing with them")

// Updating reports whether the tests run with -update.
func Updating() bool { return *update }

// Check compares got with the golden file at path, failing t on a difference; with -update it
// writes got to path instead.
func Check(t testing.TB, path, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading golden file (run go test -update to create it): %v", err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s\n--- got\n%s--- want\n%s", path, got, want)
	}
}

// Corpus lists the files matching pattern (such as "*.toml") under testdata/dir, failing t when
// there are none, so a corpus that went missing cannot pass silently.
func Corpus(t testing.TB, dir, pattern string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", dir, pattern))
	if err != nil || len(files) == 0 {
		t.Fatalf("no corpus under testdata/%s: %v", dir, err)
	}
	return files
}
