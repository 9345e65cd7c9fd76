package safepath

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// walkFlags open one component: O_PATH opens nothing for reading (a FIFO cannot block the walk),
// O_NOFOLLOW with O_DIRECTORY makes the kernel refuse a link or anything but a folder.
const walkFlags = unix.O_PATH | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC

// Dir is a folder Open reached: an O_PATH descriptor, which names exactly that folder whatever
// happens to its path afterwards. Close it when done.
type Dir struct{ fd int }

// Identity says which folder a Dir is (its device and inode numbers), so that a caller can tell
// whether a path still leads to the folder it found there before, and a helper process can check
// that a folder it opens by path is the one the host checked.
type Identity struct{ Dev, Ino uint64 }

// Same reports whether i and o name the same folder.
func (i Identity) Same(o Identity) bool { return i == o }

// String is "dev:ino", for error messages.
func (i Identity) String() string { return fmt.Sprintf("%d:%d", i.Dev, i.Ino) }

// Open walks the absolute path from / one component at a time, each opened with
// O_PATH|O_NOFOLLOW|O_DIRECTORY relative to the one before, and returns the folder reached. A
// symbolic link, or anything but a folder, at any component is refused with an *Error (ErrSymlink
// or ENOTDIR), without blocking. When create is set, missing components are made (Perm) with
// mkdirat in the folder already reached, so nothing is made anywhere a link would have led;
// made reports whether the last component was made by this call.
func Open(path string, create bool) (d *Dir, made bool, err error) {
	if !filepath.IsAbs(path) {
		return nil, false, fmt.Errorf("%q is not an absolute path", path)
	}
	fd, err := unix.Open("/", walkFlags, 0)
	if err != nil {
		return nil, false, &Error{Path: "/", Err: err}
	}
	at := "/"
	var parts []string
	if clean := filepath.Clean(path); clean != "/" {
		parts = strings.Split(clean[1:], "/")
	}
	for _, name := range parts {
		at = filepath.Join(at, name)
		next, err := unix.Openat(fd, name, walkFlags, 0)
		made = false
		if errors.Is(err, unix.ENOENT) && create {
			if err = unix.Mkdirat(fd, name, uint32(Perm)); err == nil || errors.Is(err, unix.EEXIST) {
				made = err == nil
				next, err = unix.Openat(fd, name, walkFlags, 0)
			}
		}
		if err != nil {
			err = componentError(fd, name, err)
			_ = unix.Close(fd)
			return nil, false, &Error{Path: at, Err: err}
		}
		_ = unix.Close(fd)
		fd = next
	}
	return &Dir{fd: fd}, made, nil
}

// componentError says why the walk stopped at name inside the folder dirfd: a symbolic link
// (ErrSymlink), something that is not a folder (ENOTDIR), or the system's reason.
func componentError(dirfd int, name string, err error) error {
	var st unix.Stat_t
	if unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil {
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFLNK:
			return ErrSymlink
		case unix.S_IFDIR:
		default:
			return unix.ENOTDIR
		}
	}
	return err
}

// Root opens the folder as an os.Root, through the descriptor's /proc/self/fd entry (Go has no
// constructor from a descriptor, and reopening the path would race with whoever shapes it). The
// Root stays usable after d is closed.
func (d *Dir) Root() (*os.Root, error) {
	return os.OpenRoot("/proc/self/fd/" + strconv.Itoa(d.fd))
}

// Chown hands the folder itself to uid and gid, through the descriptor (fchownat with
// AT_EMPTY_PATH): no path is resolved, so nothing swapped in meanwhile is changed instead.
func (d *Dir) Chown(uid, gid int) error {
	return unix.Fchownat(d.fd, "", uid, gid, unix.AT_EMPTY_PATH)
}

// Identity is the folder's device and inode numbers.
func (d *Dir) Identity() (Identity, error) {
	var st unix.Stat_t
	if err := unix.Fstat(d.fd, &st); err != nil {
		return Identity{}, err
	}
	return Identity{Dev: uint64(st.Dev), Ino: uint64(st.Ino)}, nil
}

// Close closes the descriptor.
func (d *Dir) Close() error { return unix.Close(d.fd) }
