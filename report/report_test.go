package report

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// copyDir copies a fixture into a fresh temporary directory, for a test to change.
func copyDir(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	return dst
}

// setLine replaces line n (1-based) of the file at path.
func setLine(t *testing.T, path string, n int, text string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	lines[n-1] = text
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
}

// writeFile writes text to the file at path.
func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// mustBuild builds a fixture's page.
func mustBuild(t *testing.T, dir string) *page {
	t.Helper()
	p, err := build(dir)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// chartByType returns the first chart of a type.
func chartByType(t *testing.T, p *page, typ string) chart {
	t.Helper()
	i := slices.IndexFunc(p.Charts, func(c chart) bool { return c.Type == typ })
	if i < 0 {
		t.Fatalf("the page has no %s chart; it has %v", typ, chartIDs(p))
	}
	return p.Charts[i]
}

// chartIDs lists a page's charts.
func chartIDs(p *page) []string {
	var ids []string
	for _, c := range p.Charts {
		ids = append(ids, c.ID)
	}
	return ids
}

func TestRunPageOfTheReviewRun(t *testing.T) {
	p := mustBuild(t, "testdata/review")
	if p.Title != "Run: review" || lookup(p.Figures, "ticks") != "20" || lookup(p.Figures, "done") != "4" || p.FiguresFrom != "metrics/run.csv" {
		t.Errorf("title %q, figures %v from %s", p.Title, p.Figures, p.FiguresFrom)
	}
	var keys []string
	for _, kv := range p.Info {
		keys = append(keys, kv.Key)
	}
	if want := []string{"scenario", "scenario_hash", "seed", "host_version", "clock", "models", "parameters", "note"}; !slices.Equal(keys, want) {
		t.Errorf("manifest keys %v, want the file's order %v", keys, want)
	}
	if lookup(p.Info, "parameters") != "{}" || !strings.HasPrefix(lookup(p.Info, "models"), `["scripted:careful",`) {
		t.Errorf("manifest values as compact JSON: %v", p.Info)
	}
	if len(p.Notes) != 1 || !strings.Contains(p.Notes[0], "No model turn reported tokens") {
		t.Errorf("notes %q, want only that no tokens were spent", p.Notes)
	}
	if want := []string{"phases", "throughput", "wall", "graph-3", "latency-ticks-box", "latency-ticks-hist", "latency-ms-box", "latency-ms-hist"}; !slices.Equal(chartIDs(p), want) {
		t.Errorf("charts %v, want %v", chartIDs(p), want)
	}

	ph := chartByType(t, p, "phases").Data.(*phaseChart)
	at8 := map[string]int64{}
	for _, s := range ph.Series {
		at8[s.Name] = s.Data[slices.Index(ph.Ticks, 8)]
	}
	if at8["entering"] != 2 || at8["ready to infer"] != 1 || at8["finished"] != 2 || len(ph.Ticks) != 20 || ph.Bucket != 1 {
		t.Errorf("phases at tick 8 %v over %d ticks", at8, len(ph.Ticks))
	}

	g := chartByType(t, p, "graph").Data.(graphView)
	counts := map[string]int{}
	for _, l := range g.Links {
		counts[l.Source+" "+l.Target] = l.Count
	}
	want := map[string]int{"s:plan s:work": 5, "s:work s:review": 9, "s:review s:work": 4, "s:review end:done": 4, "s:review end:failed": 1,
		"s:plan end:failed": 0, "s:work end:failed": 0}
	if !mapsEqual(counts, want) {
		t.Errorf("edge counts %v, want %v", counts, want)
	}
	for id, visits := range map[string]int{"s:plan": 5, "s:work": 9, "s:review": 9} {
		if n := node(t, g, id); n.Visits != visits {
			t.Errorf("%s entered %d times, want %d", id, n.Visits, visits)
		}
	}

	bx := chartByType(t, p, "box").Data.(boxData)
	if !slices.Equal(bx.Stages, []string{"plan", "work", "review"}) || bx.Boxes[0] != (box{Min: 0, Q1: 2, Median: 2, Q3: 2, Max: 2, Mean: 1.6, N: 5}) {
		t.Errorf("boxes %v %+v", bx.Stages, bx.Boxes)
	}
	h := chartByType(t, p, "hist").Data.(histData)
	if r := h.Hists[2]; !slices.Equal(r.Labels, []string{"2"}) || !slices.Equal(r.Counts, []int{9}) {
		t.Errorf("review's histogram %+v, want its nine visits of 2 ticks", r)
	}
	var tables []string
	for _, tb := range p.Tables {
		tables = append(tables, tb.Title)
	}
	if !slices.Equal(tables, []string{"metrics/stages.csv", "metrics/groups.csv", "metrics/models.csv", "metrics/tools.csv"}) {
		t.Errorf("tables %v", tables)
	}
}

// mapsEqual compares two maps.
func mapsEqual[K comparable, V comparable](a, b map[K]V) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func TestRunPageOfTheLiveRun(t *testing.T) {
	p := mustBuild(t, "testdata/live")
	if len(p.Notes) != 0 {
		t.Errorf("notes %q, want none", p.Notes)
	}
	if slices.Contains(chartIDs(p), "wall") || slices.Contains(chartIDs(p), "latency-ms-box") {
		t.Errorf("charts %v: wall_ms is empty, so no wall-time chart", chartIDs(p))
	}
	c := chartByType(t, p, "tokens")
	tk := c.Data.(*tokenChart)
	total := int64(0)
	for _, v := range tk.Models[0].Data {
		total += v
	}
	if len(tk.Models) != 1 || tk.Models[0].Name != "openai:live" || total != 2139 || tk.Cost[len(tk.Cost)-1] != 0.00045585 {
		t.Errorf("tokens %+v (total %d)", tk, total)
	}
	if row := c.After.Rows[0]; row[0].Text != "openai:live" || row[1].Text != "15" || row[6].Text != "2139" || row[7].Text != "0.00045585" {
		t.Errorf("the spend table's row %v", row)
	}
}

func TestRunPageOfAStateDirectory(t *testing.T) {
	p := mustBuild(t, "testdata/state")
	for _, want := range []string{"incomplete: it has no end event", "line 121 of the trace was cut mid-line", "No timeline.csv", "No graph.json", "No metrics/ folder"} {
		if !slices.ContainsFunc(p.Notes, func(n string) bool { return strings.Contains(n, want) }) {
			t.Errorf("notes %q lack %q", p.Notes, want)
		}
	}
	if p.FiguresFrom != "the trace's header and end event" || lookup(p.Figures, "scenario") != "review" || lookup(p.Figures, "seed") != "11" {
		t.Errorf("figures %v from %s", p.Figures, p.FiguresFrom)
	}
	tp := chartByType(t, p, "throughput").Data.(*throughputChart)
	if tp.Source != "trace" || tp.Events[0] != 20 || tp.Events[1] != 7 {
		t.Errorf("throughput from the trace %+v; timeline.csv's first ticks had 20 and 7 events", tp)
	}
	g := chartByType(t, p, "graph").Data.(graphView)
	for _, l := range g.Links {
		if !l.Extra || g.Listed {
			t.Errorf("link %+v (listed %v): with no graph.json every edge is the trace's own", l, g.Listed)
		}
	}
	if c := chartByType(t, p, "graph"); !strings.Contains(c.Explain, "graph.json does not list this blueprint") {
		t.Errorf("the graph's text %q does not say graph.json lacks it", c.Explain)
	}
}

func TestSweepPage(t *testing.T) {
	p := mustBuild(t, "testdata/sweep")
	c := p.Charts[0]
	sc := c.Data.(sweepChart)
	if want := []string{"ticks", "agents", "done", "failed", "model_turns", "tool_calls", "tool_errors", "tokens", "cost_usd", "wall_s", "steps_per_s"}; !slices.Equal(sc.Metrics, want) {
		t.Errorf("metrics %v, want %v (scenario is text, not a metric)", sc.Metrics, want)
	}
	if !c.Select[2].Selected || c.Select[2].Label != "done" {
		t.Errorf("the chart shows %+v first, want done", c.Select)
	}
	if len(p.Charts) != 2 || sc.Param != "groups.voters.count" || len(sc.Series) != 2 || sc.Series[0].Name != "limits.max_ticks=50" {
		t.Fatalf("charts %v, series %+v", chartIDs(p), sc.Series)
	}
	if got := *sc.Series[0].Points[2][0]; got != (spread{Mean: 86, Min: 84, Max: 88, SD: 2, N: 3}) {
		t.Errorf("done at 100 voters, max_ticks 50: %+v", got)
	}
	if lookup(p.Figures, "status ok") != "6" || lookup(p.Figures, "seeds") != "1, 2, 3" {
		t.Errorf("figures %v", p.Figures)
	}
	cells := p.Tables[0]
	if len(cells.Rows) != 12 || cells.Rows[0][0].Href != "cells/count=100/max_ticks=50/seed=1/report.html" || cells.Rows[1][0].Href != "" {
		t.Errorf("cell table: %d rows, links %q, %q", len(cells.Rows), cells.Rows[0][0].Href, cells.Rows[1][0].Href)
	}
}

func TestSweepOverSeedsOnly(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "sweep.json"), `{"scenario": "quickstart", "params": [], "seeds": [1, 2]}`)
	writeFile(t, filepath.Join(dir, "results.csv"), "run,status,seed,done,note,odd\nruns/1,finished,1,10,a,NaN\nruns/2,finished,2,20,b,1\n")
	p := mustBuild(t, dir)
	sc := p.Charts[0].Data.(sweepChart)
	if len(p.Charts) != 1 || !slices.Equal(sc.Metrics, []string{"done"}) || len(sc.Series) != 1 {
		t.Fatalf("charts %v, metrics %v (text and NaN are no metric), series %+v", chartIDs(p), sc.Metrics, sc.Series)
	}
	if got := *sc.Series[0].Points[0][0]; got.Mean != 15 || got.Min != 10 || got.Max != 20 || got.N != 2 {
		t.Errorf("the spread across seeds %+v", got)
	}
}

