package mcp

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/warrenhq/warren/mcp/mcpconfig"
)

// Defaults for Options left at zero.
const (
	// DefaultRestartBackoff is the first wait before restarting a server that exited.
	DefaultRestartBackoff = 100 * time.Millisecond
	// DefaultMaxRestartBackoff caps the doubling of the restart wait.
	DefaultMaxRestartBackoff = 5 * time.Second
)

// Event kinds, as Event.Kind carries them.
const (
	// EventStart: a session started for the first time, or after a stop.
	EventStart = "start"
	// EventStop: the Manager stopped a session (no lease left, or the world ended).
	EventStop = "stop"
	// EventExit: a session ended on its own (the process exited, a malformed reply) or failed to
	// start.
	EventExit = "exit"
	// EventRestart: a session started after the previous one exited; Reason says why that ended.
	EventRestart = "restart"
)

// Stop reasons, as stop events carry them.
const (
	// ReasonNoLease: the last agent that could call the server was reaped.
	ReasonNoLease = "no agent holds a lease"
	// ReasonWorldEnded: the Manager was closed.
	ReasonWorldEnded = "world ended"
)

// Options configure a Manager.
type Options struct {
	// Log receives lifecycle logs (start, stop, exit, restart); nil logs nothing.
	Log *zerolog.Logger
	// RestartBackoff is the first wait before restarting a server that exited (0: 100ms). The
	// wait doubles with each exit in a row and resets after a successful call.
	RestartBackoff time.Duration
	// MaxRestartBackoff caps the doubling (0: 5s).
	MaxRestartBackoff time.Duration
	// PrivateHosts, when set, makes servers over HTTP reach only public addresses, checked as each
	// connection is made (redirects included), except the hosts ("name" or "name:port") it
	// reports true for: host serve's guard for the runs it serves (netguard.ServedRule).
	PrivateHosts func(host string) bool
}

// Event is one lifecycle change of a server's session, for the trace and the world's log.
type Event struct {
	// Server is the server's name.
	Server string
	// Kind is EventStart, EventStop, EventExit or EventRestart.
	Kind string
	// Session numbers the server's sessions 1, 2, … in the order they were started.
	Session uint64
	// Transport is "stdio" or "http".
	Transport string
	// Reason says why: a stop's ReasonNoLease or ReasonWorldEnded; an exit's "exit status 3" or
	// "malformed reply: …"; a restart's reason the previous session ended.
	Reason string
}

// Stats is a snapshot of one server's counters, for tests and metrics.
type Stats struct {
	// Session is the number of the live session, 0 when none is live.
	Session uint64
	// Pid is the live stdio session's process id, 0 when none.
	Pid int
	// Starts counts sessions that started (first starts and restarts); Restarts the restarts
	// alone; Exits sessions that ended on their own or failed to start; Stops the Manager's stops.
	Starts, Restarts, Exits, Stops int
	// Calls counts calls made; InFlight the calls running now; Leases the agents holding a lease.
	Calls    int64
	InFlight int
	Leases   int
	// ReplyBytes counts the bytes read from the server over all its sessions (what
	// max_reply_bytes bounds per message).
	ReplyBytes int64
}

// Manager runs the MCP server sessions of one world: at most one session per server, started
// by the first call that needs it, stopped when the last agent that may call it is reaped, and
// restarted (with backoff) after it exits. All methods are safe for concurrent use, and none
// holds a Manager-wide lock while a call runs: each server has its own lock, held only for
// bookkeeping.
type Manager struct {
	log        zerolog.Logger
	private    func(host string) bool // Options.PrivateHosts
	backoff    time.Duration
	maxBackoff time.Duration

	// dataRoot holds the stdio servers' data folders ("" none: SetDataRoot).
	dataRoot string
	// ctx bounds starts; Close cancels it.
	ctx    context.Context
	cancel context.CancelFunc

	mu      sync.RWMutex // guards servers and names; never held during a call
	servers map[string]*server
	names   []string // sorted, for Drain's order

	// hook is told of every event as it is recorded (OnEvent).
	hook atomic.Pointer[func(Event)]

	closeOnce sync.Once
	wg        sync.WaitGroup // every goroutine the Manager starts
	errMu     sync.Mutex
	stopErrs  []error // sessions that would not stop, for Close
}

// NewManager returns a Manager with no servers.
func NewManager(opt Options) *Manager {
	m := &Manager{
		log:        zerolog.Nop(),
		backoff:    cmpOr(opt.RestartBackoff, DefaultRestartBackoff),
		maxBackoff: cmpOr(opt.MaxRestartBackoff, DefaultMaxRestartBackoff),
		servers:    make(map[string]*server),
		private:    opt.PrivateHosts,
	}
	if opt.Log != nil {
		m.log = *opt.Log
	}
	m.ctx, m.cancel = context.WithCancel(context.Background())
	return m
}

