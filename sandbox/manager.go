package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/warrenhq/warren/internal/safepath"
)

// ErrClosed: Run or Start on a Manager that Close has torn down (the agent was reaped).
var ErrClosed = errors.New("sandbox manager closed")

// ErrSetup: a contained command's sandbox could not be set up, or the command could not start in
// it. The error wrapping it says which step failed.
var ErrSetup = errors.New("sandbox setup failed")

// ErrHiddenInWritable: a contained command's boundary hides a path that lies inside its workdir
// or inside one of its writable paths. The command is refused: it could rename the hidden path's
// parent folder, and a later command would then see the secret where it was moved. The error
// wrapping it names both paths.
var ErrHiddenInWritable = errors.New("a hidden path lies inside a writable path")

// Outcome is how one command ended, as the shell tool reports it.
type Outcome struct {
	// ExitCode is the command's exit status; -1 when it was killed by a signal. In bwrap mode a
	// command killed by a signal inside the sandbox shows as 128+n (bwrap's convention) unless
	// the host killed it (timeout, cancellation, Close).
	ExitCode int
	// Signal names the signal that ended the command ("killed", "terminated"...), "" otherwise.
	Signal string
	// Output is the combined stdout and stderr, at most Limits.OutputBytes (the first bytes).
	Output []byte
	// Dropped counts the output bytes cut past the cap.
	Dropped uint64
	// TimedOut is true when the command was killed at Limits.Timeout.
	TimedOut bool
	// Cancelled is true when the command was killed because its context was cancelled or its
	// manager was closed.
	Cancelled bool
	// Boundary is what the command ran under, after Capabilities.Effective.
	Boundary Boundary
	// Warning is Effective's degradation warning, "" when none.
	Warning string
	// Err is set when the sandbox could not be set up or the command could not start (a
	// contained mode finds out only after its helper process has started); the other fields
	// then describe nothing the command did. Run returns it as its error.
	Err error
}

// Manager runs one agent's commands. sync_stage points it at the Boundary of each stage the
// agent enters (Point); each command runs under the boundary current when it starts, so pointing
// the manager elsewhere changes nothing about commands already running. Safe for concurrent use.
type Manager struct {
	// workdir is the path as given (clean when absolute); Start refuses to run anything when it
	// is not absolute.
	workdir string
	caps    *Capabilities
	// workRoot is what SetWorkRoot set, "" when nothing.
	workRoot string

	mu       sync.Mutex
	boundary Boundary
	closed   bool
	running  map[*Process]struct{}
	// private is the manager's private directory (created with its first command that needs
	// it): its empty "root" subdirectory is where each namespace-mode command's namespace
	// assembles its new root, and where a bwrap-mode command's trampoline stages its bind sources
	// on a root host. Both mount in a mount namespace of their own: nothing is ever mounted on it
	// in the host's. On a root host both belong to CommandUID, who does that work.
	private string
	// pinned is the folder the workdir was at the first command (pinWorkdir), nil before it.
	pinned *safepath.Identity
}

// NewManager returns a manager running commands in workdir under b, on a machine offering caps
// (nil means Probe()). workdir must be absolute with no symbolic link on its path: the caller
// resolves the links it trusts once (a run resolves its root when it starts), so a link found on
// the path later was planted, and Start refuses it. An empty or relative workdir makes every
// command fail with ErrSetup, never one in the host's current directory. The workdir is created
// at the first command if missing.
func NewManager(workdir string, caps *Capabilities, b Boundary) *Manager {
	if caps == nil {
		caps = Probe()
	}
	return newManager(workdir, caps, b)
}

// newManager is NewManager with caps given (the probe's trial managers use it).
func newManager(workdir string, caps *Capabilities, b Boundary) *Manager {
	if filepath.IsAbs(workdir) {
		workdir = filepath.Clean(workdir)
	}
	return &Manager{workdir: workdir, caps: caps, boundary: b, running: map[*Process]struct{}{}}
}

