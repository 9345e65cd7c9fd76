package recording

import (
	"bufio"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"

	"github.com/rs/zerolog"
)

// Writer writes a recording. It belongs to the world's goroutine (it takes no lock), like the
// trace writer, so entries come in the world's order, which is deterministic in virtual time. A
// nil *Writer records nothing: every method is a no-op, so the world calls it unconditionally.
//
// A write error is sticky: later entries are dropped and Err, Close report the first one.
type Writer struct {
	out     *bufio.Writer
	sink    sink
	log     zerolog.Logger
	pending map[slot]pending
	entries uint64
	closed  bool
}

// slot is where a started call waits for its result: the agent's id and the call's index in its
// turn (an agent has one turn in flight at a time).
type slot struct {
	agent uint64
	index int
}

// pending is a started call whose result has not been filed yet.
type pending struct {
	tick    uint64
	call    Call
	request string
	args    []byte // the call's arguments, compacted once for the hash and the entry
}

// sink remembers the first write error and never returns one, so zerolog prints nothing.
type sink struct {
	out *bufio.Writer
	err error
}

func (s *sink) Write(p []byte) (int, error) {
	if s.err == nil {
		_, s.err = s.out.Write(p)
	}
	return len(p), nil
}

// NewWriter writes h (Format and Version filled in) to w and returns the Writer for the entries.
// It never closes w.
func NewWriter(w io.Writer, h Header) (*Writer, error) {
	h.Format, h.Version = Format, Version
	line, err := json.Marshal(h)
	if err != nil {
		return nil, fmt.Errorf("recording header: %w", err)
	}
	rw := &Writer{out: bufio.NewWriterSize(w, 64<<10), pending: map[slot]pending{}}
	rw.sink.out = rw.out
	rw.log = zerolog.New(&rw.sink)
	_, _ = rw.sink.Write(append(line, '\n'))
	if rw.sink.err == nil {
		// The header goes out at once: a run killed before its first entry still leaves a
		// recording that says what it was, and that a reader refuses as cut off.
		rw.sink.err = rw.out.Flush()
	}
	return rw, rw.sink.err
}

// WriterImage is what a Writer holds between ticks besides its file, for a snapshot of the
// world: how many entries it wrote, and the calls begun whose results are not filed yet, by
// agent id and call index.
type WriterImage struct {
	Entries uint64
	Pending []PendingCall
}

// PendingCall is a call begun and not filed yet, as data.
type PendingCall struct {
	// Agent and Index are the agent's id and the call's index in its turn.
	Agent   uint64
	Index   int
	Tick    uint64
	Call    Call
	Request string
	Args    []byte
}

// Image returns the writer's state as data (the zero image for nil).
func (w *Writer) Image() WriterImage {
	if w == nil {
		return WriterImage{}
	}
	img := WriterImage{Entries: w.entries}
	keys := slices.SortedFunc(maps.Keys(w.pending), func(a, b slot) int {
		return cmp.Or(cmp.Compare(a.agent, b.agent), cmp.Compare(a.index, b.index))
	})
	for _, k := range keys {
		p := w.pending[k]
		img.Pending = append(img.Pending, PendingCall{Agent: k.agent, Index: k.index, Tick: p.tick, Call: p.call, Request: p.request, Args: slices.Clone(p.args)})
	}
	return img
}

// Continue returns a Writer that appends to a recording whose header and first img.Entries
// entries are already in w (a run restored from a snapshot), with img's calls still pending.
func Continue(w io.Writer, img *WriterImage) *Writer {
	rw := &Writer{out: bufio.NewWriterSize(w, 64<<10), pending: make(map[slot]pending, len(img.Pending)), entries: img.Entries}
	rw.sink.out = rw.out
	rw.log = zerolog.New(&rw.sink)
	for _, p := range img.Pending {
		rw.pending[slot{agent: p.Agent, index: p.Index}] = pending{tick: p.Tick, call: p.Call, request: p.Request, args: p.Args}
	}
	return rw
}

// Flush writes the buffered entries to the underlying writer (a state directory's commit makes
// them durable next) and reports the first write error.
func (w *Writer) Flush() error {
	if w == nil {
		return nil
	}
	if w.sink.err == nil {
		w.sink.err = w.out.Flush()
	}
	return w.sink.err
}

// Err is the first write error (nil while every entry was written).
func (w *Writer) Err() error {
	if w == nil {
		return nil
	}
	return w.sink.err
}

// Entries counts the entries written so far.
func (w *Writer) Entries() uint64 {
	if w == nil {
		return 0
	}
	return w.entries
}

// begin starts an entry line of kind; nil means it must be skipped.
func (w *Writer) begin(kind string) *zerolog.Event {
	if w == nil || w.closed || w.sink.err != nil {
		return nil
	}
	e := w.log.Log()
	if e == nil {
		return nil // zerolog disabled globally: the trace writer reports that
	}
	w.entries++
	return e.Str("kind", kind)
}

