package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
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
		Root: spec.root, Workdir: spec.workdir, WorkdirID: idOf(spec.workdirID), Mounts: ops, Hostname: sandboxHostname, Loopback: !b.Network,
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
	l := &launch{plan: data, grace: containedOutputGrace, result: statusResult("the namespace init")}
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
	var lifeline *os.File
	if err == nil {
		lifeline, err = l.newLifeline()
	}
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
		Stdout: w, Stderr: w, ExtraFiles: helperFiles(planR, statusW, lifeline),
		SysProcAttr: &syscall.SysProcAttr{
			Cloneflags:  flags,
			UidMappings: []syscall.SysProcIDMap{{ContainerID: caps.InsideUID, HostID: caps.CommandUID, Size: 1}},
			GidMappings: []syscall.SysProcIDMap{{ContainerID: caps.InsideGID, HostID: caps.CommandGID, Size: 1}},
			// Only a privileged host may let the namespace call setgroups: the command then
			// drops the root host's supplementary groups.
			GidMappingsEnableSetgroups: caps.dropsPrivileges(),
			AmbientCaps:                []uintptr{unix.CAP_SYS_ADMIN, unix.CAP_NET_ADMIN, unix.CAP_SETUID, unix.CAP_SETGID},
			// No controlling terminal: nothing inside can type into the host's (TIOCSTI).
			Setsid: true,
			// Until the init changes its file ids (which clears the parent-death signal); the
			// lifeline covers the whole life.
			Pdeathsig: syscall.SIGKILL,
		},
	}
	return l, nil
}

// namespaceInit is the initEntry: pid 1 of the command's namespaces. It assembles the root,
// starts the exec trampoline, reaps every process of the namespace until the trampoline's (the
// command's) own process exits, reports how it ended and exits, which makes the kernel kill
// whatever the command left behind. Being killed does the same: that is how the host kills the
// whole tree, double-forked and setsid'd children included. A broken lifeline (the host is gone)
// ends it too: the parent-death signal alone would not, since changing its file ids clears it.
func namespaceInit() {
	// Never unlocked: this thread takes the command's file ids and drops its ambient
	// capabilities before it starts the command, and the Go runtime must not run anything else
	// on it.
	runtime.LockOSThread()
	// Not dumpable: nothing in the namespace may read or write the init's memory or descriptors
	// through /proc (on an unprivileged host the command is the init's uid).
	_ = unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
	markInheritedCloseOnExec()
	endOnLifeline(func() {})
	answer := os.NewFile(answerFD, "status")
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
	if err != nil {
		reportStatus(answer, initStatus{Error: err.Error()})
		os.Exit(1)
	}
	reportExit(answer, status)
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
	status, err := waitFor(proc.Pid)
	if err == nil && len(failure) > 0 {
		err = errors.New(string(failure))
	}
	return status, err
}
