package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
)

// The files of a run directory (host run --out), relative to it.
const (
	fileTrace    = "trace.jsonl"
	fileTimeline = "timeline.csv"
	fileGraph    = "graph.json"
	fileManifest = "manifest.json"
	dirMetrics   = "metrics"
	fileRunCSV   = "run.csv"
	fileVisits   = "visits.csv"
)

// metricTables are the metrics tables the run page shows whole (up to maxTableRows rows): the
// small ones. agents.csv and trees.csv have a row per agent or tree, which is what the charts
// aggregate, and visits.csv a row per stage visit.
var metricTables = []string{"stages.csv", "groups.csv", "models.csv", "tools.csv"}

// maxTableRows is the most rows a table shows; the rest are counted.
const maxTableRows = 200

// keyValue is one figure or manifest entry, as written.
type keyValue struct {
	Key   string
	Value string
}

// runPage builds the page of a run directory: every file is optional, and what is missing is
// said on the page and its charts skipped, so that a state directory (a trace only) renders too.
func runPage(dir string) (*page, error) {
	p := &page{Kind: "run"}
	path := func(name ...string) string { return filepath.Join(append([]string{dir}, name...)...) }

	var ts *traceStats
	if exists(path(fileTrace)) {
		var err error
		if ts, err = readTrace(path(fileTrace)); err != nil {
			return nil, err
		}
		p.Notes = append(p.Notes, ts.notes...)
	} else {
		p.Notes = append(p.Notes, "No trace.jsonl: the stage graphs show no counts, and token spend is not drawn.")
	}

	var graphs []GraphBlueprint
	if exists(path(fileGraph)) {
		var err error
		if graphs, err = readGraph(path(fileGraph)); err != nil {
			return nil, err
		}
	} else {
		p.Notes = append(p.Notes, "No graph.json: each stage graph shows only the edges the trace took.")
	}

	if exists(path(fileManifest)) {
		kv, err := readObject(path(fileManifest))
		if err != nil {
			return nil, err
		}
		p.Info, p.InfoTitle = kv, "Manifest"
	}

	metrics := exists(path(dirMetrics))
	if metrics && exists(path(dirMetrics, fileRunCSV)) {
		kv, err := readRunCSV(path(dirMetrics, fileRunCSV))
		if err != nil {
			return nil, err
		}
		p.Figures, p.FiguresFrom = kv, "metrics/run.csv"
	} else if ts != nil {
		p.Figures, p.FiguresFrom = traceFigures(ts), "the trace's header and end event"
	}
	if !metrics {
		p.Notes = append(p.Notes, "No metrics/ folder (a state directory has only its trace): visit lengths are not drawn, and the figures come from the trace.")
	}

	p.Title = "Run report"
	if s := firstNonEmpty(lookup(p.Info, "scenario"), lookup(p.Figures, "scenario")); s != "" {
		p.Title = "Run: " + s
	} else if ts != nil && ts.header.Scenario != "" {
		p.Title = "Run: " + ts.header.Scenario
	}

	if exists(path(fileTimeline)) {
		rows, err := readTimeline(path(fileTimeline))
		if err != nil {
			return nil, err
		}
		if len(rows) > 0 {
			p.addTimeline(rows)
		} else {
			p.Notes = append(p.Notes, "timeline.csv has no rows: the run ran no tick.")
		}
	} else {
		p.Notes = append(p.Notes, "No timeline.csv: agents by phase are not drawn.")
		if ts != nil {
			p.addThroughput(throughputOfTrace(ts))
		}
	}

	for _, g := range buildGraphs(graphs, ts) {
		p.addGraph(g, ts)
	}

	if metrics {
		if err := p.addMetrics(path(dirMetrics), newStageRank(graphs, ts)); err != nil {
			return nil, err
		}
	}
	if ts != nil {
		p.addTokens(ts)
	}
	return p, nil
}

// firstNonEmpty returns the first of ss that is not "".
func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

// lookup returns key's value in kv ("" when absent).
func lookup(kv []keyValue, key string) string {
	for _, e := range kv {
		if e.Key == key {
			return e.Value
		}
	}
	return ""
}

