package traceexport

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/warrenhq/warren/table"
	"github.com/warrenhq/warren/trace"
)

// analysisDoc is the page whose marked code blocks the analysis tests run.
const analysisDoc = "../docs/analysis.md"

// analysisTraces are the shipped golden traces the analysis tests export and ask the three
// questions of: failures with reasons (faults), ask and deny verdicts (gated), stages visited
// again and again (review), killed agents (kill_tree), a thousand workers (fanout).
var analysisTraces = []string{"faults", "gated", "review", "kill_tree", "fanout"}

// goldenTrace is the path of a shipped golden trace.
func goldenTrace(name string) string {
	return filepath.Join("..", "scenarios", "testdata", "golden", name+".jsonl")
}

// docMarker finds a marked block: an HTML comment naming it, then a fenced code block.
var docMarker = regexp.MustCompile("(?s)<!-- ([a-z0-9 :-]+) -->\n```[a-z]*\n(.*?)\n```\n")

// docBlocks returns the marked code blocks of docs/analysis.md by their marker, failing the test
// when one of want is missing.
func docBlocks(t *testing.T, want ...string) map[string]string {
	t.Helper()
	doc, err := os.ReadFile(analysisDoc)
	if err != nil {
		t.Fatal(err)
	}
	blocks := map[string]string{}
	for _, m := range docMarker.FindAllStringSubmatch(string(doc), -1) {
		if _, dup := blocks[m[1]]; dup {
			t.Fatalf("%s marks two blocks %q", analysisDoc, m[1])
		}
		blocks[m[1]] = m[2]
	}
	for _, w := range want {
		if blocks[w] == "" {
			t.Fatalf("%s has no block marked <!-- %s -->", analysisDoc, w)
		}
	}
	return blocks
}

// questions are the names of the three questions of docs/analysis.md.
var questions = []string{"q1", "q2", "q3"}

// exported is one golden trace and its exports, as the analysis tests query them.
type exported struct {
	name, trace string
	dirs        map[table.Format]string
	events      []map[string]any
}

// exportGolden exports each of analysisTraces in every format into a temporary folder and reads
// its events for the Go answers.
func exportGolden(t *testing.T) []exported {
	t.Helper()
	var out []exported
	for _, name := range analysisTraces {
		e := exported{name: name, dirs: map[table.Format]string{}}
		var err error
		if e.trace, err = filepath.Abs(goldenTrace(name)); err != nil {
			t.Fatal(err)
		}
		for _, f := range table.Formats() {
			dir := filepath.Join(t.TempDir(), name+"-"+string(f))
			if _, err := ExportFile(context.Background(), e.trace, dir, Options{Format: f}); err != nil {
				t.Fatalf("exporting %s: %v", name, err)
			}
			e.dirs[f] = dir
		}
		e.events = readEvents(t, e.trace)
		out = append(out, e)
	}
	return out
}

// readEvents decodes every event of a trace (not the header), numbers as json.Number.
func readEvents(t *testing.T, path string) []map[string]any {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	_, lines, err := trace.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	events := make([]map[string]any, len(lines))
	for i, l := range lines {
		dec := json.NewDecoder(bytes.NewReader(l))
		dec.UseNumber()
		if err := dec.Decode(&events[i]); err != nil {
			t.Fatal(err)
		}
	}
	return events
}

// sqlFor puts a trace and its export folder into a block of SQL in place of the page's run.jsonl
// and out/.
func sqlFor(block, tracePath, dir string) string {
	block = strings.ReplaceAll(block, "'run.jsonl'", "'"+tracePath+"'")
	return strings.ReplaceAll(block, "'out/", "'"+dir+"/")
}

// pythonFor does the same for a block of Python.
func pythonFor(block, tracePath, dir string) string {
	block = strings.ReplaceAll(block, `"run.jsonl"`, strconv.Quote(tracePath))
	return strings.ReplaceAll(block, `("out")`, "("+strconv.Quote(dir)+")")
}

// answer is a question's answer: its column names and rows.
type answer struct {
	Columns []string `json:"columns"`
	Rows    [][]any  `json:"rows"`
	Error   string   `json:"error"`
}

// goAnswer computes question q from the trace's events in Go: what every other way must give.
func goAnswer(q string, events []map[string]any) answer {
	switch q {
	case "q1":
		return goToolCalls(events)
	case "q2":
		return goVisits(events)
	}
	return goEndings(events)
}

// str and num read an event field.
func str(e map[string]any, k string) string { s, _ := e[k].(string); return s }
func num(e map[string]any, k string) float64 {
	n, _ := e[k].(json.Number)
	f, _ := n.Float64()
	return f
}

