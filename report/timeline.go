package report

import (
	"math"
	"slices"
	"strings"
)

// phaseColumns are timeline.csv's phase columns, in the order an agent passes through them:
// each holds the number of agents in that phase at the end of the tick.
var phaseColumns = []string{"entering", "ready_to_infer", "awaiting_inference", "ready_for_tools", "awaiting_tools", "resolve_transition"}

// timelineColumns are the columns timeline.csv must have; wall_ms, also written, may be empty.
var timelineColumns = slices.Concat([]string{"tick"}, phaseColumns, []string{"finished", "events"})

// timelineRow is one tick's row of timeline.csv.
type timelineRow struct {
	tick             int64
	phases           [6]int64
	finished, events int64
	wallMS           float64
	hasWall          bool
}

// readTimeline reads timeline.csv: one row per tick, ticks increasing, counts whole and not
// negative, the cumulative counts never falling, wall_ms (when given) never falling.
func readTimeline(path string) ([]timelineRow, error) {
	var rows []timelineRow
	_, err := eachCSVRow(path, timelineColumns, func(r csvRow) error {
		var t timelineRow
		var err error
		get := func(name string) int64 {
			if err != nil {
				return 0
			}
			v, ok, e := r.integer(name)
			switch {
			case e != nil:
				err = e
			case !ok || v < 0:
				err = r.errf("column %s: %q; want a whole number, 0 or more", name, r.get(name))
			}
			return v
		}
		t.tick = get("tick")
		for i, c := range phaseColumns {
			t.phases[i] = get(c)
		}
		t.finished, t.events = get("finished"), get("events")
		if err != nil {
			return err
		}
		if t.wallMS, t.hasWall, err = r.number("wall_ms"); err != nil {
			return err
		}
		if n := len(rows); n > 0 {
			prev := rows[n-1]
			switch {
			case t.tick <= prev.tick:
				return r.errf("tick %d after tick %d; ticks must increase, one row per tick", t.tick, prev.tick)
			case t.finished < prev.finished || t.events < prev.events:
				return r.errf("finished and events count what happened so far and cannot fall (finished %d after %d, events %d after %d)",
					t.finished, prev.finished, t.events, prev.events)
			case t.hasWall && prev.hasWall && t.wallMS < prev.wallMS:
				return r.errf("wall_ms %s after %s; the wall time at the end of a tick cannot fall", formatNumber(t.wallMS), formatNumber(prev.wallMS))
			}
		}
		rows = append(rows, t)
		return nil
	})
	return rows, err
}

// phaseChart is the agents in each phase at the end of each tick (of each bucket's last tick,
// when the run has more ticks than maxPoints), with the agents finished so far on top.
type phaseChart struct {
	Ticks  []int64     `json:"ticks"`
	Series []intSeries `json:"series"`
	Bucket int         `json:"bucket"`
}

// intSeries is a named series of counts.
type intSeries struct {
	Name string  `json:"name"`
	Data []int64 `json:"data"`
}

// throughputChart is the events and finished agents per tick: per point, the count over its
// bucket of ticks divided by the ticks in it (so a bucket of one tick is the tick's count).
type throughputChart struct {
	Ticks    []int64   `json:"ticks"`
	Events   []float64 `json:"events"`
	Finished []float64 `json:"finished"`
	Bucket   int       `json:"bucket"`
	// Source is "timeline" (timeline.csv) or "trace" (counted from trace.jsonl).
	Source string `json:"source"`
}

// wallChart is the events and finished agents per wall-clock second, in buckets of WidthMS
// milliseconds: Ends labels each bucket by its end, in seconds since the run started.
type wallChart struct {
	WidthMS  float64   `json:"width_ms"`
	Ends     []string  `json:"ends"`
	Events   []float64 `json:"events"`
	Finished []float64 `json:"finished"`
}

// phaseName is how the page names a phase column: "ready_to_infer" reads "ready to infer".
func phaseName(column string) string { return strings.ReplaceAll(column, "_", " ") }

// chunks splits n rows into runs of bucketWidth(n) consecutive rows: each is [start, end).
func chunks(n int) [][2]int {
	w := bucketWidth(n)
	var out [][2]int
	for s := 0; s < n; s += w {
		out = append(out, [2]int{s, min(s+w, n)})
	}
	return out
}

