package systems

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/warrenhq/warren/internal/testenv"
	"github.com/warrenhq/warren/tools"
)

// secret is what a host file holds that no agent may read.
const secret = "SECRET_TOKEN_k9F2xQ"

// TestFanOutItemsFileStaysInTheWorkdir: a fan-out's items file is read on the world goroutine,
// so it must be a regular file inside the agent's workdir: a link to a host file, a workdir
// reached through a link, or a FIFO is refused, and no host file's content becomes an item.
func TestFanOutItemsFileStaysInTheWorkdir(t *testing.T) {
	hostDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(hostDir, "items.txt"), []byte(secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	base := t.TempDir()
	w := filepath.Join(base, "work")
	if err := os.Mkdir(w, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(w, "own.txt"), []byte("a\nb\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(hostDir, "items.txt"), filepath.Join(w, "items.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(hostDir, filepath.Join(base, "linked")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(w, "pipe"), 0o644); err != nil {
		t.Fatal(err)
	}
	if items, err := readItems(w, "own.txt"); err != nil || strings.Join(items, ",") != "a,b" {
		t.Fatalf("own items %q, %v", items, err)
	}
	for _, tc := range []struct {
		name, workdir, file, want string
	}{
		{"a link to a host file", w, "items.txt", "items file items.txt: path escapes from parent"},
		{"a workdir reached through a link", filepath.Join(base, "linked"), "items.txt", tools.ErrWorkdirLink.Error()},
		{"an absolute path", w, filepath.Join(hostDir, "items.txt"), ": path escapes from parent"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			items, err := readItems(tc.workdir, tc.file)
			if err == nil || !strings.Contains(err.Error(), tc.want) || len(items) != 0 {
				t.Fatalf("items %q, %v; want refused with %q", items, err, tc.want)
			}
			if strings.Contains(err.Error(), secret) || strings.Contains(err.Error(), base) {
				t.Fatalf("the refusal %q shows a host file or path", err)
			}
		})
	}
	t.Run("a FIFO", func(t *testing.T) {
		var err error
		if testenv.FIFOOpened(t, filepath.Join(w, "pipe"), func() { _, err = readItems(w, "pipe") }) {
			t.Fatal("readItems opened the FIFO (without a writer, that blocks the world)")
		}
		if err == nil || !strings.Contains(err.Error(), "items file pipe: not a regular file") {
			t.Fatalf("err = %v", err)
		}
	})
}
