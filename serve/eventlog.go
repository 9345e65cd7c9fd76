package serve

import (
	"bytes"
	"io"
	"strconv"
	"sync"
	"time"
)

// Wake-ups of the log's readers: the world adds events far faster than a reader needs waking,
// so a reader is woken once wakeEvery events have come, or wakeAfter after the first of them,
// whichever is sooner, not for every event: ten watchers of a run that writes 50,000 events a
// second then cost the world a few hundred wake-ups a second, not half a million.
const (
	wakeEvery = 256
	wakeAfter = 5 * time.Millisecond
)

// eventLog is a run's trace as it is written, kept in memory for the readers that follow it (the
// run's view, every SSE client): the world appends (never blocking on a reader), each reader keeps
// its own cursor. Past maxBytes the oldest events are dropped; a reader whose cursor fell behind
// them is cut off (ErrBehind), so a slow client costs the world nothing and the server bounded
// memory. Each event is kept as its Server-Sent Event, made once for every client.
type eventLog struct {
	mu       sync.Mutex
	header   []byte
	events   []event // events[i] has seq first+i
	first    uint64  // seq of events[0]
	bytes    int
	maxBytes int
	ended    bool
	// grew is closed and replaced when events were added (see wakeEvery) or the log ends, if a
	// reader took it since it was made (taken).
	grew  chan struct{}
	taken bool
	// pending counts the events added since readers were last woken; armed says the timer
	// will wake them.
	pending int
	armed   bool
	timer   *time.Timer
}

// event is one trace event as a Server-Sent Event: "id: SEQ\nevent: trace\ndata: LINE\n\n".
type event struct {
	frame []byte
	at    int // where LINE starts in frame
}

// line is the event's trace line, without its newline.
func (e event) line() []byte { return e.frame[e.at : len(e.frame)-2] }

func newEventLog(maxBytes int) *eventLog {
	l := &eventLog{first: 1, maxBytes: maxBytes, grew: make(chan struct{})}
	l.timer = time.AfterFunc(time.Hour, l.wake)
	l.timer.Stop()
	return l
}

// setHeader keeps the trace's header line.
func (l *eventLog) setHeader(line []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.header == nil {
		l.header = bytes.Clone(bytes.TrimRight(line, "\n"))
		l.wakeLocked()
	}
}

// add appends the event with the next seq. The world's goroutine calls it (Options.Events): it
// copies the line and never waits on a reader.
func (l *eventLog) add(line []byte) {
	line = bytes.TrimRight(line, "\n")
	l.mu.Lock()
	defer l.mu.Unlock()
	seq := l.first + uint64(len(l.events))
	frame := make([]byte, 0, len(line)+40)
	frame = append(frame, "id: "...)
	frame = strconv.AppendUint(frame, seq, 10)
	frame = append(frame, "\nevent: trace\ndata: "...)
	at := len(frame)
	frame = append(frame, line...)
	frame = append(frame, "\n\n"...)
	l.events = append(l.events, event{frame: frame, at: at})
	l.bytes += len(frame)
	for l.bytes > l.maxBytes && len(l.events) > 1 {
		l.bytes -= len(l.events[0].frame)
		l.events[0] = event{}
		l.events = l.events[1:]
		l.first++
	}
	l.pending++
	switch {
	case l.pending >= wakeEvery:
		l.wakeLocked()
	case !l.armed:
		l.armed = true
		l.timer.Reset(wakeAfter)
	}
}

// wake wakes the readers if events came since they were last woken (the timer's call).
func (l *eventLog) wake() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.armed = false
	if l.pending > 0 {
		l.wakeLocked()
	}
}

// wakeLocked closes the channel readers wait on, if any took it, and makes the next.
func (l *eventLog) wakeLocked() {
	l.pending = 0
	if l.taken && !l.ended {
		close(l.grew)
		l.grew, l.taken = make(chan struct{}), false
	}
}

// end marks the trace complete: readers that caught up stop.
func (l *eventLog) end() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.ended {
		l.timer.Stop()
		l.pending = 0
		l.ended = true
		close(l.grew)
	}
}

// read returns the events after seq `after` (at most max of them), the channel that is closed
// when more come, whether the log ended, and whether the reader fell behind what the log keeps.
func (l *eventLog) read(after uint64, max int) (events []event, next uint64, grew <-chan struct{}, ended, behind bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.taken = true
	if after+1 < l.first {
		return nil, after, l.grew, l.ended, true
	}
	i := int(after + 1 - l.first)
	if i < len(l.events) {
		j := min(len(l.events), i+max)
		events = l.events[i:j]
		after += uint64(j - i)
	}
	return events, after, l.grew, l.ended && i+len(events) >= len(l.events), false
}

// head returns the trace's header line (nil before the run wrote it).
func (l *eventLog) head() []byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.header
}

// last is the seq of the last event added.
func (l *eventLog) last() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.first + uint64(len(l.events)) - 1
}

// firstKept is the seq of the oldest event still kept.
func (l *eventLog) firstKept() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.first
}

// headerTap passes a trace through to w, handing its first line, the header, to the log.
type headerTap struct {
	w    io.Writer
	log  *eventLog
	buf  []byte
	done bool
}

func (t *headerTap) Write(p []byte) (int, error) {
	if !t.done {
		if i := bytes.IndexByte(p, '\n'); i >= 0 {
			t.log.setHeader(append(t.buf, p[:i]...))
			t.done, t.buf = true, nil
		} else {
			t.buf = append(t.buf, p...)
		}
	}
	return t.w.Write(p)
}