// SetWorkRoot tells the manager the folder every agent's workdir lies under (a run's workdir
// root; a sub-agent's workdir lies inside its parent's). All agents' commands run as one uid, so
// file permissions do not keep one agent from another's files; the contained modes do: each
// command sees root as an empty folder with only this manager's workdir (and the writable paths)
// bound back, so an agent reads neither its siblings' workdirs nor its parent's, while a parent
// still sees its children's, which lie inside its own. A root that is the workdir, or lies inside
// it, covers nothing. Mode none contains nothing: there every agent can read every workdir. It
// applies to the commands started from now on.
func (m *Manager) SetWorkRoot(root string) {
	if abs, err := filepath.Abs(root); err == nil {
		root = abs
	}
	m.mu.Lock()
	m.workRoot = root
	m.mu.Unlock()
}

// Point makes b the boundary of the commands started from now on.
func (m *Manager) Point(b Boundary) {
	m.mu.Lock()
	m.boundary = b
	m.mu.Unlock()
}

// Boundary is the boundary the next command will be asked to run under (before Effective).
func (m *Manager) Boundary() Boundary {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.boundary
}

// Run runs line with /bin/bash -c (ShellPath) in the workdir under the current boundary and returns when the
// command ends, its timeout passes or ctx is cancelled; in the last two cases the whole process
// tree is killed first (every descendant, by none mode's reaper; the pid namespace in namespace
// and bwrap modes). The environment is filtered to Boundary.AllowEnv, stdin is /dev/null, stdout and
// stderr are combined and capped. A command that cannot start (no /bin/bash, a mechanism missing
// under FallbackError, a sandbox that fails to set up) returns an error; a command that ran and
// failed does not (see Outcome.ExitCode).
func (m *Manager) Run(ctx context.Context, line string) (Outcome, error) {
	p, err := m.Start(ctx, line)
	if err != nil {
		return Outcome{}, err
	}
	o := p.Wait()
	return o, o.Err
}

// Start is Run detached, for the shell tool's "background" signal: it returns once the
// command's (helper) process has started, with a handle whose Wait blocks for the Outcome. ctx
// bounds the command's life like Run's (a caller backgrounding a command passes a context that
// outlives its call); Close kills it too.
func (m *Manager) Start(ctx context.Context, line string) (*Process, error) {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil, ErrClosed
	}
	asked, workRoot := m.boundary, m.workRoot
	m.mu.Unlock()

	if !filepath.IsAbs(m.workdir) {
		return nil, fmt.Errorf("%w: the workdir %q is not an absolute path: the manager runs nothing rather than take the host's current directory", ErrSetup, m.workdir)
	}
	b, warning, err := m.caps.Effective(asked)
	if err != nil {
		return nil, err
	}
	dir, id, err := m.openWorkdir()
	if err != nil {
		return nil, err
	}
	defer func() { _ = dir.Close() }()
	spec := launchSpec{line: line, workdir: m.workdir, workdirID: id, workRoot: workRoot, boundary: b, env: sandboxEnv(b.AllowEnv), caps: m.caps}
	if b.Mode.contains() {
		if err := hiddenInWritable(m.workdir, b); err != nil {
			return nil, err
		}
		if err := m.handOverWorkdir(dir); err != nil {
			return nil, err
		}
	}
	if b.Mode == ModeNamespace || b.Mode == ModeBwrap && m.caps.dropsPrivileges() {
		if spec.root, err = m.privateRoot(); err != nil {
			return nil, err
		}
	}
	l, err := newLaunch(spec)
	if err != nil {
		return nil, err
	}
	p := &Process{boundary: b, warning: warning, stop: make(chan struct{}), done: make(chan struct{})}
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		l.abort()
		return nil, ErrClosed
	}
	m.running[p] = struct{}{}
	m.mu.Unlock()
	go func() {
		<-p.done
		m.mu.Lock()
		delete(m.running, p)
		m.mu.Unlock()
	}()
	if err := p.start(ctx, l); err != nil {
		return nil, err
	}
	return p, nil
}

