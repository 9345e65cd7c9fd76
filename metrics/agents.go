package metrics

import (
	"cmp"
	"slices"

	"github.com/warrenhq/warren/table"
)

const agentsDoc = "One row per agent (a spawn event), sorted by id."

// agentRow is one agent with the Collector its names are in.
type agentRow struct {
	c *Collector
	a *agent
}

func (r agentRow) name(id uint32) string { return r.c.names.str(id) }

// ticks is the agent's lifetime in ticks, from its spawn to its end.
func (a *agent) ticks() uint64 { return a.endTick - a.spawnTick }

var agentColumns = []column[agentRow]{
	{"agent", table.Integer, "the agent's id", func(r agentRow) any { return integer(r.a.id) }},
	{"name", table.String, "its name", func(r agentRow) any { return r.a.name }},
	{"group", table.String, "its group, as its spawn event gives it (a child's may differ from its parent's)", func(r agentRow) any { return r.name(r.a.group) }},
	{"blueprint", table.String, "its blueprint", func(r agentRow) any { return r.name(r.a.blueprint) }},
	{"parent", table.Integer, "the id of the agent that spawned it; 0 for a top-level agent", func(r agentRow) any { return integer(r.a.parent) }},
	{"root", table.String, "the name of its top-level ancestor (its own for a top-level agent): its tree", func(r agentRow) any { return r.c.agents[r.a.root].name }},
	{"depth", table.Integer, "0 for a top-level agent, 1 for its child, 2 for a grandchild, …", func(r agentRow) any { return r.a.depth }},
	{"status", table.String, "its final status (done, failed, killed), from its terminal event; nil while unfinished", func(r agentRow) any { return optString(r.name(r.a.status), r.a.finished) }},
	{"reason", table.String, "why it ended, as its terminal event says (\"\" for a plain done); nil while unfinished", func(r agentRow) any { return optString(r.a.reason, r.a.finished) }},
	{"final_stage", table.String, "the stage it ended in; nil while unfinished", func(r agentRow) any { return optString(r.name(r.a.final), r.a.finished) }},
	{"spawn_tick", table.Integer, "the tick of its spawn", func(r agentRow) any { return integer(r.a.spawnTick) }},
	{"end_tick", table.Integer, "the tick it ended (its terminal event); nil while unfinished", func(r agentRow) any { return optInteger(r.a.endTick, r.a.finished) }},
	{"ticks", table.Integer, "end_tick − spawn_tick; nil while unfinished", func(r agentRow) any { return optInteger(r.a.ticks(), r.a.finished) }},
	{"stage_visits", table.Integer, "stages it entered (every visit)", func(r agentRow) any { return r.a.stageVisits }},
	{"model_turns", table.Integer, "its model turns", func(r agentRow) any { return r.a.modelTurns }},
	{"tool_calls", table.Integer, "its tool calls, whatever their verdict", func(r agentRow) any { return r.a.toolCalls }},
	{"tool_errors", table.Integer, "its tool results that were not ok", func(r agentRow) any { return r.a.toolErrors }},
	{"denied", table.Integer, "its calls the gate denied (tool_call verdict deny)", func(r agentRow) any { return r.a.denied }},
	{"asked", table.Integer, "its calls the gate asked about (tool_call verdict ask)", func(r agentRow) any { return r.a.asked }},
	{"prompts", table.Integer, "its prompts (approvals and questions)", func(r agentRow) any { return r.a.prompts }},
	{"prompt_ticks", table.Integer, "the ticks its prompts waited for their answers, summed", func(r agentRow) any { return r.a.promptTicks }},
	{"tokens", table.Integer, "prompt and completion tokens of its live model turns", func(r agentRow) any { return r.a.tokens }},
	{"cost_usd", table.Decimal, "their exact cost in dollars", func(r agentRow) any { return dollars(r.a.cost) }},
	{"retries", table.Integer, "failed attempts at its live model turns that were sent again (model_retry events)", func(r agentRow) any { return r.a.retries }},
	{"messages_in", table.Integer, "messages put in its inbox (message events)", func(r agentRow) any { return r.a.messagesIn }},
	{"children", table.Integer, "agents it spawned", func(r agentRow) any { return r.a.children }},
}

// agentRows returns the agents in id order.
func (c *Collector) agentRows(order []int32) []agentRow {
	rows := make([]agentRow, len(order))
	for n, i := range order {
		rows[n] = agentRow{c: c, a: &c.agents[i]}
	}
	return rows
}

// ends counts agents by how they ended, and sums the lifetimes of those that did.
type ends struct {
	done, failed, killed, unfinished int64
	ticks, finished                  int64
}

// add counts a.
func (e *ends) add(c *Collector, a *agent) {
	if !a.finished {
		e.unfinished++
		return
	}
	e.finished++
	e.ticks += int64(a.ticks())
	switch c.names.str(a.status) {
	case "done":
		e.done++
	case "failed":
		e.failed++
	case "killed":
		e.killed++
	}
}

// work is what agents did, summed.
type work struct {
	agents, modelTurns, toolCalls, toolErrors, prompts, tokens, cost int64
}

// add sums a.
func (w *work) add(a *agent) {
	w.agents++
	w.modelTurns += a.modelTurns
	w.toolCalls += a.toolCalls
	w.toolErrors += a.toolErrors
	w.prompts += a.prompts
	w.tokens += a.tokens
	w.cost += a.cost
}