// readObject reads a JSON object's entries in file order (a map would lose it): a string value
// as its text, any other as compact JSON.
func readObject(path string) ([]keyValue, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, badWrap(err, "%s", path)
	}
	if err := checkJSON(path, data); err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, _ := dec.Token(); tok != json.Delim('{') {
		return nil, badf("%s:1:1: want a JSON object of keys and values", path)
	}
	// The file is valid JSON, so the walk below cannot fail.
	var out []keyValue
	for dec.More() {
		tok, _ := dec.Token()
		key, _ := tok.(string)
		var raw json.RawMessage
		_ = dec.Decode(&raw)
		var s string
		if json.Unmarshal(raw, &s) != nil {
			var b bytes.Buffer
			_ = json.Compact(&b, raw)
			s = b.String()
		}
		out = append(out, keyValue{Key: key, Value: s})
	}
	return out, nil
}

// readRunCSV reads run.csv, one row of the run's figures, each column as written.
func readRunCSV(path string) ([]keyValue, error) {
	var out []keyValue
	rows := 0
	f, err := eachCSVRow(path, nil, func(r csvRow) error {
		rows++
		if rows > 1 {
			return r.errf("a second row; run.csv has exactly one row, the run's")
		}
		out = make([]keyValue, len(r.fields))
		for i := range r.fields {
			out[i].Value = r.fields[i]
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if rows == 0 {
		return nil, badf("%s:2: no row; run.csv has exactly one row, the run's", path)
	}
	for i := range out {
		out[i].Key = f.header[i]
	}
	return out, nil
}

// traceFigures are the figures of a run with no run.csv: the trace header's, then its end
// event's fields as written.
func traceFigures(ts *traceStats) []keyValue {
	h := ts.header
	out := []keyValue{{"scenario", h.Scenario}, {"seed", strconv.FormatUint(h.Seed, 10)}, {"clock", h.Clock}, {"host_version", h.HostVersion}}
	return append(out, ts.end...)
}

// addTimeline adds the charts timeline.csv gives: agents by phase, throughput per tick and,
// when wall_ms is there, per wall second.
func (p *page) addTimeline(rows []timelineRow) {
	ph := phasesOf(rows)
	p.add(chart{ID: "phases", Type: "phases", Title: "Agents by phase", Data: ph,
		Explain: "The number of agents in each phase at the end of every tick" + bucketNote(ph.Bucket) +
			", stacked, with the agents finished so far on top: the whole stack is every agent spawned so far. From timeline.csv."})
	p.addThroughput(throughputOfTimeline(rows))
	if w := wallOf(rows); w != nil {
		p.add(chart{ID: "wall", Type: "wall", Title: "Throughput per wall second", Data: w,
			Explain: fmt.Sprintf("Trace events and finished agents per second of wall-clock time, in buckets of %s ms: what the ticks ending in a bucket added, divided by its width. From timeline.csv's wall_ms, which depends on the machine.", formatNumber(w.WidthMS))})
	}
}

// addThroughput adds the per-tick throughput chart.
func (p *page) addThroughput(c *throughputChart) {
	from := "the differences of timeline.csv's running counts"
	if c.Source == "trace" {
		from = "the trace's events and terminal events, tick by tick"
	}
	p.add(chart{ID: "throughput", Type: "throughput", Title: "Throughput per tick", Data: c,
		Explain: "Trace events (left axis) and agents finished (right axis) per tick" + bucketNote(c.Bucket) + ", from " + from + "."})
}

// bucketNote says over how many ticks a series' points are taken.
func bucketNote(bucket int) string {
	if bucket == 1 {
		return ""
	}
	return fmt.Sprintf(" (the run is long: each point stands for %d ticks, at the last of them, rates averaged over them)", bucket)
}

// addGraph adds one blueprint's stage graph.
func (p *page) addGraph(g graphView, ts *traceStats) {
	explain := "Every edge of the blueprint's stage graph, labelled with what it fires on and how many times agents took it (transition events, and terminal events for the edges that end an agent); untaken edges are dashed, the entry stage is bold, and each stage says how many times it was entered. Layers run left to right along the longest path from the entry; loops curve back."
	if !g.Traced {
		explain = "Every edge of the blueprint's stage graph; there is no trace, so no counts."
	}
	if ts != nil {
		var other []string
		for _, status := range []string{"done", "failed", "killed"} {
			if n := ts.otherEnds[[2]string{g.Blueprint, status}]; n > 0 {
				other = append(other, fmt.Sprintf("%d %s", n, status))
			}
		}
		if len(other) > 0 {
			explain += fmt.Sprintf(" Agents that ended on no edge (killed, out of turns, a failed condition): %s.", joinList(other))
		}
	}
	switch {
	case !g.Listed:
		explain += " graph.json does not list this blueprint: the graph is only the edges the trace took."
	case slices.ContainsFunc(g.Links, func(l graphLink) bool { return l.Extra }):
		explain += " Red edges were taken but are not in graph.json."
	}
	p.add(chart{ID: "graph-" + strconv.Itoa(len(p.Charts)), Type: "graph", Title: "Stage graph: " + g.Blueprint, Data: g,
		Explain: explain, Height: graphHeight(g)})
}

// graphHeight gives a graph's chart room for its rows of nodes (the layout puts them rowGap
// apart), between 320 and 900 pixels.
func graphHeight(g graphView) int {
	lo, hi := 0.0, 0.0
	for _, n := range g.Nodes {
		lo, hi = min(lo, n.Y), max(hi, n.Y)
	}
	return min(max(200+int((hi-lo)/rowGap*90), 320), 900)
}

// addMetrics adds what metrics/ gives: the visit lengths from visits.csv and the small tables.
func (p *page) addMetrics(dir string, rank stageRank) error {
	visits := filepath.Join(dir, fileVisits)
	if exists(visits) {
		v, err := readVisits(visits)
		if err != nil {
			return err
		}
		open := ""
		if v.open > 0 {
			open = fmt.Sprintf(" %d visits had not ended when the run did and are left out.", v.open)
		}
		for _, unit := range []string{"ticks", "ms"} {
			m, what := v.ticks, "ticks"
			if unit == "ms" {
				m, what = v.wall, "wall-clock milliseconds (wall_ms, which depends on the machine)"
			}
			c := latencyOf(m, unit, rank)
			if c == nil {
				continue
			}
			id := "latency-" + unit
			p.add(chart{ID: id + "-box", Type: "box", Title: "Visit length by stage (" + unit + ")",
				Data:    boxData{Unit: c.Unit, Stages: c.Stages, Boxes: c.Boxes},
				Explain: "How long each visit to a stage took, in " + what + ", from metrics/visits.csv: the box spans the 25th to the 75th percentile with the median inside, the whiskers the shortest and the longest visit; percentiles are nearest-rank, as stages.csv's." + open})
			p.add(chart{ID: id + "-hist", Type: "hist", Title: "Visit lengths of one stage (" + unit + ")",
				Data:    histData{Unit: c.Unit, Stages: c.Stages, Hists: c.Hists},
				Select:  options(c.Stages, 0),
				Explain: "The distribution of one stage's visit lengths (pick the stage): the number of visits in each bin of " + what + "."})
		}
	} else {
		p.Notes = append(p.Notes, "No metrics/visits.csv: visit lengths are not drawn.")
	}
	for _, name := range metricTables {
		path := filepath.Join(dir, name)
		if !exists(path) {
			continue
		}
		t, err := readTable(path)
		if err != nil {
			return err
		}
		t.Title = "metrics/" + name
		p.Tables = append(p.Tables, t)
	}
	return nil
}

// boxData is a box plot chart's data.
type boxData struct {
	Unit   string   `json:"unit"`
	Stages []string `json:"stages"`
	Boxes  []box    `json:"boxes"`
}

// histData is a histogram chart's data: one histogram per stage, one shown at a time.
type histData struct {
	Unit   string      `json:"unit"`
	Stages []string    `json:"stages"`
	Hists  []histogram `json:"hists"`
}

// readTable reads a CSV file whole, for a table on the page, up to maxTableRows rows.
func readTable(path string) (table, error) {
	var t table
	f, err := eachCSVRow(path, nil, func(r csvRow) error {
		if len(t.Rows) == maxTableRows {
			t.More++
			return nil
		}
		row := make([]cell, len(r.fields))
		for i, v := range r.fields {
			row[i] = cell{Text: v}
		}
		t.Rows = append(t.Rows, row)
		return nil
	})
	t.Header = f.header
	return t, err
}
