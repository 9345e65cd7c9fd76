package recording

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Tape is a recording read back, for a replay to answer outside inputs from. It belongs to the
// world's goroutine.
type Tape struct {
	// Header is the recording's header.
	Header Header
	// End is its end line.
	End End

	tools      map[callKey]*ToolEntry
	background map[callKey]string
	mcp        map[mcpBatch][]MCPEvent
	items      map[callKey]Items
	dynamic    map[modelTurn]Dynamic
	limits     map[modelTurn]string
	live       map[liveKey]ModelTurn
	// Passes and Handovers are a wall-clock run's passes and lane hand-overs, in order.
	Passes    []Pass
	Handovers []Handed
	answers   []Answer
	// Operators is what people did, in the order the world applied it.
	Operators []Operator
	used      int
	// ticks, in a resumed run's tape (ReadCommitted), counts the ticks the tape covers (0, 1, …,
	// ticks-1): past them the run is live again.
	ticks    uint64
	resuming bool
}

// callKey is one call of one agent: call ids are unique per agent, not across agents (a model
// may number its calls call_0, call_1, … for every agent alike).
type callKey struct {
	agent, id string
}

// modelTurn is one model turn of one agent.
type modelTurn struct {
	agent string
	turn  uint64
}

// liveKey is one attempt at a live model's turn.
type liveKey struct {
	agent   string
	turn    uint64
	attempt uint32
}

// attemptOf is an entry's attempt, 1 when it says none.
func attemptOf(a uint32) uint32 { return max(a, 1) }

// mcpBatch is where a tick's MCP events were written: at the tick's start, or when the run ended
// (closing).
type mcpBatch struct {
	tick    uint64
	pass    int
	closing bool
}