// phasesOf draws the timeline's phases (at least one row).
func phasesOf(rows []timelineRow) *phaseChart {
	c := &phaseChart{Bucket: bucketWidth(len(rows))}
	c.Series = make([]intSeries, len(phaseColumns)+1)
	for i, col := range phaseColumns {
		c.Series[i].Name = phaseName(col)
	}
	c.Series[len(phaseColumns)].Name = "finished"
	for _, ch := range chunks(len(rows)) {
		r := rows[ch[1]-1]
		c.Ticks = append(c.Ticks, r.tick)
		for i := range phaseColumns {
			c.Series[i].Data = append(c.Series[i].Data, r.phases[i])
		}
		c.Series[len(phaseColumns)].Data = append(c.Series[len(phaseColumns)].Data, r.finished)
	}
	return c
}

// throughputOfTimeline differences the timeline's running counts: a bucket's rate is what its
// rows added over the ticks since the previous bucket's last tick (one, for consecutive ticks).
func throughputOfTimeline(rows []timelineRow) *throughputChart {
	c := &throughputChart{Bucket: bucketWidth(len(rows)), Source: "timeline"}
	prevTick, prevEvents, prevFinished := rows[0].tick-1, int64(0), int64(0)
	for _, ch := range chunks(len(rows)) {
		r := rows[ch[1]-1]
		ticks := float64(r.tick - prevTick)
		c.Ticks = append(c.Ticks, r.tick)
		c.Events = append(c.Events, float64(r.events-prevEvents)/ticks)
		c.Finished = append(c.Finished, float64(r.finished-prevFinished)/ticks)
		prevTick, prevEvents, prevFinished = r.tick, r.events, r.finished
	}
	return c
}

// throughputOfTrace counts the trace's events and terminal events per tick, for a directory
// without timeline.csv (a state directory).
func throughputOfTrace(ts *traceStats) *throughputChart {
	n := int(ts.lastTick) + 1
	w := bucketWidth(n)
	buckets := (n + w - 1) / w
	c := &throughputChart{Bucket: w, Source: "trace", Ticks: make([]int64, buckets), Events: make([]float64, buckets), Finished: make([]float64, buckets)}
	for b := range buckets {
		c.Ticks[b] = min(int64(b*w+w-1), ts.lastTick)
	}
	for tick, k := range ts.eventsAt {
		c.Events[tick/int64(w)] += float64(k)
	}
	for tick, k := range ts.finishedAt {
		c.Finished[tick/int64(w)] += float64(k)
	}
	for b := range buckets {
		ticks := float64(c.Ticks[b] - int64(b*w) + 1)
		c.Events[b] /= ticks
		c.Finished[b] /= ticks
	}
	return c
}

// wallBuckets is about how many buckets the wall-clock throughput gets at most; a run of few
// ticks gets one bucket per two ticks, as a bucket narrower than a tick would be empty or hold
// one tick's end.
const wallBuckets = 60

// wallOf counts what the run did in each bucket of wall time: the running counts of the last
// tick to end within the bucket, less those of the bucket before, per second of the bucket's
// width. Nil when no row has wall_ms.
func wallOf(rows []timelineRow) *wallChart {
	var timed []timelineRow
	for _, r := range rows {
		if r.hasWall {
			timed = append(timed, r)
		}
	}
	if len(timed) == 0 {
		return nil
	}
	total := timed[len(timed)-1].wallMS
	mant, exp := niceStep(total, min(wallBuckets, max(1, len(timed)/2)), false)
	width := stepValue(mant, exp)
	n := max(1, int(math.Ceil(total/width-1e-9)))
	c := &wallChart{WidthMS: width}
	var i int
	var prevEvents, prevFinished int64
	for b := range n {
		end := stepValue(int64(b+1)*mant, exp)
		events, finished := prevEvents, prevFinished
		for i < len(timed) && (timed[i].wallMS <= end || b == n-1) {
			events, finished = timed[i].events, timed[i].finished
			i++
		}
		c.Ends = append(c.Ends, formatNumber(stepValue(int64(b+1)*mant, exp-3)))
		c.Events = append(c.Events, float64(events-prevEvents)*1000/width)
		c.Finished = append(c.Finished, float64(finished-prevFinished)*1000/width)
		prevEvents, prevFinished = events, finished
	}
	return c
}