// cmpOr returns d, or def when d is not positive.
func cmpOr(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// Add registers a server. It starts nothing: the first call does. Add must happen before the
// server's tools are used; a second server with the same name wraps ErrDuplicateServer, and
// adding to a closed Manager wraps ErrClosed.
func (m *Manager) Add(cfg *mcpconfig.Server) error {
	if cfg == nil {
		return fmt.Errorf("add mcp server: %w: config is nil", ErrUnknownServer)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.ctx.Err() != nil {
		return fmt.Errorf("add mcp server %s: %w", cfg.Name, ErrClosed)
	}
	if _, dup := m.servers[cfg.Name]; dup {
		return fmt.Errorf("add mcp server %s (%s): %w", cfg.Name, cfg.Origin(), ErrDuplicateServer)
	}
	m.servers[cfg.Name] = &server{mgr: m, cfg: *cfg, backoff: m.backoff}
	i, _ := slices.BinarySearch(m.names, cfg.Name)
	m.names = slices.Insert(m.names, i, cfg.Name)
	return nil
}

// lookup returns the named server, nil when unknown.
func (m *Manager) lookup(name string) *server {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.servers[name]
}

// Lease records that an agent that may call server's tools was spawned. Leases are counted per
// server; once a server has been leased, its session stops whenever the count is back to 0 and
// no call is in flight. An unknown server is logged and ignored.
func (m *Manager) Lease(server string) {
	s := m.lookup(server)
	if s == nil {
		m.log.Warn().Str("server", server).Msg("mcp: lease of an unknown server ignored")
		return
	}
	s.mu.Lock()
	s.leases++
	s.leased = true
	s.mu.Unlock()
}

// Release records that an agent holding a lease on server was reaped. When it was the last lease
// and no call is in flight, the session stops now (stop event ReasonNoLease); with calls in
// flight, it stops when the last one ends. Releasing more than was leased is logged and ignored.
func (m *Manager) Release(server string) {
	s := m.lookup(server)
	if s == nil {
		m.log.Warn().Str("server", server).Msg("mcp: release of an unknown server ignored")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.leases == 0 {
		m.log.Warn().Str("server", server).Msg("mcp: release without a lease ignored")
		return
	}
	s.leases--
	s.stopIfIdleLocked()
}

// OnEvent has hook told of every lifecycle event as it is recorded, on the goroutine that records
// it and under its server's lock, before any call waiting on that session goes on: a state
// directory journals the event there, so a crash right after the call that started a session
// returned still knows the session started (nil: no hook). Drain still returns every event.
func (m *Manager) OnEvent(hook func(Event)) {
	if hook == nil {
		m.hook.Store(nil)
		return
	}
	m.hook.Store(&hook)
}

// Drain returns the lifecycle events recorded since the last Drain: by server name, then in the
// order they happened on that server, so the same events always come out in the same order
// whatever the interleaving of servers.
func (m *Manager) Drain() []Event {
	m.mu.RLock()
	servers := make([]*server, len(m.names))
	for i, name := range m.names {
		servers[i] = m.servers[name]
	}
	m.mu.RUnlock()
	var events []Event
	for _, s := range servers {
		s.mu.Lock()
		events = append(events, s.events...)
		s.events = nil
		s.mu.Unlock()
	}
	return events
}

// Crash kills the live stdio session of server as if its process had died (SIGKILL to its
// process group) and returns once the exit is recorded, so the next call restarts it: what a
// seeded mcp_crash fault does (faults.MCPCrash). It reports whether there was a live stdio session
// to kill (an HTTP server's process is not the host's to kill). Call it only when no call is on
// the session, or those calls fail as calls in flight at a crash do.
func (m *Manager) Crash(server string) bool {
	s := m.lookup(server)
	if s == nil {
		return false
	}
	s.mu.Lock()
	sess, detached := s.current, s.detached != 0
	s.mu.Unlock()
	if sess == nil && detached {
		// A detached session's process is started first, so the crash lands as it would have.
		var err error
		if sess, _, err = s.acquire(m.ctx); err != nil {
			return false
		}
	}
	if sess == nil || sess.cmd == nil {
		return false
	}
	sess.killGroup()
	<-sess.ended // the reaper has seen the exit (end runs before its owner is told)
	s.sessionBroke(sess)
	return true
}

// SetDataRoot gives every stdio server a data folder of its own under root (root/<server>),
// named to its process by mcpconfig.DataEnv and made (through an os.Root, so no link leads it
// elsewhere) before it starts. Call it before the first call; "" gives none.
func (m *Manager) SetDataRoot(root string) {
	m.mu.Lock()
	m.dataRoot = root
	m.mu.Unlock()
}

// dataDir is server's data folder, made; "" when the Manager gives none.
func (m *Manager) dataDir(server string) (string, error) {
	m.mu.RLock()
	root := m.dataRoot
	m.mu.RUnlock()
	if root == "" {
		return "", nil
	}
	r, err := os.OpenRoot(root)
	if err != nil {
		return "", fmt.Errorf("the servers' data folder: %w", err)
	}
	defer r.Close()
	if err := r.MkdirAll(server, 0o700); err != nil {
		return "", fmt.Errorf("the server's data folder: %w", err)
	}
	return filepath.Join(root, server), nil
}

// Replayed applies one session event a resumed run replays from its recording to server's
// state, so that its sessions carry on where the run before the crash left them: after a start
// or restart of session n, that session is live but detached (its process died with the old
// host), and the next call starts a process for it under number n, with no event; after a stop
// or exit there is none. The events themselves are the recording's to write.
func (m *Manager) Replayed(server, kind string, session uint64) {
	s := m.lookup(server)
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch kind {
	case EventStart, EventRestart:
		s.sessions = max(s.sessions, session)
		if s.current == nil {
			s.detached = session
		}
		s.restartReason = ""
	case EventStop, EventExit:
		if s.detached == session {
			s.detached = 0
		}
	}
}

// Stats returns a snapshot of server's counters; the zero Stats for an unknown server.
func (m *Manager) Stats(server string) Stats {
	s := m.lookup(server)
	if s == nil {
		return Stats{}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.stats
	st.InFlight, st.Leases = s.inflight, s.leases
	st.ReplyBytes = s.replyBytes.Load()
	if s.current != nil {
		st.Session = s.current.number
		if s.current.cmd != nil {
			st.Pid = s.current.cmd.Process.Pid
		}
	}
	return st
}

// Close stops every session (stop events ReasonWorldEnded), ending the calls in flight, kills
// stdio children that do not exit within 2s of their stdin closing, and waits for every
// goroutine the Manager started. Later calls get an error result. Close is idempotent; it
// reports sessions whose process would not die.
func (m *Manager) Close() error {
	m.closeOnce.Do(func() {
		m.mu.Lock()
		m.cancel()
		servers := make([]*server, 0, len(m.names))
		for _, name := range m.names {
			servers = append(servers, m.servers[name])
		}
		m.mu.Unlock()
		for _, s := range servers {
			s.mu.Lock()
			s.closed = true
			switch {
			case s.current != nil:
				s.stopLocked(ReasonWorldEnded)
			case s.detached != 0:
				s.stopDetachedLocked(ReasonWorldEnded)
			}
			s.mu.Unlock()
		}
		m.wg.Wait()
	})
	m.errMu.Lock()
	defer m.errMu.Unlock()
	return errors.Join(m.stopErrs...)
}

// shutdownAsync shuts a session down off the caller's path (Release runs on the world's
// goroutine and must not wait for a child to exit).
func (m *Manager) shutdownAsync(sess *session, kill bool) {
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		m.shutdown(sess, kill)
	}()
}

// shutdown shuts a session down and keeps its error for Close.
func (m *Manager) shutdown(sess *session, kill bool) {
	if err := sess.shutdown(kill); err != nil {
		m.log.Error().Err(err).Str("server", sess.server).Msg("mcp: session did not stop")
		m.errMu.Lock()
		m.stopErrs = append(m.stopErrs, err)
		m.errMu.Unlock()
	}
}

// ServerImage is one server's session state as a world snapshot keeps it: the last session
// number handed out, the session live at the snapshot (0: none; its process dies with the host,
// so a restore leaves it detached, as a resume's replay does), its leases and why its previous
// session ended, when it ended on its own.
type ServerImage struct {
	Name          string
	Sessions      uint64
	Live          uint64
	Leases        int
	Leased        bool
	RestartReason string
}

// ErrImage is wrapped by the errors Image and Restore return for sessions that cannot be saved
// as they stand (a call or a start in flight, events not yet drained) or an image that does not
// fit the manager.
var ErrImage = errors.New("MCP sessions image")

// Image returns every server's session state, by name, for a snapshot taken at a tick boundary
// (after the tick's events were drained, with no call in flight).
func (m *Manager) Image() ([]ServerImage, error) {
	m.mu.RLock()
	names := slices.Clone(m.names)
	m.mu.RUnlock()
	out := make([]ServerImage, 0, len(names))
	for _, name := range names {
		s := m.lookup(name)
		s.mu.Lock()
		img := ServerImage{Name: name, Sessions: s.sessions, Live: s.detached, Leases: s.leases, Leased: s.leased, RestartReason: s.restartReason}
		if s.current != nil {
			img.Live = s.current.number
		}
		busy := s.inflight > 0 || s.starting != nil || len(s.events) > 0
		s.mu.Unlock()
		if busy {
			return nil, fmt.Errorf("%w: server %s has a call, a start or events in flight", ErrImage, name)
		}
		out = append(out, img)
	}
	return out, nil
}

// Restore gives a manager whose servers never ran the session state img holds: the session that
// was live is detached (the next call starts a process for it under its number, with no event).
func (m *Manager) Restore(img []ServerImage) error {
	for _, si := range img {
		s := m.lookup(si.Name)
		if s == nil {
			return fmt.Errorf("%w: no server %q", ErrImage, si.Name)
		}
		s.mu.Lock()
		if s.current != nil || s.sessions != 0 || s.leases != 0 {
			s.mu.Unlock()
			return fmt.Errorf("%w: server %s is in use", ErrImage, si.Name)
		}
		s.sessions, s.detached, s.leases, s.leased, s.restartReason = si.Sessions, si.Live, si.Leases, si.Leased, si.RestartReason
		s.mu.Unlock()
	}
	return nil
}
