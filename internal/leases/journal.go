package leases

import (
	"cmp"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/warrenhq/warren/mcp"
	"github.com/warrenhq/warren/recording"
)

// A resumed run serves the journaled results of the MCP calls that returned before the crash
// without running them again, so the sessions those calls started, and their lifecycle events, do
// not happen again. The events of the ticks past the last commit are kept in the state
// directory's effect journal, two ways:
//
//   - as it happens: each event, on the goroutine that records it and before the call that waits
//     on its session goes on (EventSource), under its identity (server, session, and whether it
//     begins or ends the session), with the tick whose first pass will write it;
//   - as it is written: each pass's whole batch, under EffectKey, before its trace line.
//
// A resumed run writes, at each live pass, the batch kept for that pass, or else the events kept
// as they happened for it that it has not written yet, instead of what its own sessions report
// (the same happenings, seen again), and applies them to the sessions' state as a replay does.
// Both kinds are filed once written, so the commit that covers their tick drops them.

// Journal is the state directory's effect journal as the leases use it
// (resources.EffectJournal implements it): events are kept synced before anything depends on
// them (even while a kill switch waits for the calls in flight), and filed once the recording
// holds them.
type Journal interface {
	Keep(key string, tick uint64, payload []byte) error
	Filed(key string)
}

// EventSource is implemented by servers that tell each lifecycle event as it is recorded.
type EventSource interface {
	OnEvent(hook func(mcp.Event))
}

var _ EventSource = (*mcp.Manager)(nil)

// effectPrefix starts every key the leases journal under.
const effectPrefix = "mcp\x00"

// happenedPrefix starts the keys of events journaled as they happened.
const happenedPrefix = effectPrefix + "ev\x00"

// IsEffectKey reports whether an effect-journal key is the leases' (EffectKey, or an event kept
// as it happened) rather than a call's.
func IsEffectKey(key string) bool { return strings.HasPrefix(key, effectPrefix) }

// EffectKey is the effect-journal key of the batch of events written at tick's pass (closing:
// Close's batch).
func EffectKey(tick uint64, pass int, closing bool) string {
	key := effectPrefix + strconv.FormatUint(tick, 10) + "\x00" + strconv.Itoa(pass)
	if closing {
		key += "\x00closing"
	}
	return key
}

// eventID is an event's identity: a session n of a server begins once (start or restart) and
// ends once (stop or exit).
type eventID struct {
	server  string
	session uint64
	ends    bool
}

func idOf(server, kind string, session uint64) eventID {
	return eventID{server, session, kind == mcp.EventStop || kind == mcp.EventExit}
}

func (id eventID) key() string {
	end := "b"
	if id.ends {
		end = "e"
	}
	return happenedPrefix + id.server + "\x00" + strconv.FormatUint(id.session, 10) + "\x00" + end
}

// happened is an event kept as it happened: the tick whose first pass writes it, and the event.
type happened struct {
	Tick  uint64             `json:"tick"`
	Event recording.MCPEvent `json:"event"`
	id    eventID
}

// keptEvents is the leases' part of the effect journal. A nil *keptEvents keeps nothing.
type keptEvents struct {
	journal Journal
	// now is the tick in progress: an event that happens now is written at the next tick's
	// first pass. quiet stops the journaling of events as they happen (Close's own stops).
	now   atomic.Uint64
	quiet atomic.Bool
	// mu guards unfiled, the keys of events kept as they happened and not yet filed (the hook
	// runs on the sessions' goroutines, Filed only on the world's).
	mu      sync.Mutex
	unfiled []string
	// batches and pending are what the run before a resume kept (nil: not a resume); done the
	// identities this run has written, so an event kept both ways is written once.
	batches map[string][]recording.MCPEvent
	pending map[uint64][]happened
	done    map[eventID]bool
}

