// Package leases ties agents to the world's MCP server sessions: an agent leases the servers its
// profile advertises from spawn to reap, a session whose last lease goes stops once its calls in
// flight end, and the sessions' lifecycle events (start, stop, exit, restart) are written into the
// trace by the mcp_events system. Calls never go through it: a server's tools are ordinary tools
// that reach their session on the tool lane. It is a world resource, tested without a world.
package leases

import (
	"slices"

	"github.com/warrenhq/warren/mcp"
	"github.com/warrenhq/warren/recording"
	"github.com/warrenhq/warren/trace"
)

// Servers is the world's MCP server sessions as leases uses them (*mcp.Manager implements it).
type Servers interface {
	// Lease records one more agent that may call server's tools; Release one fewer.
	Lease(server string)
	Release(server string)
	// Drain returns the lifecycle events since the last Drain, ordered by server and then by
	// when they happened on that server.
	Drain() []mcp.Event
	// Close stops every session; its stop events are left for a last Drain.
	Close() error
	// Crash kills server's live session as if it had died, its exit recorded before it returns.
	Crash(server string) bool
	// Replayed applies a session event a resumed run replays to server's state (its sessions
	// carry on as the recording left them).
	Replayed(server, kind string, session uint64)
}

// ServerTool is implemented by a tool of an MCP server (*mcp.Tool): the server it calls.
type ServerTool interface {
	Server() string
}

var _ ServerTool = (*mcp.Tool)(nil)

var _ Servers = (*mcp.Manager)(nil)

// Leases is the world's view of its MCP sessions. A nil *Leases, or one with no servers, is a
// world without MCP servers: every method is then a no-op.
type Leases struct {
	servers Servers
	trace   *trace.Writer
	// rec records the events written; tape, in a replay, gives them instead of the sessions.
	rec  *recording.Writer
	tape *recording.Tape
	buf  []recording.MCPEvent
	// crashes are the servers a fault crashes at the start of the next tick, in the order the
	// faults fell.
	crashes []string
	// tick and pass count the writes within one tick (a wall-clock run may pass a tick more than
	// once), which the recording keys batches by.
	tick uint64
	pass int
	// kept is the events journal of a run with a state directory (journal.go; nil: none).
	kept *keptEvents
}

// CrashNext has server's live session killed at the start of the next tick, before any call of
// that tick is on it (WriteEvents does it), so the crash lands at a place the world fixes: a
// seeded mcp_crash fault. A replay kills nothing: its events come from the recording.
func (l *Leases) CrashNext(server string) {
	if l != nil && l.servers != nil && !l.tape.Covers(l.tick+1) && !slices.Contains(l.crashes, server) {
		l.crashes = append(l.crashes, server)
	}
}

// New returns the leases of servers (nil: no servers), writing lifecycle events to tw (nil: none).
func New(servers Servers, tw *trace.Writer) *Leases {
	return &Leases{servers: servers, trace: tw}
}

// Record makes the leases record the events they write into rec (host run --record), or, with
// tape (host replay), write the recorded events of each tick instead of the sessions' own: a
// replay starts no session, and its trace still shows every start, exit and restart the
// recorded run saw. Both nil: the sessions' events, unrecorded.
func (l *Leases) Record(rec *recording.Writer, tape *recording.Tape) {
	if l != nil {
		l.rec, l.tape = rec, tape
	}
}

// Lease gives each of agents new agents a lease on every server of names.
func (l *Leases) Lease(names []string, agents int) {
	if l == nil || l.servers == nil {
		return
	}
	for _, server := range names {
		for range agents {
			l.servers.Lease(server)
		}
	}
}

// Release gives back one agent's leases on names: reap's MCP teardown step.
func (l *Leases) Release(names []string) {
	if l == nil || l.servers == nil {
		return
	}
	for _, server := range names {
		l.servers.Release(server)
	}
}

// WriteEvents writes the sessions' lifecycle events since the last call into the trace, stamped
// with tick, and reports how many there were.
func (l *Leases) WriteEvents(tick uint64) int { return l.write(tick, false) }

// write writes the events since the last call; closing marks Close's last batch, which the
// recording keeps apart from the same tick's first.
func (l *Leases) write(tick uint64, closing bool) int {
	if l == nil || l.servers == nil {
		return 0
	}
	if tick != l.tick {
		l.tick, l.pass = tick, 0
	}
	pass := l.pass
	if !closing {
		l.pass++
	}
	l.kept.passing(tick)
	for _, server := range l.crashes {
		l.servers.Crash(server)
	}
	l.crashes = l.crashes[:0]
	events := l.servers.Drain()
	if l.tape.Covers(tick) && !(closing && l.tape.Resuming()) {
		recorded := l.tape.MCP(tick, pass, closing)
		l.kept.written(recorded)
		for _, e := range recorded {
			l.trace.MCPServer(tick, e.Server, e.Event, e.Session, e.Transport, e.Reason)
			if l.tape.Resuming() {
				l.servers.Replayed(e.Server, e.Event, e.Session)
			}
		}
		l.rec.MCP(tick, pass, closing, recorded) // a resumed run records what it replays
		return len(recorded)
	}
	key := EffectKey(tick, pass, closing)
	if kept, ok := l.kept.resumedBatch(key, tick, pass, closing); ok {
		for _, e := range kept {
			l.trace.MCPServer(tick, e.Server, e.Event, e.Session, e.Transport, e.Reason)
			l.servers.Replayed(e.Server, e.Event, e.Session)
		}
		l.rec.MCP(tick, pass, closing, kept)
		l.kept.keep(key, tick, kept)
		return len(kept)
	}
	l.buf = l.buf[:0]
	for _, e := range events {
		if l.kept.seen(e) {
			continue // a resumed run's session reporting again what the journal already wrote
		}
		l.buf = append(l.buf, recording.MCPEvent{Server: e.Server, Event: e.Kind, Session: e.Session, Transport: e.Transport, Reason: e.Reason})
	}
	l.kept.keep(key, tick, l.buf)
	for _, e := range l.buf {
		l.trace.MCPServer(tick, e.Server, e.Event, e.Session, e.Transport, e.Reason)
	}
	l.rec.MCP(tick, pass, closing, l.buf)
	return len(l.buf)
}

// Close stops every MCP session at the end of a run and writes their stop events at tick, the
// run's last: the runner calls it after the scheduler stops and before it closes the trace.
func (l *Leases) Close(tick uint64) error {
	if l == nil || l.servers == nil {
		return nil
	}
	l.kept.closing()
	err := l.servers.Close()
	l.write(tick, true)
	return err
}

// Image is what the leases keep between ticks, for a world snapshot: the crashes a fault set for
// the next tick, and where the writes of the current tick stand.
type Image struct {
	Crashes []string
	Tick    uint64
	Pass    int
}

// Image returns the leases' state as data.
func (l *Leases) Image() Image {
	if l == nil {
		return Image{}
	}
	return Image{Crashes: slices.Clone(l.crashes), Tick: l.tick, Pass: l.pass}
}

// Restore gives the leases the state img holds.
func (l *Leases) Restore(img Image) {
	if l != nil {
		l.crashes, l.tick, l.pass = slices.Clone(img.Crashes), img.Tick, img.Pass
	}
}
