package otelgenai

import (
	"bytes"
	"io"
)

// Writer returns a writer for a run's trace (warren.Options.Trace) that writes everything to
// next and reads the lines it wrote into spans, for a host that hands the run an io.Writer. The
// run's spans carry run as warren.run.id ("" for none) and the scenario the trace's header names.
// A nil next is io.Discard, so a run that keeps no trace still has its spans.
//
// Write returns what next returned and nothing else: a span the exporter could not make or send
// never fails a trace write. The spans take their wall times from the writes, and the trace
// writer writes its buffer (64 KiB) at a time, so every event of a buffer gets about the same
// time: prefer Tap, which sees each event as it is written, when durations matter.
func (x *Exporter) Writer(run string, next io.Writer) io.Writer {
	if next == nil {
		next = io.Discard
	}
	if x == nil {
		return next
	}
	r := x.newRun(run, "")
	if r == nil {
		return next
	}
	return &tee{next: next, rd: newReader(r)}
}

// Tap returns a function for warren.Options.Events that reads each trace event into spans as the
// run writes it, then hands it to next (nil: none). It is what host run uses: the trace writer
// calls it once per event, on the world's goroutine, so each span starts and ends at the wall
// time its event was written. Options.Events does not see the header, so the run's scenario is
// given here; run is its warren.run.id ("" for none). A nil Exporter, or a run the sampler left
// out, returns next itself.
func (x *Exporter) Tap(run, scenario string, next func(line []byte)) func(line []byte) {
	if x == nil {
		return next
	}
	r := x.newRun(run, scenario)
	switch {
	case r == nil:
		return next
	case next == nil:
		return newReader(r).read
	}
	rd := newReader(r)
	return func(line []byte) {
		rd.read(line)
		next(line)
	}
}

// newReader is the reader of a run's lines, on the run's goroutine.
func newReader(r *runSpans) *reader { return &reader{strs: map[string]string{}, q: r.q} }

// tee is Writer's writer: next first, then the lines it took.
type tee struct {
	next io.Writer
	rd   *reader
	// partial holds the start of a line the last write cut.
	partial []byte
}

// Write implements io.Writer.
func (t *tee) Write(p []byte) (int, error) {
	n, err := t.next.Write(p)
	t.feed(p[:n])
	return n, err
}

// feed splits what a write carried into whole lines, keeping a line cut at the end of one write
// until the next completes it.
func (t *tee) feed(p []byte) {
	if len(t.partial) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			t.partial = append(t.partial, p...)
			return
		}
		t.partial = append(t.partial, p[:i+1]...)
		t.rd.read(t.partial)
		t.partial = t.partial[:0]
		p = p[i+1:]
	}
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			t.partial = append(t.partial, p...)
			return
		}
		t.rd.read(p[:i+1])
		p = p[i+1:]
	}
}
