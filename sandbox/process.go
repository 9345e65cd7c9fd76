package sandbox

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"syscall"
	"time"

	"github.com/warrenhq/warren/internal/safepath"
)

// Process is a command started by Manager.Start.
type Process struct {
	boundary Boundary
	warning  string
	stop     chan struct{} // closed by kill: the manager is closing
	stopOnce sync.Once
	done     chan struct{} // closed once outcome is set
	outcome  Outcome
}

// Wait blocks until the command has ended (or was killed) and its output is collected.
func (p *Process) Wait() Outcome {
	<-p.done
	return p.outcome
}

// kill asks the supervisor to kill the command's whole tree (Close).
func (p *Process) kill() { p.stopOnce.Do(func() { close(p.stop) }) }

// launchSpec is everything one command needs, resolved by the manager.
type launchSpec struct {
	line string
	// workdir is absolute, and the manager reached it along real folders (no symbolic link on
	// its path); workdirID is the folder it reached, which each helper checks the folder it binds
	// or enters against, so that one swapped in after the manager's walk is refused.
	workdir   string
	workdirID safepath.Identity
	// workRoot is the folder every agent's workdir lies under (Manager.SetWorkRoot), "" when
	// none: the contained modes cover it, so that the command sees only its own workdir of it.
	workRoot string
	boundary Boundary
	env      []string
	// root is the manager's private, empty directory: where namespace mode assembles the new
	// root, and where bwrap mode stages its bind sources on a root host ("" otherwise).
	root string
	caps *Capabilities
}

// killReason is why the host killed a command.
type killReason uint8

const (
	notKilled killReason = iota
	killedTimeout
	killedCancel
)

// launch is one command's process, whichever the mode: how to start it, kill its tree, and read
// how it ended.
type launch struct {
	cmd *exec.Cmd
	// output is the read end of the pipe the command's stdout and stderr share.
	output *os.File
	// childEnds are the descriptors only the child needs; the host closes them once it started.
	childEnds []*os.File
	// plan is written to planW once the child has started (contained modes).
	plan  []byte
	planW *os.File
	// answers are the pipes the helpers report on, read once the child is gone.
	answers []*os.File
	// group: none mode, whose reaper kills the tree when the lifeline closes (the process group
	// after reaperGrace); the contained modes kill their top process, whose death takes the pid
	// namespace with it.
	group bool
	// lifeline is the host's end of a pipe whose other end the helper (none mode's reaper, the
	// namespace init) watches: at its EOF, because the host closed it to kill the command or
	// because the host itself is gone, however it died, the helper ends the command's whole tree.
	// nil in bwrap mode (bwrap's --die-with-parent does it) and once closed.
	lifeline *os.File
	// groupKill is none mode's fallback group kill, armed by the first kill.
	groupKill *time.Timer
	// grace bounds the wait for the output pipe's EOF once the tree is dead or killed.
	grace time.Duration
	// result turns the child's state and the answers into the outcome's exit fields.
	result func(o *Outcome, state *os.ProcessState, answers [][]byte)
	// follow, when set, runs in its own goroutine from the child's start until followed, the
	// pipe it reads, reaches EOF or its deadline (bwrap: reads bwrap's status as it comes, for
	// the command's exit code). The supervisor waits for it before result.
	follow   func()
	followed *os.File

	mu       sync.Mutex
	finished bool // the child has exited (not yet reaped): no more signals to its pid
	reason   killReason
}

// newOutputPipe makes the pipe a command's stdout and stderr share; the caller owns both ends.
func (l *launch) newOutputPipe() (*os.File, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("creating the output pipe: %w", err)
	}
	l.output = r
	l.childEnds = append(l.childEnds, w)
	return w, nil
}

// pipeToChild makes a pipe whose read end the child inherits; the host writes data into it.
func (l *launch) pipeToChild() (r, w *os.File, err error) {
	r, w, err = os.Pipe()
	if err != nil {
		return nil, nil, fmt.Errorf("creating a pipe: %w", err)
	}
	l.childEnds = append(l.childEnds, r)
	return r, w, nil
}

// newLifeline makes the lifeline (see launch.lifeline) and returns the end the child inherits.
func (l *launch) newLifeline() (*os.File, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("creating a pipe: %w", err)
	}
	l.childEnds = append(l.childEnds, r)
	l.lifeline = w
	return r, nil
}

// pipeFromChild makes a pipe whose write end the child inherits; the host reads it at the end.
func (l *launch) pipeFromChild() (w *os.File, err error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("creating a pipe: %w", err)
	}
	l.childEnds = append(l.childEnds, w)
	l.answers = append(l.answers, r)
	return w, nil
}

