package serve

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzConfine: whatever path a scenario names (relative to its bundle, or absolute), the
// confinement lets it through only when, its symbolic links resolved, it lies inside the bundle:
// no "..", absolute path or link inside the bundle that leads out gets past it.
func FuzzConfine(f *testing.F) {
	for _, seed := range []string{"w.toml", "sub/x.toml", "../x", "sub/../../x", "/etc/passwd", "link/secret", "link",
		"sub/link-up/x", "./././w.toml", "sub//..//..", "\x00", strings.Repeat("../", 50) + "etc/passwd", "dangling"} {
		f.Add(seed)
	}
	bundle, outside := f.TempDir(), f.TempDir()
	if err := os.MkdirAll(filepath.Join(bundle, "sub"), 0o755); err != nil {
		f.Fatal(err)
	}
	for _, p := range []string{filepath.Join(bundle, "w.toml"), filepath.Join(outside, "secret")} {
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			f.Fatal(err)
		}
	}
	for link, target := range map[string]string{"link": outside, "sub/link-up": "..", "dangling": filepath.Join(outside, "none")} {
		if err := os.Symlink(target, filepath.Join(bundle, link)); err != nil {
			f.Fatal(err)
		}
	}
	s := &Server{}
	c := s.confine(bundle)
	realBundle, err := filepath.EvalSymlinks(bundle)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, name string) {
		p := name
		if !filepath.IsAbs(p) {
			p = filepath.Join(bundle, p)
		}
		if c.check(p) != nil {
			return
		}
		real := realPath(filepath.Clean(p))
		if rel, err := filepath.Rel(realBundle, real); err != nil || !filepath.IsLocal(rel) && rel != "." {
			t.Errorf("%q passed, and it is %s, outside the bundle", name, real)
		}
	})
}
