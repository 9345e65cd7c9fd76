package sandbox

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/moby/sys/reexec"
	"golang.org/x/sys/unix"
)

// bwrapLaunch runs bubblewrap through the exec trampoline, which lowers the rlimits and execs
// bwrap; bwrap builds the same view as the namespace mode, loads the seccomp filter (--seccomp)
// and reports the command's exit on a JSON status descriptor. bwrap mode applies no Landlock:
// a Landlock domain forbids mounting, so it could only be entered after bwrap's own setup, by a
// helper bwrap would have to run inside the sandbox.
//
// The trampoline starts as pid 1 of a pid namespace of its own (in a user and mount namespace of
// its own, with a /proc of that pid namespace), so bwrap, which it becomes, is that pid 1 and the
// sandbox's pid namespace is nested in it: killing bwrap kills everything in both, whatever
// stage bwrap's setup had reached. bwrap's --die-with-parent does not cover the sandbox's pid 1
// (bwrap 0.8.0 sets it before changing the child's ids, which clears it): a host that died left
// that pid 1 and the command running. Now bwrap's own parent-death signal, set again by the
// trampoline, is enough.
//
// On a root host bwrap runs unprivileged, as CommandUID, so that the command it maps to that uid
// is not root to the kernel. The trampoline's user namespace then maps CommandUID to itself
// (created by root, so the kernel counts RLIMIT_NPROC per command rather than across every
// command running as CommandUID); it stages the bind sources where bwrap can reach them
// (stagePlan), becomes CommandUID with no groups and no capabilities, and execs bwrap there. On
// an unprivileged host the namespace maps the host's ids to themselves.
func bwrapLaunch(spec launchSpec) (*launch, error) {
	caps := spec.caps
	ops, err := viewFor(spec)
	if err != nil {
		return nil, err
	}
	plan := execPlan{Env: []string{}, Dir: "/", Rlimits: rlimitsFor(spec.boundary.Limits), Path: caps.BwrapPath,
		MountProc: true, Lifeline: true}
	sys := &syscall.SysProcAttr{
		Setsid: true, Pdeathsig: syscall.SIGKILL,
		Cloneflags:  unix.CLONE_NEWUSER | unix.CLONE_NEWNS | unix.CLONE_NEWPID,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: caps.UID, HostID: caps.UID, Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: caps.GID, HostID: caps.GID, Size: 1}},
		// To mount the pid namespace's /proc; dropped before bwrap starts (applyAndExec).
		AmbientCaps: []uintptr{unix.CAP_SYS_ADMIN},
	}
	if caps.dropsPrivileges() {
		plan.Stage = &stagePlan{Dir: spec.root, Workdir: spec.workdir, WorkdirID: idOf(spec.workdirID),
			As: identity{UID: caps.CommandUID, GID: caps.CommandGID, DropGroups: true}}
		for _, op := range ops {
			if op.Kind == mountWritable {
				plan.Stage.Sources = append(plan.Stage.Sources, op.Path)
			}
		}
		sys.UidMappings = []syscall.SysProcIDMap{{ContainerID: caps.CommandUID, HostID: caps.CommandUID, Size: 1}}
		sys.GidMappings = []syscall.SysProcIDMap{{ContainerID: caps.CommandGID, HostID: caps.CommandGID, Size: 1}}
		sys.GidMappingsEnableSetgroups = true
		sys.AmbientCaps = []uintptr{unix.CAP_SYS_ADMIN, unix.CAP_SETUID, unix.CAP_SETGID}
	}
	plan.Args = append([]string{"bwrap"}, bwrapArgs(spec, ops, plan.Stage)...)
	plan.KeepFDs = []int{bwrapStatusFD}
	if caps.Seccomp.Available {
		plan.KeepFDs = []int{bwrapSeccompFD, bwrapStatusFD}
	}
	data, err := json.Marshal(plan)
	if err != nil {
		return nil, fmt.Errorf("encoding the sandbox plan: %w", err)
	}
	l := &launch{plan: data, grace: containedOutputGrace}
	files := make([]*os.File, lifelineFD-planFD+1)
	w, err := l.newOutputPipe()
	if err == nil {
		err = caps.chownOutput(w)
	}
	if err == nil {
		files[0], l.planW, err = l.pipeToChild()
	}
	if err == nil {
		files[answerFD-planFD], err = l.pipeFromChild()
	}
	if err == nil && caps.Seccomp.Available {
		err = l.seccompPipe(files, spec.boundary.Network)
	}
	if err == nil {
		files[lifelineFD-planFD], err = l.newLifeline()
	}
	var status *bwrapStatus
	if err == nil {
		status, err = newBwrapStatus(l)
	}
	if err != nil {
		l.abort()
		return nil, err
	}
	files[bwrapStatusFD-planFD] = status.w
	l.follow, l.followed, l.result = status.follow, status.r, status.result
	l.cmd = &exec.Cmd{
		Path: reexec.Self(), Args: []string{execEntry}, Env: []string{}, Dir: "/",
		Stdout: w, Stderr: w, ExtraFiles: files, SysProcAttr: sys,
	}
	return l, nil
}

