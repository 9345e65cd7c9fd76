package serve

import (
	"bytes"
	"io"
	"sync"
)

// eventLog is a run's trace as it is written, kept in memory for the readers that follow it (the
// run's view, every SSE client): the world appends (never blocking on a reader), each reader keeps
// its own cursor. Past maxBytes the oldest events are dropped; a reader whose cursor fell behind
// them is cut off (ErrBehind), so a slow client costs the world nothing and the server bounded
// memory.
type eventLog struct {
	mu       sync.Mutex
	header   []byte
	lines    [][]byte // lines[i] has seq first+i
	first    uint64   // seq of lines[0]
	bytes    int
	maxBytes int
	ended    bool
	// grew is closed and replaced whenever lines are added or the log ends.
	grew chan struct{}
}

func newEventLog(maxBytes int) *eventLog {
	return &eventLog{first: 1, maxBytes: maxBytes, grew: make(chan struct{})}
}

// setHeader keeps the trace's header line.
func (l *eventLog) setHeader(line []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.header == nil {
		l.header = bytes.Clone(bytes.TrimRight(line, "\n"))
		close(l.grew)
		l.grew = make(chan struct{})
	}
}

// add appends the event with the next seq. The world's goroutine calls it (Options.Events): it
// copies the line and never waits on a reader.
func (l *eventLog) add(line []byte) {
	cp := bytes.Clone(bytes.TrimRight(line, "\n"))
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, cp)
	l.bytes += len(cp)
	for l.bytes > l.maxBytes && len(l.lines) > 1 {
		l.bytes -= len(l.lines[0])
		l.lines[0] = nil
		l.lines = l.lines[1:]
		l.first++
	}
	close(l.grew)
	l.grew = make(chan struct{})
}

// end marks the trace complete: readers that caught up stop.
func (l *eventLog) end() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.ended {
		l.ended = true
		close(l.grew)
	}
}

// read returns the events after seq `after` (at most max of them), the channel that is closed
// when more come, whether the log ended, and whether the reader fell behind what the log keeps.
func (l *eventLog) read(after uint64, max int) (lines [][]byte, next uint64, grew <-chan struct{}, ended, behind bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if after+1 < l.first {
		return nil, after, l.grew, l.ended, true
	}
	i := int(after + 1 - l.first)
	if i < len(l.lines) {
		j := min(len(l.lines), i+max)
		lines = l.lines[i:j]
		after += uint64(j - i)
	}
	return lines, after, l.grew, l.ended && i+len(lines) >= len(l.lines), false
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
	return l.first + uint64(len(l.lines)) - 1
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
