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
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/moby/sys/reexec"
	"golang.org/x/sys/unix"
)

// reaperGrace is how long a none-mode kill waits for the reaper to end the tree and exit before
// it kills the process group instead.
const reaperGrace = 5 * time.Second

// reaperGiveUp bounds the reaper's kill of its descendants: one that SIGKILL does not end within
// it (stuck in the kernel) is left behind rather than holding the reaper forever.
const reaperGiveUp = 10 * time.Second

// noneLaunch runs the command on the host through the reaper (reaperEntry), a small helper in a
// session of its own (so the command has no controlling terminal of the host's) that is the
// child subreaper of everything the command starts: a child that calls setsid, double-forks or
// is disowned is still its descendant. The reaper ends the whole tree when the command's shell
// exits, when the host closes the lifeline (timeout, cancellation, Close), and when the lifeline
// breaks because the host is gone, however it died. Nothing else is contained.
func noneLaunch(spec launchSpec) (*launch, error) {
	id := idOf(spec.workdirID)
	plan := execPlan{Path: ShellPath, Args: shellArgv(spec.line), Env: spec.env, Dir: spec.workdir, DirID: &id}
	data, err := json.Marshal(plan)
	if err != nil {
		return nil, fmt.Errorf("encoding the command's plan: %w", err)
	}
	l := &launch{plan: data, group: true, grace: uncontainedGrace, result: statusResult("none mode's reaper")}
	var planR, answerW, lifeline *os.File
	w, err := l.newOutputPipe()
	if err == nil {
		planR, l.planW, err = l.pipeToChild()
	}
	if err == nil {
		answerW, err = l.pipeFromChild()
	}
	if err == nil {
		lifeline, err = l.newLifeline()
	}
	if err != nil {
		l.abort()
		return nil, err
	}
	l.cmd = &exec.Cmd{
		Path: reexec.Self(), Args: []string{reaperEntry}, Env: []string{}, Dir: "/",
		Stdout: w, Stderr: w, ExtraFiles: helperFiles(planR, answerW, lifeline),
		// No parent-death signal: a reaper killed with the host could not end the tree. The
		// lifeline tells it instead.
		SysProcAttr: &syscall.SysProcAttr{Setsid: true},
	}
	return l, nil
}

// helperFiles are the ExtraFiles of a helper that reads its plan, reports its status and watches
// the lifeline, each at its descriptor (the ones between stay closed).
func helperFiles(plan, answer, lifeline *os.File) []*os.File {
	files := make([]*os.File, lifelineFD-planFD+1)
	files[0], files[answerFD-planFD], files[lifelineFD-planFD] = plan, answer, lifeline
	return files
}

// noneReaper is the reaperEntry: it becomes the child subreaper of its descendants, starts the
// command's shell, and reports how it ended once it has killed every descendant left. A broken
// lifeline (the host closed it, or died) or a SIGTERM, SIGINT or SIGHUP kills every descendant
// and ends the reaper at once.
func noneReaper() {
	markInheritedCloseOnExec()
	answer := os.NewFile(answerFD, "status")
	fail := func(err error) {
		reportStatus(answer, initStatus{Error: err.Error()})
		os.Exit(1)
	}
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		fail(fmt.Errorf("becoming the child subreaper: %w", err))
	}
	endOnLifeline(reaperEnding)
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	go func() {
		<-signals
		reaperEnding()
		os.Exit(1)
	}()
	var plan execPlan
	if err := readPlan(planFD, &plan); err != nil {
		fail(err)
	}
	if err := enterChecked(plan.Dir, plan.DirID); err != nil {
		fail(err)
	}
	// The shell starts where the reaper is, unless the reaper is already ending (which holds the
	// lock until the process exits): a start racing an end would leave a shell the end's scan
	// never saw, reparented to init once the reaper exits.
	reaperLife.Lock()
	proc, err := os.StartProcess(plan.Path, plan.Args, &os.ProcAttr{
		Env: plan.Env, Files: []*os.File{os.Stdin, os.Stdout, os.Stderr},
	})
	reaperLife.Unlock()
	if err != nil {
		fail(fmt.Errorf("starting %s: %w", plan.Path, err))
	}
	status, err := waitFor(proc.Pid)
	if err != nil {
		fail(err)
	}
	killDescendants() // the command's background children do not outlive it
	reportExit(answer, status)
	os.Exit(0)
}