// mountOwnProc is the bwrap trampoline's first step (execPlan.MountProc), as pid 1 of its own pid
// namespace: its mounts become private to its mount namespace, and a /proc of that pid namespace
// covers the host's, so that bwrap, which reads its child's entries there, finds them.
func mountOwnProc() error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("making the mounts private: %w", err)
	}
	if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("mounting /proc: %w", err)
	}
	return nil
}

// stageSources is the trampoline's staging (stagePlan): it opens the sources with the host's ids
// (the workdir checked to be the folder the manager reached), becomes st.As (the command uid, no
// groups: all threads, for good), mounts a fresh file system on st.Dir, and attaches a copy of
// source i on st.Dir/i. All of it happens in the trampoline's own mount namespace, which dies
// with bwrap: nothing is mounted on the host.
func stageSources(st *stagePlan) error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("making the mounts private: %w", err)
	}
	sources := make([]int, len(st.Sources))
	for i := range sources {
		sources[i] = -1
	}
	defer closeSources(sources)
	for i, src := range st.Sources {
		var want *fileID
		if src == st.Workdir {
			want = &st.WorkdirID
		}
		fd, err := openSource(src, want)
		if err != nil {
			return fmt.Errorf("staging %s: %w", src, err)
		}
		sources[i] = fd
	}
	if err := syscall.Setgroups(nil); err != nil {
		return fmt.Errorf("dropping the supplementary groups: %w", err)
	}
	if err := syscall.Setresgid(st.As.GID, st.As.GID, st.As.GID); err != nil {
		return fmt.Errorf("becoming gid %d: %w", st.As.GID, err)
	}
	if err := syscall.Setresuid(st.As.UID, st.As.UID, st.As.UID); err != nil {
		return fmt.Errorf("becoming uid %d: %w", st.As.UID, err)
	}
	if err := freshAt("tmpfs", st.Dir, unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV|unix.MOUNT_ATTR_NOEXEC, "mode", "0700"); err != nil {
		return fmt.Errorf("staging on %s: %w", st.Dir, err)
	}
	for i, fd := range sources {
		if err := attachCopy(fd, stagedPath(st.Dir, i), unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV); err != nil {
			return fmt.Errorf("staging %s: %w", st.Sources[i], err)
		}
	}
	return nil
}

// stagedPath is where the trampoline stages bind source i.
func stagedPath(dir string, i int) string { return filepath.Join(dir, strconv.Itoa(i)) }

// seccompPipe puts the compiled filter (of a boundary with or without the network) in a pipe
// bwrap reads at bwrapSeccompFD. The program is a few hundred bytes, far below a pipe's capacity,
// so writing it before the start cannot block.
func (l *launch) seccompPipe(files []*os.File, network bool) error {
	prog, err := seccompProgram(network)
	if err != nil {
		return err
	}
	r, w, err := l.pipeToChild()
	if err != nil {
		return err
	}
	files[bwrapSeccompFD-planFD] = r
	defer w.Close()
	if _, err := w.Write(prog); err != nil {
		return fmt.Errorf("writing the seccomp program: %w", err)
	}
	return nil
}

