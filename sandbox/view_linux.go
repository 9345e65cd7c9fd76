package sandbox

import (
	"fmt"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// viewFor is the file system view of a contained command (mountOps) as the uid it runs as
// (CommandUID) can use it. A hidden path the command cannot reach anyway (a folder above it is
// closed to its uid) is left out: hiding it would fail the sandbox's setup, since the helpers
// build the view with the command's permissions, and would hide nothing. The workdir or a
// writable path out of its reach is an error wrapping ErrSetup that names the folder in the way:
// the command could not use it.
func viewFor(spec launchSpec) ([]mountOp, error) {
	uid, gid := spec.caps.CommandUID, spec.caps.CommandGID
	all := mountOps(spec.workdir, spec.boundary)
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
	return ops, nil
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
// entry at or above it is the private /tmp or a hidden folder.
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
