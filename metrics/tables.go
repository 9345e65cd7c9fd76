package metrics

import (
	"cmp"
	"slices"

	"github.com/warrenhq/warren/table"
	"github.com/warrenhq/warren/trace"
)

// column is one column of a metrics table together with how a row of type T gives its value, so
// that a table's documentation (Schema) and its rows (Tables) come from one list and cannot
// disagree on a column's name, type or place.
type column[T any] struct {
	name  string
	typ   table.Type
	doc   string
	value func(T) any
}

// build makes the table name of one row per element of rows.
func build[T any](name, doc string, cols []column[T], rows []T) table.Table {
	t := table.Table{Name: name, Doc: doc, Columns: make([]table.Column, len(cols)), Rows: make([][]any, 0, len(rows))}
	for i, c := range cols {
		t.Columns[i] = table.Column{Name: c.name, Type: c.typ, Doc: c.doc}
	}
	for _, r := range rows {
		row := make([]any, len(cols))
		for i, c := range cols {
			row[i] = c.value(r)
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// assemble builds the nine tables, in the order Tables returns them, from their rows.
func assemble(visits []visitRow, agents []agentRow, stages []*stageRow, groups []*groupRow, trees []*treeRow,
	models []modelRow, tools []toolRow, memory []*memoryRow, run []runRow) []table.Table {
	return []table.Table{
		build("visits", visitsDoc, visitColumns, visits),
		build("agents", agentsDoc, agentColumns, agents),
		build("stages", stagesDoc, stageColumns, stages),
		build("groups", groupsDoc, groupColumns, groups),
		build("trees", treesDoc, treeColumns, trees),
		build("models", modelsDoc, modelColumns, models),
		build("tools", toolsDoc, toolColumns, tools),
		build("memory", memoryDoc, memoryColumns, memory),
		build("run", runDoc, runColumns, run),
	}
}

// Schema returns the metrics tables with their columns and no rows: every table's and column's
// name, type and meaning, as Tables gives them. docs/metrics.md is generated from it, and a
// writer or report can use it to know the columns of a run that has not ended.
func Schema() []table.Table {
	return assemble(nil, nil, nil, nil, nil, nil, nil, nil, nil)
}

// Tables returns the metrics of everything observed so far, with wall time from samples (any
// order; nil for none): the tables visits, agents, stages, groups, trees, models, tools, memory
// and run, in that order. It changes nothing in the Collector, so it may be called during a run (what is
// unfinished then reads as nil) and again at its end.
func (c *Collector) Tables(samples []Sample) []table.Table {
	wall := newWallClock(samples)
	agents := c.agentOrder()
	visits := c.visitRows(agents, wall)
	agentRows := c.agentRows(agents)
	return assemble(visits, agentRows, c.stageRows(visits, wall), c.groupRows(), c.treeRows(agents),
		c.modelRows(), c.toolRows(), c.memoryRows(), []runRow{c.runRow(agentRows, wall)})
}

// agentOrder returns the indexes of the agents sorted by id.
func (c *Collector) agentOrder() []int32 {
	order := make([]int32, len(c.agents))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortStableFunc(order, func(x, y int32) int { return cmp.Compare(c.agents[x].id, c.agents[y].id) })
	return order
}

// wallClock answers when a tick ended, from the run's samples.
type wallClock struct{ samples []Sample }

// newWallClock sorts a copy of samples by tick; none gives nil, which answers nothing.
func newWallClock(samples []Sample) *wallClock {
	if len(samples) == 0 {
		return nil
	}
	s := slices.Clone(samples)
	slices.SortStableFunc(s, func(a, b Sample) int { return cmp.Compare(a.Tick, b.Tick) })
	return &wallClock{samples: s}
}

// endOf returns the wall time at which tick ended: the sample of the last tick that ran up to
// it (the scheduler skips ticks in which nothing is due, and a skipped tick takes no time), 0
// before the first, and false after the last sample (the samples stop before the tick).
func (w *wallClock) endOf(tick uint64) (int64, bool) {
	if w == nil || tick > w.samples[len(w.samples)-1].Tick {
		return 0, false
	}
	i, _ := slices.BinarySearchFunc(w.samples, tick+1, func(s Sample, t uint64) int { return cmp.Compare(s.Tick, t) })
	if i == 0 {
		return 0, true
	}
	return w.samples[i-1].WallNanos, true
}

// span returns the milliseconds from the end of the tick before enter (the run's start for tick
// 0) to the end of tick exit.
func (w *wallClock) span(enter, exit uint64) (float64, bool) {
	var from int64
	if enter > 0 {
		var ok bool
		if from, ok = w.endOf(enter - 1); !ok {
			return 0, false
		}
	}
	to, ok := w.endOf(exit)
	if !ok {
		return 0, false
	}
	return float64(to-from) / 1e6, true
}

// total returns the seconds from the run's start to the end of its last sampled tick.
func (w *wallClock) total() (float64, bool) {
	if w == nil {
		return 0, false
	}
	return float64(w.samples[len(w.samples)-1].WallNanos) / 1e9, true
}

// Cell helpers: a table holds int64, string, float64 or nil.

// integer is a trace's id or tick (a 64-bit integer, written by the host from a uint64) as an
// Integer cell.
func integer(x uint64) any { return int64(x) }

// optInteger is x, or nil when the value does not exist yet.
func optInteger[T ~int64 | ~uint64](x T, ok bool) any {
	if !ok {
		return nil
	}
	return int64(x)
}

// optFloat is x, or nil when it does not exist.
func optFloat(x float64, ok bool) any {
	if !ok {
		return nil
	}
	return x
}

// optString is s, or nil when it does not exist yet.
func optString(s string, ok bool) any {
	if !ok {
		return nil
	}
	return s
}

// dollars writes picodollars exactly, as the trace does.
func dollars(pico int64) any { return trace.DollarsOf(pico) }

// mean is sum/n, or nil for no values.
func mean(sum, n int64) any {
	if n == 0 {
		return nil
	}
	return float64(sum) / float64(n)
}

// nearestRank returns the p-th percentile of sorted values by the nearest-rank method: the value
// at rank ceil(p × n / 100), 1-based, computed in integers so that no rounding moves it; nil for
// no values.
func nearestRank(sorted []int64, p int) any {
	if len(sorted) == 0 {
		return nil
	}
	rank := (p*len(sorted) + 99) / 100
	return sorted[max(rank, 1)-1]
}
