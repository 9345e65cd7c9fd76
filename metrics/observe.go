package metrics

import (
	"fmt"
	"math"
	"slices"

	"github.com/valyala/fastjson"

	"github.com/warrenhq/warren/trace"
)

// Observe takes one event line of the trace (as warren.Options.Events gives them, newline or
// not), in trace order, from the first event on. It parses the line and keeps nothing of it but
// counters and names. A line that is not an event of the format is an error wrapping
// ErrMalformed, and changes nothing.
func (c *Collector) Observe(line []byte) error {
	v, err := c.parser.ParseBytes(line)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	if v.Type() != fastjson.TypeObject {
		return fmt.Errorf("%w: not a JSON object", ErrMalformed)
	}
	tv, av, kv := v.Get("tick"), v.Get("agent"), v.Get("kind")
	if tv == nil || av == nil || kv == nil {
		return fmt.Errorf("%w: the common fields tick, agent and kind must be present", ErrMalformed)
	}
	tick, err1 := tv.Uint64()
	id, err2 := av.Uint64()
	kind, err3 := kv.StringBytes()
	if err1 != nil || err2 != nil || err3 != nil {
		return fmt.Errorf("%w: the common fields tick, agent and kind must be of their types", ErrMalformed)
	}

	switch string(kind) {
	case trace.KindEnd:
		c.ended = true
		c.endState = c.names.id(v.GetStringBytes("status"))
		c.endTicks = v.GetUint64("ticks")
		c.saw(tick)
		return nil // the end event is not among the events it counts
	case trace.KindSpawn:
		err = c.spawn(v, tick, id)
	default:
		on, counted := handlers[string(kind)]
		if !counted {
			break // an event no table counts (tool_note, the tree's waits, world events, ...)
		}
		i, ok := c.byID[id]
		if !ok {
			return fmt.Errorf("%w: a %s event of agent %d, which no spawn event introduced", ErrMalformed, kind, id)
		}
		err = on(c, &c.agents[i], v, tick)
	}
	if err != nil {
		return err
	}
	c.events++
	c.saw(tick)
	return nil
}

// saw notes an event of tick: the last tick gives the run's ticks when the trace has no end.
func (c *Collector) saw(tick uint64) {
	if !c.seen || tick > c.lastTick {
		c.lastTick = tick
	}
	c.seen = true
}

// handlers are the Collector's methods for the kinds of an agent's events that the tables count.
// Each either fails before it changes anything or does not fail.
var handlers = map[string]func(*Collector, *agent, *fastjson.Value, uint64) error{
	trace.KindStageEnter: (*Collector).stageEnter,
	trace.KindModelTurn:  (*Collector).modelTurn,
	trace.KindToolCall:   (*Collector).toolCall,
	trace.KindToolResult: (*Collector).toolResult,
	trace.KindPrompt:     (*Collector).prompt,
	trace.KindAnswer:     (*Collector).answer,
	trace.KindTransition: (*Collector).transition,
	trace.KindTerminal:   (*Collector).terminal,
	trace.KindReap:       (*Collector).reap,
	trace.KindModelRetry: (*Collector).modelRetry,
	trace.KindMessage:    (*Collector).message,
	trace.KindMemory:     (*Collector).memory,
}

// spawn records a new agent, under its parent when it has one.
func (c *Collector) spawn(v *fastjson.Value, tick, id uint64) error {
	if _, dup := c.byID[id]; dup {
		return fmt.Errorf("%w: agent %d is spawned twice", ErrMalformed, id)
	}
	self := int32(len(c.agents))
	a := agent{
		self:      self,
		id:        id,
		name:      string(v.GetStringBytes("name")),
		group:     c.names.id(v.GetStringBytes("group")),
		blueprint: c.names.id(v.GetStringBytes("blueprint")),
		root:      self,
		spawnTick: tick,
		cur:       -1,
	}
	if p := v.Get("parent"); p != nil {
		a.parent = p.GetUint64()
		a.depth = v.GetInt64("depth")
		if pi, ok := c.byID[a.parent]; ok {
			a.root = c.agents[pi].root
			c.agents[pi].children++
		}
	}
	c.byID[id] = self
	c.agents = append(c.agents, a)
	return nil
}

