package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"syscall"
	"time"
	"unsafe"

	"github.com/moby/sys/reexec"
	"golang.org/x/sys/unix"

	"github.com/warrenhq/warren/internal/safepath"
)

func init() {
	reexec.Register(initEntry, namespaceInit)
	reexec.Register(execEntry, execTrampoline)
	reexec.Register(reaperEntry, noneReaper)
}

// newLaunch prepares the command of spec's mode.
func newLaunch(spec launchSpec) (*launch, error) {
	switch spec.boundary.Mode {
	case ModeNamespace:
		return namespaceLaunch(spec)
	case ModeBwrap:
		return bwrapLaunch(spec)
	}
	return noneLaunch(spec)
}

// signalTree kills the command's tree. In none mode it closes the lifeline, on which the reaper
// kills every descendant and exits, and kills the process group too after reaperGrace should the
// reaper not be gone by then (a command that killed it: none mode contains nothing). In the
// contained modes it sends SIGKILL to the top process, pid 1 of a pid namespace holding the whole
// tree (the namespace init, or bwrap in a pid namespace of the trampoline's), whose death kills
// everything in it. Called with mu held while the child is not yet reaped, so its pid (and
// process group id) cannot have been reused.
func (l *launch) signalTree() {
	if l.group {
		l.closeLifeline()
		if l.groupKill == nil {
			l.groupKill = time.AfterFunc(reaperGrace, l.killGroup)
		}
		return
	}
	_ = syscall.Kill(l.cmd.Process.Pid, syscall.SIGKILL)
}

// killGroup is none mode's fallback kill (signalTree): the process group, unless the reaper has
// exited.
func (l *launch) killGroup() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.finished {
		l.endGroup()
	}
}

// endGroup sends SIGKILL to the none-mode command's process group, whose id is the reaper's pid
// (a session leader); nothing in the contained modes. Called with mu held while the reaper is not
// yet reaped, so its pid cannot have been reused.
func (l *launch) endGroup() {
	if l.group {
		_ = syscall.Kill(-l.cmd.Process.Pid, syscall.SIGKILL)
	}
}

// closeLifeline closes the host's end of the lifeline (called with mu held, or once the child is
// reaped): the helper reading the other end ends the command's whole tree.
func (l *launch) closeLifeline() {
	if l.lifeline != nil {
		l.lifeline.Close()
		l.lifeline = nil
	}
}

// reapTree waits for the child to exit, marks it finished while it is still a zombie (so a
// group kill cannot hit a reused pid), reaps it, and closes the lifeline.
func reapTree(l *launch) {
	waitNoReap(l.cmd.Process.Pid)
	l.markFinished()
	_ = l.cmd.Wait() // an exit status other than 0 is not an error here; ProcessState has it
	l.mu.Lock()
	l.closeLifeline()
	if l.groupKill != nil {
		l.groupKill.Stop()
	}
	l.mu.Unlock()
}

// waitNoReap blocks until process pid has exited, leaving it a zombie (its pid reserved) for the
// caller to reap.
func waitNoReap(pid int) {
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if !errors.Is(err, unix.EINTR) {
			return
		}
	}
}

// rlimitsFor turns a boundary's limits into rlimit settings (a zero limit sets nothing); core
// dumps are always off.
func rlimitsFor(l Limits) []rlimitSetting {
	set := []rlimitSetting{{Resource: unix.RLIMIT_CORE, Max: 0}}
	for _, r := range []struct {
		resource int
		max      uint64
	}{
		{unix.RLIMIT_CPU, l.CPUSeconds},
		{unix.RLIMIT_AS, l.AddressSpace},
		{unix.RLIMIT_NOFILE, l.OpenFiles},
		{unix.RLIMIT_NPROC, l.Processes},
		{unix.RLIMIT_FSIZE, l.FileSize},
	} {
		if r.max != 0 {
			set = append(set, rlimitSetting{Resource: r.resource, Max: r.max})
		}
	}
	return set
}

// execTrampoline is the execEntry: it reads its plan, applies it and execs the command. It runs
// locked to one thread from start to exec: Landlock, no_new_privs and the seccomp filter are
// applied to the calling thread only, and execve keeps exactly that thread's restrictions.
func execTrampoline() {
	runtime.LockOSThread()
	// The answer descriptor closes at a successful exec: the parent reads EOF and knows the
	// command started; otherwise it reads the error.
	syscall.CloseOnExec(answerFD)
	answer := os.NewFile(answerFD, "answer")
	var plan execPlan
	err := readPlan(planFD, &plan)
	if err == nil && plan.MountProc {
		err = mountOwnProc()
	}
	if err == nil && plan.Stage != nil {
		err = stageSources(plan.Stage)
	}
	if err == nil && plan.Lifeline {
		err = dieWithHost()
	}
	if err == nil {
		err = applyAndExec(&plan)
	}
	fmt.Fprint(answer, err)
	os.Exit(127)
}