// Begin notes that call c of agent agentID started at tick: its entry is written when Finish
// files its result, or by Close if it never does.
func (w *Writer) Begin(tick, agentID uint64, c Call) {
	if w == nil || w.closed {
		return
	}
	args := compactArgs(c.Args)
	w.pending[slot{agentID, c.Index}] = pending{tick: tick, call: c, request: requestHash(c.Tool, args), args: args}
}

// Finish writes the entry of the call at index of agent agentID, filed at tick with result r, and
// returns the call. A call Begin never saw is ignored (false).
func (w *Writer) Finish(tick, agentID uint64, index int, r Result) (Call, bool) {
	if w == nil {
		return Call{}, false
	}
	k := slot{agentID, index}
	p, ok := w.pending[k]
	if !ok {
		return Call{}, false
	}
	delete(w.pending, k)
	w.tool(tick, p, StatusDone, r)
	return p.call, true
}

// tool writes one tool entry.
func (w *Writer) tool(tick uint64, p pending, status string, r Result) {
	e := w.begin(KindTool)
	if e == nil {
		return
	}
	c := &p.call
	e.Uint64("tick", tick).Str("agent", c.Agent).Uint64("turn", c.Turn).Int("call", c.Index).
		Str("call_id", c.ID).Str("tool", c.Tool).Str("request", p.request).
		RawJSON("args", p.args).Str("status", status).Bool("ok", r.OK).Str("content", r.Content)
	if len(r.Notes) > 0 {
		arr := zerolog.Arr()
		for _, n := range r.Notes {
			d := zerolog.Dict().Str("fn", n.Fn).Str("text", n.Text).Bool("ok", n.OK)
			if n.Err != "" {
				d.Str("err", n.Err)
			}
			arr.Dict(d)
		}
		e.Array("notes", arr)
	}
	if r.Detached {
		e.Bool("detached", true)
	}
	if r.Panic != "" {
		e.Str("panic", r.Panic)
	}
	if len(r.Ops) > 0 {
		arr := zerolog.Arr()
		for _, op := range r.Ops {
			d := zerolog.Dict().Str("fn", op.Fn).Str("request", op.Request)
			if len(op.Out) > 0 {
				d.RawJSON("out", op.Out)
			}
			if op.Err != "" {
				d.Str("err", op.Err)
			}
			if op.Secret {
				d.Bool("secret", true)
			}
			if op.RealTime {
				d.Bool("realtime", true)
			}
			arr.Dict(d)
		}
		e.Array("ops", arr)
	}
	e.Msg("")
}

// Background writes the report of call callID's background command, delivered at tick.
func (w *Writer) Background(tick uint64, agent, callID, report string) {
	e := w.begin(KindBackground)
	if e == nil {
		return
	}
	e.Uint64("tick", tick).Str("agent", agent).Str("call_id", callID).Str("report", report).Msg("")
}

// MCP writes the MCP session events written into the trace at tick (nothing when there are none):
// pass counts the passes of that tick before this one (a wall-clock run may pass a tick more than
// once), and closing marks the batch the run's end wrote, after the sessions stopped.
func (w *Writer) MCP(tick uint64, pass int, closing bool, events []MCPEvent) {
	if len(events) == 0 {
		return
	}
	e := w.begin(KindMCP)
	if e == nil {
		return
	}
	arr := zerolog.Arr()
	for _, ev := range events {
		arr.Dict(zerolog.Dict().Str("server", ev.Server).Str("event", ev.Event).Uint64("session", ev.Session).
			Str("transport", ev.Transport).Str("reason", ev.Reason))
	}
	e.Uint64("tick", tick)
	if pass > 0 {
		e.Int("pass", pass)
	}
	if closing {
		e.Bool("closing", true)
	}
	e.Array("events", arr).Msg("")
}

// Items writes what a fan-out read from its items file at tick.
func (w *Writer) Items(tick uint64, it Items) {
	e := w.begin(KindItems)
	if e == nil {
		return
	}
	e.Uint64("tick", tick).Str("agent", it.Agent).Str("call_id", it.CallID).Str("file", it.File).Strs("items", it.Items)
	if it.Err != "" {
		e.Str("err", it.Err)
	}
	e.Msg("")
}

// Dynamic writes what a dynamic-tools scan at tick read.
func (w *Writer) Dynamic(tick uint64, dy Dynamic) {
	e := w.begin(KindDynamic)
	if e == nil {
		return
	}
	arr := zerolog.Arr()
	for _, f := range dy.Files {
		d := zerolog.Dict().Str("name", f.Name)
		if f.Err != "" {
			d.Str("err", f.Err)
		} else {
			d.Str("source", f.Source)
		}
		arr.Dict(d)
	}
	e.Uint64("tick", tick).Str("agent", dy.Agent).Uint64("turn", dy.Turn).Array("files", arr).Msg("")
}

