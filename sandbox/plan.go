package sandbox

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// The host hands each re-exec'd helper its plan as JSON on a pipe at a fixed descriptor, and the
// helper answers on another: the command line and environment never travel through argv or the
// environment of a process that is not yet contained.
const (
	planFD   = 3 // the helper reads its plan here
	answerFD = 4 // the helper reports here (namespace init: status lines; exec trampoline: exec error)
	// bwrap's descriptors, inherited through the exec trampoline.
	bwrapSeccompFD = 5
	bwrapStatusFD  = 6
	// lifelineFD is where none mode's reaper, the namespace init and bwrap mode's trampoline read
	// the lifeline (see launch.lifeline).
	lifelineFD = 7
)

// mountKind is what the sandbox puts at one path of its file system view.
type mountKind string

const (
	mountPrivateTmp mountKind = "tmp"       // a fresh, empty, writable tmpfs
	mountWritable   mountKind = "bind"      // the host path, bound read-write
	mountHideDir    mountKind = "hide-dir"  // an empty read-only tmpfs over a host directory
	mountHideFile   mountKind = "hide-file" // /dev/null over a host file
	// The skeleton of the host's / (hostSkeleton): what the view shows of the host.
	mountHostRO  mountKind = "ro-bind" // the host path (and what is mounted under it), read-only
	mountSymlink mountKind = "symlink" // the host's symlink, made again with the same target
)

// mountOp is one entry of the file system view; IsDir says whether the host path is a directory
// (a bind target that has to be created inside a tmpfs is made a directory or an empty file);
// Target is a symlink's.
type mountOp struct {
	Path   string    `json:"path"`
	Kind   mountKind `json:"kind"`
	IsDir  bool      `json:"dir"`
	Target string    `json:"target,omitempty"`
}

// fileID is a folder's device and inode numbers (safepath.Identity on Linux), as a helper
// checks the folder it opened by path against the one the manager reached: the path may have
// been made to lead to another folder in between.
type fileID struct {
	Dev uint64 `json:"dev"`
	Ino uint64 `json:"ino"`
}

// rlimitSetting lowers one resource limit (soft and hard) to Max, or to the current hard limit if
// that is lower.
type rlimitSetting struct {
	Resource int    `json:"resource"`
	Max      uint64 `json:"max"`
}

// landlockPlan lists what the command may write; everything else under / is read and execute
// only.
type landlockPlan struct {
	WritableDirs  []string `json:"writable_dirs"`
	WritableFiles []string `json:"writable_files"`
}

// identity is who a helper makes the command: ids in the helper's user namespace, and whether
// to drop the supplementary groups (a root host's, which a command must not keep; an unprivileged
// host cannot drop its own in a user namespace it made, and has nothing to hide behind them).
type identity struct {
	UID        int  `json:"uid"`
	GID        int  `json:"gid"`
	DropGroups bool `json:"drop_groups,omitempty"`
}

// stagePlan is bwrap mode's staging on a root host: bwrap runs as the unprivileged command uid,
// and resolves its bind sources as that uid, so the trampoline (still the host's uid, in a user
// and mount namespace of its own) opens the sources first, becomes As, and attaches a copy of
// each on Dir/<index> (a fresh file system on the manager's private directory), where bwrap can
// reach them whatever the folders above the sources allow.
type stagePlan struct {
	Dir     string   `json:"dir"`
	Sources []string `json:"sources"`
	// Workdir, one of the sources, must be the folder WorkdirID names (see openSource).
	Workdir   string   `json:"workdir"`
	WorkdirID fileID   `json:"workdir_id"`
	As        identity `json:"as"`
}