// dieWithHost sets the calling thread's parent-death signal to SIGKILL, then checks that the
// lifeline (lifelineFD) is not broken: a host that died before the signal was set would never
// send it. (getppid cannot tell: the trampoline is pid 1 of its pid namespace, whose parent is 0.)
func dieWithHost() error {
	if err := unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(unix.SIGKILL), 0, 0, 0); err != nil {
		return fmt.Errorf("setting the parent-death signal: %w", err)
	}
	fds := []unix.PollFd{{Fd: lifelineFD, Events: unix.POLLIN}}
	if n, err := unix.Poll(fds, 0); err != nil || n > 0 && fds[0].Revents&(unix.POLLHUP|unix.POLLERR) != 0 {
		return fmt.Errorf("the host is gone (its lifeline: %v, events %#x)", err, fds[0].Revents)
	}
	return nil
}

// applyAndExec applies plan's restrictions to the calling thread and execs its command; it
// returns only on failure. The rlimits come last and nothing is allocated after them: a low
// address-space limit would make the Go runtime's next mmap fail (it is far above most
// commands' needs, not above a Go process's reservations), so the exec's arguments are
// prepared first and execve is called directly.
func applyAndExec(plan *execPlan) error {
	// What the thread may still pass on (a helper's ambient capabilities) must not reach the exec.
	if err := dropInheritedCaps(); err != nil {
		return err
	}
	if plan.NoNewPrivs {
		if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
			return fmt.Errorf("setting no_new_privs: %w", err)
		}
	}
	if plan.Landlock != nil {
		if err := enforceLandlock(plan.Landlock); err != nil {
			return fmt.Errorf("enforcing landlock: %w", err)
		}
	}
	if plan.Seccomp {
		if err := loadSeccomp(plan.Network); err != nil {
			return fmt.Errorf("loading the seccomp filter: %w", err)
		}
	}
	if err := os.Chdir(plan.Dir); err != nil {
		return fmt.Errorf("entering the workdir: %w", err)
	}
	path, err := syscall.BytePtrFromString(plan.Path)
	if err != nil {
		return fmt.Errorf("executing %s: %w", plan.Path, err)
	}
	argv, err := syscall.SlicePtrFromStrings(plan.Args)
	if err != nil {
		return fmt.Errorf("executing %s: %w", plan.Path, err)
	}
	envv, err := syscall.SlicePtrFromStrings(plan.Env)
	if err != nil {
		return fmt.Errorf("executing %s: %w", plan.Path, err)
	}
	// Whatever the host inherited or leaked into this process stays out of the command.
	if err := closeOnExecExcept(plan.KeepFDs); err != nil {
		return err
	}
	if err := setRlimits(plan.Rlimits); err != nil {
		return err
	}
	_, _, errno := unix.RawSyscall(unix.SYS_EXECVE, uintptr(unsafe.Pointer(path)),
		uintptr(unsafe.Pointer(&argv[0])), uintptr(unsafe.Pointer(&envv[0])))
	return fmt.Errorf("executing %s: %w", plan.Path, errno)
}

// setRlimits lowers each limit, soft and hard, to its setting or to the current hard limit if
// that is lower (only a privileged process may raise a hard limit). syscall.Setrlimit, not
// unix's, so the Go runtime's own bookkeeping of RLIMIT_NOFILE stays right across the exec.
func setRlimits(settings []rlimitSetting) error {
	for _, s := range settings {
		var cur syscall.Rlimit
		if err := syscall.Getrlimit(s.Resource, &cur); err != nil {
			return fmt.Errorf("reading rlimit %d: %w", s.Resource, err)
		}
		v := min(s.Max, cur.Max)
		if err := syscall.Setrlimit(s.Resource, &syscall.Rlimit{Cur: v, Max: v}); err != nil {
			return fmt.Errorf("setting rlimit %d to %d: %w", s.Resource, v, err)
		}
	}
	return nil
}

// closeOnExecExcept marks every descriptor above stderr close-on-exec except keep (ascending),
// so that an exec passes on only what it was meant to: close_range(2) where the kernel has it
// (Linux 5.11+), a walk of /proc/self/fd otherwise.
func closeOnExecExcept(keep []int) error {
	first := uint(3)
	for _, fd := range append(slices.Clone(keep), -1) {
		last := ^uint(0)
		if fd >= 0 {
			last = uint(fd) - 1
		}
		if fd >= 0 && uint(fd) < first {
			continue
		}
		if first <= last {
			if err := unix.CloseRange(first, last, unix.CLOSE_RANGE_CLOEXEC); err != nil {
				return closeOnExecByWalk(keep)
			}
		}
		first = uint(fd) + 1
	}
	return nil
}

// closeOnExecByWalk is closeOnExecExcept for kernels without CLOSE_RANGE_CLOEXEC.
func closeOnExecByWalk(keep []int) error {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return fmt.Errorf("listing the open descriptors: %w", err)
	}
	for _, e := range entries {
		fd, err := strconv.Atoi(e.Name())
		if err != nil || fd < 3 || slices.Contains(keep, fd) {
			continue
		}
		// The directory's own descriptor is gone by now: EBADF for it is expected.
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFD, unix.FD_CLOEXEC); err != nil && !errors.Is(err, unix.EBADF) {
			return fmt.Errorf("marking descriptor %d close-on-exec: %w", fd, err)
		}
	}
	return nil
}