func TestOneBlueprintUnderTwoKeys(t *testing.T) {
	dir := copyDir(t, "testdata/review")
	path := filepath.Join(dir, "graph.json")
	data, _ := os.ReadFile(path)
	one := strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(string(data)), "["), "]")
	writeFile(t, path, "["+one+","+one+"]")
	p := mustBuild(t, dir)
	if n := len(slices.DeleteFunc(slices.Clone(p.Charts), func(c chart) bool { return c.Type != "graph" })); n != 1 {
		t.Errorf("%d stage graphs, want the one blueprint once", n)
	}
}

func TestBadInput(t *testing.T) {
	tests := []struct {
		name    string
		fixture string
		change  func(t *testing.T, dir string) string // returns the directory to report on
		want    string                                // a regexp the error must match
	}{
		{"no such directory", "review", func(t *testing.T, dir string) string { return filepath.Join(dir, "nosuch") },
			`nosuch: stat .*no such file or directory`},
		{"a file, not a directory", "review", func(t *testing.T, dir string) string { return filepath.Join(dir, "trace.jsonl") },
			`trace.jsonl: not a directory; want a run directory`},
		{"neither kind", "review", func(t *testing.T, dir string) string { return t.TempDir() },
			`neither a run directory \(with trace.jsonl, .*\) nor a sweep directory \(with sweep.json and results.csv`},
		{"a wall time that is not a number", "review", func(t *testing.T, dir string) string {
			setLine(t, filepath.Join(dir, "timeline.csv"), 3, "1,soon,0,4,0,0,1,0,0,27")
			return dir
		}, `timeline.csv:3: column wall_ms: "soon" is not a number; want a finite decimal number or nothing`},
		{"a negative count", "review", func(t *testing.T, dir string) string {
			setLine(t, filepath.Join(dir, "timeline.csv"), 2, "0,12.5,-1,0,0,0,4,0,0,20")
			return dir
		}, `timeline.csv:2: column entering: "-1"; want a whole number, 0 or more`},
		{"a missing column", "review", func(t *testing.T, dir string) string {
			writeFile(t, filepath.Join(dir, "timeline.csv"), "tick,wall_ms,entering\n0,1,2\n")
			return dir
		}, `timeline.csv:1: missing column ready_to_infer, .*, events; the header has tick,wall_ms,entering`},
		{"ticks out of order", "review", func(t *testing.T, dir string) string {
			setLine(t, filepath.Join(dir, "timeline.csv"), 3, "0,27.5,0,4,0,0,1,0,0,27")
			return dir
		}, `timeline.csv:3: tick 0 after tick 0; ticks must increase`},
		{"a short row", "review", func(t *testing.T, dir string) string {
			setLine(t, filepath.Join(dir, "timeline.csv"), 4, "2,45")
			return dir
		}, `timeline.csv:4: a row must have as many fields as the header`},
		{"graph.json not JSON", "review", func(t *testing.T, dir string) string {
			setLine(t, filepath.Join(dir, "graph.json"), 3, `    "blueprint": pipeline,`)
			return dir
		}, `graph.json:3:18: not valid JSON: invalid character 'p'`},
		{"one blueprint twice, drawn two ways", "review", func(t *testing.T, dir string) string {
			writeFile(t, filepath.Join(dir, "graph.json"), `[{"blueprint": "p", "stages": ["a"], "edges": []},
 {"blueprint": "p", "stages": ["a", "b"], "edges": []}]`)
			return dir
		}, `graph.json:2: blueprint "p" appears twice with different graphs`},
		{"graph.json not an array", "review", func(t *testing.T, dir string) string {
			writeFile(t, filepath.Join(dir, "graph.json"), `{"blueprint": "pipeline"}`)
			return dir
		}, `graph.json:1:1: want a JSON array of blueprints`},
		{"an edge to no stage", "review", func(t *testing.T, dir string) string {
			setLine(t, filepath.Join(dir, "graph.json"), 6, `      {"from": "plan", "to": "nowhere", "on": "done", "when": ""},`)
			return dir
		}, `graph.json:2: blueprint "pipeline": edge 0: to "nowhere" is not one of its stages \(plan, work, review\), nor ""`},
		{"an end on an edge to a stage", "review", func(t *testing.T, dir string) string {
			setLine(t, filepath.Join(dir, "graph.json"), 6, `      {"from": "plan", "to": "work", "on": "done", "end": "done"},`)
			return dir
		}, `graph.json:2: blueprint "pipeline": edge 0 goes to "work" and has end "done"`},
		{"stages of the wrong type", "review", func(t *testing.T, dir string) string {
			setLine(t, filepath.Join(dir, "graph.json"), 4, `    "stages": "plan",`)
			return dir
		}, `graph.json:4: stages holds a JSON string: .* of type \[\]string`},
		{"a manifest that is a list", "review", func(t *testing.T, dir string) string {
			writeFile(t, filepath.Join(dir, "manifest.json"), `["review"]`)
			return dir
		}, `manifest.json:1:1: want a JSON object`},
		{"run.csv with two rows", "review", func(t *testing.T, dir string) string {
			path := filepath.Join(dir, "metrics", "run.csv")
			data, _ := os.ReadFile(path)
			lines := strings.Split(strings.TrimSpace(string(data)), "\n")
			writeFile(t, path, strings.Join(append(lines, lines[1]), "\n")+"\n")
			return dir
		}, `metrics/run.csv:3: a second row; run.csv has exactly one row`},
		{"visit ticks that are not whole", "review", func(t *testing.T, dir string) string {
			setLine(t, filepath.Join(dir, "metrics", "visits.csv"), 2, "1,careful-0,careful,pipeline,scripted:careful,plan,1,0,2,2.5,2,1,0,0,done,work,1,1,0,45.5,0,0")
			return dir
		}, `visits.csv:2: column ticks: "2.5" is not an integer`},
		{"a trace of another version", "review", func(t *testing.T, dir string) string {
			path := filepath.Join(dir, "trace.jsonl")
			data, _ := os.ReadFile(path)
			writeFile(t, path, strings.Replace(string(data), `"version":5`, `"version":4`, 1))
			return dir
		}, `trace.jsonl: .*line 1: version 4, this build reads version 5`},
		{"a trace line that is not JSON", "review", func(t *testing.T, dir string) string {
			setLine(t, filepath.Join(dir, "trace.jsonl"), 5, "{oops")
			return dir
		}, `trace.jsonl:5: not a JSON object; every line after the header is one event`},
		{"an event before its agent's spawn", "review", func(t *testing.T, dir string) string {
			setLine(t, filepath.Join(dir, "trace.jsonl"), 2, `{"tick":0,"seq":1,"agent":9,"name":"x","kind":"stage_enter","stage":"plan","visit":1}`)
			return dir
		}, `trace.jsonl:2: a stage_enter event of agent 9 before its spawn`},
		{"a cost that is a float", "live", func(t *testing.T, dir string) string {
			path := filepath.Join(dir, "trace.jsonl")
			data, _ := os.ReadFile(path)
			writeFile(t, path, strings.Replace(string(data), `"cost_usd":"0.0000225"`, `"cost_usd":2.25e-5`, 1))
			return dir
		}, `trace.jsonl:\d+: "cost_usd" must be a decimal number of dollars written as a string`},
		{"sweep.json not JSON", "sweep", func(t *testing.T, dir string) string {
			writeFile(t, filepath.Join(dir, "sweep.json"), "{\"scenario\": \"gossip\",\n \"params\": [}")
			return dir
		}, `sweep.json:2:13: not valid JSON`},
		{"sweep.json without seeds", "sweep", func(t *testing.T, dir string) string {
			writeFile(t, filepath.Join(dir, "sweep.json"), `{"scenario": "gossip", "params": [{"name": "a", "values": ["1"]}]}`)
			return dir
		}, `sweep.json: no seeds; want \{"scenario": NAME, "params": \[\{"name": KEY`},
		{"a value the sweep never set", "sweep", func(t *testing.T, dir string) string {
			setLine(t, filepath.Join(dir, "results.csv"), 3, "cells/x,ok,2,7,50,47,100,86,14,472,472,0,0,0,0.070,6742.9,gossip")
			return dir
		}, `results.csv:3: column groups.voters.count: "7" is not one of sweep.json's values for it \(100, 1000\)`},
		{"a seed the sweep never ran", "sweep", func(t *testing.T, dir string) string {
			setLine(t, filepath.Join(dir, "results.csv"), 2, "cells/x,ok,9,100,50,47,100,86,14,472,472,0,0,0,0.070,6742.9,gossip")
			return dir
		}, `results.csv:2: seed "9" is not one of sweep.json's seeds \(1, 2, 3\)`},
		{"results without a parameter's column", "sweep", func(t *testing.T, dir string) string {
			writeFile(t, filepath.Join(dir, "results.csv"), "run,status,seed,groups.voters.count,done\nx,ok,1,100,5\n")
			return dir
		}, `results.csv:1: missing column limits.max_ticks; the header has run,status,seed,groups.voters.count,done`},
		{"no results", "sweep", func(t *testing.T, dir string) string {
			if err := os.Remove(filepath.Join(dir, "results.csv")); err != nil {
				t.Fatal(err)
			}
			return dir
		}, `results.csv: missing; a sweep directory has sweep.json and results.csv`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := tt.change(t, copyDir(t, filepath.Join("testdata", tt.fixture)))
			err := Write(&bytes.Buffer{}, dir)
			if err == nil {
				t.Fatal("no error")
			}
			if !errors.Is(err, ErrBadInput) {
				t.Errorf("%v does not wrap ErrBadInput", err)
			}
			if !regexp.MustCompile(tt.want).MatchString(err.Error()) {
				t.Errorf("error %q\nwant it to match %q", err, tt.want)
			}
		})
	}
}

