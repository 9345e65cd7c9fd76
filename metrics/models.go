package metrics

import (
	"cmp"
	"slices"

	"github.com/warrenhq/warren/table"
)

// modelAgg is one model's turns summed, as the Collector counts them.
type modelAgg struct {
	name                                      uint32
	agents, turns, errors, callsAsked         int64
	prompt, completion, cacheRead, cacheWrite int64
	cost, attempts, retries                   int64
}

// modelRow is one model with the Collector its name is in.
type modelRow struct {
	c *Collector
	*modelAgg
}

const modelsDoc = "One row per model that made a turn (model_turn's model), sorted by name."

var modelColumns = []column[modelRow]{
	{"model", table.String, "the model (model_turn's model: the stage's model, or the agent's)", func(r modelRow) any { return r.c.names.str(r.name) }},
	{"agents", table.Integer, "distinct agents it made a turn for", func(r modelRow) any { return r.agents }},
	{"turns", table.Integer, "its turns", func(r modelRow) any { return r.turns }},
	{"errors", table.Integer, "its turns that failed (model_turn with an error)", func(r modelRow) any { return r.errors }},
	{"tool_calls_asked", table.Integer, "the tool calls its turns asked for (model_turn's calls, summed)", func(r modelRow) any { return r.callsAsked }},
	{"prompt_tokens", table.Integer, "prompt tokens the provider reported", func(r modelRow) any { return r.prompt }},
	{"completion_tokens", table.Integer, "completion tokens the provider reported", func(r modelRow) any { return r.completion }},
	{"cache_read_tokens", table.Integer, "prompt tokens read from the provider's cache", func(r modelRow) any { return r.cacheRead }},
	{"cache_write_tokens", table.Integer, "prompt tokens written to the provider's cache", func(r modelRow) any { return r.cacheWrite }},
	{"cost_usd", table.Decimal, "the exact cost in dollars of its turns", func(r modelRow) any { return dollars(r.cost) }},
	{"attempts", table.Integer, "the attempts its live turns took (model_turn's attempts, summed; 0 for a model that is not live)", func(r modelRow) any { return r.attempts }},
	{"retries", table.Integer, "failed attempts sent again (model_retry events), charged to the turn of the agent that came next", func(r modelRow) any { return r.retries }},
}

// modelRows returns the models sorted by name.
func (c *Collector) modelRows() []modelRow {
	rows := make([]modelRow, len(c.models))
	for i := range c.models {
		rows[i] = modelRow{c: c, modelAgg: &c.models[i]}
	}
	slices.SortFunc(rows, func(a, b modelRow) int { return cmp.Compare(c.names.str(a.name), c.names.str(b.name)) })
	return rows
}

// toolAgg is the calls of one tool with one verdict from one layer, summed.
type toolAgg struct {
	key                            toolKey
	calls, results, errors, agents int64
	waitTicks, waitMax             int64
}

// toolRow is one tools row with the Collector its names are in.
type toolRow struct {
	c *Collector
	*toolAgg
}

func (r toolRow) name(id uint32) string { return r.c.names.str(id) }

const toolsDoc = "One row per tool, verdict and deciding layer of the calls made (tool_call's tool, verdict and layer), sorted by tool, verdict, then layer; a tool's rows summed give the tool."

var toolColumns = []column[toolRow]{
	{"tool", table.String, "the tool called", func(r toolRow) any { return r.name(r.key.tool) }},
	{"verdict", table.String, "the gate's verdict: allow, ask or deny (an ask's answer is in the prompt, not here)", func(r toolRow) any { return r.name(r.key.verdict) }},
	{"layer", table.String, "the check that decided it (tool_call's layer)", func(r toolRow) any { return r.name(r.key.layer) }},
	{"calls", table.Integer, "the calls", func(r toolRow) any { return r.calls }},
	{"results", table.Integer, "of them, those whose tool_result came", func(r toolRow) any { return r.results }},
	{"errors", table.Integer, "of those, the results that were not ok", func(r toolRow) any { return r.errors }},
	{"agents", table.Integer, "distinct agents that made them", func(r toolRow) any { return r.agents }},
	{"wait_ticks_total", table.Integer, "tool_result's tick − tool_call's, summed over the calls with a result", func(r toolRow) any { return r.waitTicks }},
	{"wait_ticks_max", table.Integer, "the longest such wait; nil for no result", func(r toolRow) any { return optInteger(r.waitMax, r.results > 0) }},
}

// toolRows returns the tools rows sorted by tool, verdict and layer.
func (c *Collector) toolRows() []toolRow {
	rows := make([]toolRow, len(c.tools))
	for i := range c.tools {
		rows[i] = toolRow{c: c, toolAgg: &c.tools[i]}
	}
	slices.SortFunc(rows, func(a, b toolRow) int {
		return cmp.Or(cmp.Compare(a.name(a.key.tool), b.name(b.key.tool)),
			cmp.Compare(a.name(a.key.verdict), b.name(b.key.verdict)),
			cmp.Compare(a.name(a.key.layer), b.name(b.key.layer)))
	})
	return rows
}
