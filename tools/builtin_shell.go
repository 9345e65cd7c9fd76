package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/warrenhq/warren/policy"
	"github.com/warrenhq/warren/sandbox"
)

// NameShell is the shell tool.
const NameShell = "shell"

// MaxShellTimeout bounds the timeout_seconds a call may ask for; the boundary's own timeout
// bounds it further.
const MaxShellTimeout = time.Hour

// ErrNoSandbox: the call has no command runner (a bare context); nothing runs on the host
// unless a sandbox manager says how.
var ErrNoSandbox = errors.New("this call has no sandbox to run commands in")

// CommandRunner runs an agent's commands: its sandbox manager (sandbox.Manager implements it),
// pointed by the host at the boundary of the agent's current stage.
type CommandRunner interface {
	// Start starts line under the current boundary and returns at once; the process's Wait gives
	// its outcome. Cancelling ctx kills the whole process tree.
	Start(ctx context.Context, line string) (*sandbox.Process, error)
	// Boundary is the boundary the next command starts under.
	Boundary() sandbox.Boundary
}

var _ CommandRunner = (*sandbox.Manager)(nil)

// Detached is work a call started that outlives the call: a command sent to the background. The
// host waits for it at a point fixed in world ticks (so a replay delivers it at the same place)
// and puts Report into the agent's inbox.
type Detached interface {
	// Report blocks until the work ends and returns the message for the agent.
	Report() string
}

// Shell is the shell tool: a command line run by bash (sandbox.ShellPath, the dialect the gate parses) in the agent's sandbox (ExecContext
// Commands), with the workdir as its current directory.
type Shell struct{}

var (
	_ Tool        = Shell{}
	_ CommandUser = Shell{}
)

// init registers the shell tool as a built-in (see RegisterBuiltin).
func init() {
	RegisterBuiltin(BuiltinInfo{ID: "tools.shell", New: func() Tool { return Shell{} }})
}

// UsesCommands implements CommandUser: the shell tool runs its command through the agent's sandbox.
func (Shell) UsesCommands() bool { return true }

type shellArgs struct {
	Command        string `json:"command"`
	TimeoutSeconds int    `json:"timeout_seconds"`
	Background     bool   `json:"background"`
}

// Spec implements Tool.
func (Shell) Spec() Spec {
	return Spec{
		Name: NameShell,
		Description: "Runs a command line with bash in your working directory, inside your sandbox, " +
			"and returns its output (stdout and stderr together, cut past a limit with a note) and exit code. " +
			"Set background to true to start a long command and go on: its output and exit code reach your " +
			"inbox when it ends.",
		Parameters: json.RawMessage(`{"type":"object","additionalProperties":false,"required":["command"],"properties":{` +
			`"command":{"type":"string","minLength":1,"description":"the command line, as bash -c runs it"},` +
			`"timeout_seconds":{"type":"integer","minimum":1,"maximum":3600,"description":"kill the command after this many seconds (never longer than the sandbox allows)"},` +
			`"background":{"type":"boolean","description":"start the command and return at once; its end reaches your inbox"}}}`),
	}
}

