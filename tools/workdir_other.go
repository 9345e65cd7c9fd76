//go:build !linux

package tools

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// openDirectory is 0 here: the check before an open is all that keeps a FIFO from blocking it.
const openDirectory = 0

// walkWorkdir opens the folder at /parts[0]/parts[1]/... one component at a time through
// os.Root: each component must be a directory by Lstat (a link is refused), and the folder then
// opened must be the one Lstat saw (os.SameFile), so a swap in between is refused rather than
// followed. Unlike the Linux walk, a FIFO swapped in between Lstat and the open can block it.
// Missing components are made when create is set; the last one, if made here, is handed to
// owner.
func walkWorkdir(parts []string, create bool, owner *FileOwner) (*os.Root, error) {
	r, err := os.OpenRoot("/")
	if err != nil {
		return nil, fmt.Errorf("cannot open the workdir: %w", bareError(err))
	}
	for i, name := range parts {
		info, err := r.Lstat(name)
		made := false
		if errors.Is(err, fs.ErrNotExist) && create {
			if err = r.Mkdir(name, 0o755); err == nil || errors.Is(err, fs.ErrExist) {
				made = err == nil
				info, err = r.Lstat(name)
			}
		}
		switch {
		case err != nil && create && errors.Is(err, fs.ErrNotExist):
			err = fmt.Errorf("cannot create the workdir: %w", bareError(err))
		case err != nil:
			err = fmt.Errorf("cannot open the workdir: %w", bareError(err))
		case info.Mode()&fs.ModeSymlink != 0:
			err = ErrWorkdirLink
		case !info.IsDir():
			err = errors.New("cannot open the workdir: not a directory")
		}
		var next *os.Root
		if err == nil {
			next, err = r.OpenRoot(name)
		}
		_ = r.Close()
		if err != nil {
			return nil, err
		}
		if got, statErr := next.Stat("."); statErr != nil || !os.SameFile(info, got) {
			_ = next.Close()
			return nil, ErrWorkdirLink
		}
		r = next
		if made && owner != nil && i == len(parts)-1 {
			if err := r.Chown(".", owner.UID, owner.GID); err != nil {
				_ = r.Close()
				return nil, fmt.Errorf("cannot hand the workdir to the agent's commands: %w", bareError(err))
			}
		}
	}
	return r, nil
}

// linkCount is unknown outside Linux.
func linkCount(fs.FileInfo) (uint64, bool) { return 0, false }

// RemoveTree removes the folder dir and everything in it without following a symbolic link
// (os.RemoveAll). Outside Linux it cannot tell a mount apart, so it crosses into one; the Linux
// version leaves mounts in place.
func RemoveTree(dir string) error {
	return os.RemoveAll(dir)
}
