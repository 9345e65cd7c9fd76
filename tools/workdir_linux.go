package tools

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
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

// linkCount is the number of names of the file info describes.
func linkCount(info fs.FileInfo) (uint64, bool) {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return st.Nlink, true
}