const groupsDoc = "One row per group, in the order the trace first spawned an agent of it; a child agent counts in the group its spawn event names."

// groupRow is one group's agents summed.
type groupRow struct {
	name string
	work
	ends
}

var groupColumns = []column[*groupRow]{
	{"group", table.String, "the group", func(r *groupRow) any { return r.name }},
	{"agents", table.Integer, "its agents", func(r *groupRow) any { return r.agents }},
	{"done", table.Integer, "of them, those that ended done", func(r *groupRow) any { return r.done }},
	{"failed", table.Integer, "those that ended failed", func(r *groupRow) any { return r.failed }},
	{"killed", table.Integer, "those that were killed", func(r *groupRow) any { return r.killed }},
	{"unfinished", table.Integer, "those not ended when the trace ended", func(r *groupRow) any { return r.unfinished }},
	{"model_turns", table.Integer, "their model turns", func(r *groupRow) any { return r.modelTurns }},
	{"tool_calls", table.Integer, "their tool calls", func(r *groupRow) any { return r.toolCalls }},
	{"tool_errors", table.Integer, "their tool results that were not ok", func(r *groupRow) any { return r.toolErrors }},
	{"prompts", table.Integer, "their prompts", func(r *groupRow) any { return r.prompts }},
	{"tokens", table.Integer, "tokens of their live model turns", func(r *groupRow) any { return r.tokens }},
	{"cost_usd", table.Decimal, "their exact cost in dollars", func(r *groupRow) any { return dollars(r.cost) }},
	{"ticks_mean", table.Float, "the mean lifetime in ticks of those that ended; nil for none", func(r *groupRow) any { return mean(r.ticks, r.finished) }},
}

// groupRows sums the agents per group, groups in first-spawned order.
func (c *Collector) groupRows() []*groupRow {
	var rows []*groupRow
	byName := make([]int32, len(c.names.strs)) // a group's row, +1
	for i := range c.agents {
		a := &c.agents[i]
		if byName[a.group] == 0 {
			rows = append(rows, &groupRow{name: c.names.str(a.group)})
			byName[a.group] = int32(len(rows))
		}
		r := rows[byName[a.group]-1]
		r.work.add(a)
		r.ends.add(c, a)
	}
	return rows
}

const treesDoc = "One row per tree: a top-level agent and all its descendants, sorted by the top-level agent's id."

// treeRow is one tree's agents summed.
type treeRow struct {
	root     *agent
	group    string
	maxDepth int64
	endTick  uint64
	work
	ends
}

var treeColumns = []column[*treeRow]{
	{"root", table.Integer, "the top-level agent's id", func(r *treeRow) any { return integer(r.root.id) }},
	{"root_name", table.String, "its name", func(r *treeRow) any { return r.root.name }},
	{"group", table.String, "its group", func(r *treeRow) any { return r.group }},
	{"agents", table.Integer, "agents in the tree, the root included", func(r *treeRow) any { return r.agents }},
	{"max_depth", table.Integer, "the deepest agent's depth (0: the root alone)", func(r *treeRow) any { return r.maxDepth }},
	{"done", table.Integer, "its agents that ended done", func(r *treeRow) any { return r.done }},
	{"failed", table.Integer, "its agents that ended failed", func(r *treeRow) any { return r.failed }},
	{"killed", table.Integer, "its agents that were killed", func(r *treeRow) any { return r.killed }},
	{"unfinished", table.Integer, "its agents not ended when the trace ended", func(r *treeRow) any { return r.unfinished }},
	{"model_turns", table.Integer, "their model turns", func(r *treeRow) any { return r.modelTurns }},
	{"tool_calls", table.Integer, "their tool calls", func(r *treeRow) any { return r.toolCalls }},
	{"tool_errors", table.Integer, "their tool results that were not ok", func(r *treeRow) any { return r.toolErrors }},
	{"tokens", table.Integer, "tokens of their live model turns", func(r *treeRow) any { return r.tokens }},
	{"cost_usd", table.Decimal, "their exact cost in dollars", func(r *treeRow) any { return dollars(r.cost) }},
	{"end_tick", table.Integer, "the tick the last of its agents ended; nil while one is unfinished", func(r *treeRow) any { return optInteger(r.endTick, r.unfinished == 0) }},
}

// treeRows sums the agents per tree, trees in their roots' id order (order: the agents by id).
func (c *Collector) treeRows(order []int32) []*treeRow {
	var rows []*treeRow
	byRoot := make([]int32, len(c.agents)) // a root's row, +1
	for _, i := range order {
		a := &c.agents[i]
		if byRoot[a.root] == 0 {
			root := &c.agents[a.root]
			rows = append(rows, &treeRow{root: root, group: c.names.str(root.group)})
			byRoot[a.root] = int32(len(rows))
		}
		r := rows[byRoot[a.root]-1]
		r.work.add(a)
		r.ends.add(c, a)
		r.maxDepth = max(r.maxDepth, a.depth)
		if a.finished {
			r.endTick = max(r.endTick, a.endTick)
		}
	}
	slices.SortStableFunc(rows, func(x, y *treeRow) int { return cmp.Compare(x.root.id, y.root.id) })
	return rows
}