// markInheritedCloseOnExec is Init's first layer against leaked descriptors: whatever the host
// process inherited from whoever started it (a terminal's, a supervisor's, a parent's open
// files) closes at every exec the host makes, so no command starts holding one. Best effort: the
// exec trampoline closes the rest right before each contained command's exec.
func markInheritedCloseOnExec() { _ = closeOnExecExcept(nil) }

// ChownForCommands hands path to the host ids contained commands run as (CommandUID and
// CommandGID), and does nothing when those are the host's own. The manager hands its private
// directory over with it, and each workdir (through the descriptor its walk reached) before a
// contained command runs there; what the host writes into a workdir afterwards (the file tools,
// running as root) stays root's, readable but not writable by the commands, unless the writer
// hands it over too. path must be absolute with its symlinks resolved: a symlink anywhere on it
// is refused, so that one a command planted cannot turn the chown onto a host file.
func (c *Capabilities) ChownForCommands(path string) error {
	if !c.dropsPrivileges() {
		return nil
	}
	fd, err := unix.Openat2(unix.AT_FDCWD, path, &unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC, Resolve: unix.RESOLVE_NO_SYMLINKS})
	if err != nil {
		return fmt.Errorf("opening %s: %w", path, err)
	}
	defer unix.Close(fd)
	if err := unix.Fchownat(fd, "", c.CommandUID, c.CommandGID, unix.AT_EMPTY_PATH); err != nil {
		return fmt.Errorf("chown %s: %w", path, err)
	}
	return nil
}

// idOf is a folder's identity as the helpers' plans carry it.
func idOf(id safepath.Identity) fileID { return fileID{Dev: id.Dev, Ino: id.Ino} }

// removePrivate removes the manager's private directory and its empty "root" by descriptor: the
// directory is opened with symbolic links refused on its whole path (openat2's
// RESOLVE_NO_SYMLINKS) and "root" removed relative to it, so a link put in either's place leads
// the removal nowhere. Both belong to CommandUID in the host's sticky /tmp, which no command
// sees; this is defence in depth. rmdir removes only empty folders, and a missing one is no error.
func removePrivate(private string) error {
	how := &unix.OpenHow{Flags: unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC, Resolve: unix.RESOLVE_NO_SYMLINKS}
	parent, err := unix.Openat2(unix.AT_FDCWD, filepath.Dir(private), how)
	if err != nil {
		return fmt.Errorf("opening %s: %w", filepath.Dir(private), err)
	}
	defer unix.Close(parent)
	how.Resolve |= unix.RESOLVE_BENEATH
	fd, err := unix.Openat2(parent, filepath.Base(private), how)
	if errors.Is(err, unix.ENOENT) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("opening %s: %w", private, err)
	}
	err = unix.Unlinkat(fd, "root", unix.AT_REMOVEDIR)
	unix.Close(fd)
	if err != nil && !errors.Is(err, unix.ENOENT) {
		return fmt.Errorf("removing %s/root: %w", private, err)
	}
	if err := unix.Unlinkat(parent, filepath.Base(private), unix.AT_REMOVEDIR); err != nil && !errors.Is(err, unix.ENOENT) {
		return fmt.Errorf("removing %s: %w", private, err)
	}
	return nil
}

// chownOutput hands the command's end of its output pipe to the ids contained commands run as,
// when those are not the host's own: the command writes its descriptors 1 and 2 either way, but
// reopening them (/dev/stdout, /proc/self/fd/2, as scripts do) checks the pipe's owner.
func (c *Capabilities) chownOutput(w *os.File) error {
	if !c.dropsPrivileges() {
		return nil
	}
	conn, err := w.SyscallConn()
	if err != nil {
		return fmt.Errorf("handing the output pipe to uid %d: %w", c.CommandUID, err)
	}
	var chownErr error
	if err := conn.Control(func(fd uintptr) { chownErr = unix.Fchown(int(fd), c.CommandUID, c.CommandGID) }); err != nil {
		return fmt.Errorf("handing the output pipe to uid %d: %w", c.CommandUID, err)
	}
	if chownErr != nil {
		return fmt.Errorf("handing the output pipe to uid %d: %w", c.CommandUID, chownErr)
	}
	return nil
}

// hardLimits reads this process's hard rlimits for Capabilities (0 = unlimited).
func hardLimits() Limits {
	get := func(resource int) uint64 {
		var r syscall.Rlimit
		if syscall.Getrlimit(resource, &r) != nil || r.Max == unix.RLIM_INFINITY {
			return 0
		}
		return r.Max
	}
	return Limits{
		CPUSeconds:   get(unix.RLIMIT_CPU),
		AddressSpace: get(unix.RLIMIT_AS),
		OpenFiles:    get(unix.RLIMIT_NOFILE),
		Processes:    get(unix.RLIMIT_NPROC),
		FileSize:     get(unix.RLIMIT_FSIZE),
	}
}
