package mcp

import (
	"context"
	"fmt"
	"maps"
	"sync"
	"sync/atomic"
	"time"

	"github.com/warrenhq/warren/mcp/mcpconfig"
)

// server is the Manager's state for one configured server. mu guards every field below it and
// is held only for bookkeeping, never while a call or a start runs.
type server struct {
	mgr *Manager
	cfg mcpconfig.Server

	mu       sync.Mutex
	current  *session      // the live session, nil when none
	starting *startAttempt // the start in progress, nil when none
	sessions uint64        // the last session number handed out
	leases   int
	leased   bool // a lease was ever taken: from then on, no lease and no call means stop
	inflight int
	closed   bool
	// restartReason is why the previous session ended on its own ("" after a stop): the next
	// start is then a restart, after backoff counted from lastEnd.
	restartReason string
	lastEnd       time.Time
	backoff       time.Duration // the wait before the next restart
	events        []Event
	stats         Stats
	// replyBytes counts the bytes the server's sessions have read from it (Stats.ReplyBytes).
	replyBytes atomic.Int64
	// detached is the number of a session a resumed run's recording says is live, whose process
	// died with the host that ran it (Manager.Replayed): the next call starts a process for it
	// under that number, with no event (to the world the session never ended); a stop or the
	// world's end stops it as they stop a live one. 0 when none.
	detached uint64
}

// startAttempt is one start in progress, shared by every call that needs it (a singleflight):
// done closes when it has succeeded (sess) or failed (err).
type startAttempt struct {
	number uint64
	done   chan struct{}
	sess   *session
	err    error
	// reconnect marks the start of a detached session's process: no start event.
	reconnect bool
}

// record appends one event of the session numbered number.
func (s *server) recordLocked(kind string, number uint64, reason string) {
	ev := Event{Server: s.cfg.Name, Kind: kind, Session: number, Transport: s.cfg.Transport(), Reason: reason}
	s.events = append(s.events, ev)
	if hook := s.mgr.hook.Load(); hook != nil {
		(*hook)(ev)
	}
	log := s.mgr.log.Info()
	if kind == EventExit {
		log = s.mgr.log.Warn()
	}
	log.Str("server", ev.Server).Str("event", kind).Uint64("session", number).Str("transport", ev.Transport).
		Str("reason", reason).Msg("mcp: session " + kind)
}

// enter counts a call in; false when the Manager is closed.
func (s *server) enter() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.inflight++
	s.stats.Calls++
	return true
}

// leave counts a call out. A call that reached the server and got a reply resets the restart
// backoff. The last call out of a server nobody leases any more stops its session.
func (s *server) leave(replied bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.inflight--
	if replied {
		s.backoff = s.mgr.backoff
	}
	s.stopIfIdleLocked()
}

// stopIfIdleLocked stops the live session when leases are in use, none is held and no call is
// in flight.
func (s *server) stopIfIdleLocked() {
	switch {
	case !s.leased || s.leases > 0 || s.inflight > 0:
	case s.current != nil:
		s.stopLocked(ReasonNoLease)
	case s.detached != 0 && s.starting == nil:
		s.stopDetachedLocked(ReasonNoLease)
	}
}

// stopDetachedLocked stops a detached session: its stop event, and no process to shut down.
func (s *server) stopDetachedLocked(reason string) {
	s.stats.Stops++
	s.recordLocked(EventStop, s.detached, reason)
	s.detached = 0
	s.restartReason = ""
}

// stopLocked stops the live session for reason: the event is recorded now, the process is shut
// down in the background.
func (s *server) stopLocked(reason string) {
	sess := s.current
	s.current = nil
	s.restartReason = ""
	s.stats.Stops++
	s.recordLocked(EventStop, sess.number, reason)
	sess.end("stopped: "+reason, fmt.Sprintf("server %s stopped during the call (%s)", s.cfg.Name, reason))
	s.mgr.shutdownAsync(sess, false)
}

// sessionBroke handles a session that ended on its own (its process exited, or it sent a
// malformed reply): an exit event, and the next call restarts it after the backoff.
func (s *server) sessionBroke(sess *session) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.current != sess {
		return // stopped already, or still starting (the start reports it)
	}
	s.brokeLocked(sess)
}

