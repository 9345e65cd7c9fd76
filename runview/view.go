package runview

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/warrenhq/warren/trace"
)

// ErrMalformed is what Apply's error wraps for a line the format does not allow (not JSON, an
// unknown kind or field, a field of the wrong type, an event of an agent never spawned, a seq
// that does not increase...). It is trace.ErrMalformed, so one errors.Is check covers this
// package and package trace. A bad header wraps trace.ErrBadHeader instead.
var ErrMalformed = trace.ErrMalformed

// Options bounds what a View keeps, so that its memory grows with the number of agents and
// not with the length of the run. Zero fields take the defaults.
type Options struct {
	// MaxEntries is how many of an agent's last events its log keeps (default 200).
	MaxEntries int
	// MaxContent is how many bytes of a string field (a model's text, a tool's content or
	// args, a task) an entry keeps (default 4096); the rest is cut with a marker.
	MaxContent int
	// MaxSeries is how many points Series keeps (default 2048, at least 2): past it, neighbours
	// merge and each point covers twice as many ticks.
	MaxSeries int
}

// The defaults of Options.
const (
	DefaultMaxEntries = 200
	DefaultMaxContent = 4096
	DefaultMaxSeries  = 2048
)

// StatusRunning is the status of an agent the trace has not ended yet. The trace never writes
// a status for a live agent; "running" is this view's word for it until the agent's terminal
// (or reap) event gives the final one (done, failed, killed).
const StatusRunning = "running"

// phase is an agent's phase as the trace shows it: an index into PhaseNames.
type phase uint8

const (
	phaseEntering phase = iota
	phaseReady
	phaseAwaitingTools
	phaseAwaitingPrompt
	phaseWaiting
	phaseResolve
	phaseTerminal
	numPhases
)

// PhaseNames names the phases the trace shows an agent in, in the order an agent usually
// passes them. They are derived from events, not read from the world: the names are those of
// systems.PhaseNames where the trace shows that phase, and two more the trace shows and the
// world's markers do not (an agent whose call waits for a person, or for another agent):
//
//   - entering: spawned, or moved by a transition, and not yet in its stage (spawn, transition);
//   - ready_to_infer: in its stage, ready for its next model turn (stage_enter, the last result
//     of a turn's calls, wait_end with nothing else outstanding);
//   - awaiting_tools: its turn asked for tool calls whose results have not all come (model_turn
//     with calls, tool_call, answer);
//   - awaiting_prompt: a call waits for a prompt's answer (prompt, until every prompt it has
//     open is answered);
//   - waiting: a call waits for another agent to end (wait_start, until wait_end);
//   - resolve_transition: its turn asked for no tool, so its stage is over (model_turn with
//     calls 0), until its transition;
//   - terminal: ended (terminal, kill's cascade, reap); an agent never leaves it.
//
// The world's awaiting_inference and ready_for_tools have no event of their own, so the trace
// shows them as ready_to_infer and awaiting_tools.
var PhaseNames = [numPhases]string{"entering", "ready_to_infer", "awaiting_tools", "awaiting_prompt", "waiting",
	"resolve_transition", "terminal"}

// View is the read model of one run, built incrementally from its trace lines: counts, agents,
// the sub-agent tree, open prompts, the stage graph and a bounded per-tick series. One
// goroutine feeds it (Apply) while any number read it; every reader returns copies, so what
// it returns stays valid and unchanging after the View moves on.
type View struct {
	opts Options

	// applyMu serializes Apply (one decoder, one line at a time); fields marked "writer" are
	// touched only under it, and the rest only under mu.
	applyMu sync.Mutex
	dec     *decoder // writer
	scratch []byte   // writer: the entry being encoded
	lines   int64    // writer: lines given to Apply, for error messages

	mu        sync.RWMutex
	header    Header
	hasHeader bool
	progress  Progress
	strs      interner
	running   uint32 // StatusRunning's id in strs

	agents []agent
	byID   map[int64]int32 // nil while ids are 1, 2, 3...: agents[id-1]
	byName map[string]int32
	roots  []int32

	phaseN   [numPhases]int
	statusN  map[uint32]int
	groups   []uint32 // group ids in the order first spawned
	groupN   []int
	groupAt  map[uint32]int
	verdictN map[uint32]int64

	turns, calls, toolErrors, tokens, cost int64
	// promptTokens is the prompt share of tokens (the rest is completion).
	promptTokens int64

	prompts promptSet
	graph   graph
	series  series
}