func TestSameInputSameBytes(t *testing.T) {
	for _, fixture := range []string{"review", "live", "state", "sweep"} {
		t.Run(fixture, func(t *testing.T) {
			var first, again, moved bytes.Buffer
			src := filepath.Join("testdata", fixture)
			for _, w := range []struct {
				buf *bytes.Buffer
				dir string
			}{{&first, src}, {&again, src}, {&moved, copyDir(t, src)}} {
				if err := Write(w.buf, w.dir); err != nil {
					t.Fatal(err)
				}
			}
			if !bytes.Equal(first.Bytes(), again.Bytes()) || !bytes.Equal(first.Bytes(), moved.Bytes()) {
				t.Error("the same directory gave different pages (or its copy elsewhere did)")
			}
		})
	}
}

func TestPageEscapesItsInputs(t *testing.T) {
	dir := copyDir(t, "testdata/review")
	setLine(t, filepath.Join(dir, "graph.json"), 3, `    "blueprint": "pipe</script><b>line",`)
	trace := filepath.Join(dir, "trace.jsonl")
	data, _ := os.ReadFile(trace)
	writeFile(t, trace, strings.ReplaceAll(string(data), `"blueprint":"pipeline"`, `"blueprint":"pipe\u003c/script\u003e\u003cb\u003eline"`))
	var buf bytes.Buffer
	if err := Write(&buf, dir); err != nil {
		t.Fatal(err)
	}
	html := buf.String()
	for _, bad := range []string{"<script>alert(1)", "</script><b>", "<b>line"} {
		if strings.Contains(html, bad) {
			t.Errorf("the page holds %q unescaped", bad)
		}
	}
	for _, good := range []string{"&lt;script&gt;alert(1)&lt;/script&gt;", `Stage graph: pipe&lt;/script&gt;&lt;b&gt;line`, `pipe\u003c/script\u003e\u003cb\u003eline`} {
		if !strings.Contains(html, good) {
			t.Errorf("the page lacks %q", good)
		}
	}
	if n := strings.Count(html, "</script>"); n != 3 {
		t.Errorf("the page closes %d script elements, want 3 (data, library, script)", n)
	}
}

// sha256Line is the checksum line of assets/README.md.
var sha256Line = regexp.MustCompile(`(?m)^sha256 ([0-9a-f]{64})  echarts\.min\.js$`)

func TestEmbeddedEChartsChecksum(t *testing.T) {
	readme, err := os.ReadFile("assets/README.md")
	if err != nil {
		t.Fatal(err)
	}
	m := sha256Line.FindSubmatch(readme)
	if m == nil {
		t.Fatal("assets/README.md has no line `sha256 <hex>  echarts.min.js`")
	}
	sum := sha256.Sum256([]byte(echartsJS))
	if got := hex.EncodeToString(sum[:]); got != string(m[1]) {
		t.Errorf("the embedded echarts.min.js has SHA-256 %s; assets/README.md says %s", got, m[1])
	}
	for name, js := range map[string]string{"echarts.min.js": echartsJS, "report.js": pageJS} {
		if strings.Contains(strings.ToLower(js), "</script") || strings.Contains(js, "<!--") {
			t.Errorf("%s holds </script or <!--, which would end or hide its inlined script element", name)
		}
	}
}
