package runview

import (
	"errors"
	"fmt"
	"math"

	"github.com/warrenhq/warren/trace"
)

// agent is what the View keeps of one agent: identity and counters in about 200 bytes, names
// as ids into the View's string table, and its log as one encoded buffer. 10^5 of them must fit
// comfortably (BenchmarkMemory measures the bytes an agent costs).
type agent struct {
	id     int64
	name   string
	task   string // the spawn's task, cut to MaxContent
	reason string // the terminal event's reason

	group, blueprint, model, stage, status uint32

	self        int32 // its index in View.agents
	parent      int32 // index in View.agents, -1 for a top-level agent
	depth       int32
	descendants int32
	children    []int32 // indexes, in spawn (so id) order

	phase  phase
	reaped bool
	// prompts and waits count the agent's open prompts and waits; expect, calls and results
	// count its current turn's tool calls (asked by model_turn, traced, answered), to tell the
	// last result of the turn.
	prompts, waits             int32
	expect, calls, results     int32
	turns, toolCalls, toolErrs int32
	tokens, cost               int64

	log agentLog
}

// The kinds apply handles, by pointer (a kindSpec is found once per line).
var (
	kSpawn, kStageEnter, kModelTurn = kindByName[trace.KindSpawn], kindByName[trace.KindStageEnter], kindByName[trace.KindModelTurn]
	kToolCall, kToolResult          = kindByName[trace.KindToolCall], kindByName[trace.KindToolResult]
	kPrompt, kAnswer                = kindByName[trace.KindPrompt], kindByName[trace.KindAnswer]
	kWaitStart, kWaitEnd            = kindByName[trace.KindWaitStart], kindByName[trace.KindWaitEnd]
	kTransition, kTerminal, kKill   = kindByName[trace.KindTransition], kindByName[trace.KindTerminal], kindByName[trace.KindKill]
	kReap, kEnd                     = kindByName[trace.KindReap], kindByName[trace.KindEnd]
)

// index returns the index in v.agents of the agent with id.
func (v *View) index(id int64) (int32, bool) {
	if v.byID == nil {
		if id >= 1 && id <= int64(len(v.agents)) {
			return int32(id - 1), true
		}
		return 0, false
	}
	i, ok := v.byID[id]
	return i, ok
}

// check finds what would make ev wrong before anything changes, so that a bad line leaves the
// View as it was; it returns the event's cost in picodollars, parsed once.
func (v *View) check(ev *event) (int64, error) {
	p := &v.progress
	if p.Ended {
		return 0, errors.New("an event after the end event")
	}
	if ev.seq <= p.LastSeq {
		return 0, fmt.Errorf("seq %d after seq %d: seq must increase", ev.seq, p.LastSeq)
	}
	k := ev.kind
	switch {
	case k.world && ev.agent != 0:
		return 0, fmt.Errorf("%s is a world event, of agent 0, not %d", k.name, ev.agent)
	case !k.world && ev.agent == 0:
		return 0, fmt.Errorf("%s of agent 0: the host has no events of this kind", k.name)
	case k == kSpawn:
		if n := len(v.agents); n > 0 && ev.agent <= v.agents[n-1].id {
			return 0, fmt.Errorf("agent %d spawned after agent %d: ids increase in spawn order", ev.agent, v.agents[n-1].id)
		}
		if len(ev.name) == 0 {
			return 0, errors.New("spawn of an agent without a name")
		}
		if _, dup := v.byName[string(ev.name)]; dup {
			return 0, fmt.Errorf("a second agent named %q", ev.name)
		}
		if parent := ev.num(cParent); parent != 0 {
			if _, ok := v.index(parent); !ok {
				return 0, fmt.Errorf("parent %d was never spawned", parent)
			}
		}
	case !k.world:
		if _, ok := v.index(ev.agent); !ok {
			return 0, fmt.Errorf("agent %d (%q) was never spawned", ev.agent, ev.name)
		}
	}
	if f := ev.field(cCost); f != nil {
		cost, err := parseDollars(f.str)
		if err != nil {
			return 0, fmt.Errorf("cost_usd %q: %v", f.str, err)
		}
		return cost, nil
	}
	return 0, nil
}