// Execute implements Tool. The result is the command's output followed by a line giving its
// exit code (or how it was stopped); a command that exits non-zero, is killed or cannot start is
// an error result. The boundary it ran under is a note ("sandbox"), and so is a degradation
// warning. Files the command wrote by redirect inside the workdir are charged to the write
// budget once it ends; over the budget, they are cut back to their earlier size (a new one
// removed) and the call is an error. The workdir is opened (OpenWorkdir) before the command
// starts, and a workdir reached through a symbolic link runs nothing: the host could not follow
// the redirects there, and the command would run wherever the link leads. While a plan is
// drafted, a plan file that is not a plain file of its own (a symbolic or hard link to another
// file) runs nothing either (ErrPlanFileNotPlain): the one redirect the floor lets through would
// change that other file.
func (Shell) Execute(ec *ExecContext, args json.RawMessage) (Result, error) {
	var a shellArgs
	if err := decodeArguments(NameShell, args, &a); err != nil {
		return Result{}, err
	}
	if strings.TrimSpace(a.Command) == "" {
		return Result{}, fmt.Errorf("%w: command is empty", ErrInvalidArguments)
	}
	if ec == nil || ec.Commands == nil {
		return Result{}, ErrNoSandbox
	}
	ctx := ec.Context()
	var cancel context.CancelFunc
	if a.TimeoutSeconds > 0 {
		ctx, cancel = context.WithTimeout(ctx, min(time.Duration(a.TimeoutSeconds)*time.Second, MaxShellTimeout))
		defer cancel()
	}
	release := func() {}
	if a.Background {
		// Detached work must not die with the turn; kill_agent reaches it through the manager's
		// teardown at reap, and the end of the run (an interrupt among others) through Detach.
		ctx, release = Detach(ec.Context())
	}
	root, err := openWorkdir(ec)
	if err != nil {
		return Result{Content: "shell: the command cannot start: " + err.Error(), IsError: true}, nil
	}
	if err := checkPlanFile(ec, root); err != nil {
		_ = root.Close()
		return Result{Content: "shell: the command cannot start: " + err.Error(), IsError: true}, nil
	}
	writes := newRedirectWrites(ec, root, a.Command)
	boundary := ec.Commands.Boundary()
	proc, err := ec.Commands.Start(ctx, a.Command)
	if err != nil {
		release()
		writes.close()
		return Result{Content: "shell: the command cannot start: " + err.Error(), IsError: true}, nil
	}
	if a.Background {
		return Result{
			Content:  "Started in the background; its output and exit code will reach your inbox when it ends.",
			Notes:    boundaryNotes(boundary, ""),
			Detached: backgroundReport{proc: proc, command: a.Command, writes: writes, ec: ec, release: release},
		}, nil
	}
	out := proc.Wait()
	callTimeout := a.TimeoutSeconds > 0 && errors.Is(ctx.Err(), context.DeadlineExceeded)
	res := Result{Content: DescribeOutcome(out, callTimeout),
		IsError: out.ExitCode != 0, Notes: boundaryNotes(out.Boundary, out.Warning)}
	if out.TimedOut || callTimeout {
		res.Notes = append(res.Notes, RealTimeNote("shell timeout"))
	}
	if refusal := writes.settle(); refusal != nil {
		res.Content += "\n" + refusal.Error()
		res.IsError = true
	}
	return res, nil
}

// backgroundReport is a background command as the host waits for it.
type backgroundReport struct {
	proc    *sandbox.Process
	command string
	writes  *redirectWrites
	ec      *ExecContext
	// release ends the command's link to the run's end (Detach).
	release func()
}

// Report implements Detached.
func (r backgroundReport) Report() string {
	out := r.proc.Wait()
	if r.release != nil {
		r.release()
	}
	text := "[background command finished] " + r.command + "\n" + DescribeOutcome(out, false)
	if refusal := r.writes.settle(); refusal != nil {
		text += "\n" + refusal.Error()
	}
	return text
}

// boundaryNotes are the trace notes of a command: the boundary it ran under and, when the
// machine lacked a mechanism, the warning.
func boundaryNotes(b sandbox.Boundary, warning string) []Note {
	notes := []Note{{Fn: "sandbox", Text: b.String(), OK: true}}
	if warning != "" {
		notes = append(notes, Note{Fn: "sandbox", Text: "degraded", OK: false, Err: warning})
	}
	return notes
}

// describeOutcome renders a command's end for the agent: its output (invalid UTF-8 replaced), a
// note of what was cut, and the exit line.
func DescribeOutcome(out sandbox.Outcome, callTimeout bool) string {
	var sb strings.Builder
	sb.WriteString(strings.ToValidUTF8(string(out.Output), string(utf8.RuneError)))
	if len(out.Output) > 0 && out.Output[len(out.Output)-1] != '\n' {
		sb.WriteByte('\n')
	}
	if out.Dropped > 0 {
		fmt.Fprintf(&sb, "[output cut: %d more bytes not shown]\n", out.Dropped)
	}
	switch {
	case out.TimedOut || callTimeout:
		sb.WriteString("[killed: the command ran past its timeout]")
	case out.Cancelled:
		sb.WriteString("[killed: the call was cancelled]")
	case out.Signal != "":
		sb.WriteString("[ended by signal: " + out.Signal + "]")
	default:
		sb.WriteString("[exit code " + strconv.Itoa(out.ExitCode) + "]")
	}
	return sb.String()
}

// redirectWrites follows the files a command line writes by redirect inside the workdir, so what
// they grew by can be charged to the write budget once the command ends. Every look at them, and
// every cut back, goes through the workdir's os.Root, opened before the command started: a link
// the command plants (on the way to a target, or in a target's place) never leads the host out of
// the workdir, and a folder swapped for the workdir meanwhile does not move the root.
type redirectWrites struct {
	ec      *ExecContext
	root    *os.Root // nil when nothing is followed
	targets []redirectTarget
}