// goToolCalls answers question 1: calls, results and failed results by tool and verdict.
func goToolCalls(events []map[string]any) answer {
	type call struct{ agent, id string }
	ok := map[call]bool{}
	for _, e := range events {
		if e["kind"] == trace.KindToolResult {
			ok[call{str(e, "name"), str(e, "call_id")}] = e["ok"] == true
		}
	}
	type key struct{ tool, verdict string }
	var keys []key
	counts := map[key]*[3]int64{}
	for _, e := range events {
		if e["kind"] != trace.KindToolCall {
			continue
		}
		k := key{str(e, "tool"), str(e, "verdict")}
		if counts[k] == nil {
			counts[k] = new([3]int64)
			keys = append(keys, k)
		}
		c := counts[k]
		c[0]++
		if good, ran := ok[call{str(e, "name"), str(e, "call_id")}]; ran {
			c[1]++
			if !good {
				c[2]++
			}
		}
	}
	a := answer{Columns: []string{"tool", "verdict", "calls", "results", "failed"}}
	for _, k := range keys {
		c := counts[k]
		a.Rows = append(a.Rows, []any{k.tool, k.verdict, c[0], c[1], c[2]})
	}
	return a
}

// goVisits answers question 2: per stage, the ticks from each stage_enter to the agent's next
// transition or terminal.
func goVisits(events []map[string]any) answer {
	type open struct {
		stage string
		tick  float64
	}
	last := map[string]*open{} // the agent's last move, when it was a stage_enter
	ticks := map[string][]float64{}
	for _, e := range events {
		agent := e["agent"].(json.Number).String()
		switch e["kind"] {
		case trace.KindStageEnter, trace.KindTransition, trace.KindTerminal:
		default:
			continue
		}
		if o := last[agent]; o != nil {
			ticks[o.stage] = append(ticks[o.stage], num(e, "tick")-o.tick)
		}
		last[agent] = nil
		if e["kind"] == trace.KindStageEnter {
			last[agent] = &open{str(e, "stage"), num(e, "tick")}
		}
	}
	a := answer{Columns: []string{"stage", "visits", "mean", "median", "p90", "max"}}
	for stage, ts := range ticks {
		slices.Sort(ts)
		var sum float64
		for _, x := range ts {
			sum += x
		}
		a.Rows = append(a.Rows, []any{stage, int64(len(ts)), sum / float64(len(ts)), quantile(ts, 0.5), quantile(ts, 0.9), ts[len(ts)-1]})
	}
	return a
}

// quantile is the q-quantile of sorted xs by linear interpolation between the closest ranks:
// DuckDB's quantile_cont, pandas' quantile.
func quantile(xs []float64, q float64) float64 {
	pos := q * float64(len(xs)-1)
	lo := int(math.Floor(pos))
	if lo+1 >= len(xs) {
		return xs[lo]
	}
	return xs[lo] + (pos-float64(lo))*(xs[lo+1]-xs[lo])
}

// goEndings answers question 3: agents by group, final status, stage and reason, with their share
// of the group's agents that ended.
func goEndings(events []map[string]any) answer {
	group := map[string]string{}
	type key struct{ group, status, stage, reason string }
	var keys []key
	counts := map[key]int64{}
	ended := map[string]int64{}
	for _, e := range events {
		agent := e["agent"].(json.Number).String()
		switch e["kind"] {
		case trace.KindSpawn:
			group[agent] = str(e, "group")
		case trace.KindTerminal:
			k := key{group[agent], str(e, "status"), str(e, "stage"), str(e, "reason")}
			if counts[k] == 0 {
				keys = append(keys, k)
			}
			counts[k]++
			ended[k.group]++
		}
	}
	a := answer{Columns: []string{"group", "status", "stage", "reason", "agents", "share"}}
	for _, k := range keys {
		a.Rows = append(a.Rows, []any{k.group, k.status, k.stage, k.reason, counts[k], float64(counts[k]) / float64(ended[k.group])})
	}
	return a
}

// cell is a value of an answer made comparable: a number (from Go, JSON, or DuckDB's text of a
// BIGINT) as a float, a null as "" (CSV cannot tell them apart), a string as itself.
func cell(v any) (float64, string, bool) {
	switch x := v.(type) {
	case nil:
		return 0, "", false
	case int64:
		return float64(x), "", true
	case float64:
		return x, "", true
	case json.Number:
		f, err := x.Float64()
		return f, x.String(), err == nil
	case string:
		if f, err := strconv.ParseFloat(x, 64); err == nil {
			return f, x, true
		}
		return 0, x, false
	}
	return 0, fmt.Sprint(v), false
}

