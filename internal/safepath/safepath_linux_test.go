package safepath

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/warrenhq/warren/internal/testenv"
)

// TestOpenNeverBlocksOnAFIFO: a FIFO where a folder was expected is refused as not a folder, at
// once (an open for reading would wait for a writer forever).
func TestOpenNeverBlocksOnAFIFO(t *testing.T) {
	base := tree(t)
	fifo := filepath.Join(base, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{fifo, filepath.Join(fifo, "work")} {
		if _, _, err := Open(path, true); !errors.Is(err, syscall.ENOTDIR) {
			t.Errorf("%s: %v, want ENOTDIR", path, err)
		}
	}
}

// TestChownChangesTheFolderReached: Chown hands over the folder the walk reached, even when its
// path leads elsewhere by then.
func TestChownChangesTheFolderReached(t *testing.T) {
	uid, gid := 65533, 65533
	if os.Geteuid() != 0 {
		uid, gid = os.Getuid(), os.Getgid() // only root may give a folder away
	} else if err := os.Lchown(t.TempDir(), uid, gid); err != nil {
		// A root whose user namespace maps no other user (a container's) cannot give anything
		// away: what is tested here cannot happen on this machine.
		testenv.MustHave(t, fmt.Sprintf("root cannot give a folder to uid %d here (%v): its user namespace maps no other user", uid, err))
	}
	base := tree(t)
	path := filepath.Join(base, "real", "work")
	d, _, err := Open(path, false)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := os.Rename(path, filepath.Join(base, "real", "moved")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(base, "file"), path); err != nil {
		t.Fatal(err)
	}
	if err := d.Chown(uid, gid); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]uint32{"real/moved": uint32(uid), "file": uint32(os.Getuid())} {
		var st syscall.Stat_t
		if err := syscall.Lstat(filepath.Join(base, name), &st); err != nil || st.Uid != want {
			t.Errorf("%s belongs to %d (%v), want %d", name, st.Uid, err, want)
		}
	}
}