// apply changes the View by one checked event. Nothing here fails.
func (v *View) apply(ev *event, cost int64) {
	v.series.advance(v, ev.tick)
	p := &v.progress
	p.LastSeq, p.LastTick, p.Events = ev.seq, max(p.LastTick, ev.tick), p.Events+1

	var a *agent
	if ev.kind == kSpawn {
		a = v.spawn(ev)
	} else if !ev.kind.world {
		i, _ := v.index(ev.agent)
		a = &v.agents[i]
	}
	switch ev.kind {
	case kStageEnter:
		a.stage = v.strs.intern(ev.str(cStage))
		a.expect, a.calls, a.results = 0, 0, 0
		v.setPhase(a, phaseReady)
		v.graph.visit(a.blueprint, a.stage)
	case kModelTurn:
		a.turns++
		v.turns++
		prompt, completion := ev.num(cPromptTokens), ev.num(cCompletionTokens)
		a.tokens += prompt + completion
		v.tokens += prompt + completion
		v.promptTokens += prompt
		a.cost += cost
		v.cost += cost
		a.expect, a.calls, a.results = int32(ev.num(cCalls)), 0, 0
		if a.expect > 0 {
			v.setPhase(a, phaseAwaitingTools)
		} else {
			v.setPhase(a, phaseResolve)
		}
	case kToolCall:
		a.toolCalls++
		a.calls++
		v.calls++
		v.verdictN[v.strs.intern(ev.str(cVerdict))]++
		if a.phase != phaseAwaitingPrompt && a.phase != phaseWaiting {
			// A fan-out stage's call comes without a model turn: it is awaited all the same.
			v.setPhase(a, phaseAwaitingTools)
		}
	case kToolResult:
		a.results++
		if !ev.flag(cOK) {
			a.toolErrs++
			v.toolErrors++
		}
		if a.phase == phaseAwaitingTools && a.outstanding() == 0 {
			v.setPhase(a, phaseReady)
		}
	case kPrompt:
		v.prompts.open(v, a, ev)
		a.prompts++
		v.setPhase(a, phaseAwaitingPrompt)
	case kAnswer:
		if v.prompts.settle(a, ev.str(cCallID)) {
			a.prompts--
			if a.prompts == 0 && a.phase == phaseAwaitingPrompt {
				v.setPhase(a, a.afterWait())
			}
		}
	case kWaitStart:
		a.waits++
		if a.prompts == 0 {
			v.setPhase(a, phaseWaiting)
		}
	case kWaitEnd:
		if a.waits > 0 {
			a.waits--
		}
		if a.waits == 0 && a.phase == phaseWaiting {
			v.setPhase(a, a.afterWait())
		}
	case kTransition:
		v.graph.edge(v, a.blueprint, ev)
		if len(ev.str(cTo)) > 0 {
			v.setPhase(a, phaseEntering)
		}
	case kTerminal:
		v.setStatus(a, v.strs.intern(ev.str(cStatus)))
		a.reason, _ = truncated(ev.str(cReason), v.opts.MaxContent)
		a.stage = v.strs.intern(ev.str(cStage))
		v.end(a)
	case kKill:
		for _, name := range ev.list(cCascade) {
			if i, ok := v.byName[string(name)]; ok {
				v.prompts.closeAgent(v, &v.agents[i])
			}
		}
	case kReap:
		v.setStatus(a, v.strs.intern(ev.str(cStatus)))
		a.reaped = true
		v.end(a)
	case kEnd:
		p.Ended, p.Status, p.Ticks = true, string(ev.str(cStatus)), ev.num(cTicks)
		v.series.finish(v)
	}
	if a != nil {
		v.scratch = v.encodeEntry(v.scratch[:0], ev, a.name)
		a.log.push(v.scratch, v.opts.MaxEntries)
		if a.reaped {
			a.log.shrink()
		}
	}
}

