package metrics

import (
	"cmp"
	"slices"

	"github.com/warrenhq/warren/table"
)

const visitsDoc = "One row per stage visit (a stage_enter), sorted by agent id, then in the order the agent entered them."

// visitRow is one visit with what its columns read: its agent and its wall time.
type visitRow struct {
	c      *Collector
	v      *visit
	a      *agent
	wallMS float64
	wall   bool
}

func (r visitRow) name(id uint32) string { return r.c.names.str(id) }

var visitColumns = []column[visitRow]{
	{"agent", table.Integer, "the agent's id", func(r visitRow) any { return integer(r.a.id) }},
	{"name", table.String, "the agent's name", func(r visitRow) any { return r.a.name }},
	{"group", table.String, "the agent's group (its spawn event's)", func(r visitRow) any { return r.name(r.a.group) }},
	{"blueprint", table.String, "the agent's blueprint", func(r visitRow) any { return r.name(r.a.blueprint) }},
	{"model", table.String, "the model of the visit's first model turn; \"\" when it made none", func(r visitRow) any { return r.name(r.v.model) }},
	{"stage", table.String, "the stage visited", func(r visitRow) any { return r.name(r.c.stages[r.v.stage].stage) }},
	{"visit", table.Integer, "the agent's visit count of this stage, from 1 (stage_enter's visit)", func(r visitRow) any { return r.v.n }},
	{"enter_tick", table.Integer, "the tick of its stage_enter", func(r visitRow) any { return integer(r.v.enter) }},
	{"exit_tick", table.Integer, "the tick of the transition or terminal event that ended it; nil while unfinished", func(r visitRow) any { return optInteger(r.v.exit, r.v.exited) }},
	{"ticks", table.Integer, "exit_tick − enter_tick; nil while unfinished", func(r visitRow) any { return optInteger(r.v.exit-r.v.enter, r.v.exited) }},
	{"model_turns", table.Integer, "model turns in the visit", func(r visitRow) any { return r.v.modelTurns }},
	{"tool_calls", table.Integer, "tool calls made in the visit, whatever their verdict", func(r visitRow) any { return r.v.toolCalls }},
	{"tool_errors", table.Integer, "its calls whose tool_result was not ok (denied calls included)", func(r visitRow) any { return r.v.toolErrors }},
	{"prompts", table.Integer, "prompts (approvals and questions) put to the interaction hub in the visit", func(r visitRow) any { return r.v.prompts }},
	{"outcome", table.String, "how it ended: the transition's on (done, error, max_iterations), or the agent's status (done, failed, killed) when it ended the agent; nil while unfinished", func(r visitRow) any { return optString(r.name(r.v.outcome), r.v.exited) }},
	{"to", table.String, "the next stage; \"\" when the visit ended the agent; nil while unfinished", func(r visitRow) any { return optString(r.name(r.v.to), r.v.exited) }},
	{"wait_tool_ticks", table.Integer, "the sum over its calls of tool_result's tick − tool_call's (a prompt's wait included)", func(r visitRow) any { return r.v.waitTool }},
	{"wait_model_ticks", table.Integer, "the sum over its model turns of the ticks from when the agent was ready (stage_enter, its previous turn, or the last tool_result after it) to the model_turn", func(r visitRow) any { return r.v.waitModel }},
	{"wait_prompt_ticks", table.Integer, "the sum over its prompts of answer's tick − prompt's", func(r visitRow) any { return r.v.waitPrompt }},
	{"wall_ms", table.Float, "wall milliseconds from the end of the tick before enter_tick to the end of exit_tick; nil without samples or while unfinished", func(r visitRow) any { return optFloat(r.wallMS, r.wall) }},
	{"tokens", table.Integer, "prompt and completion tokens of its live model turns", func(r visitRow) any { return r.v.tokens }},
	{"cost_usd", table.Decimal, "the exact cost in dollars of its live model turns", func(r visitRow) any { return dollars(r.v.cost) }},
}

// visitRows returns the visits sorted by agent id (agents, the agents by id), each agent's in
// the order it entered them, with their wall time.
func (c *Collector) visitRows(agents []int32, wall *wallClock) []visitRow {
	pos := make([]int32, len(c.agents)) // an agent's place in id order
	for p, i := range agents {
		pos[i] = int32(p)
	}
	order := make([]int32, len(c.visits))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortStableFunc(order, func(x, y int32) int { return cmp.Compare(pos[c.visits[x].agent], pos[c.visits[y].agent]) })
	rows := make([]visitRow, len(order))
	for n, i := range order {
		v := &c.visits[i]
		r := visitRow{c: c, v: v, a: &c.agents[v.agent]}
		if v.exited {
			r.wallMS, r.wall = wall.span(v.enter, v.exit)
		}
		rows[n] = r
	}
	return rows
}

const stagesDoc = "One row per stage of a blueprint that some agent entered, sorted by blueprint, then stages in the order the trace first entered them."

// stageRow is one stage's visits summed.
type stageRow struct {
	c                                            *Collector
	key                                          stageKey
	visits, agents                               int64
	modelTurns, toolCalls, toolErrors, prompts   int64
	ticks                                        []int64 // of finished visits, sorted
	ticksTotal                                   int64
	wallMS                                       float64
	wall                                         bool
	waitTool, waitModel, waitPrompt              int64
	tokens, cost                                 int64
	done, errored, maxIterations, ended, unended int64
}

