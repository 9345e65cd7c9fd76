//go:build !linux

package tools

import (
	"io/fs"
	"os"
)

// openDirectory is 0 here: the check before an open is all that keeps a FIFO from blocking it.
const openDirectory = 0

// linkCount is unknown outside Linux.
func linkCount(fs.FileInfo) (uint64, bool) { return 0, false }

// RemoveTree removes the folder dir and everything in it without following a symbolic link
// (os.RemoveAll). Outside Linux it cannot tell a mount apart, so it crosses into one; the Linux
// version leaves mounts in place.
func RemoveTree(dir string) error {
	return os.RemoveAll(dir)
}