// ModelLimit writes that agent's model turn turn, at tick, ended at a real-time limit with err.
func (w *Writer) ModelLimit(tick uint64, agent string, turn uint64, err string) {
	e := w.begin(KindModelLimit)
	if e == nil {
		return
	}
	e.Uint64("tick", tick).Str("agent", agent).Uint64("turn", turn).Str("err", err).Msg("")
}

// Pass writes one pass of a wall-clock run.
func (w *Writer) Pass(p Pass) {
	e := w.begin(KindPass)
	if e == nil {
		return
	}
	e.Uint64("tick", p.Tick).Int64("now", p.Now).Msg("")
}

// Handed writes one lane hand-over of a wall-clock run.
func (w *Writer) Handed(h Handed) {
	e := w.begin(KindHanded)
	if e == nil {
		return
	}
	e.Str("lane", h.Lane).Uint64("agent", h.Agent).Int("index", h.Index).Uint64("started", h.Started).
		Uint64("handed", h.Handed).Int("rank", h.Rank).Msg("")
}

// Model writes one live model turn answered at tick.
func (w *Writer) Model(tick uint64, m ModelTurn) {
	e := w.begin(KindModel)
	if e == nil {
		return
	}
	e.Uint64("tick", tick).Str("agent", m.Agent).Uint64("turn", m.Turn)
	if m.Attempt > 1 {
		e.Uint32("attempt", m.Attempt)
	}
	if m.Model != "" {
		e.Str("model", m.Model)
	}
	if m.Pool != "" {
		e.Str("pool", m.Pool)
	}
	e.Str("request", m.Request).Str("text", m.Text)
	if len(m.Calls) > 0 {
		arr := zerolog.Arr()
		for _, c := range m.Calls {
			args, raw := splitArgs(c.Args) // what the provider wrote, byte for byte (see ModelCall)
			d := zerolog.Dict().Str("id", c.ID).Str("name", c.Name).RawJSON("args", args)
			if raw != nil {
				d.Str("raw", *raw)
			}
			arr.Dict(d)
		}
		e.Array("calls", arr)
	}
	if u := m.Usage; u != nil {
		d := zerolog.Dict().Int64("prompt", u.Prompt).Int64("completion", u.Completion)
		if u.CacheRead != 0 {
			d.Int64("cache_read", u.CacheRead)
		}
		if u.CacheWrite != 0 {
			d.Int64("cache_write", u.CacheWrite)
		}
		e.Dict("usage", d)
	}
	if m.Err != "" {
		e.Str("err", m.Err)
	}
	if m.Status != 0 {
		e.Int("status", m.Status)
	}
	if m.RetryAfterMS != 0 {
		e.Int64("retry_after_ms", m.RetryAfterMS)
	}
	if m.Timeout {
		e.Bool("timeout", true)
	}
	e.Msg("")
}

// Answer writes one answer of the embedder's answerer.
func (w *Writer) Answer(a Answer) {
	e := w.begin(KindAnswer)
	if e == nil {
		return
	}
	e.Uint64("n", a.N).Str("agent", a.Agent).Str("tool", a.Tool).Str("answer", a.Answer).
		Uint64("delay", a.Delay).Bool("ok", a.OK).Msg("")
}

// Operator writes one thing a person did, applied at o.Tick.
func (w *Writer) Operator(o Operator) {
	e := w.begin(KindOperator)
	if e == nil {
		return
	}
	e.Uint64("tick", o.Tick).Str("op", o.Op)
	if o.CallID != "" {
		e.Str("call_id", o.CallID)
	}
	if o.Answer != "" {
		e.Str("answer", o.Answer)
	}
	if o.Agent != "" {
		e.Str("agent", o.Agent)
	}
	e.Str("by", o.By).Msg("")
}

// Close writes the calls that never finished (in agent and call order), then the end line with
// status and stop, flushes, and reports the first write error. Later calls record nothing.
func (w *Writer) Close(status, stop string) error {
	if w == nil || w.closed {
		return nil
	}
	keys := slices.SortedFunc(maps.Keys(w.pending), func(a, b slot) int {
		return cmp.Or(cmp.Compare(a.agent, b.agent), cmp.Compare(a.index, b.index))
	})
	for _, k := range keys {
		p := w.pending[k]
		w.tool(p.tick, p, StatusUnfinished, Result{})
	}
	clear(w.pending)
	entries := w.entries
	if e := w.begin(KindEnd); e != nil {
		e.Uint64("entries", entries).Str("status", status)
		if stop != "" {
			e.Str("stop", stop)
		}
		e.Msg("")
	}
	w.closed = true
	if w.sink.err == nil {
		w.sink.err = w.out.Flush()
	}
	return w.sink.err
}
