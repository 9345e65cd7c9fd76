//go:build unix

package safepath

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// tree makes base/real/work (folders), base/file, and links base/link -> real and
// base/real/loop -> base/link, returning base with its own links resolved.
func tree(t *testing.T) string {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(base, "real", "work"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(base, "file"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{"link": filepath.Join(base, "real"), "real/loop": filepath.Join(base, "link")} {
		if err := os.Symlink(target, filepath.Join(base, link)); err != nil {
			t.Fatal(err)
		}
	}
	return base
}

// TestOpenRefusesEveryLink: a link at any component, the last one or one on the way, is refused
// with an *Error naming that component, and nothing is made beyond it even when asked to create.
func TestOpenRefusesEveryLink(t *testing.T) {
	base := tree(t)
	for _, tc := range []struct {
		name, path, stop string
		want             error
	}{
		{"the last component", filepath.Join(base, "link"), filepath.Join(base, "link"), ErrSymlink},
		{"a folder on the way", filepath.Join(base, "link", "work"), filepath.Join(base, "link"), ErrSymlink},
		{"missing past a link", filepath.Join(base, "link", "new", "deeper"), filepath.Join(base, "link"), ErrSymlink},
		{"a link to a link", filepath.Join(base, "real", "loop", "work"), filepath.Join(base, "real", "loop"), ErrSymlink},
		{"a file on the way", filepath.Join(base, "file", "work"), filepath.Join(base, "file"), syscall.ENOTDIR},
	} {
		for _, create := range []bool{false, true} {
			d, _, err := Open(tc.path, create)
			var pe *Error
			if !errors.As(err, &pe) || !errors.Is(err, tc.want) || pe.Path != tc.stop {
				t.Errorf("%s (create %v): %v, want an *Error at %s wrapping %v", tc.name, create, err, tc.stop, tc.want)
			}
			if d != nil {
				_ = d.Close()
			}
		}
	}
	if _, err := os.Lstat(filepath.Join(base, "real", "new")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a folder was made where a link led: %v", err)
	}
}

// TestOpenCreates: missing components are made only when asked, made says whether the last one
// was, and the folder reached is the one at the path.
func TestOpenCreates(t *testing.T) {
	base := tree(t)
	path := filepath.Join(base, "real", "a", "b")
	if _, _, err := Open(path, false); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("without create: %v, want ErrNotExist", err)
	}
	d, made, err := Open(path, true)
	if err != nil || !made {
		t.Fatalf("with create: made %v, %v", made, err)
	}
	id, err := d.Identity()
	_ = d.Close()
	if err != nil {
		t.Fatal(err)
	}
	info, err := os.Lstat(path)
	if err != nil || !info.IsDir() || info.Mode().Perm() != Perm&^umask() {
		t.Fatalf("the folder made: %v, %v", info, err)
	}
	again, made, err := Open(path, true)
	if err != nil || made {
		t.Fatalf("a second time: made %v, %v", made, err)
	}
	defer again.Close()
	if id2, err := again.Identity(); err != nil || !id.Same(id2) {
		t.Errorf("the same folder twice: %v and %v (%v)", id, id2, err)
	}
	root, err := again.Root()
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	if err := root.WriteFile("f", []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(path, "f")); err != nil {
		t.Errorf("the root does not write the folder: %v", err)
	}
	if _, _, err := Open("relative/path", true); err == nil || !strings.Contains(err.Error(), "not an absolute path") {
		t.Errorf("a relative path: %v", err)
	}
}

// TestIdentityTellsAReplacedFolder: a folder renamed away and made again at the same path is
// another folder; the Dir opened before still names the first one.
func TestIdentityTellsAReplacedFolder(t *testing.T) {
	base := tree(t)
	path := filepath.Join(base, "real", "work")
	first, _, err := Open(path, false)
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	before, err := first.Identity()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(base, "real"), filepath.Join(base, "moved")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(path, 0o755); err != nil {
		t.Fatal(err)
	}
	second, _, err := Open(path, false)
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	after, err := second.Identity()
	if err != nil {
		t.Fatal(err)
	}
	if before.Same(after) {
		t.Errorf("the fresh folder has the identity of the one renamed away (%v)", before)
	}
	if still, err := first.Identity(); err != nil || !still.Same(before) {
		t.Errorf("the first Dir changed identity: %v, %v", still, err)
	}
}

// umask reads the process's umask (which mkdirat applies).
func umask() os.FileMode {
	old := syscall.Umask(0)
	syscall.Umask(old)
	return os.FileMode(old)
}