// brokeLocked records the exit of the live session sess and shuts it down.
func (s *server) brokeLocked(sess *session) {
	s.current = nil
	s.stats.Exits++
	s.restartReason = sess.endReason
	s.lastEnd = time.Now()
	s.recordLocked(EventExit, sess.number, sess.endReason)
	s.mgr.shutdownAsync(sess, true)
}

// acquire returns the live session, starting one if there is none, and waits for the start
// under ctx. It returns the session number the call is about even when it fails.
func (s *server) acquire(ctx context.Context) (*session, uint64, error) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, 0, ErrClosed
	}
	if s.current != nil && s.current.isEnded() {
		// It ended on its own and its reaper has not told us yet: a call must not be sent to a
		// session known to be over.
		s.brokeLocked(s.current)
	}
	if s.current != nil {
		sess := s.current
		s.mu.Unlock()
		return sess, sess.number, nil
	}
	att := s.starting
	if att == nil && s.detached != 0 {
		att = &startAttempt{number: s.detached, done: make(chan struct{}), reconnect: true}
		s.starting = att
		s.mgr.wg.Add(1)
		go s.runStart(att, 0)
	}
	if att == nil {
		s.sessions++
		att = &startAttempt{number: s.sessions, done: make(chan struct{})}
		s.starting = att
		delay := time.Duration(0)
		if s.restartReason != "" {
			delay = s.backoff - time.Since(s.lastEnd)
			s.backoff = min(2*s.backoff, s.mgr.maxBackoff)
		}
		s.mgr.wg.Add(1)
		go s.runStart(att, delay)
	}
	s.mu.Unlock()
	select {
	case <-att.done:
		return att.sess, att.number, att.err
	case <-ctx.Done():
		return nil, att.number, context.Cause(ctx)
	}
}

// runStart starts a session after delay, on its own goroutine and under the Manager's context
// (not the first caller's), and publishes the outcome to everyone waiting.
func (s *server) runStart(att *startAttempt, delay time.Duration) {
	defer s.mgr.wg.Done()
	defer close(att.done)
	sess, err := s.startAfter(att.number, delay)
	s.mu.Lock()
	s.starting = nil
	switch {
	case err != nil && s.closed:
		att.err = ErrClosed
	case err != nil:
		att.err = err
		s.stats.Exits++
		s.restartReason = "start failed: " + err.Error()
		s.lastEnd = time.Now()
		s.recordLocked(EventExit, att.number, s.restartReason)
	case s.closed:
		att.err = ErrClosed
		s.mu.Unlock()
		s.mgr.shutdown(sess, true)
		return
	case att.reconnect:
		// The session goes on, to the world, as it was before the host died: no event.
		att.sess = sess
		s.current, s.detached = sess, 0
		s.stats.Starts++
		s.mgr.log.Info().Str("server", s.cfg.Name).Uint64("session", att.number).Msg("mcp: session reconnected after a resume")
		if sess.isEnded() {
			s.brokeLocked(sess)
		} else {
			s.stopIfIdleLocked()
		}
	default:
		att.sess = sess
		s.current = sess
		s.stats.Starts++
		if s.restartReason != "" {
			s.stats.Restarts++
			s.recordLocked(EventRestart, sess.number, s.restartReason)
			s.restartReason = ""
		} else {
			s.recordLocked(EventStart, sess.number, "")
		}
		if sess.isEnded() {
			s.brokeLocked(sess) // it died between its handshake and now
		} else {
			s.stopIfIdleLocked() // everyone who wanted it gave up and the leases are gone
		}
	}
	s.mu.Unlock()
}

// startAfter waits delay (unless the Manager closes) and starts a session.
func (s *server) startAfter(number uint64, delay time.Duration) (*session, error) {
	if delay > 0 {
		timer := time.NewTimer(delay)
		defer timer.Stop()
		select {
		case <-timer.C:
		case <-s.mgr.ctx.Done():
			return nil, ErrClosed
		}
	}
	cfg := s.cfg
	if cfg.Transport() == "stdio" {
		dir, err := s.mgr.dataDir(cfg.Name)
		if err != nil {
			return nil, fmt.Errorf("%w: server %s: %w", ErrStart, cfg.Name, err)
		}
		if dir != "" {
			cfg.Env = maps.Clone(cfg.Env)
			if cfg.Env == nil {
				cfg.Env = map[string]string{}
			}
			cfg.Env[mcpconfig.DataEnv] = dir
		}
	}
	return startSession(s.mgr.ctx, &cfg, number, s.sessionBroke, &s.replyBytes, s.mgr.private)
}
