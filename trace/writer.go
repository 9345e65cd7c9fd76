package trace

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"

	"github.com/rs/zerolog"

	"github.com/warrenhq/warren/internal/version"
)

// Format and Version identify the trace format in every header; Version changes
// whenever the meaning or order of fields changes, so old golden traces are rejected
// instead of misread.
const (
	Format  = "warren-trace"
	Version = 5
)

// The header's clock values: which of the host's two clocks produced the run.
const (
	// ClockVirtual is deterministic virtual time, the default for scenarios.
	ClockVirtual = "virtual"
	// ClockWall is live wall-clock time; such traces are records, not golden files.
	ClockWall = "wall"
)

// MaxContentBytes is the longest tool_result content or message text written in full;
// longer text is truncated so one chatty tool or agent cannot bloat a trace of a million
// agents.
const MaxContentBytes = 2048

// Event kinds, the "kind" field of each event line.
const (
	KindSpawn      = "spawn"
	KindStageEnter = "stage_enter"
	KindModelTurn  = "model_turn"
	KindToolCall   = "tool_call"
	KindToolResult = "tool_result"
	KindTransition = "transition"
	KindTerminal   = "terminal"
	KindMemory     = "memory"
	KindReap       = "reap"
	KindPrompt     = "prompt"
	KindAnswer     = "answer"
	// The sub-agent kinds (version 3); a child's creation is a KindSpawn event with the
	// parent's fields added (see Writer.SpawnChild).
	KindMessage     = "message"
	KindWaitStart   = "wait_start"
	KindWaitEnd     = "wait_end"
	KindKill        = "kill"
	KindFanOutStart = "fanout_start"
	KindWorkerEnd   = "worker_end"
	KindMerge       = "merge"
)

// Errors reported by the writer, testable with errors.Is.
var (
	// ErrBadHeader means a header is invalid (written or read).
	ErrBadHeader = errors.New("invalid trace header")
	// ErrClosed is returned by Flush and Close after Close.
	ErrClosed = errors.New("trace writer closed")
	// ErrSuppressed means zerolog's global level is Disabled, so events were dropped.
	ErrSuppressed = errors.New("trace events suppressed: zerolog global level is Disabled")
)

// Header is the first line of a trace: what was run, so a trace is never compared with
// the trace of a different scenario without saying so. Format and Version are the
// package constants.
type Header struct {
	// HostVersion is the version of Warren that wrote the trace ("host_version"). NewWriter
	// ignores it and always writes this build's version (internal/version), so a trace cannot
	// claim another host; ReadAll and Read fill it in from the line.
	HostVersion string
	// Scenario is the scenario's name.
	Scenario string
	// ScenarioHash identifies the exact scenario source, as "sha256:<hex>" (see
	// HashScenario).
	ScenarioHash string
	// Clock is ClockVirtual or ClockWall.
	Clock string
	// Seed is the run's seed.
	Seed uint64
	// Recording is the recording written alongside this trace (host run --record), as given on
	// the command line, so a trace names the file that replays its run; "" (no recording) is
	// left out of the line.
	Recording string
	// Fields lists every field an event of this version may have and its type ("fields"), in
	// Columns order, so that a reader knows every column from line 1 instead of sampling the
	// events. NewWriter ignores it and always writes Columns; ReadAll and Read fill it in.
	Fields []Field
}

