package sandbox

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// buildRoot is the namespace init's file system work, in its private mount namespace: a tmpfs on
// the manager's private directory holding the skeleton of the host's / (read-only, nosuid, nodev
// recursive copies of its entries, and its symlinks; see hostSkeleton), the plan's other mounts on
// it (private /tmp, workdir and writable paths read-write, hidden paths and the work root
// covered), a minimal /dev, a fresh read-only /proc for the new pid namespace, the skeleton made
// read-only; then the host name, the loopback interface, pivot_root into the new root, and the
// workdir as cwd.
//
// Every mount target is opened beneath the new root with symlinks refused and every source with
// symlinks refused (the host resolved the paths), and mounts are attached by descriptor (the
// new mount API, Linux 5.2+; mount_setattr 5.12+): a command running meanwhile cannot redirect a
// mount by planting a symlink in a directory it may write.
//
// The bind sources (the skeleton's, workdir, writable paths) are opened first, with the host's ids, which may
// reach folders the command's may not; then the calling thread (locked by the caller) takes the
// command's file ids, so that the rest (the private root, every target, the files it creates on
// the new file systems) is done as the command could, and nothing it creates belongs to an id the
// namespace does not map.
func buildRoot(p *namespacePlan) error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("making the mounts private: %w", err)
	}
	sources := make([]int, len(p.Mounts))
	for i, op := range p.Mounts {
		sources[i] = -1
		if op.Kind != mountWritable && op.Kind != mountHostRO {
			continue
		}
		var want *fileID
		if op.Kind == mountWritable && op.Path == p.Workdir {
			want = &p.WorkdirID
		}
		fd, err := openSource(op.Path, want)
		if op.Kind == mountHostRO && errors.Is(err, unix.ENOENT) {
			continue // a skeleton entry gone since the host listed it: nothing to show
		}
		if err != nil {
			closeSources(sources)
			return fmt.Errorf("%s %s: %w", op.Kind, op.Path, err)
		}
		sources[i] = fd
	}
	defer closeSources(sources)
	if err := takeFileIDs(p.As); err != nil {
		return err
	}
	if err := freshAt("tmpfs", p.Root, unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV, "mode", "0755"); err != nil {
		return fmt.Errorf("mounting the new root: %w", err)
	}
	var hidden []string
	for i, op := range p.Mounts {
		target := filepath.Join(p.Root, op.Path)
		var err error
		switch op.Kind {
		case mountPrivateTmp:
			err = freshAt("tmpfs", target, unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV, privateTmpOptions(p.TmpSize)...)
		case mountWritable:
			err = attachCopy(sources[i], target, unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV)
		case mountHostRO:
			if sources[i] < 0 {
				continue
			}
			err = attachCopy(sources[i], target, unix.MOUNT_ATTR_RDONLY|unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV)
			if errors.Is(err, unix.ENOENT) {
				continue // removed meanwhile
			}
		case mountSymlink:
			err = symlinkAt(op.Target, target)
		case mountHideDir:
			err = freshAt("tmpfs", target, unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV|unix.MOUNT_ATTR_NOEXEC, "mode", "0755")
			hidden = append(hidden, target)
		case mountHideFile:
			err = bindAt("/dev/null", target, unix.MOUNT_ATTR_RDONLY|unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NOEXEC)
		default:
			err = fmt.Errorf("unknown mount kind %q", op.Kind)
		}
		if err != nil {
			return fmt.Errorf("%s %s: %w", op.Kind, op.Path, err)
		}
	}
	if err := buildDev(filepath.Join(p.Root, "dev"), p.TmpSize); err != nil {
		return fmt.Errorf("building /dev: %w", err)
	}
	// /proc is read-only: where the command's uid may write a host sysctl or
	// /proc/sysrq-trigger (a host whose own uid commands run as, when that uid is root: a
	// container mapping no other), a writable /proc would let it (Landlock stops that too, where
	// the kernel has it). Writing through /proc/self/fd still works: those are pipes and files
	// on other mounts.
	if err := freshAt("proc", filepath.Join(p.Root, "proc"), unix.MOUNT_ATTR_RDONLY|unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV|unix.MOUNT_ATTR_NOEXEC); err != nil {
		return fmt.Errorf("mounting /proc: %w", err)
	}
	// Hidden directories and the new root stay writable until whatever is mounted inside them has
	// its mount point; now they become read-only (not recursively: a writable bind inside stays
	// writable).
	for _, dir := range append(hidden, p.Root) {
		if err := setattrAt(dir, 0, unix.MOUNT_ATTR_RDONLY); err != nil {
			return fmt.Errorf("making hidden %s read-only: %w", dir, err)
		}
	}
	if err := unix.Sethostname([]byte(p.Hostname)); err != nil {
		return fmt.Errorf("setting the host name: %w", err)
	}
	if p.Loopback {
		if err := loopbackUp(); err != nil {
			return fmt.Errorf("bringing up lo: %w", err)
		}
	}
	if err := pivotInto(p.Root); err != nil {
		return err
	}
	if err := unix.Chdir(p.Workdir); err != nil {
		return fmt.Errorf("entering the workdir: %w", err)
	}
	return nil
}

