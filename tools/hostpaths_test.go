package tools

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/warrenhq/warren/sandbox"
)

// hostFile is a file outside every workdir that the host must never change.
type hostFile struct {
	path    string
	content []byte
}

func newHostFile(t *testing.T) hostFile {
	t.Helper()
	h := hostFile{path: filepath.Join(t.TempDir(), "precious"), content: []byte("host data outside the workdir, 48 bytes long..\n")}
	if err := os.WriteFile(h.path, h.content, 0o644); err != nil {
		t.Fatal(err)
	}
	return h
}

// intact fails t unless the host file still holds its content, at its size, as a regular file.
func (h hostFile) intact(t *testing.T) {
	t.Helper()
	info, err := os.Lstat(h.path)
	if err != nil {
		t.Fatalf("the host file is gone: %v", err)
	}
	got, err := os.ReadFile(h.path)
	if err != nil {
		t.Fatal(err)
	}
	if !info.Mode().IsRegular() || info.Size() != int64(len(h.content)) || !bytes.Equal(got, h.content) {
		t.Fatalf("the host file changed: %v, %d bytes %q", info.Mode(), info.Size(), got)
	}
}

// settleCase is a workdir whose redirect targets were measured (as before a command), for a
// test to shape as a command would, then settle.
type settleCase struct {
	t       *testing.T
	workdir string
	w       *redirectWrites
}

