package metrics

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/valyala/fastjson"

	"github.com/warrenhq/warren/table"
	"github.com/warrenhq/warren/trace"
)

// ErrMalformed means an event line is not what the trace format allows: not a JSON object,
// without its tick, agent or kind, an agent's event before its spawn, an agent spawned twice, or
// a cost that is not a decimal number of dollars. Observe and FromTrace wrap it, naming what was wrong (and
// FromTrace the line).
var ErrMalformed = errors.New("malformed trace event")

// Sample is the wall-clock time, in nanoseconds since the run started, at which tick Tick ended.
// A run records one per tick it ran, so that the tables can give wall time, which the trace
// never holds: a tick's end is the barrier at which everything the tick did is applied, so the
// time between two tick ends is the wall time of the ticks between them. Samples are optional;
// without them the wall columns are nil.
type Sample struct {
	Tick      uint64
	WallNanos int64
}

// Collector computes the metrics of one run from its trace events, streamed once in trace
// order: it keeps a record per agent (its memory's keys included) and per stage visit and
// counters per model and tool, never an event line, so it can run live beside the run (warren.Options.Events) and costs what
// parsing a line costs. A Collector is not safe for concurrent use; the run calls it from the
// goroutine that writes the trace.
type Collector struct {
	header trace.Header
	parser fastjson.Parser
	names  interner

	// memParser parses a memory event's value (JSON inside a string field) while parser still
	// holds the line; memStrings interns memory string values apart from names, since they may be
	// long and many, and names index per-name arrays (groupRows).
	memParser  fastjson.Parser
	memStrings interner

	agents []agent
	byID   map[uint64]int32
	visits []visit

	stages   []stageKey
	stageIdx map[stageKey]int32
	models   []modelAgg
	modelIdx map[uint32]int32
	tools    []toolAgg
	toolIdx  map[toolKey]int32

	events   int64  // events observed, the end event aside
	lastTick uint64 // the last tick an event had
	seen     bool   // some event was observed
	ended    bool   // the end event was observed, with the run's status and ticks:
	endState uint32
	endTicks uint64
}

// agent is what the Collector keeps of one agent: its identity, its counters, the visit it is
// in and the calls and prompts it has not had answered yet.
type agent struct {
	id, parent       uint64
	name, reason     string
	group, blueprint uint32
	self             int32 // its index in Collector.agents
	root             int32 // index of the top-level ancestor (itself when top level)
	depth            int64
	spawnTick        uint64
	endTick          uint64
	finished         bool
	status, final    uint32

	cur   int32  // the open visit, or -1
	ready uint64 // the tick the agent became ready for its next model turn

	stageVisits, modelTurns, toolCalls, toolErrors int64
	denied, asked, prompts, promptTicks            int64
	tokens, cost                                   int64
	retries, pendingRetries, messagesIn, children  int64

	calls    []pendingCall
	asks     []pendingPrompt
	memory   []memEntry // its memory as it stands (memory events and memory_set calls stored)
	models   []int32    // the models it used (indexes into Collector.models), to count agents per model
	toolRows []int32    // the tool rows it used, to count agents per row
}

// pendingCall is a tool call waiting for its result, with, for a memory_set call, the write
// it makes if its result is ok.
type pendingCall struct {
	id    string
	tick  uint64
	visit int32
	row   int32
	mem   memWrite
}

// pendingPrompt is a prompt waiting for its answer.
type pendingPrompt struct {
	id    string
	tick  uint64
	visit int32
}

// visit is one stage visit: a stage_enter and what happened until the agent left the stage.
type visit struct {
	agent, stage       int32 // stage indexes Collector.stages
	n                  int64
	enter, exit        uint64
	exited, ended      bool
	model, outcome, to uint32

	modelTurns, toolCalls, toolErrors, prompts int64
	waitTool, waitModel, waitPrompt            int64
	tokens, cost                               int64
}

// stageKey names a stage of a blueprint (interned names).
type stageKey struct{ blueprint, stage uint32 }

// toolKey names a row of the tools table (interned names).
type toolKey struct{ tool, verdict, layer uint32 }

// NewCollector returns a Collector for the run whose trace header is h (the run table names its
// scenario, seed and clock from it). Feed it every event of that trace with Observe.
func NewCollector(h trace.Header) *Collector {
	return &Collector{
		header:     h,
		names:      newInterner(),
		memStrings: newInterner(),
		byID:       map[uint64]int32{},
		stageIdx:   map[stageKey]int32{},
		modelIdx:   map[uint32]int32{},
		toolIdx:    map[toolKey]int32{},
	}
}

// FromTrace reads a trace (its header, then its events) and returns its metrics tables, with
// wall time from samples (nil for none). It reads the header as trace.Read does (an error wraps
// trace.ErrBadHeader) and streams the events, holding one line at a time. An incomplete trace is
// read as far as it goes: a last line cut mid-line is left out, and what was unfinished reads as
// nil. A bad event line is an error wrapping ErrMalformed that names the line.
func FromTrace(r io.Reader, samples []Sample) ([]table.Table, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var buf []byte
	first, _, err := readLine(br, &buf)
	if err != nil && err != io.EOF {
		return nil, err
	}
	t, err := trace.Read(bytes.NewReader(first))
	if err != nil {
		return nil, err
	}
	c := NewCollector(t.Header)
	for n := 2; ; n++ {
		line, whole, err := readLine(br, &buf)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if !whole && fastjson.ValidateBytes(line) != nil {
			break // cut mid-line by a killed run: read the whole lines before it
		}
		if err := c.Observe(line); err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
	}
	return c.Tables(samples), nil
}

// readLine returns the next line without its newline, in *buf's storage (valid until the next
// call), whether it had a newline, or io.EOF when nothing is left.
func readLine(br *bufio.Reader, buf *[]byte) ([]byte, bool, error) {
	*buf = (*buf)[:0]
	for {
		part, err := br.ReadSlice('\n')
		switch {
		case err == nil:
			if len(*buf) == 0 {
				return part[:len(part)-1], true, nil
			}
			*buf = append(*buf, part[:len(part)-1]...)
			return *buf, true, nil
		case errors.Is(err, bufio.ErrBufferFull):
			*buf = append(*buf, part...)
		case err == io.EOF:
			*buf = append(*buf, part...)
			if len(*buf) == 0 {
				return nil, false, io.EOF
			}
			return *buf, false, nil
		default:
			return nil, false, err
		}
	}
}

// interner gives each distinct name (stage, group, blueprint, model, tool, verdict, memory key,
// ...; and, in a second interner, memory string values) a small id, so that records hold ids
// instead of strings and a name read from a line is copied once per run, not once per event.
// Id 0 is "".
type interner struct {
	ids  map[string]uint32
	strs []string
}

func newInterner() interner {
	return interner{ids: map[string]uint32{"": 0}, strs: []string{""}}
}

// id returns b's id, giving it one when it is new; b is not kept.
func (in *interner) id(b []byte) uint32 {
	if id, ok := in.ids[string(b)]; ok {
		return id
	}
	s := string(b)
	id := uint32(len(in.strs))
	in.strs = append(in.strs, s)
	in.ids[s] = id
	return id
}

// idString is id for a string already copied out of its line (a stored memory_set value),
// which it keeps as it is instead of copying it again.
func (in *interner) idString(s string) uint32 {
	if id, ok := in.ids[s]; ok {
		return id
	}
	id := uint32(len(in.strs))
	in.strs = append(in.strs, s)
	in.ids[s] = id
	return id
}

// str returns the name of id.
func (in *interner) str(id uint32) string { return in.strs[id] }