// redirectTarget is one redirect's file: its path in the workdir, and the regular file that was
// there before the command (nil: none, or something that is not a regular file).
type redirectTarget struct {
	rel    string
	before fs.FileInfo
}

// newRedirectWrites records the workdir files the line redirects into (the policy keys'
// "shell:>path"), as they are now. Targets outside the workdir are not followed: in a contained
// mode the command cannot write them, and in mode none nothing is contained. With no budget, or
// no target, nothing is followed. root is the workdir; the redirects keep it open until settle,
// and close it at once when they do not need it.
func newRedirectWrites(ec *ExecContext, root *os.Root, line string) *redirectWrites {
	w := &redirectWrites{ec: ec}
	if ec.Writes != nil {
		keys, _ := policy.ShellKeys(line)
		for _, k := range keys {
			target, ok := strings.CutPrefix(k, policy.RedirectKey(""))
			if !ok || target == "/dev/null" {
				continue
			}
			if rel, err := confinePath(ec.Workdir, target); err == nil {
				w.targets = append(w.targets, redirectTarget{rel: rel, before: regularAt(root, rel)})
			}
		}
	}
	if len(w.targets) == 0 {
		_ = root.Close()
		return w
	}
	w.root = root
	return w
}

// regularAt is the regular file at rel in root, without following a link in its place; nil when
// there is none (missing, a link, a FIFO, a folder, or a path leading out of root).
func regularAt(root *os.Root, rel string) fs.FileInfo {
	info, err := root.Lstat(rel)
	if err != nil || !info.Mode().IsRegular() {
		return nil
	}
	return info
}

// grownBy is what a target grew by from before to after (regular files, nil for none): the whole
// file when it is another file than before (new, or put in the old one's place).
func grownBy(before, after fs.FileInfo) int64 {
	switch {
	case after == nil:
		return 0
	case before != nil && os.SameFile(before, after):
		return max(after.Size()-before.Size(), 0)
	}
	return after.Size()
}

// close releases the workdir root when settle will not run (the command did not start).
func (w *redirectWrites) close() {
	if w.root != nil {
		_ = w.root.Close()
		w.root = nil
	}
}

// settle charges what the targets grew by; over the budget it cuts back the ones that grew and
// returns the refusal. A target that is the same file as before is truncated to its earlier size
// through a handle checked to be that file, with no other name (soleName); one that is a new file
// is removed (the name only: a link in its place is removed, never followed). Whatever else is
// there (a link, a FIFO, a folder) was not measured and is left alone.
func (w *redirectWrites) settle() error {
	if w.root == nil {
		return nil
	}
	defer w.close()
	after := make([]fs.FileInfo, len(w.targets))
	var grown int64
	for i, t := range w.targets {
		after[i] = regularAt(w.root, t.rel)
		grown += grownBy(t.before, after[i])
	}
	if grown == 0 {
		return nil
	}
	err := w.ec.Writes.Charge(grown)
	if err == nil {
		return nil
	}
	var kept []string
	for i, t := range w.targets {
		if grownBy(t.before, after[i]) == 0 {
			continue
		}
		if why := w.cutBack(t, after[i]); why != "" {
			kept = append(kept, fmt.Sprintf("%q (%s)", t.rel, why))
		}
	}
	note := ""
	if len(kept) > 0 {
		note = ", except " + strings.Join(kept, ", ")
	}
	return fmt.Errorf("the command's redirects wrote %d bytes, over the write budget (the files were cut back%s): %w", grown, note, err)
}

// cutBack undoes one target's growth, or says why it was left as it is.
func (w *redirectWrites) cutBack(t redirectTarget, after fs.FileInfo) string {
	if t.before == nil || !os.SameFile(t.before, after) {
		if now := regularAt(w.root, t.rel); now == nil || !os.SameFile(now, after) {
			return "it changed again before it could be removed"
		}
		if err := w.root.Remove(t.rel); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return "it could not be removed: " + bareError(err).Error()
		}
		return ""
	}
	f, info, err := openRegular(w.root, t.rel, os.O_WRONLY)
	switch {
	case err != nil:
		return "it could not be opened: " + bareError(err).Error()
	case !os.SameFile(info, t.before):
		_ = f.Close()
		return "it changed again before it could be cut back"
	case !soleName(info):
		_ = f.Close()
		return "it has other hard links, which cutting it back would change too"
	}
	err = f.Truncate(t.before.Size())
	if closeErr := f.Close(); err == nil {
		err = closeErr
	}
	if err != nil {
		return "it could not be cut back: " + bareError(err).Error()
	}
	return ""
}