// bwrapArgs are bwrap's options for spec: every namespace (the network too unless the boundary
// has it), a new user namespace in which the command is the non-root inside uid with no
// capabilities and cannot create further user namespaces, a new /dev and a new read-only /proc,
// the view's entries in order on bwrap's own root (the skeleton of the host's / read-only, and
// the rest as in buildRoot; a writable bind's source staged when stage is set), that root made
// read-only, the workdir as cwd, only the allowed environment.
func bwrapArgs(spec launchSpec, ops []mountOp, stage *stagePlan) []string {
	b, caps := spec.boundary, spec.caps
	args := []string{"--unshare-all", "--unshare-user", "--disable-userns"}
	if b.Network {
		args = append(args, "--share-net")
	}
	args = append(args, "--uid", strconv.Itoa(caps.InsideUID), "--gid", strconv.Itoa(caps.InsideGID),
		"--hostname", sandboxHostname, "--die-with-parent", "--new-session", "--cap-drop", "ALL",
		"--dev", "/dev", "--proc", "/proc", "--remount-ro", "/proc")
	// /dev/shm is a directory of bwrap's /dev tmpfs otherwise: a capped tmpfs of its own, and /dev
	// read-only at the end (see buildDev).
	args = append(args, tmpfsArgs(b.Limits.TmpSize, "/dev/shm")...)
	var hidden []string
	staged := 0
	for _, op := range ops {
		switch op.Kind {
		case mountPrivateTmp:
			args = append(args, tmpfsArgs(b.Limits.TmpSize, op.Path)...)
		case mountWritable:
			src := op.Path
			if stage != nil {
				src = stagedPath(stage.Dir, staged)
				staged++
			}
			args = append(args, "--bind", src, op.Path)
		case mountHostRO:
			// Never staged: every folder above a skeleton entry lies on the way to a path the view
			// reaches, so bwrap reaches it as the command uid. "try": it may vanish meanwhile.
			args = append(args, "--ro-bind-try", op.Path, op.Path)
		case mountSymlink:
			args = append(args, "--symlink", op.Target, op.Path)
		case mountHideDir:
			args = append(args, "--tmpfs", op.Path)
			hidden = append(hidden, op.Path)
		case mountHideFile:
			// A read-only bind would be nodev and unreadable: the file reads empty and discards
			// writes instead.
			args = append(args, "--dev-bind", "/dev/null", op.Path)
		}
	}
	for _, dir := range append(hidden, "/dev", "/") {
		args = append(args, "--remount-ro", dir)
	}
	args = append(args, "--chdir", spec.workdir, "--clearenv")
	for _, kv := range spec.env {
		name, value, _ := strings.Cut(kv, "=")
		args = append(args, "--setenv", name, value)
	}
	if caps.Seccomp.Available {
		args = append(args, "--seccomp", strconv.Itoa(bwrapSeccompFD))
	}
	args = append(args, "--json-status-fd", strconv.Itoa(bwrapStatusFD), "--", ShellPath)
	return append(args, shellArgv(spec.line)[1:]...)
}

// tmpfsArgs are bwrap's options for a private, writable tmpfs at path (see privateTmpOptions).
func tmpfsArgs(size uint64, path string) []string {
	args := []string{"--perms", "1777"}
	if size > 0 {
		args = append(args, "--size", strconv.FormatUint(size, 10))
	}
	return append(args, "--tmpfs", path)
}

// bwrapStatus follows bwrap's JSON status documents as bwrap writes them: {"child-pid": n, ...}
// once it has cloned the sandbox's pid 1 (a pid in the trampoline's pid namespace, of no use to
// the host), {"exit-code": n} once the command has ended. bwrap writes no exit code when its setup
// fails.
type bwrapStatus struct {
	r, w     *os.File
	exitCode *int // set by follow; read by result once follow has returned
}

// newBwrapStatus makes the status pipe; the child inherits w.
func newBwrapStatus(l *launch) (*bwrapStatus, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("creating a pipe: %w", err)
	}
	l.childEnds = append(l.childEnds, w)
	return &bwrapStatus{r: r, w: w}, nil
}

// follow reads the documents until bwrap is gone (the launch's follow hook).
func (s *bwrapStatus) follow() {
	defer s.r.Close()
	dec := json.NewDecoder(s.r)
	for {
		var doc struct {
			ExitCode *int `json:"exit-code"`
		}
		if dec.Decode(&doc) != nil {
			return
		}
		if doc.ExitCode != nil {
			s.exitCode = doc.ExitCode
		}
	}
}

// result reads the trampoline's exec error and bwrap's exit code: its absence means setup
// failed, and bwrap's message is then what the "command" printed.
func (s *bwrapStatus) result(o *Outcome, state *os.ProcessState, answers [][]byte) {
	switch ws, _ := state.Sys().(syscall.WaitStatus); {
	case len(answers[0]) > 0:
		o.Err = fmt.Errorf("%w: %s", ErrSetup, answers[0])
	case s.exitCode != nil:
		o.ExitCode = *s.exitCode
	case ws.Signaled():
		exitFields(o, state)
	default:
		o.Err = fmt.Errorf("%w: bwrap exited (%v) before the command ran: %s", ErrSetup, state, strings.TrimSpace(string(o.Output)))
	}
}
