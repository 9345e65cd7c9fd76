package sandbox

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strings"
	"syscall"

	"github.com/moby/sys/reexec"
	"golang.org/x/sys/unix"
)

// namespaceLaunch starts the namespace init (pid 1 of new user, mount, pid, uts, ipc and, unless
// the boundary has the network, network namespaces, in a session of its own) with the plan on a
// pipe. The one id the user namespace maps is the inside uid (never 0) to CommandUID, and the same
// for the gid. The init itself keeps the host's ids (on a root host, uid 0, which the namespace
// does not map), so that it can open the bind sources wherever they are, and CAP_SYS_ADMIN,
// CAP_NET_ADMIN, CAP_SETUID and CAP_SETGID in its namespaces as ambient capabilities to assemble
// the root; the command, started as the inside uid without them, has no capabilities at all, and
// is CommandUID to the kernel.
func namespaceLaunch(spec launchSpec) (*launch, error) {
	b, caps := spec.boundary, spec.caps
	ops, err := viewFor(spec)
	if err != nil {
		return nil, err
	}
	plan := namespacePlan{
		Root: spec.root, Workdir: spec.workdir, Mounts: ops, Hostname: sandboxHostname, Loopback: !b.Network,
		TmpSize: b.Limits.TmpSize,
		As:      identity{UID: caps.InsideUID, GID: caps.InsideGID, DropGroups: caps.dropsPrivileges()},
		Exec: execPlan{
			Path: ShellPath, Args: shellArgv(spec.line), Env: spec.env, Dir: spec.workdir,
			Rlimits: rlimitsFor(b.Limits), NoNewPrivs: true, Seccomp: caps.Seccomp.Available,
			Network: b.Network,
		},
	}
	if caps.Landlock.Available {
		plan.Exec.Landlock = landlockFor(ops)
	}
	data, err := json.Marshal(plan)
	if err != nil {
		return nil, fmt.Errorf("encoding the sandbox plan: %w", err)
	}
	l := &launch{plan: data, grace: containedOutputGrace, inner: -1, result: namespaceResult}
	w, err := l.newOutputPipe()
	if err == nil {
		err = caps.chownOutput(w)
	}
	if err != nil {
		l.abort()
		return nil, err
	}
	planR, planW, err := l.pipeToChild()
	if err != nil {
		l.abort()
		return nil, err
	}
	l.planW = planW
	statusW, err := l.pipeFromChild()
	if err != nil {
		l.abort()
		return nil, err
	}
	flags := uintptr(unix.CLONE_NEWUSER | unix.CLONE_NEWNS | unix.CLONE_NEWPID | unix.CLONE_NEWUTS | unix.CLONE_NEWIPC)
	if !b.Network {
		flags |= unix.CLONE_NEWNET
	}
	l.cmd = &exec.Cmd{
		Path: reexec.Self(), Args: []string{initEntry}, Env: []string{}, Dir: "/",
		Stdout: w, Stderr: w, ExtraFiles: []*os.File{planR, statusW},
		SysProcAttr: &syscall.SysProcAttr{
			Cloneflags:  flags,
			UidMappings: []syscall.SysProcIDMap{{ContainerID: caps.InsideUID, HostID: caps.CommandUID, Size: 1}},
			GidMappings: []syscall.SysProcIDMap{{ContainerID: caps.InsideGID, HostID: caps.CommandGID, Size: 1}},
			// Only a privileged host may let the namespace call setgroups: the command then
			// drops the root host's supplementary groups.
			GidMappingsEnableSetgroups: caps.dropsPrivileges(),
			AmbientCaps:                []uintptr{unix.CAP_SYS_ADMIN, unix.CAP_NET_ADMIN, unix.CAP_SETUID, unix.CAP_SETGID},
			// No controlling terminal: nothing inside can type into the host's (TIOCSTI).
			Setsid:    true,
			Pdeathsig: syscall.SIGKILL,
		},
	}
	return l, nil
}

// namespaceResult reads the init's status lines: the command's exit, or why it never ran.
func namespaceResult(o *Outcome, state *os.ProcessState, answers [][]byte) {
	for line := range bytes.Lines(answers[0]) {
		var s initStatus
		if json.Unmarshal(line, &s) != nil {
			continue
		}
		switch {
		case s.Error != "":
			o.Err = fmt.Errorf("%w: %s", ErrSetup, s.Error)
			return
		case s.Exit != nil:
			o.ExitCode = *s.Exit
			return
		case s.Signal != 0:
			o.ExitCode, o.Signal = -1, syscall.Signal(s.Signal).String()
			return
		}
	}
	o.Err = fmt.Errorf("%w: the namespace init ended (%v) without reporting (does the binary's main call sandbox.Init() first?): %s",
		ErrSetup, state, strings.TrimSpace(string(o.Output)))
}