// Header is the trace's first line: what ran, so a page can say which scenario, seed and
// build it shows. Version is 0 until the header is applied.
type Header struct {
	Scenario     string `json:"scenario"`
	ScenarioHash string `json:"scenario_hash"`
	Seed         uint64 `json:"seed"`
	Clock        string `json:"clock"`
	Version      int    `json:"version"`
	HostVersion  string `json:"host_version"`
	Recording    string `json:"recording,omitempty"`
}

// Progress is how far the trace has come: its last seq and tick, how many events it has had
// (the end event included), and, once the end event came, the run's status and tick count.
// A live page polls it to know whether the run is over.
type Progress struct {
	LastSeq  int64  `json:"last_seq"`
	LastTick int64  `json:"last_tick"`
	Events   int64  `json:"events"`
	Ended    bool   `json:"ended"`
	Status   string `json:"status,omitempty"`
	Ticks    int64  `json:"ticks,omitempty"`
}

// Count is a number of things under a name (a status, a phase, a group, a verdict): a list of
// them keeps an order a map would not.
type Count struct {
	Name string `json:"name"`
	N    int64  `json:"n"`
}

// Counts aggregates the whole run, so a page shows 10^5 agents without listing them. ByStatus
// and ToolCallsByVerdict are sorted by name, ByPhase follows PhaseNames (every phase, zeros
// included) and ByGroup the order groups first spawned an agent (the scenario's order).
// Tokens are prompt plus completion tokens of model turns (PromptTokens the prompt share);
// CostUSD is the exact sum of their cost_usd, as the trace writes money.
type Counts struct {
	Agents             int     `json:"agents"`
	Live               int     `json:"live"`
	ByStatus           []Count `json:"by_status"`
	ByPhase            []Count `json:"by_phase"`
	ByGroup            []Count `json:"by_group"`
	ModelTurns         int64   `json:"model_turns"`
	ToolCalls          int64   `json:"tool_calls"`
	ToolCallsByVerdict []Count `json:"tool_calls_by_verdict"`
	ToolErrors         int64   `json:"tool_errors"`
	Tokens             int64   `json:"tokens"`
	PromptTokens       int64   `json:"prompt_tokens"`
	CostUSD            string  `json:"cost_usd"`
	PromptsOpen        int     `json:"prompts_open"`
}

// New returns an empty View bounded by opts; feed it the trace's lines with Apply, header first.
func New(opts Options) *View {
	if opts.MaxEntries <= 0 {
		opts.MaxEntries = DefaultMaxEntries
	}
	if opts.MaxContent <= 0 {
		opts.MaxContent = DefaultMaxContent
	}
	if opts.MaxSeries <= 0 {
		opts.MaxSeries = DefaultMaxSeries
	}
	opts.MaxSeries = max(opts.MaxSeries, 2)
	v := &View{opts: opts, dec: newDecoder(), strs: newInterner(), byName: map[string]int32{},
		statusN: map[uint32]int{}, groupAt: map[uint32]int{}, verdictN: map[uint32]int64{}}
	v.running = v.strs.internString(StatusRunning)
	v.prompts.init()
	v.graph.init()
	v.series.init()
	return v
}

