package blueprint

import (
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/warrenhq/warren/internal/tomlfile"
)

const minimalBlueprint = "name = \"m\"\n[[stages]]\nname = \"only\"\n"

func writeFile(t testing.TB, dir, name, content string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestCacheSharesOneBlueprintPerFile(t *testing.T) {
	dir := t.TempDir()
	path := writeFile(t, dir, "m.toml", minimalBlueprint)
	other := writeFile(t, dir, "o.toml", minimalBlueprint)
	cache := NewCache(testTools)

	first, err := cache.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if first.Path != path {
		t.Errorf("Path = %q, want the absolute path %q", first.Path, path)
	}
	tests := []struct {
		name string
		path string
		same bool
	}{
		{name: "same path", path: path, same: true},
		{name: "unclean spelling", path: filepath.Join(dir, ".", "sub", "..", "m.toml"), same: true},
		{name: "different file with equal content", path: other, same: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := cache.Load(tt.path)
			if err != nil {
				t.Fatal(err)
			}
			if (got == first) != tt.same {
				t.Errorf("Load(%q) shared = %v, want %v", tt.path, got == first, tt.same)
			}
		})
	}
}

func TestCacheRelativePathIsAbsolute(t *testing.T) {
	cache := NewCache(testTools)
	rel := filepath.Join("testdata", "good", "minimal.toml")
	bp, err := cache.Load(rel)
	if err != nil {
		t.Fatal(err)
	}
	abs, err := filepath.Abs(rel)
	if err != nil {
		t.Fatal(err)
	}
	again, err := cache.Load(abs)
	if err != nil || again != bp || bp.Path != abs {
		t.Errorf("relative and absolute loads differ: %p %p, Path %q, want %q", bp, again, bp.Path, abs)
	}
}

func TestCacheLoadsOnce(t *testing.T) {
	dir := t.TempDir()
	path := writeFile(t, dir, "m.toml", minimalBlueprint)
	cache := NewCache(testTools)
	first, err := cache.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	// A later edit is not seen: a run keeps the blueprint it started with.
	writeFile(t, dir, "m.toml", "not toml at all [")
	again, err := cache.Load(path)
	if err != nil || again != first {
		t.Errorf("second Load = %p, %v; want the cached %p", again, err, first)
	}
}

func TestCacheRemembersErrors(t *testing.T) {
	dir := t.TempDir()
	path := writeFile(t, dir, "bad.toml", "name = \"b\"\n")
	cache := NewCache(testTools)
	_, err := cache.Load(path)
	if !errors.Is(err, ErrNoStages) {
		t.Fatalf("err = %v, want ErrNoStages", err)
	}
	writeFile(t, dir, "bad.toml", minimalBlueprint)
	bp, err2 := cache.Load(path)
	if bp != nil || err2 == nil || err2.Error() != err.Error() {
		t.Errorf("second Load = %v, %v; want the remembered error %v", bp, err2, err)
	}
}

func TestCacheMissingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "absent.toml")
	_, err := NewCache(testTools).Load(path)
	var errs tomlfile.Errors
	if !errors.Is(err, os.ErrNotExist) || !errors.As(err, &errs) || errs[0].File != path {
		t.Errorf("err = %v, want a not-exist error naming %s", err, path)
	}
}

// TestCacheConcurrent loads a few files from many goroutines at once (run
// with -race): every caller of a file must get the same pointer.
func TestCacheConcurrent(t *testing.T) {
	dir := t.TempDir()
	paths := []string{
		writeFile(t, dir, "a.toml", minimalBlueprint),
		writeFile(t, dir, "b.toml", minimalBlueprint),
		writeFile(t, dir, "c.toml", "name = \"c\"\n"),
	}
	cache := NewCache(testTools)
	const goroutines = 32
	results := make([][]*Blueprint, goroutines)
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for _, p := range paths {
				bp, _ := cache.Load(p)
				results[g] = append(results[g], bp)
			}
		})
	}
	wg.Wait()
	for g := 1; g < goroutines; g++ {
		for i := range paths {
			if results[g][i] != results[0][i] {
				t.Fatalf("goroutine %d got a different blueprint for %s", g, paths[i])
			}
		}
	}
	if results[0][0] == nil || results[0][0] == results[0][1] || results[0][2] != nil {
		t.Errorf("unexpected results: %v", results[0])
	}
}