// stageEnter opens a visit.
func (c *Collector) stageEnter(a *agent, v *fastjson.Value, tick uint64) error {
	key := stageKey{blueprint: a.blueprint, stage: c.names.id(v.GetStringBytes("stage"))}
	si, ok := c.stageIdx[key]
	if !ok {
		si = int32(len(c.stages))
		c.stages = append(c.stages, key)
		c.stageIdx[key] = si
	}
	a.cur = int32(len(c.visits))
	a.stageVisits++
	a.ready = tick
	c.visits = append(c.visits, visit{agent: a.self, stage: si, n: v.GetInt64("visit"), enter: tick})
	return nil
}

// modelTurn counts a turn, its wait since the agent was ready, and what a live turn spent.
func (c *Collector) modelTurn(a *agent, v *fastjson.Value, tick uint64) error {
	var cost int64
	if raw := v.Get("cost_usd"); raw != nil {
		s, err := raw.StringBytes()
		if err != nil {
			return fmt.Errorf("%w: model_turn cost_usd is not a string", ErrMalformed)
		}
		if cost, err = parseDollars(s); err != nil {
			return err
		}
	}
	model := c.names.id(v.GetStringBytes("model"))
	prompt, completion := v.GetInt64("prompt_tokens"), v.GetInt64("completion_tokens")
	failed := v.Exists("error")

	wait := since(tick, a.ready)
	a.ready = tick
	a.modelTurns++
	a.tokens += prompt + completion
	a.cost += cost
	if a.cur >= 0 {
		vis := &c.visits[a.cur]
		if vis.modelTurns == 0 {
			vis.model = model
		}
		vis.modelTurns++
		vis.waitModel += wait
		vis.tokens += prompt + completion
		vis.cost += cost
	}

	mi, ok := c.modelIdx[model]
	if !ok {
		mi = int32(len(c.models))
		c.models = append(c.models, modelAgg{name: model})
		c.modelIdx[model] = mi
	}
	m := &c.models[mi]
	if !slices.Contains(a.models, mi) {
		a.models = append(a.models, mi)
		m.agents++
	}
	m.turns++
	if failed {
		m.errors++
	}
	m.callsAsked += v.GetInt64("calls")
	m.prompt += prompt
	m.completion += completion
	m.cacheRead += v.GetInt64("cache_read_tokens")
	m.cacheWrite += v.GetInt64("cache_write_tokens")
	m.cost += cost
	m.attempts += v.GetInt64("attempts")
	m.retries += a.pendingRetries
	a.pendingRetries = 0
	return nil
}

// toolCall counts a call by its verdict and keeps it until its result, with the write of a
// memory_set call, which takes effect only if that result is ok.
func (c *Collector) toolCall(a *agent, v *fastjson.Value, tick uint64) error {
	verdict := v.GetStringBytes("verdict")
	switch string(verdict) {
	case "deny":
		a.denied++
	case "ask":
		a.asked++
	}
	tool := v.GetStringBytes("tool")
	key := toolKey{tool: c.names.id(tool), verdict: c.names.id(verdict), layer: c.names.id(v.GetStringBytes("layer"))}
	ri, ok := c.toolIdx[key]
	if !ok {
		ri = int32(len(c.tools))
		c.tools = append(c.tools, toolAgg{key: key})
		c.toolIdx[key] = ri
	}
	row := &c.tools[ri]
	row.calls++
	if !slices.Contains(a.toolRows, ri) {
		a.toolRows = append(a.toolRows, ri)
		row.agents++
	}
	a.toolCalls++
	if a.cur >= 0 {
		c.visits[a.cur].toolCalls++
	}
	a.calls = append(a.calls, pendingCall{id: string(v.GetStringBytes("call_id")), tick: tick, visit: a.cur, row: ri,
		mem: c.memorySetWrite(tool, v)})
	return nil
}

// toolResult ends a call: its wait, and an error when it failed; an ok memory_set stores its
// write. A result makes the agent ready for its next turn (the last result of a turn is when the
// turn's calls are all back).
func (c *Collector) toolResult(a *agent, v *fastjson.Value, tick uint64) error {
	failed := !v.GetBool("ok")
	callID := v.GetStringBytes("call_id")
	at, wait := a.cur, int64(0)
	if i := slices.IndexFunc(a.calls, func(p pendingCall) bool { return p.id == string(callID) }); i >= 0 {
		p := a.calls[i]
		a.calls = slices.Delete(a.calls, i, i+1)
		at, wait = p.visit, since(tick, p.tick)
		row := &c.tools[p.row]
		row.results++
		row.waitTicks += wait
		row.waitMax = max(row.waitMax, wait)
		if failed {
			row.errors++
		}
		if p.mem.set && !failed {
			c.store(a, p.mem)
		}
	}
	if failed {
		a.toolErrors++
	}
	if at >= 0 {
		vis := &c.visits[at]
		vis.waitTool += wait
		if failed {
			vis.toolErrors++
		}
	}
	a.ready = max(a.ready, tick)
	return nil
}

