package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// viewFor is the file system view of a contained command (mountOps) as the uid it runs as
// (CommandUID) can use it, on the skeleton of the host's / (hostSkeleton), sorted so that a
// parent comes before what lies under it. A hidden path the command cannot reach anyway (a folder
// above it is closed to its uid) is left out: hiding it would fail the sandbox's setup, since the
// helpers build the view with the command's permissions, and would hide nothing. The workdir or a
// writable path out of its reach is an error wrapping ErrSetup that names the folder in the way:
// the command could not use it.
func viewFor(spec launchSpec) ([]mountOp, error) {
	uid, gid := spec.caps.CommandUID, spec.caps.CommandGID
	all := mountOps(spec.workdir, spec.workRoot, spec.boundary)
	ops := make([]mountOp, 0, len(all))
	for _, op := range all {
		closed := closedAbove(op.Path, ops, uid, gid)
		switch {
		case closed == "":
			ops = append(ops, op)
		case op.Kind == mountWritable:
			return nil, fmt.Errorf("%w: %s is out of reach of uid %d, which contained commands run as: %s is not searchable by it (make it so, e.g. chmod o+x, or move the path)",
				ErrSetup, op.Path, uid, closed)
		}
	}
	ops = append(ops, hostSkeleton(ops, hostMountPoints())...)
	slices.SortStableFunc(ops, func(a, b mountOp) int {
		if c := strings.Compare(a.Path, b.Path); c != 0 {
			return c
		}
		return kindOrder(a.Kind) - kindOrder(b.Kind)
	})
	return ops, nil
}

// hostSkeleton is what a contained view shows of the host's / under the view's own mounts
// (view): not a recursive bind of / (whose copy would bring along every host mount, and list each
// in the command's /proc/self/mountinfo, the ones the view covers too: the host's /proc, /dev/shm,
// the mounts under a hidden folder or under /tmp, where bwrap stages its sources) but, for each
// entry of /, a read-only recursive bind of it, or the same symlink. An entry the view mounts
// something at (/tmp, /dev, /proc, a hidden path, the workdir...) is left out; a folder holding a
// host mount (at or) under such a path is not bound whole but entry by entry in turn, so that no
// bind brings along a host mount the view covers. What the binds bring is what the view shows,
// and each lists itself at its own path.
func hostSkeleton(view []mountOp, mounts []string) []mountOp {
	covered := map[string]bool{"/dev": true, "/proc": true}
	for _, op := range view {
		covered[op.Path] = true
	}
	// expand reports whether dir must be bound entry by entry: a covered path lies under it with a
	// host mount at or under that path.
	expand := func(dir string) bool {
		for c := range covered {
			if c != dir && within(c, dir) && slices.ContainsFunc(mounts, func(m string) bool { return within(m, c) }) {
				return true
			}
		}
		return false
	}
	var out []mountOp
	var walk func(dir string)
	walk = func(dir string) {
		entries, err := os.ReadDir(dir)
		if err != nil {
			// Unreadable (to an unprivileged host): bound whole, mounts and all.
			out = append(out, mountOp{Path: dir, Kind: mountHostRO, IsDir: true})
			return
		}
		for _, e := range entries {
			path := filepath.Join(dir, e.Name())
			info, err := os.Lstat(path)
			switch {
			case covered[path] || err != nil:
			case info.Mode()&os.ModeSymlink != 0:
				if target, err := os.Readlink(path); err == nil {
					out = append(out, mountOp{Path: path, Kind: mountSymlink, Target: target})
				}
			case info.IsDir() && expand(path):
				walk(path)
			default:
				out = append(out, mountOp{Path: path, Kind: mountHostRO, IsDir: info.IsDir()})
			}
		}
	}
	walk("/")
	return out
}

// hostMountPoints lists the mount points of this process's mount namespace (none when
// /proc/self/mountinfo cannot be read: the skeleton then binds whole what it would have split).
func hostMountPoints() []string {
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil
	}
	var points []string
	for line := range strings.Lines(string(data)) {
		if fields := strings.Fields(line); len(fields) > 4 {
			points = append(points, unescapeMountField(fields[4]))
		}
	}
	return points
}

// unescapeMountField undoes mountinfo's octal escapes (\040 for a space, \011, \012, \134).
func unescapeMountField(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var sb strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				sb.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		sb.WriteByte(s[i])
	}
	return sb.String()
}

// closedAbove returns the nearest folder above path that a process running as uid and gid, with
// no other groups and no capabilities, cannot search in the view built by ops (the entries before
// path's own, which sort before it), "" when there is none. A folder that a fresh file system of
// the view covers (the private /tmp, a hidden folder) is made by the sandbox's helper for its
// mounts and searchable; any other is a host folder, seen read-only or bound, with the host's
// permissions. Permissions that might let the process through (group or ACL bits it may match, a
// folder that cannot be examined) count as searchable: the mount is then attempted, and fails
// loudly if they did not.
func closedAbove(path string, ops []mountOp, uid, gid int) string {
	for dir := filepath.Dir(path); dir != "/"; dir = filepath.Dir(dir) {
		if freshFolder(dir, ops) {
			continue
		}
		var st unix.Stat_t
		if unix.Stat(dir, &st) != nil {
			continue
		}
		if !searchable(&st, uid, gid) {
			return dir
		}
	}
	return ""
}

// freshFolder reports whether dir lies on a file system the view mounts fresh: the innermost
// entry at or above it is the private /tmp, a hidden folder or the covered work root.
func freshFolder(dir string, ops []mountOp) bool {
	var inner *mountOp
	for i, op := range ops {
		if op.Kind != mountHideFile && within(dir, op.Path) && (inner == nil || len(op.Path) >= len(inner.Path)) {
			inner = &ops[i]
		}
	}
	return inner != nil && inner.Kind != mountWritable
}

// searchable reports whether a folder's permission bits may let uid and gid (no other groups)
// search it: the owner class when uid owns it; otherwise the group class (whose bits also bound
// every ACL entry) or the other class.
func searchable(st *unix.Stat_t, uid, gid int) bool {
	if int(st.Uid) == uid {
		return st.Mode&unix.S_IXUSR != 0
	}
	if int(st.Gid) == gid {
		return st.Mode&unix.S_IXGRP != 0
	}
	return st.Mode&(unix.S_IXGRP|unix.S_IXOTH) != 0
}