var stageColumns = []column[*stageRow]{
	{"blueprint", table.String, "the blueprint", func(r *stageRow) any { return r.c.names.str(r.key.blueprint) }},
	{"stage", table.String, "the stage", func(r *stageRow) any { return r.c.names.str(r.key.stage) }},
	{"visits", table.Integer, "visits to it", func(r *stageRow) any { return r.visits }},
	{"agents", table.Integer, "distinct agents that visited it", func(r *stageRow) any { return r.agents }},
	{"model_turns", table.Integer, "model turns in its visits", func(r *stageRow) any { return r.modelTurns }},
	{"tool_calls", table.Integer, "tool calls made in its visits", func(r *stageRow) any { return r.toolCalls }},
	{"tool_errors", table.Integer, "of them, those whose result was not ok", func(r *stageRow) any { return r.toolErrors }},
	{"prompts", table.Integer, "prompts put in its visits", func(r *stageRow) any { return r.prompts }},
	{"ticks_total", table.Integer, "the ticks of its finished visits, summed", func(r *stageRow) any { return r.ticksTotal }},
	{"ticks_mean", table.Float, "the mean ticks of a finished visit; nil for none", func(r *stageRow) any { return mean(r.ticksTotal, int64(len(r.ticks))) }},
	{"ticks_p50", table.Integer, "the median ticks of a finished visit (nearest rank); nil for none", func(r *stageRow) any { return nearestRank(r.ticks, 50) }},
	{"ticks_p95", table.Integer, "the 95th percentile of a finished visit's ticks (nearest rank); nil for none", func(r *stageRow) any { return nearestRank(r.ticks, 95) }},
	{"ticks_max", table.Integer, "the most ticks a finished visit took; nil for none", func(r *stageRow) any { return nearestRank(r.ticks, 100) }},
	{"wall_ms_total", table.Float, "the wall milliseconds of its finished visits, summed; nil without samples", func(r *stageRow) any { return optFloat(r.wallMS, r.wall) }},
	{"wait_tool_ticks", table.Integer, "its visits' wait_tool_ticks, summed", func(r *stageRow) any { return r.waitTool }},
	{"wait_model_ticks", table.Integer, "its visits' wait_model_ticks, summed", func(r *stageRow) any { return r.waitModel }},
	{"wait_prompt_ticks", table.Integer, "its visits' wait_prompt_ticks, summed", func(r *stageRow) any { return r.waitPrompt }},
	{"tokens", table.Integer, "tokens of the live model turns in its visits", func(r *stageRow) any { return r.tokens }},
	{"cost_usd", table.Decimal, "their exact cost in dollars", func(r *stageRow) any { return dollars(r.cost) }},
	{"done", table.Integer, "visits that left it on done", func(r *stageRow) any { return r.done }},
	{"error", table.Integer, "visits that left it on error", func(r *stageRow) any { return r.errored }},
	{"max_iterations", table.Integer, "visits that left it on max_iterations", func(r *stageRow) any { return r.maxIterations }},
	{"ended", table.Integer, "visits that ended the agent (a terminal event in the stage)", func(r *stageRow) any { return r.ended }},
	{"unfinished", table.Integer, "visits not finished when the trace ended", func(r *stageRow) any { return r.unended }},
}

// stageRows sums the visits (in agent order) per stage.
func (c *Collector) stageRows(visits []visitRow, wall *wallClock) []*stageRow {
	rows := make([]*stageRow, len(c.stages))
	last := make([]int32, len(c.stages)) // the last agent counted per stage, +1
	for i, key := range c.stages {
		rows[i] = &stageRow{c: c, key: key, wall: wall != nil}
	}
	for _, vr := range visits {
		v, r := vr.v, rows[vr.v.stage]
		r.visits++
		if last[v.stage] != v.agent+1 {
			last[v.stage] = v.agent + 1
			r.agents++
		}
		r.modelTurns += v.modelTurns
		r.toolCalls += v.toolCalls
		r.toolErrors += v.toolErrors
		r.prompts += v.prompts
		r.waitTool += v.waitTool
		r.waitModel += v.waitModel
		r.waitPrompt += v.waitPrompt
		r.tokens += v.tokens
		r.cost += v.cost
		if !v.exited {
			r.unended++
			continue
		}
		r.ticks = append(r.ticks, int64(v.exit-v.enter))
		r.ticksTotal += int64(v.exit - v.enter)
		if vr.wall {
			r.wallMS += vr.wallMS
		}
		switch {
		case v.ended:
			r.ended++
		case c.names.str(v.outcome) == "done":
			r.done++
		case c.names.str(v.outcome) == "error":
			r.errored++
		case c.names.str(v.outcome) == "max_iterations":
			r.maxIterations++
		}
	}
	for _, r := range rows {
		slices.Sort(r.ticks)
	}
	// Stable: within a blueprint, the stages keep the order the trace first entered them in.
	slices.SortStableFunc(rows, func(a, b *stageRow) int {
		return cmp.Compare(c.names.str(a.key.blueprint), c.names.str(b.key.blueprint))
	})
	return rows
}