// spawn adds the agent ev creates and returns it.
func (v *View) spawn(ev *event) *agent {
	idx := int32(len(v.agents))
	if v.byID == nil && ev.agent != int64(idx)+1 {
		v.byID = make(map[int64]int32, len(v.agents)+1)
		for i := range v.agents {
			v.byID[v.agents[i].id] = int32(i)
		}
	}
	if v.byID != nil {
		v.byID[ev.agent] = idx
	}
	task, _ := truncated(ev.str(cTask), v.opts.MaxContent)
	v.agents = append(v.agents, agent{id: ev.agent, name: string(ev.name), task: task, self: idx, parent: -1,
		group: v.strs.intern(ev.str(cGroup)), blueprint: v.strs.intern(ev.str(cBlueprint)),
		model: v.strs.intern(ev.str(cModel)), status: v.running, phase: phaseEntering})
	a := &v.agents[idx]
	v.byName[a.name] = idx
	if parent := ev.num(cParent); parent != 0 {
		pi, _ := v.index(parent)
		a.parent = pi
		a.depth = int32(ev.num(cDepth))
		v.agents[pi].children = append(v.agents[pi].children, idx)
		for at := pi; at >= 0; at = v.agents[at].parent {
			v.agents[at].descendants++
		}
	} else {
		v.roots = append(v.roots, idx)
	}
	v.phaseN[phaseEntering]++
	v.statusN[v.running]++
	g, ok := v.groupAt[a.group]
	if !ok {
		g = len(v.groups)
		v.groupAt[a.group] = g
		v.groups = append(v.groups, a.group)
		v.groupN = append(v.groupN, 0)
	}
	v.groupN[g]++
	return a
}

// outstanding is how many results the agent's turn still awaits: its calls are those the
// model asked for or, when more were traced (a fan-out stage's call has no model turn), those.
func (a *agent) outstanding() int32 {
	return max(a.expect, a.calls) - a.results
}

// afterWait is the phase of an agent whose last prompt or wait just ended: still awaiting
// results, or ready for its next turn.
func (a *agent) afterWait() phase {
	if a.waits > 0 {
		return phaseWaiting
	}
	if a.outstanding() > 0 {
		return phaseAwaitingTools
	}
	return phaseReady
}

// setPhase moves a to phase p, keeping the counts by phase; terminal is final.
func (v *View) setPhase(a *agent, p phase) {
	if a.phase == phaseTerminal || a.phase == p {
		return
	}
	v.phaseN[a.phase]--
	v.phaseN[p]++
	a.phase = p
}

// setStatus sets a's status, keeping the counts by status.
func (v *View) setStatus(a *agent, status uint32) {
	if a.status == status {
		return
	}
	v.statusN[a.status]--
	v.statusN[status]++
	a.status = status
}

// end marks a ended: terminal, and its open prompts closed, since no one can answer them now.
func (v *View) end(a *agent) {
	v.setPhase(a, phaseTerminal)
	v.prompts.closeAgent(v, a)
}

// maxWholeDollars is the most whole dollars an int64 of picodollars holds with any fraction.
const maxWholeDollars = math.MaxInt64/1_000_000_000_000 - 1

// parseDollars reads a trace's exact decimal of dollars ("0.0000225", "-3", "12.5") into
// picodollars, the unit trace.DollarsOf writes back: at most 12 digits after the point.
func parseDollars(s []byte) (int64, error) {
	neg := len(s) > 0 && s[0] == '-'
	if neg {
		s = s[1:]
	}
	var whole, frac int64
	digits, fracDigits, point := 0, 0, false
	for _, ch := range s {
		switch {
		case ch == '.' && !point:
			point = true
		case ch >= '0' && ch <= '9' && !point:
			if whole = whole*10 + int64(ch-'0'); whole > maxWholeDollars {
				return 0, errors.New("more dollars than an int64 of picodollars holds")
			}
			digits++
		case ch >= '0' && ch <= '9':
			if fracDigits == 12 {
				return 0, errors.New("more than 12 digits after the point")
			}
			frac = frac*10 + int64(ch-'0')
			fracDigits++
		default:
			return 0, errors.New("not a decimal number")
		}
	}
	if digits == 0 || (point && fracDigits == 0) {
		return 0, errors.New("not a decimal number")
	}
	for ; fracDigits < 12; fracDigits++ {
		frac *= 10
	}
	pico := whole*1e12 + frac
	if neg {
		pico = -pico
	}
	return pico, nil
}