// execPlan is what the exec trampoline does before it replaces itself with Path: (bwrap mode on
// a root host) stage the bind sources and become the command uid; (namespace mode) set
// no_new_privs, enforce Landlock and load the seccomp filter; then mark every descriptor but
// KeepFDs close-on-exec and lower the rlimits. bwrap mode sets none of the three filters: bwrap
// may be setuid, and it loads the seccomp filter itself.
type execPlan struct {
	Path string   `json:"path"`
	Args []string `json:"args"`
	Env  []string `json:"env"`
	Dir  string   `json:"dir"`
	// DirID, when set, is the folder Dir must be (none mode's reaper enters the workdir on the
	// host, and checks it first).
	DirID      *fileID         `json:"dir_id,omitempty"`
	Rlimits    []rlimitSetting `json:"rlimits,omitempty"`
	NoNewPrivs bool            `json:"no_new_privs,omitempty"`
	Landlock   *landlockPlan   `json:"landlock,omitempty"`
	Seccomp    bool            `json:"seccomp,omitempty"`
	// Network picks the seccomp filter of a boundary with the network (seccompFilter): without
	// it, AF_VSOCK sockets are refused too.
	Network bool `json:"network,omitempty"`
	// KeepFDs are the descriptors above stderr that Path inherits (bwrap's seccomp and status
	// descriptors); every other one closes at the exec, whoever opened it.
	KeepFDs []int      `json:"keep_fds,omitempty"`
	Stage   *stagePlan `json:"stage,omitempty"`
	// MountProc: the trampoline is pid 1 of its own pid namespace and mounts that namespace's
	// /proc before anything else (bwrap mode, see bwrapLaunch).
	MountProc bool `json:"mount_proc,omitempty"`
	// Lifeline: the trampoline sets its parent-death signal again (the staging's change of ids
	// cleared it) and refuses to go on if the lifeline is already broken, which means the host
	// died before the signal was set (bwrap mode).
	Lifeline bool `json:"lifeline,omitempty"`
}

// namespacePlan is what the namespace init (pid 1 of the command's pid namespace) builds before
// it starts the exec trampoline.
type namespacePlan struct {
	// Root is the manager's private, empty directory the new root is assembled on.
	Root    string `json:"root"`
	Workdir string `json:"workdir"`
	// WorkdirID is the folder the manager reached at Workdir: the init binds no other.
	WorkdirID fileID    `json:"workdir_id"`
	Mounts    []mountOp `json:"mounts"`
	Hostname  string    `json:"hostname"`
	// Loopback brings up lo in the command's own network namespace.
	Loopback bool `json:"loopback"`
	// TmpSize caps the private /tmp and /dev/shm, in bytes (0: the kernel's default, half the
	// memory).
	TmpSize uint64 `json:"tmp_size,omitempty"`
	// As is who the command runs as: the init itself stays the host's uid (unmapped in the
	// namespace on a root host), so that it can open the bind sources, and takes As's ids only
	// for the file system work on its own thread.
	As   identity `json:"as"`
	Exec execPlan `json:"exec"`
}

// initStatus is one line the namespace init writes on its answer descriptor: an error (the
// sandbox could not be set up or the command could not start), or how the command ended.
type initStatus struct {
	Error  string `json:"error,omitempty"`
	Exit   *int   `json:"exit,omitempty"`
	Signal int    `json:"signal,omitempty"`
}

// sandboxHostname is the host name inside namespace and bwrap sandboxes.
const sandboxHostname = "warren-sandbox"

