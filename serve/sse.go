package serve

import (
	"bufio"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// SSE settings.
const (
	// sseBatch is how many events one write carries at most.
	sseBatch = 512
	// sseKeepAlive is how often an idle stream sends a comment, so proxies keep it open.
	sseKeepAlive = 15 * time.Second
)

// events streams the run's trace as Server-Sent Events: first the header (event "header"), then
// each event with its trace seq as the event id (event "trace"), then "end" when the run's trace
// is complete. A client that reconnects with Last-Event-ID (or ?after=) gets the events after it
// and misses nothing; one that fell behind what the server keeps in memory gets "behind" and is
// cut off (reconnecting resumes while the events are kept; the run directory's trace.jsonl has
// them all).
func (s *Server) events(w http.ResponseWriter, r *http.Request, run *Run) {
	after, err := lastEventID(r)
	if err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	run.watchers.Add(1)
	defer run.watchers.Add(-1)
	// A client that cannot take a batch within WatcherTimeout is cut off: a slow reader never
	// slows the world (the world only appends to the run's log), and this bounds what a stalled
	// one holds. The deadline is set before each write, not at its flush: the buffer may spill
	// mid-batch, and the time a paused run idled must not count against the client.
	timeout := s.cfg.WatcherTimeout
	deadline := func() { _ = rc.SetWriteDeadline(time.Now().Add(timeout)) }
	bw := bufio.NewWriterSize(w, 64<<10)
	flush := func() bool { return bw.Flush() == nil && rc.Flush() == nil }
	// The header: wait for the run to write it.
	for {
		if head := run.events.head(); head != nil {
			deadline()
			fmt.Fprintf(bw, "event: header\ndata: %s\n\n", head)
			break
		}
		_, _, grew, ended, _ := run.events.read(after, 0)
		if ended {
			break
		}
		select {
		case <-grew:
		case <-r.Context().Done():
			return
		}
	}
	if !flush() {
		return
	}
	keepAlive := time.NewTicker(sseKeepAlive)
	defer keepAlive.Stop()
	for {
		events, next, grew, ended, behind := run.events.read(after, sseBatch)
		deadline()
		if behind {
			fmt.Fprintf(bw, "event: behind\ndata: {\"after\":%d,\"first_kept\":%d}\n\n", after, run.events.firstKept())
			flush()
			return
		}
		for _, e := range events {
			_, _ = bw.Write(e.frame) // an error sticks: the flush reports it
		}
		after = next
		if len(events) > 0 {
			if !flush() {
				return
			}
			continue
		}
		if ended {
			fmt.Fprintf(bw, "event: end\ndata: {\"last\":%d}\n\n", after)
			flush()
			return
		}
		select {
		case <-grew:
		case <-keepAlive.C:
			deadline()
			fmt.Fprint(bw, ": keep-alive\n\n")
			if !flush() {
				return
			}
		case <-r.Context().Done():
			return
		}
	}
}

// lastEventID is the seq a client has seen: the Last-Event-ID header, or ?after=, or 0.
func lastEventID(r *http.Request) (uint64, error) {
	v := r.Header.Get("Last-Event-ID")
	if v == "" {
		v = r.URL.Query().Get("after")
	}
	if v == "" {
		return 0, nil
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("Last-Event-ID %q: want the seq of the last event seen", v)
	}
	return n, nil
}