// measure makes a workdir holding files, lets plant shape it further (as an earlier command
// would have), measures the redirects of line with a budget of 100 bytes per call, and returns
// the case.
func measure(t *testing.T, files map[string]string, line string, plant ...func(workdir string) error) *settleCase {
	t.Helper()
	ec, workdir := newWorkdirEC(t)
	if err := os.MkdirAll(workdir, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFiles(t, workdir, files)
	for _, p := range plant {
		if err := p(workdir); err != nil {
			t.Fatal(err)
		}
	}
	ec.Writes = NewWriteBudget(100, 0)
	root, err := openWorkdir(ec)
	if err != nil {
		t.Fatal(err)
	}
	return &settleCase{t: t, workdir: workdir, w: newRedirectWrites(ec, root, line)}
}

// path is rel inside the workdir, on the host.
func (c *settleCase) path(rel string) string { return filepath.Join(c.workdir, rel) }

// do is the command's work, done by the test with the host's own calls.
func (c *settleCase) do(err error) {
	c.t.Helper()
	if err != nil {
		c.t.Fatal(err)
	}
}

// overBudget settles the case and fails t unless it was refused, saying what the refusal must
// mention.
func (c *settleCase) overBudget(mentions ...string) {
	c.t.Helper()
	err := c.w.settle()
	wantError(c.t, err, ErrWriteBudget, append([]string{"over the write budget (the files were cut back"}, mentions...)...)
	if strings.Contains(err.Error(), c.workdir) {
		c.t.Fatalf("the refusal %q names the host path", err)
	}
}

// gone fails t unless nothing is at rel in the workdir.
func (c *settleCase) gone(rel string) {
	c.t.Helper()
	if _, err := os.Lstat(c.path(rel)); !errors.Is(err, fs.ErrNotExist) {
		c.t.Fatalf("%s is still there (%v); want it removed", rel, err)
	}
}

// kind fails t unless rel in the workdir is of type want (fs.ModeSymlink, fs.ModeNamedPipe,
// fs.ModeDir, 0 for a regular file).
func (c *settleCase) kind(rel string, want fs.FileMode) {
	c.t.Helper()
	info, err := os.Lstat(c.path(rel))
	if err != nil || info.Mode().Type() != want {
		c.t.Fatalf("%s: %v, %v; want type %v", rel, info, err, want)
	}
}

// big is 500 bytes, five times the per-call budget of measure.
var big = strings.Repeat("x", 500)

// TestSettleUnderPlantedShapes: a command over its write budget has planted something where the
// host measured its redirects; cutting back follows no link out of the workdir, opens no FIFO,
// leaves a folder alone and never truncates a file that has another name.
func TestSettleUnderPlantedShapes(t *testing.T) {
	t.Run("a folder on the way is a link to a host folder", func(t *testing.T) {
		h := newHostFile(t)
		c := measure(t, nil, ": >> d/precious; cat big > big.txt")
		c.do(os.Symlink(filepath.Dir(h.path), c.path("d")))
		c.do(os.WriteFile(c.path("big.txt"), []byte(big), 0o644))
		c.overBudget()
		h.intact(t)
		c.gone("big.txt")
		c.kind("d", fs.ModeSymlink)
	})
	t.Run("an earlier file replaced by a link to a host file", func(t *testing.T) {
		h := newHostFile(t)
		c := measure(t, map[string]string{"out.txt": "0123456789"}, ": >> out.txt; cat big > big.txt")
		c.do(os.Remove(c.path("out.txt")))
		c.do(os.Symlink(h.path, c.path("out.txt")))
		c.do(os.WriteFile(c.path("big.txt"), []byte(big), 0o644))
		c.overBudget()
		h.intact(t)
		c.kind("out.txt", fs.ModeSymlink)
	})
	t.Run("an earlier file replaced by a hard link to a host file", func(t *testing.T) {
		h := newHostFile(t)
		c := measure(t, map[string]string{"out.txt": "0123456789"}, ": >> out.txt; cat big > big.txt")
		c.do(os.Remove(c.path("out.txt")))
		c.do(os.Link(h.path, c.path("out.txt")))
		c.do(os.WriteFile(c.path("big.txt"), []byte(big), 0o644))
		c.overBudget()
		h.intact(t)
		c.gone("out.txt") // another file than before: its name goes, its content stays with the host's name
	})
	t.Run("a file with another name grown in place is left as it is", func(t *testing.T) {
		h := newHostFile(t)
		c := measure(t, nil, "cat big >> out.txt", func(workdir string) error {
			return os.Link(h.path, filepath.Join(workdir, "out.txt"))
		})
		f, err := os.OpenFile(c.path("out.txt"), os.O_APPEND|os.O_WRONLY, 0)
		c.do(err)
		_, err = f.WriteString(big)
		c.do(errors.Join(err, f.Close()))
		c.overBudget(`except "out.txt" (it has other hard links, which cutting it back would change too)`)
		if info, err := os.Stat(h.path); err != nil || info.Size() != int64(len(h.content)+len(big)) {
			t.Fatalf("the host file is %v, %v: the host cut back a file that has another name", info, err)
		}
	})
	t.Run("a FIFO is neither opened nor removed", func(t *testing.T) {
		c := measure(t, map[string]string{"was-a-file": "0123456789"}, ": > pipe; : >> was-a-file; cat big > big.txt")
		c.do(syscall.Mkfifo(c.path("pipe"), 0o644))
		c.do(os.Remove(c.path("was-a-file")))
		c.do(syscall.Mkfifo(c.path("was-a-file"), 0o644))
		c.do(os.WriteFile(c.path("big.txt"), []byte(big), 0o644))
		c.overBudget()
		c.kind("pipe", fs.ModeNamedPipe)
		c.kind("was-a-file", fs.ModeNamedPipe)
		c.gone("big.txt")
	})
	t.Run("a file replaced by a folder is left alone", func(t *testing.T) {
		c := measure(t, map[string]string{"was-a-file": "0123456789"}, ": > new; : >> was-a-file; cat big > big.txt")
		c.do(os.Mkdir(c.path("new"), 0o755))
		c.do(os.Remove(c.path("was-a-file")))
		c.do(os.Mkdir(c.path("was-a-file"), 0o755))
		c.do(os.WriteFile(c.path("was-a-file/inside"), []byte("kept"), 0o644))
		c.do(os.WriteFile(c.path("big.txt"), []byte(big), 0o644))
		c.overBudget()
		c.kind("new", fs.ModeDir)
		c.kind("was-a-file", fs.ModeDir)
		if got := readBack(t, c.path("was-a-file/inside")); got != "kept" {
			t.Fatalf("was-a-file/inside = %q", got)
		}
	})
	t.Run("a link inside the workdir is followed inside it", func(t *testing.T) {
		c := measure(t, map[string]string{"sub/keep": ""}, "cat big > d/new.txt")
		c.do(os.Symlink("sub", c.path("d")))
		c.do(os.WriteFile(c.path("sub/new.txt"), []byte(big), 0o644))
		c.overBudget()
		c.gone("sub/new.txt")
		c.kind("sub/keep", 0)
	})
	t.Run("what grew is cut back and what shrank is not touched", func(t *testing.T) {
		c := measure(t, map[string]string{"grew.txt": "keep", "shrank.txt": "0123456789"}, "cat big >> grew.txt; printf abc > shrank.txt")
		f, err := os.OpenFile(c.path("grew.txt"), os.O_APPEND|os.O_WRONLY, 0)
		c.do(err)
		_, err = f.WriteString(big)
		c.do(errors.Join(err, f.Close()))
		c.do(os.WriteFile(c.path("shrank.txt"), []byte("abc"), 0o644))
		c.overBudget()
		if got := readBack(t, c.path("grew.txt")); got != "keep" {
			t.Errorf("grew.txt = %q, want it cut back to %q", got, "keep")
		}
		if got := readBack(t, c.path("shrank.txt")); got != "abc" {
			t.Errorf("shrank.txt = %q, want it as the command left it", got)
		}
	})
}

// TestShellRefusesAWorkdirReachedThroughALink: a workdir whose path goes through a link (a
// parent's command replaced the folder holding it) runs no command: the shell cannot follow the
// redirects in it, and the command would run wherever the link leads.
func TestShellRefusesAWorkdirReachedThroughALink(t *testing.T) {
	elsewhere := t.TempDir()
	base := t.TempDir()
	if err := os.Symlink(elsewhere, filepath.Join(base, "agents")); err != nil {
		t.Fatal(err)
	}
	workdir := filepath.Join(base, "agents", "1")
	mode := sandbox.ModeNone
	m := sandbox.NewManager(workdir, sandbox.Probe(), sandbox.Ceiling(sandbox.Spec{Mode: &mode}))
	t.Cleanup(func() { _ = m.Close() })
	ec := NewExecContext(context.Background(), "c1", 1, AgentRef{ID: 1, Name: "a"}, workdir)
	ec.Commands = m
	res, err := run(t, Shell{}, ec, `{"command":"echo ran > marker"}`)
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError || !strings.Contains(res.Content, ErrWorkdirLink.Error()) || strings.Contains(res.Content, base) {
		t.Fatalf("result %q (error %v), want the link refused without the host path", res.Content, res.IsError)
	}
	if entries, _ := os.ReadDir(elsewhere); len(entries) != 0 {
		t.Fatalf("the host folder the link leads to got %v", entries)
	}
}

// TestOpenWorkdir: the workdir is opened only along a path of real folders; a link or a FIFO
// anywhere on it is refused without blocking, and the host path never shows in the error.
func TestOpenWorkdir(t *testing.T) {
	base := t.TempDir()
	realDir := filepath.Join(base, "real", "work")
	writeFiles(t, realDir, map[string]string{"inside.txt": "in"})
	writeFiles(t, base, map[string]string{"file": "x"})
	if err := os.Symlink(filepath.Join(base, "real"), filepath.Join(base, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(realDir, filepath.Join(base, "real", "worklink")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(base, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	root, err := OpenWorkdir(realDir)
	if err != nil {
		t.Fatal(err)
	}
	if data, err := root.ReadFile("inside.txt"); err != nil || string(data) != "in" {
		t.Fatalf("inside.txt = %q, %v", data, err)
	}
	_ = root.Close()
	for _, tc := range []struct {
		name, dir string
		is        error
		want      string
	}{
		{"a folder on the way is a link", filepath.Join(base, "link", "work"), ErrWorkdirLink, ""},
		{"the workdir is a link", filepath.Join(base, "real", "worklink"), ErrWorkdirLink, ""},
		{"the workdir is a FIFO", filepath.Join(base, "fifo"), ErrNoWorkdir, "not a directory"},
		{"a FIFO on the way", filepath.Join(base, "fifo", "work"), ErrNoWorkdir, "not a directory"},
		{"a file on the way", filepath.Join(base, "file", "work"), ErrNoWorkdir, "not a directory"},
		{"missing", filepath.Join(base, "missing"), ErrNoWorkdir, "no such file or directory"},
		{"relative", "real/work", ErrNoWorkdir, "must be an absolute path"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := OpenWorkdir(tc.dir)
			wantError(t, err, tc.is, tc.want)
			if !errors.Is(err, ErrNoWorkdir) || strings.Contains(err.Error(), base) {
				t.Fatalf("error %q: want ErrNoWorkdir, without the host path", err)
			}
		})
	}
}

// TestFileToolsNeverBlockOnAFIFO: a FIFO where a file or folder was expected is refused without
// being opened for reading or writing (either would block the lane until a writer or a reader
// came).
func TestFileToolsNeverBlockOnAFIFO(t *testing.T) {
	ec, dir := newWorkdirEC(t)
	writeFiles(t, dir, map[string]string{"keep": ""})
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		tool Tool
		args string
		is   error
		want string
	}{
		{WriteFile{}, `{"path":"pipe","content":"x"}`, ErrNotRegularFile, `cannot write "pipe": not a regular file`},
		{ReadFile{}, `{"path":"pipe"}`, ErrNotRegularFile, `cannot read "pipe": not a regular file`},
		{EditFile{}, `{"path":"pipe","old_string":"a","new_string":"b"}`, ErrNotRegularFile, `cannot edit "pipe": not a regular file`},
		{ListDir{}, `{"path":"pipe"}`, ErrNotDirectory, `cannot list "pipe": not a directory`},
	} {
		t.Run(tc.tool.Spec().Name, func(t *testing.T) {
			_, err := run(t, tc.tool, ec, tc.args)
			wantError(t, err, tc.is, tc.want)
		})
	}
	if info, err := os.Lstat(filepath.Join(dir, "pipe")); err != nil || info.Mode().Type() != fs.ModeNamedPipe {
		t.Fatalf("the FIFO is now %v, %v", info, err)
	}
}

// TestShellRefusesACallWithoutAWorkdir: an agent whose workdir template left the run's root has
// no workdir; its sandbox manager would take the host's current directory for one, so the shell
// runs nothing.
func TestShellRefusesACallWithoutAWorkdir(t *testing.T) {
	mode := sandbox.ModeNone
	m := sandbox.NewManager(t.TempDir(), sandbox.Probe(), sandbox.Ceiling(sandbox.Spec{Mode: &mode}))
	t.Cleanup(func() { _ = m.Close() })
	ec := NewExecContext(context.Background(), "c1", 1, AgentRef{ID: 1, Name: "a"}, "")
	ec.Commands = m
	res, err := run(t, Shell{}, ec, `{"command":"echo ran"}`)
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError || res.Content != "shell: the command cannot start: no usable workdir: the call has no workdir" {
		t.Fatalf("result %q (error %v), want the call refused", res.Content, res.IsError)
	}
}