// HashScenario returns the header's ScenarioHash for a scenario's source bytes.
func HashScenario(src []byte) string {
	sum := sha256.Sum256(src)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// AgentRef identifies the agent an event is about: the id for joins, the name for
// people reading the trace.
type AgentRef struct {
	// ID is the host-assigned agent id (the event's "agent" field).
	ID uint64
	// Name is the agent's name (the event's "name" field).
	Name string
}

// Writer appends events to a trace. It buffers output; call Close (or Flush) when the
// run ends. A Writer is owned by the goroutine running the world's systems and is not
// safe for concurrent use (it takes no lock). A nil *Writer is a valid, disabled trace:
// every method is a cheap no-op, so the host can call it unconditionally.
//
// A write error of the underlying writer is sticky: later events are dropped and Flush
// and Close report the first error.
type Writer struct {
	out    *bufio.Writer
	sink   errorSink
	log    zerolog.Logger
	seq    uint64
	closed bool
	// scratch holds compacted args and truncated content between encode calls.
	scratch bytes.Buffer
}

// errorSink sits between zerolog and the buffer: it remembers the first failure and
// never returns one, so zerolog has nothing to print to stderr.
type errorSink struct {
	out *bufio.Writer
	err error
	tap func(line []byte)
}

func (s *errorSink) Write(p []byte) (int, error) {
	if s.err == nil {
		_, s.err = s.out.Write(p)
		if s.tap != nil && s.err == nil {
			s.tap(p)
		}
	}
	return len(p), nil
}

// NewWriter writes the header for h to w and returns a Writer for the events. The
// Writer never closes w: whoever opened it closes it after Close.
func NewWriter(w io.Writer, h Header) (*Writer, error) {
	if w == nil {
		return nil, fmt.Errorf("%w: nil io.Writer", ErrBadHeader)
	}
	if h.Clock != ClockVirtual && h.Clock != ClockWall {
		return nil, fmt.Errorf("%w: clock %q (valid: %q, %q)", ErrBadHeader, h.Clock, ClockVirtual, ClockWall)
	}
	tw := &Writer{out: bufio.NewWriterSize(w, 64<<10)}
	tw.sink.out = tw.out
	tw.log = zerolog.New(&tw.sink)
	e := tw.log.Log()
	if e == nil {
		return nil, ErrSuppressed
	}
	e.Str("format", Format).
		Int("version", Version).
		Str("host_version", version.Warren).
		Str("scenario", h.Scenario).
		Str("scenario_hash", h.ScenarioHash).
		Uint64("seed", h.Seed).
		Str("clock", h.Clock)
	if h.Recording != "" {
		e.Str("recording", h.Recording)
	}
	e.RawJSON("fields", headerFields).Msg("")
	// The header goes through at once: a reader following the file (a served run's live view)
	// knows which trace it reads before the first events fill the buffer.
	// A failure is sticky, as any later write's: Err reports it and the events are dropped.
	if err := tw.out.Flush(); err != nil && tw.sink.err == nil {
		tw.sink.err = err
	}
	return tw, nil
}

// Continue returns a Writer that appends to a trace whose header and first events events are
// already in w (a run restored from a snapshot): it writes no header, and numbers its first
// event events+1.
func Continue(w io.Writer, events uint64) (*Writer, error) {
	if w == nil {
		return nil, fmt.Errorf("%w: nil io.Writer", ErrBadHeader)
	}
	tw := &Writer{out: bufio.NewWriterSize(w, 64<<10), seq: events}
	tw.sink.out = tw.out
	tw.log = zerolog.New(&tw.sink)
	return tw, nil
}

// Tap makes fn see every event from now on, as the JSON line written (newline included), right
// after it is written: an embedder observes a run's events live without reading the trace
// back. fn runs on the world's goroutine, must not block, and must not keep line (the slice is
// reused). A nil fn removes the tap.
func (w *Writer) Tap(fn func(line []byte)) {
	if w != nil {
		w.sink.tap = fn
	}
}

// Enabled reports whether events are recorded, so callers can skip building costly
// event arguments for a disabled trace.
func (w *Writer) Enabled() bool {
	return w != nil && !w.closed
}

// Err returns the first error the trace met, a write error of the underlying writer or
// ErrSuppressed, or nil. The error is sticky: once set, every later event is dropped. The host
// checks it after every tick and stops the run when it is set, because a run whose trace has
// stopped is no longer a record of itself. A write error shows when the buffer is written out,
// so within about 64 KiB of events of the one that failed.
func (w *Writer) Err() error {
	if w == nil {
		return nil
	}
	return w.sink.err
}

// Events returns the number of events written so far (the header excluded); it is
// also the seq of the last event.
func (w *Writer) Events() uint64 {
	if w == nil {
		return 0
	}
	return w.seq
}

// begin starts an event with the common fields; nil means the event must be skipped.
func (w *Writer) begin(tick uint64, a AgentRef, kind string) *zerolog.Event {
	if w == nil || w.closed || w.sink.err != nil {
		return nil
	}
	e := w.log.Log()
	if e == nil {
		w.sink.err = ErrSuppressed
		return nil
	}
	w.seq++
	return e.Uint64("tick", tick).
		Uint64("seq", w.seq).
		Uint64("agent", a.ID).
		Str("name", a.Name).
		Str("kind", kind)
}

// Spawn records an agent's creation from a blueprint, with the model back end that
// drives it and its task: the first message it is given (a group's task template for this
// agent), so a reader sees what the agent was asked to do. task is truncated like
// tool_result content.
func (w *Writer) Spawn(tick uint64, a AgentRef, group string, index int, blueprint, model, task string) {
	e := w.begin(tick, a, KindSpawn)
	if e == nil {
		return
	}
	e.Str("group", group).Int("index", index).Str("blueprint", blueprint).Str("model", model)
	w.appendText(e, "task", task)
	e.Msg("")
}

// StageEnter records an agent entering a stage; visit counts visits from 1.
func (w *Writer) StageEnter(tick uint64, a AgentRef, stage string, visit int) {
	e := w.begin(tick, a, KindStageEnter)
	if e == nil {
		return
	}
	e.Str("stage", stage).Int("visit", visit).Msg("")
}

// ModelTurn records one model decision: the model that made it (the stage's own model, or the
// agent's), its text and how many tool calls it made. err is the model's failure message,
// written only when non-empty.
func (w *Writer) ModelTurn(tick uint64, a AgentRef, stage, model string, iteration int, text string, calls int, err string, live *LiveTurn) {
	e := w.begin(tick, a, KindModelTurn)
	if e == nil {
		return
	}
	e.Str("stage", stage).Str("model", model).Int("iteration", iteration).Str("text", text).Int("calls", calls)
	if err != "" {
		e.Str("error", err)
	}
	if live != nil {
		e.Str("pool", live.Pool).Uint32("attempts", live.Attempts).Int64("prompt_tokens", live.Prompt).Int64("completion_tokens", live.Completion)
		if live.CacheRead != 0 {
			e.Int64("cache_read_tokens", live.CacheRead)
		}
		if live.CacheWrite != 0 {
			e.Int64("cache_write_tokens", live.CacheWrite)
		}
		if live.Cost != 0 {
			e.Str("cost_usd", DollarsOf(live.Cost))
		}
		if live.Dropped != 0 {
			e.Int("context_dropped", live.Dropped)
		}
	}
	e.Msg("")
}

// ToolCall records a requested tool call and the permission gate's decision: the stage the
// agent was in when it made the call (the gate judges it by that stage's permissions), the
// keys the call was judged by, the verdict, the layer that decided it, and why.
func (w *Writer) ToolCall(tick uint64, a AgentRef, stage, callID, tool string, args json.RawMessage, keys []string, verdict, layer, reason string) {
	e := w.begin(tick, a, KindToolCall)
	if e == nil {
		return
	}
	e.Str("stage", stage).Str("call_id", callID).Str("tool", tool)
	w.appendArgs(e, args)
	e.Strs("keys", keys).Str("verdict", verdict).Str("layer", layer).Str("reason", reason).Msg("")
}

// Prompt records a call or question put to the interaction hub: the agent waits, parked,
// until the answer (or the timeout) arrives. stage is the stage of the call; kind is
// "approval" or "question"; for a question text is what is asked.
func (w *Writer) Prompt(tick uint64, a AgentRef, stage, callID, tool, kind string, keys []string, text string, deadline uint64) {
	e := w.begin(tick, a, KindPrompt)
	if e == nil {
		return
	}
	e.Str("stage", stage).Str("call_id", callID).Str("tool", tool).Str("prompt", kind).Strs("keys", keys).Str("text", text).Uint64("deadline", deadline).Msg("")
}

// Answer records how a prompt was answered: the stage of the call, the answer ("once",
// "stage", "run", "deny", or a question's reply), who gave it ("script", "timeout",
// "unanswered", or "cancelled" for a prompt still open when its agent was killed or ended; the
// host's values) and the verdict that follows.
func (w *Writer) Answer(tick uint64, a AgentRef, stage, callID, tool, answer, by, verdict string) {
	e := w.begin(tick, a, KindAnswer)
	if e == nil {
		return
	}
	e.Str("stage", stage).Str("call_id", callID).Str("tool", tool).Str("answer", answer).Str("by", by).Str("verdict", verdict).Msg("")
}

var nullJSON = []byte("null")

// appendArgs writes args compacted onto one line, or as a string when it is not valid
// UTF-8 JSON, so every line stays valid JSON whatever a model sent.
func (w *Writer) appendArgs(e *zerolog.Event, args json.RawMessage) {
	if len(args) == 0 {
		e.RawJSON("args", nullJSON)
		return
	}
	w.scratch.Reset()
	if !utf8.Valid(args) || json.Compact(&w.scratch, args) != nil {
		e.Bytes("args", args)
		return
	}
	e.RawJSON("args", w.scratch.Bytes())
}

// ToolResult records a tool call's outcome, with the stage the call was made in; content
// over MaxContentBytes is truncated.
func (w *Writer) ToolResult(tick uint64, a AgentRef, stage, callID, tool string, ok bool, content string) {
	e := w.begin(tick, a, KindToolResult)
	if e == nil {
		return
	}
	e.Str("stage", stage).Str("call_id", callID).Str("tool", tool).Bool("ok", ok)
	w.appendText(e, "content", content)
	e.Msg("")
}

// appendText writes text under key, truncated when it is over MaxContentBytes.
func (w *Writer) appendText(e *zerolog.Event, key, text string) {
	if len(text) <= MaxContentBytes {
		e.Str(key, text)
		return
	}
	e.Bytes(key, w.truncate(text))
}

// truncate builds the truncated form of content in the scratch buffer.
func (w *Writer) truncate(content string) []byte {
	cut := MaxContentBytes
	for cut > 0 && !utf8.RuneStart(content[cut]) {
		cut--
	}
	w.scratch.Reset()
	w.scratch.WriteString(content[:cut])
	w.scratch.WriteString(" …[truncated ")
	w.scratch.Write(strconv.AppendInt(w.scratch.AvailableBuffer(), int64(len(content)-cut), 10))
	w.scratch.WriteString(" bytes]")
	return w.scratch.Bytes()
}

// Transition records an agent moving between stages because of outcome on, and, when a
// transition's condition chose the move, that condition (when; "" for none). A way out of the
// stage graph is a transition too: to is "" and end says how the agent ends ("done" or
// "failed"; "" for a move), written just before the agent's terminal event, so that every edge
// of the graph an agent takes is one event a reader can count.
func (w *Writer) Transition(tick uint64, a AgentRef, from, to, on, when, end string) {
	e := w.begin(tick, a, KindTransition)
	if e == nil {
		return
	}
	e.Str("from", from).Str("to", to).Str("on", on)
	if when != "" {
		e.Str("when", when)
	}
	if end != "" {
		e.Str("end", end)
	}
	e.Msg("")
}

// Memory records a write to an agent's memory by a transition's set (memory_set calls are
// their tool call and result): the key and its new value's JSON text, as a string so the field
// has one type whatever the value ("null": removed), in the stage the transition left.
func (w *Writer) Memory(tick uint64, a AgentRef, stage, key, value string) {
	e := w.begin(tick, a, KindMemory)
	if e == nil {
		return
	}
	if value == "" {
		value = "null"
	}
	e.Str("stage", stage).Str("key", key).Str("value", value).Msg("")
}

// Terminal records an agent reaching a final status, why, and in which stage.
func (w *Writer) Terminal(tick uint64, a AgentRef, status, reason, stage string) {
	e := w.begin(tick, a, KindTerminal)
	if e == nil {
		return
	}
	e.Str("status", status).Str("reason", reason).Str("stage", stage).Msg("")
}

// Reap records an agent's removal with its lifetime counters.
func (w *Writer) Reap(tick uint64, a AgentRef, status string, modelTurns, toolCalls, toolErrors int, spent *Spent) {
	e := w.begin(tick, a, KindReap)
	if e == nil {
		return
	}
	e.Str("status", status).Int("model_turns", modelTurns).Int("tool_calls", toolCalls).Int("tool_errors", toolErrors)
	spent.append(e)
	e.Msg("")
}

// Flush writes buffered events to the underlying writer and returns the first error
// met so far (a write error, or ErrSuppressed).
func (w *Writer) Flush() error {
	if w == nil {
		return nil
	}
	if w.closed {
		return ErrClosed
	}
	if w.sink.err != nil {
		return w.sink.err
	}
	if err := w.out.Flush(); err != nil {
		w.sink.err = err
		return err
	}
	return nil
}

// Close flushes and stops the Writer; later events are dropped and a second Close
// returns ErrClosed. It does not close the io.Writer given to NewWriter: the caller
// opened it and closes it.
func (w *Writer) Close() error {
	if w == nil {
		return nil
	}
	err := w.Flush()
	w.closed = true
	return err
}
