package tools

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"
)

// openDirectory makes an open fail on anything but a directory, before a FIFO could block it.
const openDirectory = unix.O_DIRECTORY

// RemoveTree removes the folder dir and everything in it, as os.RemoveAll does (no symbolic link
// is followed, a FIFO is unlinked and never opened), except that it never crosses into another
// mount: a folder on another mount (a bind mount a mode-none command made, which os.RemoveAll
// would empty, deleting the host files it shows) is left in place with the folders holding it,
// and the error names it relative to dir. dir itself is opened without following a link at its
// last component. A missing dir is no error.
func RemoveTree(dir string) error {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ENOENT) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("removing %s: %w", dir, err)
	}
	mnt, err := mountID(fd)
	if err == nil {
		err = removeContents(fd, mnt, "")
	}
	_ = unix.Close(fd)
	if err == nil {
		err = unix.Rmdir(dir)
	}
	if err != nil {
		return fmt.Errorf("removing %s: %w", dir, err)
	}
	return nil
}

// removeContents empties the folder dirfd (at rel below the tree's top), staying on mount mnt.
func removeContents(dirfd int, mnt uint64, rel string) error {
	dup, err := unix.Dup(dirfd)
	if err != nil {
		return err
	}
	list := os.NewFile(uintptr(dup), rel)
	names, err := list.Readdirnames(-1)
	_ = list.Close()
	if err != nil {
		return err
	}
	var errs []error
	for _, name := range names {
		var st unix.Stat_t
		if err := unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			errs = append(errs, err)
			continue
		}
		if st.Mode&unix.S_IFMT != unix.S_IFDIR {
			if err := unix.Unlinkat(dirfd, name, 0); err != nil && !errors.Is(err, unix.ENOENT) {
				errs = append(errs, fmt.Errorf("%s: %w", filepath.Join(rel, name), err))
			}
			continue
		}
		if err := removeFolder(dirfd, name, mnt, filepath.Join(rel, name)); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// removeFolder removes the folder name in dirfd and its contents, unless it lies on another
// mount than mnt.
func removeFolder(dirfd int, name string, mnt uint64, rel string) error {
	fd, err := unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("%s: %w", rel, err)
	}
	id, err := mountID(fd)
	switch {
	case err != nil:
	case id != mnt:
		err = fmt.Errorf("%s is another mount, left in place: %w", rel, unix.EXDEV)
	default:
		err = removeContents(fd, mnt, rel)
	}
	_ = unix.Close(fd)
	if err == nil {
		if err = unix.Unlinkat(dirfd, name, unix.AT_REMOVEDIR); err != nil {
			err = fmt.Errorf("%s: %w", rel, err)
		}
	}
	return err
}

// mountID identifies the mount the open file fd is on (statx's STATX_MNT_ID, Linux 5.8+; on
// older kernels the device number, which tells a different file system apart but not a bind
// mount of the same one).
func mountID(fd int) (uint64, error) {
	var stx unix.Statx_t
	if err := unix.Statx(fd, "", unix.AT_EMPTY_PATH|unix.AT_SYMLINK_NOFOLLOW, unix.STATX_MNT_ID, &stx); err != nil {
		return 0, err
	}
	if stx.Mask&unix.STATX_MNT_ID != 0 {
		return stx.Mnt_id, nil
	}
	return unix.Mkdev(stx.Dev_major, stx.Dev_minor), nil
}

// linkCount is the number of names of the file info describes.
func linkCount(info fs.FileInfo) (uint64, bool) {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return st.Nlink, true
}