// ReadFile reads the recording at path.
func ReadFile(path string) (*Tape, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	t, err := Read(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	// The header's files are relative to the recording's folder (absolute in recordings written
	// before that rule): resolved here, a reader sees paths it can open.
	dir := filepath.Dir(path)
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	for _, p := range []*string{&t.Header.ScenarioFile, &t.Header.ConfigFile, &t.Header.TraceFile} {
		if *p != "" && !filepath.IsAbs(*p) {
			*p = filepath.Join(dir, filepath.FromSlash(*p))
		}
	}
	return t, nil
}

// entryLine is what every entry line has in common, read first to pick its type.
type entryLine struct {
	Kind string `json:"kind"`
}

// Read reads a whole recording. One of another format or version, a malformed line, or a
// recording without its end line (the run that wrote it was cut off) is an error wrapping
// ErrBadRecording that names the line.
func Read(r io.Reader) (*Tape, error) { return read(r, false) }

// ReadCommitted reads the committed part of a recording that a run with a state directory was
// writing when it stopped: whole lines, no end line, every entry filed in the first ticks ticks
// (the ticks committed). A resumed run replays from it through those ticks and is live past them
// (Covers); a call it does not have is not a divergence but the resume's to decide (Resuming).
func ReadCommitted(r io.Reader, ticks uint64) (*Tape, error) {
	t, err := read(r, true)
	if err != nil {
		return nil, err
	}
	t.ticks, t.resuming = ticks, true
	return t, nil
}

// Resuming reports whether the tape is a resumed run's committed part (ReadCommitted).
func (t *Tape) Resuming() bool { return t != nil && t.resuming }

// Covers reports whether the tape answers the inputs of tick: every tick of a whole recording,
// the committed ticks of a resumed run's.
func (t *Tape) Covers(tick uint64) bool { return t != nil && (!t.resuming || tick < t.ticks) }

// Has reports whether the tape holds agent's call id.
func (t *Tape) Has(agent, id string) bool {
	_, ok := t.tools[callKey{agent, id}]
	return ok
}

func read(r io.Reader, committed bool) (*Tape, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	t := &Tape{tools: map[callKey]*ToolEntry{}, background: map[callKey]string{}, mcp: map[mcpBatch][]MCPEvent{}, items: map[callKey]Items{}, dynamic: map[modelTurn]Dynamic{}, limits: map[modelTurn]string{}, live: map[liveKey]ModelTurn{}}
	line := 0
	ended := false
	for {
		raw, err := br.ReadBytes('\n')
		if err == io.EOF && len(raw) == 0 {
			break
		}
		if err != nil && err != io.EOF {
			return nil, err
		}
		line++
		if !bytes.HasSuffix(raw, []byte("\n")) && !json.Valid(raw) {
			return nil, fmt.Errorf("%w: line %d is cut in the middle: the run that wrote it was cut off, so it cannot be replayed whole", ErrBadRecording, line)
		}
		raw = bytes.TrimSuffix(raw, []byte("\n"))
		if ended {
			return nil, fmt.Errorf("%w: line %d follows the end line", ErrBadRecording, line)
		}
		if line == 1 {
			if err := t.readHeader(raw); err != nil {
				return nil, fmt.Errorf("%w: line 1%v", ErrBadRecording, err)
			}
			continue
		}
		if err := t.add(raw, &ended); err != nil {
			return nil, fmt.Errorf("%w: line %d: %v", ErrBadRecording, line, err)
		}
	}
	switch {
	case line == 0:
		return nil, fmt.Errorf("%w: empty input, want a header line", ErrBadRecording)
	case committed && ended:
		return nil, fmt.Errorf("%w: line %d is an end line, which the committed part of a run still going does not have", ErrBadRecording, line)
	case committed:
		return t, nil
	case !ended:
		return nil, fmt.Errorf("%w: no end line after line %d: the run that wrote it was cut off, so it cannot be replayed whole", ErrBadRecording, line)
	case !slices.Contains([]string{"", "fixed_point", "max_ticks", "cancelled", "unknown"}, t.End.Stop),
		t.Header.Clock == "wall" && !slices.Contains([]string{"fixed_point", "max_ticks", "cancelled"}, t.End.Stop):
		return nil, fmt.Errorf("%w: line %d: stop: %q; valid: fixed_point, max_ticks, cancelled (which a wall-clock run's replay ends with), or unknown (a run that failed)", ErrBadRecording, line, t.End.Stop)
	case t.End.Entries != uint64(line-2):
		return nil, fmt.Errorf("%w: the end line counts %d entries, the file has %d", ErrBadRecording, t.End.Entries, line-2)
	}
	return t, nil
}

// MaxAgents is the most agents a recording's header may rescale a run to (agents): more than any
// host holds, and few enough that a tampered header cannot make a replay allocate without end.
const MaxAgents = 10_000_000

// readHeader reads line 1: a header of this format and a version this host reads, strictly.
func (t *Tape) readHeader(raw []byte) error {
	var id struct {
		Format  string `json:"format"`
		Version int    `json:"version"`
	}
	if err := json.Unmarshal(raw, &id); err != nil {
		return fmt.Errorf(" is not a recording header: %v", explain(err, &id))
	}
	if id.Format != Format || id.Version < MinVersion || id.Version > Version {
		return fmt.Errorf(" is format %q version %d; this host reads %q versions %d to %d", id.Format, id.Version, Format, MinVersion, Version)
	}
	if err := decodeLine(raw, &t.Header); err != nil {
		return fmt.Errorf(": %w", err)
	}
	h := &t.Header
	switch {
	case h.Agents < 0 || h.Agents > MaxAgents:
		return fmt.Errorf(": agents: %d; valid: 0 (the scenario's own counts) to %d", h.Agents, MaxAgents)
	case h.Clock != "" && h.Clock != "virtual" && h.Clock != "wall":
		return fmt.Errorf(": clock: %q; valid: virtual, wall", h.Clock)
	}
	for i, m := range h.MCPTools {
		if len(m.Parameters) > 0 && !bytes.Equal(m.Parameters, []byte("null")) && m.Parameters[0] != '{' {
			return fmt.Errorf(": mcp_tools[%d].parameters: %.40s; want a JSON schema object", i, m.Parameters)
		}
	}
	return nil
}

// add files one entry line.
func (t *Tape) add(raw []byte, ended *bool) error {
	var head entryLine
	if err := json.Unmarshal(raw, &head); err != nil {
		return explain(err, &head)
	}
	strict := func(v any) error { return decodeLine(raw, v) }
	switch head.Kind {
	case KindTool:
		e := &ToolEntry{}
		if err := strict(e); err != nil {
			return err
		}
		switch {
		case e.Index < 0:
			return fmt.Errorf("call: %d; valid: the call's place in its turn, from 0", e.Index)
		case e.Status != StatusDone && e.Status != StatusUnfinished:
			return fmt.Errorf("status: %q; valid: %s, %s", e.Status, StatusDone, StatusUnfinished)
		}
		k := callKey{e.Agent, e.ID}
		if _, dup := t.tools[k]; dup {
			return fmt.Errorf("call %s of agent %s is recorded twice", e.ID, e.Agent)
		}
		t.tools[k] = e
	case KindBackground:
		var e struct {
			Kind, Agent, Report string
			Tick                uint64
			CallID              string `json:"call_id"`
		}
		if err := strict(&e); err != nil {
			return err
		}
		t.background[callKey{e.Agent, e.CallID}] = e.Report
	case KindMCP:
		var e struct {
			Kind    string
			Tick    uint64
			Pass    int
			Closing bool
			Events  []MCPEvent
		}
		if err := strict(&e); err != nil {
			return err
		}
		if e.Pass < 0 {
			return fmt.Errorf("pass: %d; valid: the tick's earlier passes, from 0", e.Pass)
		}
		b := mcpBatch{e.Tick, e.Pass, e.Closing}
		t.mcp[b] = append(t.mcp[b], e.Events...)
	case KindItems:
		var e struct {
			Kind string
			Tick uint64
			Items
		}
		if err := strict(&e); err != nil {
			return err
		}
		t.items[callKey{e.Agent, e.CallID}] = e.Items
	case KindDynamic:
		var e struct {
			Kind string
			Tick uint64
			Dynamic
		}
		if err := strict(&e); err != nil {
			return err
		}
		t.dynamic[modelTurn{e.Agent, e.Turn}] = e.Dynamic
	case KindModelLimit:
		var e struct {
			Kind, Agent, Err string
			Tick, Turn       uint64
		}
		if err := strict(&e); err != nil {
			return err
		}
		t.limits[modelTurn{e.Agent, e.Turn}] = e.Err
	case KindModel:
		var e struct {
			Kind string
			Tick uint64
			ModelTurn
		}
		if err := strict(&e); err != nil {
			return err
		}
		t.live[liveKey{e.Agent, e.Turn, attemptOf(e.Attempt)}] = e.ModelTurn
	case KindPass:
		var e struct {
			Kind string
			Pass
		}
		if err := strict(&e); err != nil {
			return err
		}
		t.Passes = append(t.Passes, e.Pass)
	case KindHanded:
		var e struct {
			Kind string
			Handed
		}
		if err := strict(&e); err != nil {
			return err
		}
		switch {
		case e.Lane != "model" && e.Lane != "tool":
			return fmt.Errorf("lane: %q; valid: model, tool", e.Lane)
		case e.Index < 0:
			return fmt.Errorf("index: %d; valid: the call's place in its turn, from 0", e.Index)
		case e.Rank < 0:
			return fmt.Errorf("rank: %d; valid: the result's place among its pass's hand-overs, from 0", e.Rank)
		}
		t.Handovers = append(t.Handovers, e.Handed)
	case KindAnswer:
		var e struct {
			Kind string
			Answer
		}
		if err := strict(&e); err != nil {
			return err
		}
		if e.N != uint64(len(t.answers)+1) {
			return fmt.Errorf("answer %d out of order (want %d)", e.N, len(t.answers)+1)
		}
		t.answers = append(t.answers, e.Answer)
	case KindOperator:
		var e struct {
			Kind string
			Operator
		}
		if err := strict(&e); err != nil {
			return err
		}
		if n := len(t.Operators); n > 0 && e.Tick < t.Operators[n-1].Tick {
			return fmt.Errorf("operator entry at tick %d after one at tick %d", e.Tick, t.Operators[n-1].Tick)
		}
		t.Operators = append(t.Operators, e.Operator)
	case KindEnd:
		var e struct {
			Kind string
			End
		}
		if err := strict(&e); err != nil {
			return err
		}
		t.End, *ended = e.End, true
	default:
		return fmt.Errorf("kind %q (valid: %s)", head.Kind, strings.Join([]string{KindTool, KindBackground, KindMCP, KindItems, KindDynamic, KindModelLimit, KindModel, KindPass, KindHanded, KindAnswer, KindOperator, KindEnd}, ", "))
	}
	return nil
}

// Calls counts the tool calls recorded.
func (t *Tape) Calls() int { return len(t.tools) }

// Unused counts the recorded tool calls the replay has not asked for (yet).
func (t *Tape) Unused() int { return len(t.tools) - t.used }

// Tool returns the recorded outcome of call c, made at tick. A call the recording does not have,
// or has with another request, is a *DivergenceError.
func (t *Tape) Tool(tick uint64, c Call) (*ToolEntry, error) {
	e, ok := t.tools[callKey{c.Agent, c.ID}]
	if !ok {
		return nil, &DivergenceError{Tick: tick, Call: c}
	}
	if e.Tool != c.Tool || e.Request != RequestHash(c.Tool, c.Args) {
		return nil, &DivergenceError{Tick: tick, Call: c, Recorded: e}
	}
	t.used++
	return e, nil
}

// Background returns the recorded report of the background command of agent's call id.
func (t *Tape) Background(agent, id string) (string, bool) {
	r, ok := t.background[callKey{agent, id}]
	return r, ok
}

// MCP returns the MCP session events recorded at tick, at the start of its pass-th pass or
// (closing) at the run's end.
func (t *Tape) MCP(tick uint64, pass int, closing bool) []MCPEvent {
	return t.mcp[mcpBatch{tick, pass, closing}]
}

// Items returns what the fan-out of call id (of agent, at tick) read from file in the recorded
// run: a divergence when the recording has no such read.
func (t *Tape) Items(tick uint64, agent, id, file string) (Items, error) {
	it, ok := t.items[callKey{agent, id}]
	if !ok || it.File != file {
		return Items{}, fmt.Errorf("%w at tick %d: agent %s, call %s reads the fan-out items file %s, which the recording has not read there",
			ErrDivergence, tick, agent, id, file)
	}
	return it, nil
}

// Dynamic returns what agent's dynamic-tools scan before its model turn turn read in the recorded
// run; false when that scan found no change (or there was none).
func (t *Tape) Dynamic(agent string, turn uint64) (Dynamic, bool) {
	d, ok := t.dynamic[modelTurn{agent, turn}]
	return d, ok
}

// ModelLimit returns the error of agent's model turn turn when a real-time limit ended it in the
// recorded run. A nil Tape has none.
func (t *Tape) ModelLimit(agent string, turn uint64) (string, bool) {
	if t == nil {
		return "", false
	}
	err, ok := t.limits[modelTurn{agent, turn}]
	return err, ok
}

// Model returns the recorded answer to an attempt (from 1) at agent's live model turn turn,
// checking its request's hash: an attempt the recording does not have, or asked differently, is
// an error wrapping ErrDivergence.
func (t *Tape) Model(tick uint64, agent string, turn uint64, attempt uint32, request string) (ModelTurn, error) {
	m, ok := t.live[liveKey{agent, turn, attemptOf(attempt)}]
	at := ""
	if attempt > 1 {
		at = fmt.Sprintf(", attempt %d", attempt)
	}
	switch {
	case !ok:
		return ModelTurn{}, fmt.Errorf("%w at tick %d: agent %s, model turn %d%s: the recording has no such turn", ErrDivergence, tick, agent, turn, at)
	case m.Request != request:
		return ModelTurn{}, fmt.Errorf("%w at tick %d: agent %s, model turn %d%s: the model is asked something else than in the recording (its prompt, conversation or tools changed)", ErrDivergence, tick, agent, turn, at)
	}
	return m, nil
}

// Models returns every recorded live model attempt, in agent, turn and attempt order: what host
// record to-scripted turns into scripted models.
func (t *Tape) Models() []ModelTurn {
	out := make([]ModelTurn, 0, len(t.live))
	for _, m := range t.live {
		out = append(out, m)
	}
	slices.SortFunc(out, func(a, b ModelTurn) int {
		return cmp.Or(cmp.Compare(a.Agent, b.Agent), cmp.Compare(a.Turn, b.Turn), cmp.Compare(attemptOf(a.Attempt), attemptOf(b.Attempt)))
	})
	return out
}

// Answer returns the answerer's n-th answer (from 1), checking that it went to the same agent and
// tool.
func (t *Tape) Answer(n uint64, agent, tool string) (Answer, error) {
	if n == 0 || n > uint64(len(t.answers)) {
		return Answer{}, fmt.Errorf("%w: prompt %d of the answerer (agent %s, tool %s): the recording has %d answers",
			ErrDivergence, n, agent, tool, len(t.answers))
	}
	a := t.answers[n-1]
	if a.Agent != agent || a.Tool != tool {
		return Answer{}, fmt.Errorf("%w: prompt %d of the answerer went to agent %s, tool %s; the recording has agent %s, tool %s",
			ErrDivergence, n, agent, tool, a.Agent, a.Tool)
	}
	return a, nil
}

// DivergenceError is a call a replay made that the recording cannot answer: not recorded at
// all, or recorded with another request.
type DivergenceError struct {
	// Tick is when the replay made the call; Call is the call.
	Tick uint64
	Call Call
	// Recorded is the entry under the same call id, nil when there is none.
	Recorded *ToolEntry
	// Detail, when set, is how a script tool's requests left the recorded ones.
	Detail string
}

// Error names the agent, turn and call, and shows the first difference.
func (e *DivergenceError) Error() string {
	c := &e.Call
	where := fmt.Sprintf("%v at tick %d: agent %s, turn %d, call %d (%s), tool %s", ErrDivergence, e.Tick, c.Agent, c.Turn, c.Index, c.ID, c.Tool)
	if e.Detail != "" {
		return where + ": " + e.Detail
	}
	if e.Recorded == nil {
		return where + ": the recording has no such call"
	}
	r := e.Recorded
	if r.Tool != c.Tool {
		return fmt.Sprintf("%s: the recording's call %s is to tool %s", where, c.ID, r.Tool)
	}
	return where + ": the arguments differ from the recording's\n" + FirstDifference(string(compactArgs(r.Args)), string(compactArgs(c.Args)))
}

// Unwrap makes errors.Is(err, ErrDivergence) hold.
func (e *DivergenceError) Unwrap() error { return ErrDivergence }

// FirstDifference shows where two texts first differ: a few characters of context around the
// first differing byte of each, marked with the byte offset.
func FirstDifference(recorded, got string) string {
	i := 0
	for i < len(recorded) && i < len(got) && recorded[i] == got[i] {
		i++
	}
	const context = 40
	from := max(i-context, 0)
	clip := func(s string) string {
		to := min(i+context, len(s))
		out := s[min(from, len(s)):to]
		if from > 0 {
			out = "…" + out
		}
		if to < len(s) {
			out += "…"
		}
		return out
	}
	var b strings.Builder
	fmt.Fprintf(&b, "  first difference at byte %d\n", i)
	fmt.Fprintf(&b, "  recorded: %s\n", clip(recorded))
	fmt.Fprintf(&b, "  replay:   %s", clip(got))
	return b.String()
}