// readPlan decodes the JSON plan on descriptor fd and closes it.
func readPlan(fd uintptr, plan any) error {
	f := os.NewFile(fd, "plan")
	if f == nil {
		return fmt.Errorf("plan descriptor %d is not open", fd)
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	if err != nil {
		return fmt.Errorf("reading the plan: %w", err)
	}
	if err := json.Unmarshal(data, plan); err != nil {
		return fmt.Errorf("decoding the plan: %w", err)
	}
	return nil
}

// sandboxEnv returns NAME=value for each allowed name the host's environment sets, in AllowEnv's
// (sorted) order; never a variable bash runs code from (ShellExecutesEnv).
func sandboxEnv(allow []string) []string {
	env := make([]string, 0, len(allow))
	for _, name := range allow {
		if ShellExecutesEnv(name) {
			continue
		}
		if v, ok := os.LookupEnv(name); ok {
			env = append(env, name+"="+v)
		}
	}
	return env
}

// mountOps resolves the file system view of a contained command: a private /tmp, the workdir
// and each existing Writable path read-write, each existing Hidden path hidden, and the work root
// (workRoot, "" for none: the folder every agent's workdir lies under) covered like a hidden
// folder, so that the workdir, bound on top, is all the command sees of it; a work root that is
// the workdir or lies inside it covers nothing. Paths are
// resolved through symlinks on the host (a mount target must not be reached through a symlink
// that points outside the new root) and sorted so that a parent is set up before what lies under
// it: the most specific entry wins, and at the same path hiding wins over binding. Missing
// Writable and Hidden paths are skipped: there is nothing to write or to hide. A Writable path
// inside the workdir or inside another Writable path is skipped too: it is writable already, and
// resolving it would follow symlinks a command may have planted there.
func mountOps(workdir, workRoot string, b Boundary) []mountOp {
	ops := []mountOp{
		{Path: resolved("/tmp"), Kind: mountPrivateTmp, IsDir: true},
		{Path: workdir, Kind: mountWritable, IsDir: true},
	}
	if workRoot != "" {
		if root := resolved(workRoot); !within(root, workdir) {
			ops = append(ops, mountOp{Path: root, Kind: mountHideDir, IsDir: true})
		}
	}
	add := func(path string, kind mountKind) {
		path, err := filepath.EvalSymlinks(path)
		if err != nil {
			return
		}
		info, err := os.Stat(path)
		if err != nil {
			return
		}
		if kind == mountHideDir && !info.IsDir() {
			kind = mountHideFile
		}
		ops = append(ops, mountOp{Path: path, Kind: kind, IsDir: info.IsDir()})
	}
	for _, p := range b.Writable {
		nested := func(dir string) bool { return dir != p && within(p, dir) }
		if !within(p, workdir) && !slices.ContainsFunc(b.Writable, nested) {
			add(p, mountWritable)
		}
	}
	for _, p := range b.Hidden {
		add(p, mountHideDir)
	}
	slices.SortStableFunc(ops, func(a, b mountOp) int {
		if c := strings.Compare(a.Path, b.Path); c != 0 {
			return c
		}
		return kindOrder(a.Kind) - kindOrder(b.Kind)
	})
	return slices.Compact(ops)
}

// hiddenInWritable refuses a boundary that hides a path inside the workdir or inside one of its
// writable paths (or hides one of them): a command there may rename the hidden path's parent
// folder, and the next command, whose view no longer finds anything to hide at that path, would
// show the secret where the first one moved it. Paths are compared as written and with their
// symlinks resolved as far as they exist, so that a symlink on the way does not mask the overlap.
func hiddenInWritable(workdir string, b Boundary) error {
	if len(b.Hidden) == 0 {
		return nil
	}
	writable := append([]string{workdir}, b.Writable...)
	resolvedWritable := make([]string, len(writable))
	for i, w := range writable {
		resolvedWritable[i] = resolvedPrefix(w)
	}
	for _, h := range b.Hidden {
		hidden := resolvedPrefix(h)
		for i, w := range writable {
			if !within(h, w) && !within(hidden, resolvedWritable[i]) {
				continue
			}
			where := "writable path " + w
			if i == 0 {
				where = "the workdir " + workdir
			}
			return fmt.Errorf("%w: hidden path %s lies inside %s, where a command could rename its parent folder away before the next command", ErrHiddenInWritable, h, where)
		}
	}
	return nil
}

// resolvedPrefix is path with the symlinks of its longest existing prefix resolved, and the rest
// (which does not exist yet) kept as written.
func resolvedPrefix(path string) string {
	rest := ""
	for p := path; ; p = filepath.Dir(p) {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(r, rest)
		}
		if p == filepath.Dir(p) {
			return path
		}
		rest = filepath.Join(filepath.Base(p), rest)
	}
}

// resolved is path with its symlinks resolved, or path itself if that fails.
func resolved(path string) string {
	if r, err := filepath.EvalSymlinks(path); err == nil {
		return r
	}
	return path
}

// within reports whether path is dir or lies under it (both clean and absolute).
func within(path, dir string) bool {
	return path == dir || dir == "/" || strings.HasPrefix(path, dir+"/")
}

// kindOrder ranks entries at the same path: the later one is mounted on top and wins.
func kindOrder(k mountKind) int {
	switch k {
	case mountPrivateTmp:
		return 0
	case mountWritable, mountHostRO, mountSymlink:
		return 1
	}
	return 2
}

// landlockFor lists the writable paths of a view for Landlock: the workdir, /tmp and the
// writable binds, plus /dev/shm.
func landlockFor(ops []mountOp) *landlockPlan {
	lp := &landlockPlan{WritableDirs: []string{"/dev/shm"}}
	for _, op := range ops {
		switch {
		case op.Kind != mountPrivateTmp && op.Kind != mountWritable:
		case op.IsDir:
			lp.WritableDirs = append(lp.WritableDirs, op.Path)
		default:
			lp.WritableFiles = append(lp.WritableFiles, op.Path)
		}
	}
	return lp
}
