package otelgenai

import (
	"bytes"
	"sync"
	"time"

	"github.com/valyala/fastjson"

	"github.com/warrenhq/warren/trace"
)

// kind is an event kind this package reads, found in a line without parsing it.
type kind uint8

const (
	kOther kind = iota // a kind no span needs: skipped before any parse
	kHeader
	kSpawn
	kStageEnter
	kModelTurn
	kToolCall
	kAnswer
	kToolResult
	kTerminal
	kReap
	kEnd
)

var (
	// kindMarker precedes an event's kind. An agent name before it cannot hold it: a quote in a
	// JSON string is escaped, so `,"kind":"` first appears at the event's own kind field.
	kindMarker = []byte(`,"kind":"`)
	// headerPrefix starts a trace's header line, whose "fields" object also holds `,"kind":"`.
	headerPrefix = []byte(`{"format":"` + trace.Format + `"`)
)

// kindOf finds the kind of a trace line by its bytes: the kinds spans are made of, the header,
// or kOther for the rest (messages, prompts, notes, transitions, memory...), which then cost no
// parse at all.
func kindOf(line []byte) kind {
	if bytes.HasPrefix(line, headerPrefix) {
		return kHeader
	}
	i := bytes.Index(line, kindMarker)
	if i < 0 {
		return kOther
	}
	rest := line[i+len(kindMarker):]
	j := bytes.IndexByte(rest, '"')
	if j < 0 {
		return kOther
	}
	switch string(rest[:j]) {
	case trace.KindSpawn:
		return kSpawn
	case trace.KindStageEnter:
		return kStageEnter
	case trace.KindModelTurn:
		return kModelTurn
	case trace.KindToolCall:
		return kToolCall
	case trace.KindAnswer:
		return kAnswer
	case trace.KindToolResult:
		return kToolResult
	case trace.KindTerminal:
		return kTerminal
	case trace.KindReap:
		return kReap
	case trace.KindEnd:
		return kEnd
	}
	return kOther
}

// absent marks a count a model_turn event leaves out (the tokens of a turn that is not live).
const absent = -1

// record is what the spans need of one event, read on the run's goroutine and handed to the
// exporter's builder goroutine, which makes the spans: the trace line itself is the writer's and
// may not be kept. Which fields are set depends on the kind.
type record struct {
	kind kind
	// at is the wall time the event was seen, the time its span starts or ends at.
	at          time.Time
	tick, agent int64
	// spawn: the agent's name (the header's scenario), and its parent and depth.
	name, group, blueprint string
	parent, depth          int64
	// model_turn, spawn: the model; model_turn: the turn and, for a live one, the pool's
	// figures (absent when the event has none).
	model, stage, pool, cost string
	iteration, calls         int64
	attempts, dropped        int64
	tokens                   [len(tokenFields)]int64
	failed                   bool
	// tool_call, answer, tool_result: the call; the gate's or the person's verdict.
	callID, tool, verdict, layer, by string
	ok                               bool
	// terminal, reap, end: the status; reap: model turns, tool calls, tool errors; end: the
	// same and the agents.
	status string
	counts [4]int64
}

// tokenFields are the token counts of a live model_turn, in record.tokens order.
var tokenFields = [...]string{"prompt_tokens", "completion_tokens", "cache_read_tokens", "cache_write_tokens"}

// reader is a run's half on the run's goroutine: it parses the lines spans need and queues what
// they hold for the builder. Its strings of few values (models, stages, tools, verdicts) are
// interned, so a run of a million events allocates them once.
type reader struct {
	parser fastjson.Parser
	strs   map[string]string
	q      *queue
}

// intern returns b as a string, one allocation per distinct value in the run.
func (rd *reader) intern(b []byte) string {
	if s, ok := rd.strs[string(b)]; ok {
		return s
	}
	s := string(b)
	rd.strs[s] = s
	return s
}

