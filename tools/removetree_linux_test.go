package tools

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/warrenhq/warren/internal/testenv"
)

// plantedTree is a run's workdir root as commands may leave it: a link to a host folder, a link to
// a host file, a hard link to a host file, a FIFO, and ordinary files and folders.
func plantedTree(t *testing.T, h hostFile) string {
	t.Helper()
	tree := filepath.Join(t.TempDir(), "run")
	writeFiles(t, tree, map[string]string{"g/a/notes.txt": "n", "g/a/deep/er/f": "f"})
	agent := filepath.Join(tree, "g", "a")
	for _, err := range []error{
		os.Symlink(filepath.Dir(h.path), filepath.Join(agent, "dirlink")),
		os.Symlink(h.path, filepath.Join(agent, "filelink")),
		os.Link(h.path, filepath.Join(agent, "hardlink")),
		syscall.Mkfifo(filepath.Join(agent, "pipe"), 0o644),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	return tree
}

// TestRemoveTreeFollowsNoLink: removing a run's root removes links, FIFOs and hard links by name
// and leaves the host files they lead to as they were.
func TestRemoveTreeFollowsNoLink(t *testing.T) {
	h := newHostFile(t)
	tree := plantedTree(t, h)
	if err := RemoveTree(tree); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(tree); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the tree is still there: %v", err)
	}
	h.intact(t)
	if err := RemoveTree(tree); err != nil {
		t.Fatalf("removing a tree that is gone: %v", err)
	}
}

// inMountNamespace runs fn on a thread of its own in a new, private mount namespace, so mounts it
// makes are seen by nothing else and end with the thread (which is never unlocked, so it exits
// with the goroutine). It skips t when this process may not make one, and fails it instead when
// WARREN_REQUIRE_SANDBOX=1.
func inMountNamespace(t *testing.T, fn func() error) {
	t.Helper()
	type outcome struct {
		setup, err error
	}
	done := make(chan outcome)
	go func() {
		runtime.LockOSThread()
		err := unix.Unshare(unix.CLONE_NEWNS)
		if err == nil {
			err = unix.Mount("", "/", "", unix.MS_PRIVATE|unix.MS_REC, "")
		}
		if err != nil {
			done <- outcome{setup: err}
			return
		}
		done <- outcome{err: fn()}
	}()
	o := <-done
	if o.setup != nil {
		testenv.MustHave(t, fmt.Sprintf("this process cannot make a private mount namespace (it needs CAP_SYS_ADMIN, which root has outside a container): %v", o.setup))
	}
	if o.err != nil {
		t.Fatal(o.err)
	}
}

// TestRemoveTreeLeavesMounts: a command in mode none runs as the host's user in the host's mount
// namespace and may bind-mount a host folder into its workdir. os.RemoveAll empties such a mount,
// deleting the host files it shows; RemoveTree leaves it in place and says so.
func TestRemoveTreeLeavesMounts(t *testing.T) {
	for _, tc := range []struct {
		name    string
		remove  func(string) error
		deletes bool
	}{
		{"os.RemoveAll", os.RemoveAll, true},
		{"RemoveTree", RemoveTree, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHostFile(t)
			tree := plantedTree(t, h)
			mnt := filepath.Join(tree, "g", "a", "deep", "mnt")
			if err := os.Mkdir(mnt, 0o755); err != nil {
				t.Fatal(err)
			}
			var removeErr error
			inMountNamespace(t, func() error {
				if err := unix.Mount(filepath.Dir(h.path), mnt, "", unix.MS_BIND, ""); err != nil {
					return err
				}
				removeErr = tc.remove(tree)
				return nil
			})
			_, statErr := os.Stat(h.path)
			if deleted := errors.Is(statErr, fs.ErrNotExist); deleted != tc.deletes {
				t.Fatalf("the host file behind the mount deleted: %v, want %v (remove: %v)", deleted, tc.deletes, removeErr)
			}
			if tc.deletes {
				return
			}
			h.intact(t)
			wantError(t, removeErr, unix.EXDEV, "g/a/deep/mnt is another mount, left in place")
			if _, err := os.Lstat(mnt); err != nil {
				t.Errorf("the mount point: %v, want it left in place", err)
			}
			for _, gone := range []string{"g/a/notes.txt", "g/a/dirlink", "g/a/pipe", "g/a/hardlink", "g/a/deep/er"} {
				if _, err := os.Lstat(filepath.Join(tree, gone)); !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("%s: %v, want it removed", gone, err)
				}
			}
		})
	}
}
