// Package faults injects failures into a run from a seed, so a pipeline can be tested under
// model failures, tool errors, timeouts and slow work, and a failing pattern rerun exactly
// (host run --faults-seed N).
//
// Every decision is a pure function of the faults seed and where it is taken (the kind of fault,
// the agent's id, its model turn and the call's index): no random stream is consumed, so a fault
// drawn for one call never moves the faults of another, whatever order the world reaches them in,
// and the same seed gives the same faults at every scale of parallelism.
package faults

import (
	"encoding/binary"
	"errors"
	"hash/fnv"
	"math"
)

// Kind is a kind of fault.
type Kind uint8

// The kinds of fault, in the order Tool draws them.
const (
	// None: no fault.
	None Kind = iota
	// ModelError: the model turn fails instead of being asked.
	ModelError
	// ToolError: a call that leaves the world fails instead of running.
	ToolError
	// Timeout: a call that leaves the world waits TimeoutTicks, then fails as timed out.
	Timeout
	// Slow: a model turn or a call takes SlowTicks more ticks.
	Slow
	// MCPCrash: the MCP server a call goes to crashes during it: the call fails as a call in
	// flight at a crash does, and the server's live session is killed at the start of the next
	// tick (when no call is on it), so the next call restarts it.
	MCPCrash
)

var kindNames = [...]string{"none", "model_error", "tool_error", "timeout", "slow", "mcp_crash"}

// String is the kind's key in a scenario's [faults] table.
func (k Kind) String() string { return kindNames[k] }

// NoteFn is the Fn of the tool_note an injected fault leaves on its call: its text is the kind.
const NoteFn = "fault"

// Errors of injected faults: the text the agent and the trace read.
var (
	ErrModel   = errors.New("injected fault: the model failed (faults.model_error)")
	ErrTool    = errors.New("injected fault: the tool failed (faults.tool_error)")
	ErrTimeout = errors.New("injected fault: the call timed out (faults.timeout)")
	ErrCrash   = errors.New("injected fault: the MCP server crashed during the call; it is restarted on the next call (faults.mcp_crash)")
)

// Rates are the probabilities (0 to 1) of each kind of fault; nil leaves a rate to the table
// above (a group's to the run's, a tool's to its group's).
type Rates struct {
	ModelError, ToolError, Timeout, Slow, MCPCrash *float64
}

// over returns r with o's set rates replacing r's.
func (r Rates) over(o Rates) Rates {
	pick := func(a, b *float64) *float64 {
		if b != nil {
			return b
		}
		return a
	}
	return Rates{pick(r.ModelError, o.ModelError), pick(r.ToolError, o.ToolError), pick(r.Timeout, o.Timeout), pick(r.Slow, o.Slow),
		pick(r.MCPCrash, o.MCPCrash)}
}

// Spec is a scenario's [faults] table.
type Spec struct {
	// Seed is what faults are drawn from (nil: the run's seed; host run --faults-seed replaces it).
	Seed *uint64
	// Rates apply to every agent; Groups override them for one group's agents, Tools for the calls
	// of one tool.
	Rates  Rates
	Groups map[string]Rates
	Tools  map[string]Rates
	// SlowTicks is what a slow fault adds; TimeoutTicks how long a timed-out call waits.
	SlowTicks, TimeoutTicks uint64
}

// Defaults of a Spec's tick counts.
const (
	DefaultSlowTicks    = 5
	DefaultTimeoutTicks = 10
)

// Injector decides the faults of one run. A nil *Injector injects nothing.
type Injector struct {
	seed  uint64
	spec  Spec
	cache map[[2]string]thresholds // (group, tool) -> thresholds; world goroutine only
}

// thresholds are rates as fractions of 2^64, compared with a draw.
type thresholds [6]uint64

// New returns the injector of spec drawing from seed, or nil when spec is nil.
func New(spec *Spec, seed uint64) *Injector {
	if spec == nil {
		return nil
	}
	s := *spec
	if s.SlowTicks == 0 {
		s.SlowTicks = DefaultSlowTicks
	}
	if s.TimeoutTicks == 0 {
		s.TimeoutTicks = DefaultTimeoutTicks
	}
	return &Injector{seed: seed, spec: s, cache: map[[2]string]thresholds{}}
}

// Seed is the seed faults are drawn from.
func (in *Injector) Seed() uint64 { return in.seed }

// SlowTicks and TimeoutTicks are the spec's tick counts.
func (in *Injector) SlowTicks() uint64    { return in.spec.SlowTicks }
func (in *Injector) TimeoutTicks() uint64 { return in.spec.TimeoutTicks }

// thresholdsFor resolves the rates of group's calls of tool ("" for a model turn).
func (in *Injector) thresholdsFor(group, tool string) thresholds {
	key := [2]string{group, tool}
	if t, ok := in.cache[key]; ok {
		return t
	}
	r := in.spec.Rates.over(in.spec.Groups[group])
	if tool != "" {
		r = r.over(in.spec.Tools[tool])
	}
	var t thresholds
	t[ModelError], t[ToolError], t[Timeout], t[Slow] = threshold(r.ModelError), threshold(r.ToolError), threshold(r.Timeout), threshold(r.Slow)
	t[MCPCrash] = threshold(r.MCPCrash)
	in.cache[key] = t
	return t
}

// threshold is rate p as a fraction of 2^64 (0 for none, the maximum for 1).
func threshold(p *float64) uint64 {
	switch {
	case p == nil || *p <= 0:
		return 0
	case *p >= 1:
		return math.MaxUint64
	}
	return uint64(*p * (1 << 63) * 2)
}

// draws reports whether a fault of kind k falls on (agent, turn, index) under t.
func (in *Injector) draws(t thresholds, k Kind, agent, turn uint64, index int) bool {
	if t[k] == 0 {
		return false
	}
	h := fnv.New64a()
	var b [33]byte
	binary.LittleEndian.PutUint64(b[0:], in.seed)
	b[8] = byte(k)
	binary.LittleEndian.PutUint64(b[9:], agent)
	binary.LittleEndian.PutUint64(b[17:], turn)
	binary.LittleEndian.PutUint64(b[25:], uint64(index))
	h.Write(b[:])
	return mix(h.Sum64()) < t[k] || t[k] == math.MaxUint64
}

// mix spreads a hash's bits (splitmix64's finalizer), so nearby keys draw independently.
func mix(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// Model decides the faults of model turn turn of agent (of group): whether it fails, and whether
// it is slow.
func (in *Injector) Model(group string, agent, turn uint64) (fail, slow bool) {
	if in == nil {
		return false, false
	}
	t := in.thresholdsFor(group, "")
	return in.draws(t, ModelError, agent, turn, -1), in.draws(t, Slow, agent, turn, -1)
}

// Tool decides the fault of call index of model turn turn of agent (of group), a call of tool
// that leaves the world (mcp: a tool of an MCP server): ToolError, Timeout, MCPCrash (for an MCP
// tool only) or Slow, in that order of precedence, or None.
func (in *Injector) Tool(group, tool string, mcp bool, agent, turn uint64, index int) Kind {
	if in == nil {
		return None
	}
	t := in.thresholdsFor(group, tool)
	for _, k := range []Kind{ToolError, Timeout, MCPCrash, Slow} {
		if (k != MCPCrash || mcp) && in.draws(t, k, agent, turn, index) {
			return k
		}
	}
	return None
}