// read turns one trace line into a queued record when spans need its kind; any other line, or
// one that does not parse, costs the kind's search and nothing more.
func (rd *reader) read(line []byte) {
	k := kindOf(line)
	if k == kOther {
		return
	}
	v, err := rd.parser.ParseBytes(line)
	if err != nil {
		return
	}
	rec := record{kind: k, at: time.Now(), tick: v.GetInt64("tick"), agent: v.GetInt64("agent")}
	switch k {
	case kHeader:
		rec.name = string(v.GetStringBytes("scenario"))
	case kSpawn:
		rec.name = string(v.GetStringBytes("name"))
		rec.model = rd.intern(v.GetStringBytes("model"))
		rec.group, rec.blueprint = rd.intern(v.GetStringBytes("group")), rd.intern(v.GetStringBytes("blueprint"))
		rec.parent, rec.depth = v.GetInt64("parent"), v.GetInt64("depth")
	case kModelTurn:
		rec.model, rec.stage = rd.intern(v.GetStringBytes("model")), rd.intern(v.GetStringBytes("stage"))
		rec.iteration, rec.calls, rec.failed = v.GetInt64("iteration"), v.GetInt64("calls"), v.Exists("error")
		if pool := v.GetStringBytes("pool"); pool != nil {
			rec.pool = rd.intern(pool)
		}
		rec.attempts, rec.dropped = count(v, "attempts"), count(v, "context_dropped")
		for i, f := range tokenFields {
			rec.tokens[i] = count(v, f)
		}
		if cost := v.GetStringBytes("cost_usd"); cost != nil {
			rec.cost = string(cost)
		}
	case kToolCall:
		rec.callID, rec.tool = string(v.GetStringBytes("call_id")), rd.intern(v.GetStringBytes("tool"))
		rec.stage, rec.verdict = rd.intern(v.GetStringBytes("stage")), rd.intern(v.GetStringBytes("verdict"))
		rec.layer = rd.intern(v.GetStringBytes("layer"))
	case kAnswer:
		// "by" is how the prompt was settled, and for a person also who ("person:<who>"): who
		// is personal data the trace keeps and a span does not.
		by := v.GetStringBytes("by")
		if i := bytes.IndexByte(by, ':'); i >= 0 {
			by = by[:i]
		}
		rec.callID, rec.verdict, rec.by = string(v.GetStringBytes("call_id")), rd.intern(v.GetStringBytes("verdict")), rd.intern(by)
	case kToolResult:
		rec.callID, rec.ok = string(v.GetStringBytes("call_id")), v.GetBool("ok")
	case kTerminal:
		rec.status = rd.intern(v.GetStringBytes("status"))
	case kReap:
		rec.status = rd.intern(v.GetStringBytes("status"))
		rec.counts = [4]int64{v.GetInt64("model_turns"), v.GetInt64("tool_calls"), v.GetInt64("tool_errors")}
	case kEnd:
		rec.status = rd.intern(v.GetStringBytes("status"))
		rec.counts = [4]int64{v.GetInt64("model_turns"), v.GetInt64("tool_calls"), v.GetInt64("tool_errors"), v.GetInt64("agents")}
	}
	rd.q.push(&rec)
}

// count reads an optional integer field, absent when the event leaves it out.
func count(v *fastjson.Value, field string) int64 {
	f := v.Get(field)
	if f == nil {
		return absent
	}
	n, err := f.Int64()
	if err != nil {
		return absent
	}
	return n
}

// Bounds of a run's queue between its goroutine and the builder.
const (
	// batchRecords is how many records wake the builder at once: one wake-up per batch, not
	// per event, keeps the hand-over off the world's costs.
	batchRecords = 256
	// maxQueued is how far the builder may fall behind a run before the run waits for it
	// (about 20 MB of records): spans are never lost between the two, and a builder that
	// cannot keep up slows the run rather than grow without bound.
	maxQueued = 64 << 10
)

// queue holds a run's records, in order, from its goroutine (push) to the builder's (take), in
// chunks of batchRecords: a chunk is filled in place and never grown, and the builder gives the
// chunks it emptied back for the next records, so queuing an event costs a copy of its record
// and no allocation.
type queue struct {
	mu      sync.Mutex
	drained sync.Cond  // the builder took the records, or the exporter closed
	chunks  [][]record // in order; the last one is being filled
	n       int        // records queued
	free    [][]record // emptied chunks
	closed  bool       // the exporter closed: push drops everything
	wake    func()     // wakes the builder (a non-blocking send)
}

func newQueue(wake func()) *queue {
	q := &queue{wake: wake}
	q.drained.L = &q.mu
	return q
}

// push queues a record, waking the builder once per chunk, and waits while the queue is full.
func (q *queue) push(rec *record) {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return
	}
	last := len(q.chunks) - 1
	if last < 0 || len(q.chunks[last]) == batchRecords {
		var c []record
		if n := len(q.free); n > 0 {
			c, q.free = q.free[n-1], q.free[:n-1]
		} else {
			c = make([]record, 0, batchRecords)
		}
		q.chunks = append(q.chunks, c)
		last++
	}
	q.chunks[last] = append(q.chunks[last], *rec)
	full := len(q.chunks[last]) == batchRecords
	q.n++
	for q.n >= maxQueued && !q.closed {
		q.wake()
		q.drained.Wait()
	}
	q.mu.Unlock()
	if full || rec.kind == kEnd {
		q.wake()
	}
}

// take hands the builder every queued chunk, in order, and takes back the chunks it emptied
// (done, which take clears and reuses as the slice it returns next).
func (q *queue) take(done [][]record) [][]record {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, c := range done {
		clear(c) // drop the strings the records held
		q.free = append(q.free, c[:0])
	}
	out := q.chunks
	q.chunks, q.n = done[:0], 0
	q.drained.Broadcast()
	return out
}

// close drops every later record and releases a run waiting for room.
func (q *queue) close() {
	q.mu.Lock()
	q.closed = true
	q.drained.Broadcast()
	q.mu.Unlock()
}