// privateTmpOptions are the options of a private, writable tmpfs (/tmp, /dev/shm): open to every
// user with the sticky bit, as the host's are, and capped at size bytes (0: no cap of ours).
func privateTmpOptions(size uint64) []string {
	opts := []string{"mode", "1777"}
	if size > 0 {
		opts = append(opts, "size", strconv.FormatUint(size, 10))
	}
	return opts
}

// buildDev mounts a tmpfs on dev with the harmless devices bound from the host's /dev, the usual
// symlinks, a private devpts (for ptys) and a private /dev/shm capped at shmSize bytes; then
// makes /dev itself read-only (not what is mounted in it), so that a command cannot fill the
// uncapped /dev tmpfs instead of /dev/shm.
func buildDev(dev string, shmSize uint64) error {
	if err := freshAt("tmpfs", dev, unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NOEXEC, "mode", "0755"); err != nil {
		return err
	}
	for _, name := range []string{"null", "zero", "full", "random", "urandom", "tty"} {
		var st unix.Stat_t
		if unix.Stat("/dev/"+name, &st) != nil {
			continue // the host has no such device: nothing to offer
		}
		if err := bindAt("/dev/"+name, filepath.Join(dev, name), unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NOEXEC); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	devFD, err := openBeneath(unix.AT_FDCWD, dev, true)
	if err != nil {
		return err
	}
	defer unix.Close(devFD)
	for _, link := range [][2]string{
		{"fd", "/proc/self/fd"}, {"stdin", "/proc/self/fd/0"}, {"stdout", "/proc/self/fd/1"},
		{"stderr", "/proc/self/fd/2"}, {"ptmx", "pts/ptmx"},
	} {
		if err := unix.Symlinkat(link[1], devFD, link[0]); err != nil {
			return fmt.Errorf("symlink %s: %w", link[0], err)
		}
	}
	if err := freshAt("devpts", filepath.Join(dev, "pts"), unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NOEXEC, "ptmxmode", "0666", "mode", "620"); err != nil {
		return fmt.Errorf("devpts: %w", err)
	}
	if err := freshAt("tmpfs", filepath.Join(dev, "shm"), unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV, privateTmpOptions(shmSize)...); err != nil {
		return fmt.Errorf("shm: %w", err)
	}
	return setattrAt(dev, 0, unix.MOUNT_ATTR_RDONLY)
}

// takeFileIDs makes the calling thread check permissions and create files as as's ids, with no
// supplementary groups when as drops them. All three are per-thread (the raw system calls, not
// the Go runtime's all-threads ones), so the caller must stay locked to the thread.
func takeFileIDs(as identity) error {
	if as.DropGroups {
		if _, _, errno := unix.RawSyscall(unix.SYS_SETGROUPS, 0, 0, 0); errno != 0 {
			return fmt.Errorf("dropping the supplementary groups: %w", errno)
		}
	}
	// setfsuid and setfsgid report no error: they return the previous id, and a repeated call
	// shows whether the first one took.
	_, _ = unix.SetfsgidRetGid(as.GID)
	_, _ = unix.SetfsuidRetUid(as.UID)
	gid, _ := unix.SetfsgidRetGid(as.GID)
	uid, _ := unix.SetfsuidRetUid(as.UID)
	if uid != as.UID || gid != as.GID {
		return fmt.Errorf("taking the command's file ids %d:%d: still %d:%d", as.UID, as.GID, uid, gid)
	}
	return nil
}

// openSource opens a bind source as an O_PATH descriptor, symlinks refused; when want is set, the
// source must be that folder (its device and inode): the manager checked the workdir it walked
// to, and a folder swapped in at its path since (a parent's command renaming the one holding it
// and making a fresh one) is refused rather than bound.
func openSource(src string, want *fileID) (int, error) {
	fd, err := unix.Openat2(unix.AT_FDCWD, src, &unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC, Resolve: unix.RESOLVE_NO_SYMLINKS})
	if err != nil {
		return -1, fmt.Errorf("opening %s: %w", src, err)
	}
	if want == nil {
		return fd, nil
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("stat of %s: %w", src, err)
	}
	if got := (fileID{Dev: uint64(st.Dev), Ino: uint64(st.Ino)}); got != *want {
		unix.Close(fd)
		return -1, fmt.Errorf("%s is not the folder the host checked (device:inode %d:%d, now %d:%d): it was replaced meanwhile", src, want.Dev, want.Ino, got.Dev, got.Ino)
	}
	return fd, nil
}

