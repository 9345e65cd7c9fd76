//go:build !linux

package safepath

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// Dir is a folder Open reached, held as an os.Root. Close it when done.
type Dir struct {
	root *os.Root
	info fs.FileInfo
}

// Identity says which folder a Dir is, so that a caller can tell whether a path still leads to
// the folder it found there before (os.SameFile).
type Identity struct{ info fs.FileInfo }

// Same reports whether i and o name the same folder.
func (i Identity) Same(o Identity) bool {
	return i.info != nil && o.info != nil && os.SameFile(i.info, o.info)
}

// String has nothing portable to show.
func (i Identity) String() string { return "?" }

// Open walks the absolute path from / one component at a time through os.Root: each component
// must be a folder by Lstat (a link is refused with ErrSymlink), and the folder then opened must
// be the one Lstat saw (os.SameFile), so a swap in between is refused rather than followed.
// Unlike the Linux walk, a FIFO swapped in between Lstat and the open can block it. Missing
// components are made (Perm) when create is set; made reports whether the last one was made by
// this call.
func Open(path string, create bool) (d *Dir, made bool, err error) {
	if !filepath.IsAbs(path) {
		return nil, false, fmt.Errorf("%q is not an absolute path", path)
	}
	at := filepath.VolumeName(path) + string(filepath.Separator)
	r, err := os.OpenRoot(at)
	if err != nil {
		return nil, false, &Error{Path: at, Err: Bare(err)}
	}
	info, err := r.Stat(".")
	if err != nil {
		_ = r.Close()
		return nil, false, &Error{Path: at, Err: Bare(err)}
	}
	var parts []string
	if rest := strings.TrimPrefix(filepath.Clean(path), at); rest != "" {
		parts = strings.Split(rest, string(filepath.Separator))
	}
	for _, name := range parts {
		at = filepath.Join(at, name)
		made = false
		info, err = r.Lstat(name)
		if errors.Is(err, fs.ErrNotExist) && create {
			if err = r.Mkdir(name, Perm); err == nil || errors.Is(err, fs.ErrExist) {
				made = err == nil
				info, err = r.Lstat(name)
			}
		}
		switch {
		case err != nil:
			err = Bare(err)
		case info.Mode()&fs.ModeSymlink != 0:
			err = ErrSymlink
		case !info.IsDir():
			err = syscall.ENOTDIR
		}
		var next *os.Root
		if err == nil {
			if next, err = r.OpenRoot(name); err != nil {
				err = Bare(err)
			}
		}
		_ = r.Close()
		if err != nil {
			return nil, false, &Error{Path: at, Err: err}
		}
		if got, statErr := next.Stat("."); statErr != nil || !os.SameFile(info, got) {
			_ = next.Close()
			return nil, false, &Error{Path: at, Err: ErrSymlink}
		}
		r = next
	}
	return &Dir{root: r, info: info}, made, nil
}

// Root opens the folder as an os.Root of its own, which stays usable after d is closed.
func (d *Dir) Root() (*os.Root, error) { return d.root.OpenRoot(".") }

// Chown hands the folder itself to uid and gid.
func (d *Dir) Chown(uid, gid int) error { return d.root.Chown(".", uid, gid) }

// Identity is what os.SameFile compares.
func (d *Dir) Identity() (Identity, error) { return Identity{info: d.info}, nil }

// Close closes the folder's root.
func (d *Dir) Close() error { return d.root.Close() }
