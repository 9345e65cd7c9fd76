package report

import (
	"cmp"
	"slices"
)

// latencyChart is how long stage visits took, per stage: a box plot of every stage side by side
// and a histogram of each, in Unit (ticks, or ms of wall time).
type latencyChart struct {
	Unit   string      `json:"unit"`
	Stages []string    `json:"stages"`
	Boxes  []box       `json:"boxes"`
	Hists  []histogram `json:"hists"`
}

// visitLatencies is the finished visits' durations of each stage, read from visits.csv.
type visitLatencies struct {
	ticks, wall map[stageKey][]float64
	// open counts the visits not finished when the run ended (no ticks).
	open int
}

// readVisits reads visits.csv's blueprint, stage, ticks and (when the file has it) wall_ms
// columns; it keeps two numbers a visit, never the row.
func readVisits(path string) (*visitLatencies, error) {
	v := &visitLatencies{ticks: map[stageKey][]float64{}, wall: map[stageKey][]float64{}}
	_, err := eachCSVRow(path, []string{"blueprint", "stage", "ticks"}, func(r csvRow) error {
		k := stageKey{r.get("blueprint"), r.get("stage")}
		if k.Stage == "" {
			return r.errf("column stage is empty; every visit is to a stage")
		}
		t, ok, err := r.integer("ticks")
		if err != nil {
			return err
		}
		if !ok {
			v.open++
			return nil
		}
		if t < 0 {
			return r.errf("column ticks: %d; want the visit's ticks, 0 or more", t)
		}
		v.ticks[k] = append(v.ticks[k], float64(t))
		ms, ok, err := r.number("wall_ms")
		if err != nil {
			return err
		}
		if ok {
			if ms < 0 {
				return r.errf("column wall_ms: %s; want the visit's wall time in ms, 0 or more", formatNumber(ms))
			}
			v.wall[k] = append(v.wall[k], ms)
		}
		return nil
	})
	return v, err
}

// stageRank orders stages as the page shows them: graph.json's blueprints and stages in their
// order, then the order the trace first entered them, then by name.
type stageRank map[stageKey]int

// newStageRank ranks the stages of graphs, then of the trace (ts may be nil).
func newStageRank(graphs []GraphBlueprint, ts *traceStats) stageRank {
	r := stageRank{}
	add := func(k stageKey) {
		if _, ok := r[k]; !ok {
			r[k] = len(r)
		}
	}
	for _, g := range graphs {
		for _, s := range g.Stages {
			add(stageKey{g.Blueprint, s})
		}
	}
	if ts != nil {
		for _, k := range ts.stageOrder {
			add(k)
		}
	}
	return r
}

// sorted returns m's stages in rank order, unranked ones last by name.
func (r stageRank) sorted(m map[stageKey][]float64) []stageKey {
	keys := make([]stageKey, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b stageKey) int {
		ra, oka := r[a]
		rb, okb := r[b]
		switch {
		case oka && okb:
			return cmp.Compare(ra, rb)
		case oka != okb:
			if oka {
				return -1
			}
			return 1
		}
		return cmp.Or(cmp.Compare(a.Blueprint, b.Blueprint), cmp.Compare(a.Stage, b.Stage))
	})
	return keys
}

// latencyOf summarises each stage's durations (nil when there are none); stage names carry
// their blueprint only when the run has more than one.
func latencyOf(m map[stageKey][]float64, unit string, rank stageRank) *latencyChart {
	if len(m) == 0 {
		return nil
	}
	keys := rank.sorted(m)
	several := slices.ContainsFunc(keys, func(k stageKey) bool { return k.Blueprint != keys[0].Blueprint })
	c := &latencyChart{Unit: unit}
	for _, k := range keys {
		name := k.Stage
		if several {
			name = k.Blueprint + " · " + k.Stage
		}
		values := m[k]
		c.Stages = append(c.Stages, name)
		c.Hists = append(c.Hists, histogramOf(values, unit == "ticks"))
		c.Boxes = append(c.Boxes, boxOf(values))
	}
	return c
}
