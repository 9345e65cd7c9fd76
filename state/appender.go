package state

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Appender writes a file that a resumed run writes again from its start: the first committed
// bytes it is given must be the file's own (the resumed run replays the committed ticks), and are
// checked, not written; what comes after them is appended. A fresh run's appender has nothing
// committed and simply writes. A mismatch is an error wrapping ErrDiverged that names the file,
// the byte and the line, and leaves the file as it was.
type Appender struct {
	f    *os.File
	name string
	// committed is the length the file was cut back to; checked counts the bytes compared so far
	// (from the first, or from a snapshot's offset from).
	committed, checked, from int64
	old                      *bufio.Reader
	lines                    int
	written                  int64
	err                      error
	noSync                   bool
}

// Appender opens name (a file of the directory, through its root) for a run that has written
// committed bytes of it before: the file is cut back to that length (what lies past it was
// written after the last commit and will be written again).
func (d *Dir) Appender(name string, committed int64) (*Appender, error) {
	return d.AppenderFrom(name, committed, 0)
}

// AppenderFrom is Appender for a run restored from a snapshot, which writes the file again from
// byte from (the snapshot's offset) on: the bytes before it are taken as they are.
func (d *Dir) AppenderFrom(name string, committed, from int64) (*Appender, error) {
	f, err := d.root.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("state directory: %w", err)
	}
	a, err := newAppender(f, filepath.Join(d.path, name), committed, from)
	if a != nil {
		a.noSync = d.noSync
	}
	return a, err
}

// OpenAppender is AppenderFrom for a file outside the directory (a trace the run named itself).
func (d *Dir) OpenAppender(path string, committed, from int64) (*Appender, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	a, err := newAppender(f, path, committed, from)
	if a != nil {
		a.noSync = d.noSync
	}
	return a, err
}

func newAppender(f *os.File, name string, committed, from int64) (*Appender, error) {
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if info.Size() < committed || from > committed || from < 0 {
		f.Close()
		return nil, fmt.Errorf("%w: %s is %d bytes long, shorter than the %d bytes the last commit made durable", ErrNotState, name, info.Size(), committed)
	}
	if err := f.Truncate(committed); err != nil {
		f.Close()
		return nil, err
	}
	if _, err := f.Seek(committed, io.SeekStart); err != nil {
		f.Close()
		return nil, err
	}
	a := &Appender{f: f, name: name, committed: committed, checked: from, from: from, written: committed}
	if committed > from {
		a.old = bufio.NewReaderSize(io.NewSectionReader(f, from, committed-from), 64<<10)
	}
	return a, nil
}

// Write checks p against the committed bytes still unchecked and appends the rest.
func (a *Appender) Write(p []byte) (int, error) {
	if a.err != nil {
		return 0, a.err
	}
	n := len(p)
	if left := a.committed - a.checked; left > 0 {
		k := min(int64(len(p)), left)
		if err := a.check(p[:k]); err != nil {
			a.err = err
			return 0, err
		}
		p = p[k:]
	}
	if len(p) > 0 {
		if _, err := a.f.Write(p); err != nil {
			a.err = err
			return 0, err
		}
		a.written += int64(len(p))
	}
	return n, nil
}

// check compares p with the next committed bytes.
func (a *Appender) check(p []byte) error {
	old := make([]byte, len(p))
	if _, err := io.ReadFull(a.old, old); err != nil {
		return fmt.Errorf("%s: reading the committed part back: %w", a.name, err)
	}
	if i := firstDiff(old, p); i >= 0 {
		line := a.linesBefore() + a.lines + bytes.Count(old[:i], []byte("\n")) + 1
		return fmt.Errorf("%w: %s differs at byte %d (line %d): the run before the crash wrote %q, the resumed run %q",
			ErrDiverged, a.name, a.checked+int64(i), line, clip(old, i), clip(p, i))
	}
	a.lines += bytes.Count(p, []byte("\n"))
	a.checked += int64(len(p))
	return nil
}

// linesBefore counts the lines of the bytes before from, which a restored run did not write again.
func (a *Appender) linesBefore() int {
	if a.from == 0 {
		return 0
	}
	n := 0
	r := bufio.NewReaderSize(io.NewSectionReader(a.f, 0, a.from), 64<<10)
	for {
		b, err := r.ReadSlice('\n')
		if len(b) > 0 && b[len(b)-1] == '\n' {
			n++
		}
		if err != nil && err != bufio.ErrBufferFull {
			return n
		}
	}
}

// firstDiff is the index of the first byte where a and b differ (-1: none).
func firstDiff(a, b []byte) int {
	for i := range a {
		if a[i] != b[i] {
			return i
		}
	}
	return -1
}

// clip is a few bytes of p around i.
func clip(p []byte, i int) string {
	return string(p[max(i-30, 0):min(i+30, len(p))])
}

// Len is the file's length: the committed bytes plus what was appended.
func (a *Appender) Len() int64 { return a.written }

// Caught reports whether the whole committed part has been written again (and checked).
func (a *Appender) Caught() bool { return a.checked >= a.committed }

// Sync makes what was appended durable (nothing at SyncProcess).
func (a *Appender) Sync() error {
	if a.err != nil || a.noSync {
		return a.err
	}
	return a.f.Sync()
}

// Close closes the file.
func (a *Appender) Close() error { return a.f.Close() }
