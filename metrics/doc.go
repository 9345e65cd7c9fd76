// Package metrics turns a run's trace into tables of what the run did, per stage visit, agent,
// stage, group, agent tree, model, tool, memory key and for the run as a whole: turns, tool calls
// by tool and verdict, errors, prompts, tokens and cost, ticks per stage, the ticks spent waiting
// on lanes, pools and prompts, what the agents' memories hold at the end, and, given the run's
// per-tick wall clock, wall time: the tables a run and a
// sweep write at their end (with package table's CSV and Parquet writers) and the HTML report
// reads.
//
// # Use
//
// A [Collector] reads a trace (version 5) once, event by event, and keeps only counters and one
// small record per agent and per stage visit, never an event line:
//
//	c := metrics.NewCollector(header)
//	opts.Events = func(line []byte) { err = c.Observe(line) } // live, during the run
//	...
//	tables := c.Tables(samples)
//
// or, from a trace file, [FromTrace]. A Collector must see a trace from its first event (an
// agent's events need its spawn), in trace order. An incomplete trace (a run killed, or still
// running) is fine: what it has not finished reads as nil.
//
// # Wall time
//
// A trace never holds wall time (it would make the trace differ from run to run). The run gives
// it separately, as [Sample]s: the wall-clock time since the run started at which each tick
// ended. Without samples every wall column is nil; with them a visit's wall time is the time
// from the end of the tick before it entered its stage to the end of the tick it left it in.
// Wall times are not deterministic: the same run gives other values on another machine, or under
// another load, while every other column is a function of the trace.
//
// # Tables
//
// [Schema] lists every table and column with its meaning; docs/metrics.md shows them (generated
// from Schema by a test). The tables are visits, agents, stages, groups, trees, models, tools,
// memory and run, in that order, always all nine (a table with no rows has none).
//
// # Decisions
//
//   - A visit is one stage_enter; it ends at the transition that leaves the stage (its outcome is
//     the transition's on: done, error or max_iterations, and to the next stage) or at the
//     terminal event that ends the agent in it (its outcome is the agent's status: done, failed or
//     killed, and to is ""). Its ticks are exit tick minus enter tick.
//   - A call's events (tool_call, prompt, answer, tool_result) count in the visit that was open
//     at its tool_call (or prompt), found by the call's call_id, whenever its result comes.
//   - The waits are in ticks. A tool wait is tool_result's tick minus tool_call's (the lane's
//     queue, the call's own run time, and any prompt or child it waited for). A model wait is the
//     ticks from when the agent was ready for a turn (its stage_enter, its previous turn, or the
//     last tool_result after it, whichever came last) to the model_turn (the model lane's queue,
//     an inference pool's rate limits and back-off). A prompt wait is answer's tick minus
//     prompt's. A tool wait includes the prompt wait of its call.
//   - Memory is each agent's final memory, replayed from the trace: a memory event (a
//     transition's set) writes at once; a memory_set call writes only when its tool_result is
//     ok, since a denied or failed call stores nothing (the write waits with the pending call).
//     null removes a key; the last write wins. A value is kept only as what the memory table
//     tells apart: a number (true as 1, false as 0, so that a flag's mean is the share of its
//     holders that hold true), an interned string, or an array or object, counted without its JSON.
//   - Percentiles are nearest-rank: the p-th percentile of n sorted values is the value at rank
//     ceil(p/100 × n), so it is always one of the values, never an interpolation.
//   - Money is summed exactly, in picodollars, and written as a decimal string
//     (trace.DollarsOf); floats appear only in means, rates, wall times and memory's numbers.
//   - Rows are sorted by agent id (visits also by the order they were entered), by tree root id,
//     and by name for models and tools; groups and stages keep the order the trace first named
//     them in (which is the scenario's and the stage graph's order), stages within their
//     blueprint, blueprints by name; memory rows follow their group's order, then keys by name.
//     No map's iteration order reaches a table.
package metrics