// reaperLife orders the reaper's end with the shell's start: an end that begins first stops the
// start, one that begins after it finds the shell among the descendants it kills.
var reaperLife sync.Mutex

// reaperEnding is how the reaper ends early (a broken lifeline, a signal): every descendant is
// killed, and the lock is never released, so no command starts before the caller exits the
// process.
func reaperEnding() {
	reaperLife.Lock()
	killDescendants()
}

// enterChecked makes dir, opened with symbolic links refused and checked to be the folder want
// names (openSource), the reaper's working directory: a path swapped to lead elsewhere since the
// manager's walk is refused rather than entered.
func enterChecked(dir string, want *fileID) error {
	fd, err := openSource(dir, want)
	if err != nil {
		return fmt.Errorf("entering the workdir: %w", err)
	}
	defer unix.Close(fd)
	if err := unix.Fchdir(fd); err != nil {
		return fmt.Errorf("entering the workdir %s: %w", dir, err)
	}
	return nil
}

// endOnLifeline watches the lifeline (lifelineFD) in a goroutine: at its EOF (the host closed
// its end, or the host is gone and the kernel closed it) it calls end and exits the process.
func endOnLifeline(end func()) {
	lifeline := os.NewFile(lifelineFD, "lifeline")
	go func() {
		_, _ = io.Copy(io.Discard, lifeline)
		end()
		os.Exit(1)
	}()
}

// waitFor reaps children until pid exits and returns its status: every other child (an orphan
// reparented to this subreaper or init) is reaped on the way.
func waitFor(pid int) (syscall.WaitStatus, error) {
	for {
		var status syscall.WaitStatus
		got, err := syscall.Wait4(-1, &status, 0, nil)
		switch {
		case errors.Is(err, syscall.EINTR):
		case err != nil:
			return 0, fmt.Errorf("waiting for the command: %w", err)
		case got == pid:
			return status, nil
		}
	}
}

// reportStatus writes one status line on a helper's answer descriptor.
func reportStatus(answer *os.File, s initStatus) {
	data, _ := json.Marshal(s)
	_, _ = answer.Write(append(data, '\n'))
}

// reportExit reports how the command's process ended.
func reportExit(answer *os.File, status syscall.WaitStatus) {
	if status.Signaled() {
		reportStatus(answer, initStatus{Signal: int(status.Signal())})
		return
	}
	code := status.ExitStatus()
	reportStatus(answer, initStatus{Exit: &code})
}

// killDescendants sends SIGKILL to every live descendant of this process, again and again until
// none is left (one forked between a scan and the kill is found by the next scan, reparented to
// this subreaper), or reaperGiveUp passes.
func killDescendants() {
	deadline := time.Now().Add(reaperGiveUp)
	for {
		pids := descendants(os.Getpid())
		if len(pids) == 0 || time.Now().After(deadline) {
			return
		}
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// descendants lists the live (not zombie) descendants of root, from a scan of /proc.
func descendants(root int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	children := map[int][]int{}
	live := map[int]bool{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		ppid, state, ok := procParent(pid)
		if !ok {
			continue
		}
		children[ppid] = append(children[ppid], pid)
		live[pid] = state != 'Z' && state != 'X'
	}
	var out []int
	for queue := children[root]; len(queue) > 0; queue = queue[1:] {
		pid := queue[0]
		if live[pid] {
			out = append(out, pid)
		}
		queue = append(queue, children[pid]...)
	}
	return out
}

// procParent reads a process's parent and state from /proc/<pid>/stat.
func procParent(pid int) (ppid int, state byte, ok bool) {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, false
	}
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, 0, false
	}
	fields := strings.Fields(string(stat[i+1:]))
	if len(fields) < 2 || len(fields[0]) != 1 {
		return 0, 0, false
	}
	ppid, err = strconv.Atoi(fields[1])
	return ppid, fields[0][0], err == nil
}

// statusResult reads the status lines of a helper that reports them (the namespace init, none
// mode's reaper): the command's exit, or why it never ran.
func statusResult(helper string) func(o *Outcome, state *os.ProcessState, answers [][]byte) {
	return func(o *Outcome, state *os.ProcessState, answers [][]byte) {
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
		o.Err = fmt.Errorf("%w: %s ended (%v) without reporting (does the binary's main call sandbox.Init() first?): %s",
			ErrSetup, helper, state, strings.TrimSpace(string(o.Output)))
	}
}