// openWorkdir opens the workdir along real folders only (safepath.Open: from / one component
// at a time, a symbolic link at any of them refused), creating what is missing at the manager's
// first command, and checks that it is the folder it was then (pinWorkdir). The host, root on a
// root host, then acts on that folder only through the descriptor, and the helpers check that
// the folder they bind or enter is the same one (its identity travels in their plans). A link on
// the path was planted, typically by a parent agent's command in the folder holding its child's
// workdir, and following it would make, hand over and bind a host folder or another agent's
// workdir; the error, wrapping ErrSetup, names the link.
func (m *Manager) openWorkdir() (*safepath.Dir, safepath.Identity, error) {
	m.mu.Lock()
	first := m.pinned == nil
	m.mu.Unlock()
	// Made only for the first command: later, a missing workdir was moved or removed, and a
	// fresh folder would be another one anyway.
	dir, _, err := safepath.Open(m.workdir, first)
	if err != nil {
		return nil, safepath.Identity{}, fmt.Errorf("%w: opening the workdir %s along real folders: %w", ErrSetup, m.workdir, err)
	}
	id, err := dir.Identity()
	if err == nil {
		err = m.pinWorkdir(id)
	}
	if err != nil {
		_ = dir.Close()
		return nil, safepath.Identity{}, err
	}
	return dir, id, nil
}

// pinWorkdir records which folder the workdir was at the manager's first command and refuses a
// later command if it is another one: the workdir, or a folder on its path, was renamed or removed
// and made again (by a command that may write a folder above the workdir, such as a parent
// agent's for a child's workdir under its own). The path alone would not tell.
func (m *Manager) pinWorkdir(id safepath.Identity) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.pinned == nil {
		m.pinned = &id
	}
	if !m.pinned.Same(id) {
		return fmt.Errorf("%w: the workdir %s is not the folder it was at the first command (device:inode %v, now %v): it, or a folder on its path, was replaced", ErrSetup, m.workdir, *m.pinned, id)
	}
	return nil
}

// handOverWorkdir gives the workdir to CommandUID, which contained commands run as on a root
// host, so that they may write it: by descriptor, the folder the walk reached and nothing a
// command swapped in meanwhile.
func (m *Manager) handOverWorkdir(dir *safepath.Dir) error {
	if !m.caps.dropsPrivileges() {
		return nil
	}
	if err := dir.Chown(m.caps.CommandUID, m.caps.CommandGID); err != nil {
		return fmt.Errorf("%w: handing the workdir %s to uid %d: %w", ErrSetup, m.workdir, m.caps.CommandUID, err)
	}
	return nil
}

// privateRoot returns the manager's private root directory, creating it on first use.
func (m *Manager) privateRoot() (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.private == "" {
		// Under the host's /tmp whatever TMPDIR says: the contained modes replace /tmp, so no
		// command ever sees the directory, or what a bwrap trampoline stages on it.
		dir, err := os.MkdirTemp(resolved("/tmp"), "warren-sandbox-")
		if err != nil {
			return "", fmt.Errorf("creating the sandbox's private directory: %w", err)
		}
		root := filepath.Join(dir, "root")
		err = os.Mkdir(root, 0o700)
		if err == nil {
			err = errors.Join(m.caps.ChownForCommands(dir), m.caps.ChownForCommands(root))
		}
		if err != nil {
			_ = os.Remove(root)
			_ = os.Remove(dir)
			return "", fmt.Errorf("creating the sandbox's private directory: %w", err)
		}
		// The namespace init refuses symlinks on the way to its mount targets.
		m.private = resolved(dir)
	}
	return filepath.Join(m.private, "root"), nil
}

// Close is the teardown at reap: it kills every running command's process tree (foreground and
// background), waits for them to end, and removes the manager's private directory, leaving
// nothing running or mounted. Idempotent; later Run and Start fail with ErrClosed.
func (m *Manager) Close() error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.closed = true
	procs := make([]*Process, 0, len(m.running))
	for p := range m.running {
		procs = append(procs, p)
	}
	private := m.private
	m.mu.Unlock()
	for _, p := range procs {
		p.kill()
	}
	for _, p := range procs {
		<-p.done
	}
	if private == "" {
		return nil
	}
	if err := removePrivate(private); err != nil {
		return fmt.Errorf("removing the sandbox's private directory: %w", err)
	}
	return nil
}