// Journal makes the leases keep the events they write in j (a run with a state directory), and
// source's events as they happen (nil: only as they are written). In a resumed run, kept holds
// the journal entries the run before it left under its keys (IsEffectKey; nil: not a resume).
func (l *Leases) Journal(j Journal, source EventSource, kept map[string]json.RawMessage) {
	if l == nil || j == nil {
		return
	}
	k := &keptEvents{journal: j}
	if kept != nil {
		k.batches, k.pending, k.done = map[string][]recording.MCPEvent{}, map[uint64][]happened{}, map[eventID]bool{}
		for key, raw := range kept {
			if strings.HasPrefix(key, happenedPrefix) {
				var h happened
				if json.Unmarshal(raw, &h) == nil {
					h.id = idOf(h.Event.Server, h.Event.Event, h.Event.Session)
					k.pending[h.Tick] = append(k.pending[h.Tick], h)
				}
				continue
			}
			var batch []recording.MCPEvent
			if json.Unmarshal(raw, &batch) == nil {
				k.batches[key] = batch
			}
		}
		for _, hs := range k.pending {
			// The order Drain gives: by server name, then as they happened on that server.
			slices.SortFunc(hs, func(a, b happened) int {
				return cmp.Or(cmp.Compare(a.id.server, b.id.server), cmp.Compare(a.id.session, b.id.session), compareBool(a.id.ends, b.id.ends))
			})
		}
	}
	l.kept = k
	if source != nil {
		source.OnEvent(k.happened)
	}
}

func compareBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case !a:
		return -1
	}
	return 1
}

// happened journals an event as it happens (EventSource's hook), before the call that waits on
// its session goes on.
func (k *keptEvents) happened(e mcp.Event) {
	if k.quiet.Load() {
		return
	}
	tick := k.now.Load() + 1
	h := happened{Tick: tick, Event: recording.MCPEvent{Server: e.Server, Event: e.Kind, Session: e.Session, Transport: e.Transport, Reason: e.Reason}}
	raw, err := json.Marshal(h)
	if err != nil {
		return
	}
	key := idOf(e.Server, e.Kind, e.Session).key()
	if k.journal.Keep(key, tick, raw) != nil {
		return // not kept: a resume's sessions report it, or not
	}
	k.mu.Lock()
	k.unfiled = append(k.unfiled, key)
	k.mu.Unlock()
}

// passing starts a pass of tick: events from now on happen during its work, and the events kept
// as they happened before it are written by it, so they are filed.
func (k *keptEvents) passing(tick uint64) {
	if k == nil {
		return
	}
	k.now.Store(tick)
	k.mu.Lock()
	unfiled := k.unfiled
	k.unfiled = nil
	k.mu.Unlock()
	for _, key := range unfiled {
		k.journal.Filed(key)
	}
}

// closing stops the journaling of events as they happen: Close's stops are written by its own
// pass, which a resume never takes from the journal.
func (k *keptEvents) closing() {
	if k != nil {
		k.quiet.Store(true)
	}
}

// written notes events this run wrote (a resume's replay of its committed ticks).
func (k *keptEvents) written(events []recording.MCPEvent) {
	if k == nil || k.done == nil {
		return
	}
	for _, e := range events {
		k.done[idOf(e.Server, e.Event, e.Session)] = true
	}
}

// seen reports whether a resumed run already wrote e (an event's identity occurs once in a run).
func (k *keptEvents) seen(e mcp.Event) bool {
	return k != nil && k.done != nil && k.done[idOf(e.Server, e.Kind, e.Session)]
}

// resumedBatch is what a resumed run writes at tick's pass instead of its sessions' events: the
// batch the run before it wrote there, or else the events it kept as they happened for that tick
// and this run has not written.
func (k *keptEvents) resumedBatch(key string, tick uint64, pass int, closing bool) ([]recording.MCPEvent, bool) {
	if k == nil || k.batches == nil || closing {
		return nil, false
	}
	if batch, ok := k.batches[key]; ok {
		k.written(batch)
		return batch, true
	}
	if pass != 0 {
		return nil, false
	}
	var batch []recording.MCPEvent
	for _, h := range k.pending[tick] {
		if !k.done[h.id] {
			batch = append(batch, h.Event)
		}
	}
	k.written(batch)
	return batch, len(batch) > 0
}

// keep journals a non-empty batch before its trace line is written, and files it at once, with
// this run's own events written (a later pass must not write them again).
func (k *keptEvents) keep(key string, tick uint64, events []recording.MCPEvent) {
	if k == nil || len(events) == 0 {
		return
	}
	k.written(events)
	raw, err := json.Marshal(events)
	if err != nil {
		return
	}
	_ = k.journal.Keep(key, tick, raw) // not kept: a resume's sessions report it, or not
	k.journal.Filed(key)
}