// closeSources closes the open source descriptors (-1 is none).
func closeSources(fds []int) {
	for _, fd := range fds {
		if fd >= 0 {
			unix.Close(fd)
		}
	}
}

// bindAt attaches a recursive copy of the mount tree at src (opened with symlinks refused) on
// target (a directory, or a file for a file source), with attr set on every mount of the copy.
func bindAt(src, target string, attr uint64) error {
	srcFD, err := openSource(src, nil)
	if err != nil {
		return err
	}
	defer unix.Close(srcFD)
	return attachCopy(srcFD, target, attr)
}

// attachCopy attaches a recursive copy of the mount tree at srcFD (an O_PATH descriptor) on
// target, with attr set on every mount of the copy.
func attachCopy(srcFD int, target string, attr uint64) error {
	var st unix.Stat_t
	if err := unix.Fstat(srcFD, &st); err != nil {
		return fmt.Errorf("stat of the source: %w", err)
	}
	tree, err := unix.OpenTree(srcFD, "", unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_EMPTY_PATH|unix.AT_RECURSIVE)
	if err != nil {
		return fmt.Errorf("copying the source's mount tree: %w", err)
	}
	defer unix.Close(tree)
	if attr != 0 {
		if err := unix.MountSetattr(tree, "", unix.AT_EMPTY_PATH|unix.AT_RECURSIVE, &unix.MountAttr{Attr_set: attr}); err != nil {
			return fmt.Errorf("setting mount attributes: %w", err)
		}
	}
	return moveTo(tree, target, st.Mode&unix.S_IFMT == unix.S_IFDIR)
}

// freshAt mounts a new file system of type fstype (with string options as key, value pairs)
// on target, a directory.
func freshAt(fstype, target string, attr uint64, options ...string) error {
	fs, err := unix.Fsopen(fstype, unix.FSOPEN_CLOEXEC)
	if err != nil {
		return fmt.Errorf("fsopen %s: %w", fstype, err)
	}
	defer unix.Close(fs)
	for i := 0; i+1 < len(options); i += 2 {
		if err := unix.FsconfigSetString(fs, options[i], options[i+1]); err != nil {
			return fmt.Errorf("%s option %s=%s: %w", fstype, options[i], options[i+1], err)
		}
	}
	if err := unix.FsconfigCreate(fs); err != nil {
		return fmt.Errorf("creating %s: %w", fstype, err)
	}
	mnt, err := unix.Fsmount(fs, unix.FSMOUNT_CLOEXEC, int(attr))
	if err != nil {
		return fmt.Errorf("fsmount %s: %w", fstype, err)
	}
	defer unix.Close(mnt)
	return moveTo(mnt, target, true)
}