// abort releases every descriptor of a launch that will not start.
func (l *launch) abort() {
	l.closeChildEnds()
	for _, f := range append([]*os.File{l.output, l.planW, l.followed, l.lifeline}, l.answers...) {
		if f != nil {
			f.Close()
		}
	}
}

// closeChildEnds closes the host's copies of the child's descriptors (once it has them, or
// when it will not start).
func (l *launch) closeChildEnds() {
	for _, f := range l.childEnds {
		f.Close()
	}
	l.childEnds = nil
}

// kill kills the command's tree unless the child has already exited, and records why.
func (l *launch) kill(reason killReason) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.finished || l.reason != notKilled {
		return
	}
	l.reason = reason
	l.signalTree()
}

// start runs the supervisor and returns once the child has started (or failed to).
func (p *Process) start(ctx context.Context, l *launch) error {
	started := make(chan error, 1)
	go p.supervise(ctx, l, started)
	return <-started
}

// supervise starts the child and sees it to its end. The goroutine stays locked to its OS thread
// for the child's whole life: the kernel sends the child its Pdeathsig when the thread that
// started it exits, so the thread must outlive the child (go.dev/issue/27505).
func (p *Process) supervise(ctx context.Context, l *launch, started chan<- error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	defer close(p.done)
	if err := l.cmd.Start(); err != nil {
		l.abort()
		p.outcome = Outcome{Boundary: p.boundary, Warning: p.warning, Err: fmt.Errorf("starting the command: %w", err)}
		started <- p.outcome.Err
		return
	}
	l.closeChildEnds()
	started <- nil

	out := &cappedOutput{max: p.boundary.Limits.OutputBytes}
	if out.max == 0 {
		out.max = math.MaxUint64 // a zero limit is no limit
	}
	drained := make(chan struct{})
	go func() {
		drain(l.output, out)
		close(drained)
	}()
	exited := make(chan struct{})
	go p.watch(ctx, l, exited)
	followed := make(chan struct{})
	if l.follow != nil {
		go func() {
			l.follow()
			close(followed)
		}()
	} else {
		close(followed)
	}
	if l.planW != nil {
		// An error here means the child died before reading its plan; its answer says why.
		_, _ = l.planW.Write(l.plan)
		l.planW.Close()
	}

	reapTree(l)
	state := l.cmd.ProcessState
	close(exited)
	_ = l.output.SetReadDeadline(time.Now().Add(l.grace))
	<-drained
	if l.followed != nil {
		_ = l.followed.SetReadDeadline(time.Now().Add(containedOutputGrace))
	}
	<-followed
	answers := make([][]byte, len(l.answers))
	for i, f := range l.answers {
		answers[i] = readAnswer(f)
	}

	o := Outcome{Output: out.kept, Dropped: out.dropped, Boundary: p.boundary, Warning: p.warning}
	switch l.reason {
	case killedTimeout, killedCancel:
		o.ExitCode, o.Signal = -1, syscall.SIGKILL.String()
		o.TimedOut, o.Cancelled = l.reason == killedTimeout, l.reason == killedCancel
	default:
		l.result(&o, state, answers)
	}
	p.outcome = o
}

// markFinished records that the child has exited: no more signals to its pid. In none mode it
// first kills what is left of the process group (endGroup): the reaper has killed the rest of
// the tree unless something killed the reaper.
func (l *launch) markFinished() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.endGroup()
	l.finished = true
}

// watch kills the command's tree at its timeout, when ctx is cancelled or when the manager
// closes, whichever comes first, unless it exits before.
func (p *Process) watch(ctx context.Context, l *launch, exited <-chan struct{}) {
	var timeout <-chan time.Time
	if d := p.boundary.Limits.Timeout; d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		timeout = t.C
	}
	select {
	case <-exited:
	case <-timeout:
		l.kill(killedTimeout)
	case <-ctx.Done():
		l.kill(killedCancel)
	case <-p.stop:
		l.kill(killedCancel)
	}
}

// readAnswer reads what a helper wrote on an answer pipe (every writer is gone by now).
func readAnswer(f *os.File) []byte {
	defer f.Close()
	_ = f.SetReadDeadline(time.Now().Add(containedOutputGrace))
	data, _ := io.ReadAll(f)
	return data
}

// exitFields fills the outcome's exit code and signal from a wait status.
func exitFields(o *Outcome, state *os.ProcessState) {
	ws, ok := state.Sys().(syscall.WaitStatus)
	if ok && ws.Signaled() {
		o.ExitCode, o.Signal = -1, ws.Signal().String()
		return
	}
	o.ExitCode = state.ExitCode()
}