// namespaceInit is the initEntry: pid 1 of the command's namespaces. It assembles the root,
// starts the exec trampoline, reaps every process of the namespace until the trampoline's (the
// command's) own process exits, reports how it ended and exits, which makes the kernel kill
// whatever the command left behind. Being killed does the same: that is how the host kills the
// whole tree, double-forked and setsid'd children included.
func namespaceInit() {
	// Never unlocked: this thread takes the command's file ids and drops its ambient
	// capabilities before it starts the command, and the Go runtime must not run anything else
	// on it.
	runtime.LockOSThread()
	// Not dumpable: nothing in the namespace may read or write the init's memory or descriptors
	// through /proc (on an unprivileged host the command is the init's uid).
	_ = unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
	markInheritedCloseOnExec()
	answer := os.NewFile(answerFD, "status")
	report := func(s initStatus) {
		data, _ := json.Marshal(s)
		_, _ = answer.Write(append(data, '\n'))
	}
	// pid 1 gets only the signals it handles; the Go runtime handles these, so ignore them:
	// the command must not be able to end its own namespace early by accident.
	signal.Ignore(syscall.SIGHUP, syscall.SIGINT, syscall.SIGTERM, syscall.SIGQUIT, syscall.SIGUSR1, syscall.SIGUSR2)
	var plan namespacePlan
	err := readPlan(planFD, &plan)
	if err == nil {
		err = buildRoot(&plan)
	}
	var status syscall.WaitStatus
	if err == nil {
		status, err = runCommand(&plan.Exec, plan.As)
	}
	switch {
	case err != nil:
		report(initStatus{Error: err.Error()})
		os.Exit(1)
	case status.Signaled():
		report(initStatus{Signal: int(status.Signal())})
	default:
		code := status.ExitStatus()
		report(initStatus{Exit: &code})
	}
	os.Exit(0)
}

// dropInheritedCaps clears the calling thread's ambient and inheritable capabilities: what the
// namespace init needed to assemble the root must not reach the command's execve.
func dropInheritedCaps() error {
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		return fmt.Errorf("clearing ambient capabilities: %w", err)
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return fmt.Errorf("reading capabilities: %w", err)
	}
	data[0].Inheritable, data[1].Inheritable = 0, 0
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("clearing inheritable capabilities: %w", err)
	}
	return nil
}

// runCommand starts the exec trampoline with plan as the command's identity and reaps until it
// ends. It forks from the init's locked thread with its ambient capabilities cleared, so the
// trampoline (a non-root uid in its user namespace) has none after its execve.
func runCommand(plan *execPlan, as identity) (syscall.WaitStatus, error) {
	data, err := json.Marshal(plan)
	if err != nil {
		return 0, fmt.Errorf("encoding the exec plan: %w", err)
	}
	planR, planW, err := os.Pipe()
	if err != nil {
		return 0, fmt.Errorf("creating a pipe: %w", err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		return 0, fmt.Errorf("creating a pipe: %w", err)
	}
	if err := dropInheritedCaps(); err != nil {
		return 0, err
	}
	proc, err := os.StartProcess(reexec.Self(), []string{execEntry}, &os.ProcAttr{
		Dir: plan.Dir, Env: []string{}, Files: []*os.File{os.Stdin, os.Stdout, os.Stderr, planR, errW},
		Sys: &syscall.SysProcAttr{Credential: &syscall.Credential{
			Uid: uint32(as.UID), Gid: uint32(as.GID), NoSetGroups: !as.DropGroups,
		}},
	})
	planR.Close()
	errW.Close()
	if err != nil {
		return 0, fmt.Errorf("starting the exec trampoline: %w", err)
	}
	_, _ = planW.Write(data)
	planW.Close()
	failure, _ := io.ReadAll(errR)
	errR.Close()
	for {
		var status syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &status, 0, nil)
		switch {
		case errors.Is(err, syscall.EINTR):
		case err != nil:
			return 0, fmt.Errorf("waiting for the command: %w", err)
		case pid == proc.Pid && len(failure) > 0:
			return 0, errors.New(string(failure))
		case pid == proc.Pid:
			return status, nil
		}
	}
}
