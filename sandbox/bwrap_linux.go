package sandbox

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
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
func bwrapLaunch(spec launchSpec) (*launch, error) {
	caps := spec.caps
	plan := execPlan{
		Path: caps.BwrapPath, Args: append([]string{"bwrap"}, bwrapArgs(spec, mountOps(spec.workdir, spec.boundary))...),
		Env: []string{}, Dir: "/", Rlimits: rlimitsFor(spec.boundary.Limits),
	}
	data, err := json.Marshal(plan)
	if err != nil {
		return nil, fmt.Errorf("encoding the sandbox plan: %w", err)
	}
	l := &launch{plan: data, grace: containedOutputGrace, inner: -1, awaitingInner: true}
	files := make([]*os.File, bwrapStatusFD-planFD+1)
	w, err := l.newOutputPipe()
	if err == nil {
		files[0], l.planW, err = l.pipeToChild()
	}
	if err == nil {
		files[answerFD-planFD], err = l.pipeFromChild()
	}
	if err == nil && caps.Seccomp.Available {
		err = l.seccompPipe(files)
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
		Stdout: w, Stderr: w, ExtraFiles: files,
		SysProcAttr: &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL},
	}
	return l, nil
}

// seccompPipe puts the compiled filter in a pipe bwrap reads at bwrapSeccompFD. The program is a
// few hundred bytes, far below a pipe's capacity, so writing it before the start cannot block.
func (l *launch) seccompPipe(files []*os.File) error {
	prog, err := seccompProgram()
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
// capabilities and cannot create further user namespaces, the host's / read-only, a new /dev and
// a new read-only /proc (see buildRoot), the view's mounts in order, the workdir as cwd, only the
// allowed environment.
func bwrapArgs(spec launchSpec, ops []mountOp) []string {
	b, caps := spec.boundary, spec.caps
	args := []string{"--unshare-all", "--unshare-user", "--disable-userns"}
	if b.Network {
		args = append(args, "--share-net")
	}
	args = append(args, "--uid", strconv.Itoa(caps.InsideUID), "--gid", strconv.Itoa(caps.InsideGID),
		"--hostname", sandboxHostname, "--die-with-parent", "--new-session", "--cap-drop", "ALL",
		"--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--remount-ro", "/proc")
	var hidden []string
	for _, op := range ops {
		switch op.Kind {
		case mountPrivateTmp:
			args = append(args, "--perms", "1777", "--tmpfs", op.Path)
		case mountWritable:
			args = append(args, "--bind", op.Path, op.Path)
		case mountHideDir:
			args = append(args, "--tmpfs", op.Path)
			hidden = append(hidden, op.Path)
		case mountHideFile:
			// A read-only bind would be nodev and unreadable: the file reads empty and discards
			// writes instead.
			args = append(args, "--dev-bind", "/dev/null", op.Path)
		}
	}
	for _, dir := range hidden {
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
	return append(args, "--json-status-fd", strconv.Itoa(bwrapStatusFD), "--", "/bin/sh", "-c", spec.line)
}

// bwrapStatus follows bwrap's JSON status documents as bwrap writes them: {"child-pid": n,
// "pid-namespace": inode, ...} once it has cloned the sandbox's pid 1, {"exit-code": n} once the
// command has ended. bwrap writes no exit code when its setup fails.
type bwrapStatus struct {
	l        *launch
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
	return &bwrapStatus{l: l, r: r, w: w}, nil
}

// follow reads the documents until bwrap is gone (the launch's follow hook).
func (s *bwrapStatus) follow() {
	defer s.r.Close()
	defer s.l.innerKnown(-1) // bwrap ended without reporting a pid 1: there is none
	dec := json.NewDecoder(s.r)
	for {
		var doc struct {
			ChildPID     int    `json:"child-pid"`
			PIDNamespace uint64 `json:"pid-namespace"`
			ExitCode     *int   `json:"exit-code"`
		}
		if dec.Decode(&doc) != nil {
			return
		}
		if doc.ChildPID > 0 {
			s.adopt(doc.ChildPID, doc.PIDNamespace)
		}
		if doc.ExitCode != nil {
			s.exitCode = doc.ExitCode
		}
	}
}

// innerKnown records the sandbox's pid 1 (a pidfd; -1: there is none), and carries out a kill
// that was waiting for it.
func (l *launch) innerKnown(pidfd int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.awaitingInner {
		if pidfd >= 0 {
			unix.Close(pidfd)
		}
		return
	}
	l.awaitingInner, l.inner = false, pidfd
	switch {
	case l.finished:
		l.killInner() // whatever bwrap left behind
	case l.reason != notKilled:
		l.signalTree() // the kill that was waiting for this
	}
}

// adopt takes a pidfd on the sandbox's pid 1 so the launch can kill it with bwrap. The pid is
// checked against the pid namespace bwrap reported where /proc lets the host read it.
func (s *bwrapStatus) adopt(pid int, pidNamespace uint64) {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		s.l.innerKnown(-1) // already gone
		return
	}
	if link, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/pid", pid)); err == nil && link != fmt.Sprintf("pid:[%d]", pidNamespace) {
		unix.Close(fd)
		s.l.innerKnown(-1)
		return
	}
	s.l.innerKnown(fd)
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