// Apply applies one trace line: the header (the first line) or one event, with or without its
// newline. A line the format does not allow is an error naming its line number (and its seq
// and kind when it has them) and changes nothing, so the View stays what the lines before it
// made. Apply must see the lines in trace order; calls are serialized, and readers may run
// meanwhile. The View keeps nothing of line.
func (v *View) Apply(line []byte) error {
	v.applyMu.Lock()
	defer v.applyMu.Unlock()
	v.lines++
	line = bytes.TrimRight(line, "\r\n")
	if !v.hasHeader {
		h, err := parseHeader(line)
		if err != nil {
			return fmt.Errorf("runview: line %d: %w", v.lines, err)
		}
		v.mu.Lock()
		v.header, v.hasHeader = h, true
		v.mu.Unlock()
		return nil
	}
	if err := v.dec.decode(line); err != nil {
		return v.lineError(err)
	}
	ev := &v.dec.ev
	v.mu.Lock()
	defer v.mu.Unlock()
	cost, err := v.check(ev)
	if err != nil {
		return v.lineError(ev.bad("%v", err))
	}
	v.apply(ev, cost)
	return nil
}

// lineError names the line (and seq and kind, when known) of a bad line.
func (v *View) lineError(err error) error {
	var el *errLine
	if !errors.As(err, &el) {
		return fmt.Errorf("runview: line %d: %w: %w", v.lines, ErrMalformed, err)
	}
	where := fmt.Sprintf("line %d", v.lines)
	if el.seq > 0 {
		where += fmt.Sprintf(" (seq %d", el.seq)
		if el.kind != "" {
			where += ", " + el.kind
		}
		where += ")"
	}
	return fmt.Errorf("runview: %s: %w: %s", where, ErrMalformed, el.why)
}

// parseHeader reads the header with package trace's own rules (format, version, fields).
func parseHeader(line []byte) (Header, error) {
	if len(line) == 0 || !bytes.Contains(line, []byte(`"format"`)) {
		return Header{}, fmt.Errorf("%w: want the trace header first, got %s", trace.ErrBadHeader, clip(string(line), 60))
	}
	t, err := trace.Read(bytes.NewReader(line))
	if err != nil {
		return Header{}, err
	}
	h := t.Header
	return Header{Scenario: h.Scenario, ScenarioHash: h.ScenarioHash, Seed: h.Seed, Clock: h.Clock,
		Version: trace.Version, HostVersion: h.HostVersion, Recording: h.Recording}, nil
}

// Header returns the trace's header (zero until Apply has seen it), so a page names the run
// it shows: scenario, seed, clock and the build that wrote the trace.
func (v *View) Header() Header {
	v.mu.RLock()
	defer v.mu.RUnlock()
	return v.header
}

// Progress returns how far the trace has come: what a live page polls to follow the run and
// to learn that it is over.
func (v *View) Progress() Progress {
	v.mu.RLock()
	defer v.mu.RUnlock()
	return v.progress
}

// Counts returns the run's aggregates as the trace stands: the overview a page shows of a run
// of any size, computed as the lines come rather than from a walk over the agents.
func (v *View) Counts() Counts {
	v.mu.RLock()
	defer v.mu.RUnlock()
	c := Counts{Agents: len(v.agents), Live: len(v.agents) - v.phaseN[phaseTerminal], ModelTurns: v.turns,
		ToolCalls: v.calls, ToolErrors: v.toolErrors, Tokens: v.tokens, PromptTokens: v.promptTokens, CostUSD: trace.DollarsOf(v.cost),
		PromptsOpen: v.prompts.live}
	for p, n := range v.phaseN {
		c.ByPhase = append(c.ByPhase, Count{Name: PhaseNames[p], N: int64(n)})
	}
	for id, n := range v.statusN {
		if n > 0 {
			c.ByStatus = append(c.ByStatus, Count{Name: v.strs.str(id), N: int64(n)})
		}
	}
	for i, g := range v.groups {
		c.ByGroup = append(c.ByGroup, Count{Name: v.strs.str(g), N: int64(v.groupN[i])})
	}
	for id, n := range v.verdictN {
		c.ToolCallsByVerdict = append(c.ToolCallsByVerdict, Count{Name: v.strs.str(id), N: n})
	}
	byName := func(a, b Count) int { return strings.Compare(a.Name, b.Name) }
	slices.SortFunc(c.ByStatus, byName)
	slices.SortFunc(c.ToolCallsByVerdict, byName)
	return c
}
