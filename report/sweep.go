package report

import (
	"fmt"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// The files of a sweep directory (host sweep), relative to it.
const (
	fileSweep   = "sweep.json"
	fileResults = "results.csv"
	fileReport  = "report.html"
)

// sweepSpec is sweep.json: the scenario, each parameter with its values (in the order the sweep
// ran them, which the charts keep), and the seeds.
type sweepSpec struct {
	Scenario string       `json:"scenario"`
	Params   []sweepParam `json:"params"`
	Seeds    []int64      `json:"seeds"`
}

// sweepParam is one swept parameter: its name, as results.csv's column, and its values.
type sweepParam struct {
	Name   string   `json:"name"`
	Values []string `json:"values"`
}

// sweepCell is one row of results.csv: one run of the sweep.
type sweepCell struct {
	run, status string
	fields      []string
	// param is the index of each parameter's value in its Values.
	param []int
}

// sweepChart is one parameter's chart: for each combination of the other parameters' values
// (a series), the mean, range and deviation of each metric across seeds at each of its values.
type sweepChart struct {
	Param   string        `json:"param"`
	Values  []string      `json:"values"`
	Metrics []string      `json:"metrics"`
	Series  []sweepSeries `json:"series"`
}

// sweepSeries is one line of a sweep chart: Points[metric][value] (null where no cell has the
// metric).
type sweepSeries struct {
	Name   string      `json:"name"`
	Points [][]*spread `json:"points"`
}

// readSweepSpec reads and checks sweep.json.
func readSweepSpec(path string) (*sweepSpec, error) {
	var s sweepSpec
	if err := readJSON(path, &s); err != nil {
		return nil, err
	}
	const want = `want {"scenario": NAME, "params": [{"name": KEY, "values": [TEXT, …]}, …], "seeds": [N, …]}`
	if len(s.Seeds) == 0 {
		return nil, badf("%s: no seeds; %s", path, want)
	}
	names := map[string]bool{"run": true, "status": true, "seed": true}
	for i, p := range s.Params {
		if p.Name == "" || names[p.Name] {
			return nil, badf("%s: params[%d]: name %q is empty, repeated or one of run, status, seed; %s", path, i, p.Name, want)
		}
		names[p.Name] = true
		if len(p.Values) == 0 {
			return nil, badf("%s: params[%d] (%s): no values; %s", path, i, p.Name, want)
		}
		for j, v := range p.Values {
			if slices.Index(p.Values, v) != j {
				return nil, badf("%s: params[%d] (%s): value %q is listed twice", path, i, p.Name, v)
			}
		}
	}
	return &s, nil
}

// sweepPage builds the page of a sweep directory.
func sweepPage(dir string) (*page, error) {
	spec, err := readSweepSpec(filepath.Join(dir, fileSweep))
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, fileResults)
	if !exists(path) {
		return nil, badf("%s: missing; a sweep directory has sweep.json and results.csv (host sweep writes both)", path)
	}
	need := []string{"run", "status", "seed"}
	for _, p := range spec.Params {
		need = append(need, p.Name)
	}
	var cells []sweepCell
	f, err := eachCSVRow(path, need, func(r csvRow) error {
		c := sweepCell{run: r.get("run"), status: r.get("status"), fields: r.fields}
		seed, err := strconv.ParseInt(r.get("seed"), 10, 64)
		if err != nil || !slices.Contains(spec.Seeds, seed) {
			return r.errf("seed %q is not one of sweep.json's seeds (%s)", r.get("seed"), joinInts(spec.Seeds))
		}
		for _, p := range spec.Params {
			i := slices.Index(p.Values, r.get(p.Name))
			if i < 0 {
				return r.errf("column %s: %q is not one of sweep.json's values for it (%s)", p.Name, r.get(p.Name), strings.Join(p.Values, ", "))
			}
			c.param = append(c.param, i)
		}
		cells = append(cells, c)
		return nil
	})
	if err != nil {
		return nil, err
	}
	metrics, values := sweepMetrics(f.header, need, cells)

	p := &page{Kind: "sweep", Title: "Sweep: " + spec.Scenario}
	p.Figures = sweepFigures(spec, cells)
	p.FiguresFrom = "sweep.json and results.csv"
	if len(metrics) == 0 {
		p.Notes = append(p.Notes, "results.csv has no numeric metric column: there is nothing to draw.")
	}
	if len(cells) == 0 {
		p.Notes = append(p.Notes, "results.csv has no rows: the sweep ran no cell.")
	}
	if len(metrics) > 0 && len(cells) > 0 {
		// The agents' own measure when they kept one in memory (a population experiment's
		// result, memory.<key>.mean), else how many agents ended done.
		def := slices.IndexFunc(metrics, func(m string) bool { return strings.HasPrefix(m, "memory.") })
		if def < 0 {
			def = max(0, slices.Index(metrics, "done"))
		}
		if len(spec.Params) == 0 {
			// A sweep over seeds only: one point, the spread across them.
			spec = &sweepSpec{Scenario: spec.Scenario, Seeds: spec.Seeds, Params: []sweepParam{{Name: "seeds only", Values: []string{"all seeds"}}}}
			for i := range cells {
				cells[i].param = []int{0}
			}
		}
		for i := range spec.Params {
			c := sweepChartOf(spec, i, metrics, values, cells)
			p.add(chart{ID: "sweep-" + strconv.Itoa(i), Type: "sweep", Title: "Metric against " + spec.Params[i].Name, Data: c,
				Select: options(metrics, def),
				Explain: "Each point is the metric's mean over the cells with that value of " + spec.Params[i].Name +
					" (one cell per seed; a line per combination of the other parameters); the bar spans the smallest to the largest value, not ±1 sd. The tooltip gives the number of cells and the sample standard deviation. Pick the metric in the menu."})
		}
	}
	p.Tables = append(p.Tables, cellTable(dir, f.header, cells))
	return p, nil
}

