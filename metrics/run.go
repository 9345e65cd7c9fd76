package metrics

import (
	"math"

	"github.com/warrenhq/warren/table"
)

const runDoc = "One row: the whole run."

// runRow is the run: its header, its end, and its agents summed.
type runRow struct {
	c *Collector
	work
	ends
	denied, asked int64
	ticks         uint64
	wallS         float64
	wall          bool
}

var runColumns = []column[runRow]{
	{"scenario", table.String, "the scenario's name (the trace header's)", func(r runRow) any { return r.c.header.Scenario }},
	{"seed", table.Integer, "the run's seed; nil for a seed above 2⁶³−1, which an integer column cannot hold", func(r runRow) any { return optInteger(r.c.header.Seed, r.c.header.Seed <= math.MaxInt64) }},
	{"clock", table.String, "virtual or wall", func(r runRow) any { return r.c.header.Clock }},
	{"status", table.String, "how the run ended (the end event's status: finished, tick_limit, interrupted, failed); nil for a trace without its end event", func(r runRow) any { return optString(r.c.names.str(r.c.endState), r.c.ended) }},
	{"ticks", table.Integer, "the ticks that ran: the end event's, or for a trace without it the last event's tick + 1", func(r runRow) any { return integer(r.ticks) }},
	{"agents", table.Integer, "agents that took part (spawn events), sub-agents included", func(r runRow) any { return r.agents }},
	{"done", table.Integer, "of them, those that ended done", func(r runRow) any { return r.done }},
	{"failed", table.Integer, "those that ended failed", func(r runRow) any { return r.failed }},
	{"killed", table.Integer, "those that were killed", func(r runRow) any { return r.killed }},
	{"unfinished", table.Integer, "those not ended when the trace ended", func(r runRow) any { return r.unfinished }},
	{"model_turns", table.Integer, "model turns", func(r runRow) any { return r.modelTurns }},
	{"tool_calls", table.Integer, "tool calls, whatever their verdict", func(r runRow) any { return r.toolCalls }},
	{"tool_errors", table.Integer, "tool results that were not ok", func(r runRow) any { return r.toolErrors }},
	{"denied", table.Integer, "calls the gate denied", func(r runRow) any { return r.denied }},
	{"asked", table.Integer, "calls the gate asked about", func(r runRow) any { return r.asked }},
	{"prompts", table.Integer, "prompts put to the interaction hub", func(r runRow) any { return r.prompts }},
	{"tokens", table.Integer, "prompt and completion tokens of the live model turns", func(r runRow) any { return r.tokens }},
	{"cost_usd", table.Decimal, "their exact cost in dollars", func(r runRow) any { return dollars(r.cost) }},
	{"events", table.Integer, "the trace's events, the end event aside (the end event's events)", func(r runRow) any { return r.c.events }},
	{"wall_s", table.Float, "wall seconds from the run's start to the end of its last sampled tick; nil without samples", func(r runRow) any { return optFloat(r.wallS, r.wall) }},
	{"steps_per_s", table.Float, "model_turns / wall_s: agent-steps per wall second; nil without samples or wall time", func(r runRow) any { return optFloat(float64(r.modelTurns)/r.wallS, r.wall && r.wallS > 0) }},
	{"ticks_per_agent_mean", table.Float, "the mean lifetime in ticks of the agents that ended; nil for none", func(r runRow) any { return mean(r.ends.ticks, r.finished) }},
}

// runRow sums the agents (rows) into the run.
func (c *Collector) runRow(agents []agentRow, wall *wallClock) runRow {
	r := runRow{c: c}
	for _, ar := range agents {
		r.work.add(ar.a)
		r.ends.add(c, ar.a)
		r.denied += ar.a.denied
		r.asked += ar.a.asked
	}
	switch {
	case c.ended:
		r.ticks = c.endTicks
	case c.seen:
		r.ticks = c.lastTick + 1
	}
	r.wallS, r.wall = wall.total()
	return r
}