// symlinkAt makes a symlink to target at path (absolute), creating the folders on the way.
func symlinkAt(target, path string) error {
	dir, err := openBeneath(unix.AT_FDCWD, filepath.Dir(path), true)
	if err != nil {
		return err
	}
	defer unix.Close(dir)
	if err := unix.Symlinkat(target, dir, filepath.Base(path)); err != nil {
		return fmt.Errorf("symlink %s: %w", path, err)
	}
	return nil
}

// moveTo attaches the detached mount mnt on target, creating target (a directory, or an empty
// file) if missing.
func moveTo(mnt int, target string, isDir bool) error {
	targetFD, err := openBeneath(unix.AT_FDCWD, target, isDir)
	if err != nil {
		return err
	}
	defer unix.Close(targetFD)
	if err := unix.MoveMount(mnt, "", targetFD, "", unix.MOVE_MOUNT_F_EMPTY_PATH|unix.MOVE_MOUNT_T_EMPTY_PATH); err != nil {
		return fmt.Errorf("attaching on %s: %w", target, err)
	}
	return nil
}

// setattrAt sets (and clears) mount attributes of the mount at path.
func setattrAt(path string, flags uint, set uint64) error {
	fd, err := openBeneath(unix.AT_FDCWD, path, true)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return unix.MountSetattr(fd, "", unix.AT_EMPTY_PATH|flags, &unix.MountAttr{Attr_set: set})
}

// openBeneath opens path (absolute) as an O_PATH descriptor with symlinks refused, creating what
// is missing: directories on the way and, when isDir is false, an empty file at the end. The
// paths the plan names were resolved by the host, so a symlink on the way means tampering.
func openBeneath(dirFD int, path string, isDir bool) (int, error) {
	how := &unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC, Resolve: unix.RESOLVE_NO_SYMLINKS}
	fd, err := unix.Openat2(dirFD, path, how)
	if !errors.Is(err, unix.ENOENT) {
		if err != nil {
			return -1, fmt.Errorf("opening %s: %w", path, err)
		}
		return fd, nil
	}
	parent, name := filepath.Split(strings.TrimSuffix(path, "/"))
	parentFD, err := openBeneath(dirFD, filepath.Clean(parent), true)
	if err != nil {
		return -1, err
	}
	defer unix.Close(parentFD)
	if isDir {
		err = unix.Mkdirat(parentFD, name, 0o755)
	} else {
		var f int
		f, err = unix.Openat(parentFD, name, unix.O_CREAT|unix.O_EXCL|unix.O_WRONLY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0o644)
		if err == nil {
			unix.Close(f)
		}
	}
	if err != nil && !errors.Is(err, unix.EEXIST) {
		return -1, fmt.Errorf("creating the mount point %s: %w", path, err)
	}
	fd, err = unix.Openat2(dirFD, path, how)
	if err != nil {
		return -1, fmt.Errorf("opening %s: %w", path, err)
	}
	return fd, nil
}

// loopbackUp brings up lo in the command's own network namespace, so it can still talk to
// itself over 127.0.0.1.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return err
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	return unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr)
}

// pivotInto makes root the root of the mount namespace and detaches the host's tree
// (pivot_root(".", ".") stacks the old root on the new one; unmounting "." removes it).
func pivotInto(root string) error {
	if err := unix.Chdir(root); err != nil {
		return fmt.Errorf("entering the new root: %w", err)
	}
	if err := unix.PivotRoot(".", "."); err != nil {
		return fmt.Errorf("pivot_root: %w", err)
	}
	if err := unix.Unmount(".", unix.MNT_DETACH); err != nil {
		return fmt.Errorf("detaching the host's root: %w", err)
	}
	if err := unix.Chdir("/"); err != nil {
		return fmt.Errorf("entering the new root: %w", err)
	}
	return nil
}