// sweepMetrics finds the metric columns: every column that is not run, status, seed or a
// parameter and whose values are all finite numbers (or empty), at least one of them not empty.
// values[row][metric] is each cell's value; ok marks the ones it has.
func sweepMetrics(header, skip []string, cells []sweepCell) ([]string, [][]optFloat) {
	var metrics []string
	var cols []int
	for i, h := range header {
		if slices.Contains(skip, h) {
			continue
		}
		numeric, some := true, false
		for _, c := range cells {
			if c.fields[i] == "" {
				continue
			}
			if _, ok := finite(c.fields[i]); !ok {
				numeric = false
				break
			}
			some = true
		}
		if numeric && some {
			metrics = append(metrics, h)
			cols = append(cols, i)
		}
	}
	values := make([][]optFloat, len(cells))
	for r, c := range cells {
		values[r] = make([]optFloat, len(cols))
		for m, i := range cols {
			if v, ok := finite(c.fields[i]); ok {
				values[r][m] = optFloat{v, true}
			}
		}
	}
	return metrics, values
}

// optFloat is a number that may be absent.
type optFloat struct {
	v  float64
	ok bool
}

// sweepChartOf computes parameter pi's chart: the cells grouped by the other parameters' values
// (a series each, in the order the values are listed, combinations no cell has left out) and,
// within a series, by pi's value.
func sweepChartOf(spec *sweepSpec, pi int, metrics []string, values [][]optFloat, cells []sweepCell) sweepChart {
	param := spec.Params[pi]
	c := sweepChart{Param: param.Name, Values: param.Values, Metrics: metrics}
	// A combination of the other parameters, as each one's value index, is a series' key.
	keyOf := func(cell sweepCell) string {
		var b strings.Builder
		for j, v := range cell.param {
			if j != pi {
				fmt.Fprintf(&b, "%d,", v)
			}
		}
		return b.String()
	}
	groups := map[string][]int{}
	var keys []string
	for r, cell := range cells {
		k := keyOf(cell)
		if groups[k] == nil {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], r)
	}
	slices.SortFunc(keys, func(a, b string) int { return compareCombos(cells[groups[a][0]].param, cells[groups[b][0]].param, pi) })
	for _, k := range keys {
		rows := groups[k]
		s := sweepSeries{Name: comboName(spec, cells[rows[0]].param, pi), Points: make([][]*spread, len(metrics))}
		for m := range metrics {
			s.Points[m] = make([]*spread, len(param.Values))
			for vi := range param.Values {
				var xs []float64
				for _, r := range rows {
					if cells[r].param[pi] == vi && values[r][m].ok {
						xs = append(xs, values[r][m].v)
					}
				}
				if len(xs) > 0 {
					sp := spreadOf(xs)
					s.Points[m][vi] = &sp
				}
			}
		}
		c.Series = append(c.Series, s)
	}
	return c
}

// compareCombos orders two cells' combinations of the parameters other than pi by their values'
// places in sweep.json, the first parameter first.
func compareCombos(a, b []int, pi int) int {
	for j := range a {
		if j != pi && a[j] != b[j] {
			return a[j] - b[j]
		}
	}
	return 0
}

// comboName names a series by the other parameters' values ("all cells" when there are none).
func comboName(spec *sweepSpec, param []int, pi int) string {
	var parts []string
	for j, v := range param {
		if j != pi {
			parts = append(parts, spec.Params[j].Name+"="+spec.Params[j].Values[v])
		}
	}
	if len(parts) == 0 {
		return "all cells"
	}
	return strings.Join(parts, ", ")
}

// sweepFigures are the sweep's header figures: its scenario, parameters, seeds and how its cells
// ended.
func sweepFigures(spec *sweepSpec, cells []sweepCell) []keyValue {
	out := []keyValue{{"scenario", spec.Scenario}}
	for _, p := range spec.Params {
		out = append(out, keyValue{p.Name, strings.Join(p.Values, ", ")})
	}
	out = append(out, keyValue{"seeds", joinInts(spec.Seeds)}, keyValue{"cells", strconv.Itoa(len(cells))})
	var statuses []string
	count := map[string]int{}
	for _, c := range cells {
		if count[c.status] == 0 {
			statuses = append(statuses, c.status)
		}
		count[c.status]++
	}
	slices.Sort(statuses)
	for _, s := range statuses {
		out = append(out, keyValue{"status " + s, strconv.Itoa(count[s])})
	}
	return out
}

// cellTable is results.csv as a table, each run linked to its own report when it has one.
func cellTable(dir string, header []string, cells []sweepCell) table {
	t := table{Title: "Cells (results.csv)", Header: header}
	runCol := slices.Index(header, "run")
	for _, c := range cells {
		row := make([]cell, len(c.fields))
		for i, v := range c.fields {
			row[i] = cell{Text: v}
		}
		if filepath.IsLocal(filepath.FromSlash(c.run)) && exists(filepath.Join(dir, filepath.FromSlash(c.run), fileReport)) {
			row[runCol].Href = (&url.URL{Path: strings.TrimSuffix(filepath.ToSlash(c.run), "/") + "/" + fileReport}).String()
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// joinInts writes numbers as "1, 2, 3".
func joinInts(xs []int64) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.FormatInt(x, 10)
	}
	return strings.Join(s, ", ")
}