// prompt counts a prompt and keeps it until its answer.
func (c *Collector) prompt(a *agent, v *fastjson.Value, tick uint64) error {
	a.prompts++
	if a.cur >= 0 {
		c.visits[a.cur].prompts++
	}
	a.asks = append(a.asks, pendingPrompt{id: string(v.GetStringBytes("call_id")), tick: tick, visit: a.cur})
	return nil
}

// answer ends a prompt's wait.
func (c *Collector) answer(a *agent, v *fastjson.Value, tick uint64) error {
	callID := v.GetStringBytes("call_id")
	i := slices.IndexFunc(a.asks, func(p pendingPrompt) bool { return p.id == string(callID) })
	if i < 0 {
		return nil
	}
	p := a.asks[i]
	a.asks = slices.Delete(a.asks, i, i+1)
	wait := since(tick, p.tick)
	a.promptTicks += wait
	if p.visit >= 0 {
		c.visits[p.visit].waitPrompt += wait
	}
	return nil
}

// transition closes the open visit with the transition's outcome.
func (c *Collector) transition(a *agent, v *fastjson.Value, tick uint64) error {
	if a.cur < 0 || v.Get("end") != nil {
		// A way out of the graph: the terminal event that follows ends the visit, with the
		// agent's status as its outcome.
		return nil
	}
	vis := &c.visits[a.cur]
	vis.exited, vis.exit = true, tick
	vis.outcome = c.names.id(v.GetStringBytes("on"))
	vis.to = c.names.id(v.GetStringBytes("to"))
	a.cur = -1
	return nil
}

// terminal ends the agent, and the visit it was in with the agent's status as its outcome.
func (c *Collector) terminal(a *agent, v *fastjson.Value, tick uint64) error {
	if a.finished {
		return nil
	}
	status := c.names.id(v.GetStringBytes("status"))
	a.finished, a.status, a.endTick = true, status, tick
	a.reason = string(v.GetStringBytes("reason"))
	a.final = c.names.id(v.GetStringBytes("stage"))
	if a.cur >= 0 {
		vis := &c.visits[a.cur]
		vis.exited, vis.ended, vis.exit = true, true, tick
		vis.outcome, vis.to = status, 0
		a.cur = -1
	}
	return nil
}

// reap ends an agent no terminal event ended (none should be: reap follows terminal).
func (c *Collector) reap(a *agent, v *fastjson.Value, tick uint64) error {
	if !a.finished {
		a.finished, a.endTick = true, tick
		a.status = c.names.id(v.GetStringBytes("status"))
	}
	return nil
}

// modelRetry counts a failed attempt; the models table charges it to the model of the agent's
// next turn, the turn it was an attempt at.
func (c *Collector) modelRetry(a *agent, _ *fastjson.Value, _ uint64) error {
	a.retries++
	a.pendingRetries++
	return nil
}

// message counts a message put in the agent's inbox.
func (c *Collector) message(a *agent, _ *fastjson.Value, _ uint64) error {
	a.messagesIn++
	return nil
}

// since is the ticks from start to tick, 0 when tick is not after it.
func since(tick, start uint64) int64 {
	if tick <= start {
		return 0
	}
	return int64(tick - start)
}

// maxWholeDollars is the most whole dollars an int64 of picodollars holds with any fraction.
const maxWholeDollars = (math.MaxInt64 - 999_999_999_999) / 1_000_000_000_000

// parseDollars reads an exact decimal number of dollars ("0.0000225", "-3", "12.5") into
// picodollars, the unit trace.DollarsOf writes: at most 12 digits after the point, and no more
// than an int64 holds.
func parseDollars(s []byte) (int64, error) {
	bad := func(why string) (int64, error) {
		return 0, fmt.Errorf("%w: cost_usd %q %s", ErrMalformed, s, why)
	}
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
				return bad("is more than an int64 of picodollars holds")
			}
			digits++
		case ch >= '0' && ch <= '9':
			if fracDigits == 12 {
				return bad("has more than 12 digits after the point (picodollars)")
			}
			frac = frac*10 + int64(ch-'0')
			fracDigits++
		default:
			return bad("is not a decimal number")
		}
	}
	if digits == 0 || (point && fracDigits == 0) {
		return bad("is not a decimal number")
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