// rowKey is a row's text for sorting: answers are compared as sets of rows, since a null sorts
// last in pandas and first in DuckDB.
func rowKey(row []any) string {
	var b strings.Builder
	for _, v := range row {
		if f, _, isNum := cell(v); isNum {
			fmt.Fprintf(&b, "%.6f\x00", f)
		} else {
			_, s, _ := cell(v)
			b.WriteString(s + "\x00")
		}
	}
	return b.String()
}

// compareAnswers says how got differs from want, or "" when they agree: the same columns and
// rows, numbers within a relative 1e-9.
func compareAnswers(want, got answer) string {
	if got.Error != "" {
		return "it failed: " + got.Error
	}
	if !slices.Equal(want.Columns, got.Columns) {
		return fmt.Sprintf("columns %q, want %q", got.Columns, want.Columns)
	}
	if len(want.Rows) != len(got.Rows) {
		return fmt.Sprintf("%d rows, want %d:\n got  %v\n want %v", len(got.Rows), len(want.Rows), got.Rows, want.Rows)
	}
	sorted := func(rows [][]any) [][]any {
		rows = slices.Clone(rows)
		slices.SortFunc(rows, func(a, b []any) int { return strings.Compare(rowKey(a), rowKey(b)) })
		return rows
	}
	w, g := sorted(want.Rows), sorted(got.Rows)
	for i := range w {
		for j := range w[i] {
			wf, ws, wnum := cell(w[i][j])
			gf, gs, gnum := cell(g[i][j])
			same := wnum == gnum && ws == gs
			if wnum && gnum {
				same = math.Abs(wf-gf) <= 1e-9*math.Max(1, math.Abs(wf))
			}
			if !same {
				return fmt.Sprintf("row %v, want %v (column %s)", g[i], w[i], want.Columns[j])
			}
		}
	}
	return ""
}

// TestGoAnswers checks the Go answers on one trace, so that what every other way is checked against
// is itself right: the review example's one failed agent (failed by its third review, as
// review.toml says), and visits whose median, p90 and max are in order.
func TestGoAnswers(t *testing.T) {
	events := readEvents(t, goldenTrace("review"))
	q3 := goEndings(events)
	var failed []any
	for _, r := range q3.Rows {
		if r[1] == "failed" {
			failed = r
		}
	}
	if failed == nil || failed[4] != int64(1) || failed[3] != `stage "review" ended the agent failed: on done when (memory.rounds ?? 0) + 1 >= 3` {
		t.Errorf("review: the failed agent is %v, want the one stubborn agent failed by its third review", failed)
	}
	if got := quantile([]float64{1, 2, 3, 4}, 0.9); math.Abs(got-3.7) > 1e-12 {
		t.Errorf("quantile 0.9 of 1..4 = %v, want 3.7", got)
	}
	q2 := goVisits(events)
	for _, r := range q2.Rows {
		if r[1].(int64) <= 0 || r[5].(float64) < r[4].(float64) || r[4].(float64) < r[3].(float64) {
			t.Errorf("review: visits %v are not ordered min <= median <= p90 <= max", r)
		}
	}
}

// TestAnalysisMacroMatchesSchema checks the DuckDB macro of docs/analysis.md against the trace
// schema: one column per field of trace.Columns, in order, of the DuckDB type of its trace type.
// (TestDuckDB checks that DuckDB writes the same macro from a trace's header.)
func TestAnalysisMacroMatchesSchema(t *testing.T) {
	blocks := docBlocks(t, "duckdb:macro")
	duck := map[trace.FieldType]string{
		trace.TypeInteger: "BIGINT", trace.TypeString: "VARCHAR", trace.TypeBoolean: "BOOLEAN",
		trace.TypeDecimal: "DECIMAL(38,12)", trace.TypeStrings: "VARCHAR[]", trace.TypeJSON: "JSON",
	}
	var cols []string
	for _, c := range trace.Columns() {
		typ, ok := duck[c.Type]
		if !ok {
			t.Fatalf("field %s has type %q, which the macro has no DuckDB type for", c.Name, c.Type)
		}
		cols = append(cols, fmt.Sprintf("%q: '%s'", c.Name, typ))
	}
	want := "CREATE OR REPLACE MACRO warren_trace(path) AS TABLE SELECT * FROM read_json(path, format = 'newline_delimited', columns = {" +
		strings.Join(cols, ", ") + "}) WHERE kind IS NOT NULL;"
	if got := blocks["duckdb:macro"]; got != want {
		t.Errorf("docs/analysis.md's warren_trace macro is not the version %d schema's; it should read:\n%s", trace.Version, want)
	}
}
