package tools

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// openDirectory makes an open fail on anything but a directory, before a FIFO could block it.
const openDirectory = unix.O_DIRECTORY

// walkWorkdir opens the folder at /parts[0]/parts[1]/... one component at a time, each with
// O_PATH|O_NOFOLLOW|O_DIRECTORY relative to the one before: a symbolic link or anything but a
// directory is refused by the kernel at that component, nothing is followed and nothing is
// opened for reading (so a FIFO cannot block the walk). Missing components are made when create
// is set; the last one, if made here, is handed to owner. The folder reached is then opened as an
// os.Root through its descriptor's /proc/self/fd entry, which names exactly that directory
// whatever happens to the path meanwhile.
func walkWorkdir(parts []string, create bool, owner *FileOwner) (*os.Root, error) {
	const flags = unix.O_PATH | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC
	fd, err := unix.Open("/", flags, 0)
	if err != nil {
		return nil, fmt.Errorf("cannot open the workdir: %w", err)
	}
	defer func() { _ = unix.Close(fd) }()
	for i, name := range parts {
		next, err := unix.Openat(fd, name, flags, 0)
		made := false
		if errors.Is(err, unix.ENOENT) && create {
			if err = unix.Mkdirat(fd, name, 0o755); err == nil || errors.Is(err, unix.EEXIST) {
				made = err == nil
				next, err = unix.Openat(fd, name, flags, 0)
			}
		}
		if err != nil {
			return nil, componentError(fd, name, create, err)
		}
		_ = unix.Close(fd)
		fd = next
		if made && owner != nil && i == len(parts)-1 {
			if err := unix.Fchownat(fd, "", owner.UID, owner.GID, unix.AT_EMPTY_PATH); err != nil {
				return nil, fmt.Errorf("cannot hand the workdir to the agent's commands: %w", err)
			}
		}
	}
	root, err := os.OpenRoot("/proc/self/fd/" + strconv.Itoa(fd))
	if err != nil {
		return nil, fmt.Errorf("cannot open the workdir (through /proc/self/fd): %w", bareError(err))
	}
	return root, nil
}

// componentError says why the walk stopped at name inside the folder dirfd: a symbolic link
// (ErrWorkdirLink), something that is not a folder, or the OS's reason.
func componentError(dirfd int, name string, create bool, err error) error {
	var st unix.Stat_t
	if unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil {
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFLNK:
			return ErrWorkdirLink
		case unix.S_IFDIR:
		default:
			return fmt.Errorf("cannot open the workdir: %w", unix.ENOTDIR)
		}
	}
	if create && errors.Is(err, unix.ENOENT) {
		return fmt.Errorf("cannot create the workdir: %w", err)
	}
	return fmt.Errorf("cannot open the workdir: %w", err)
}

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
