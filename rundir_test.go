package warren_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/warrenhq/warren"
	"github.com/warrenhq/warren/trace"
)

// readCSV reads a CSV file whole.
func readCSV(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return recs
}

// column is the value of column name in row 1 of a CSV table.
func column(t *testing.T, recs [][]string, name string) string {
	t.Helper()
	i := slices.Index(recs[0], name)
	if i < 0 || len(recs) < 2 {
		t.Fatalf("no column %q (or no row) in %v", name, recs[0])
	}
	return recs[1][i]
}

// TestRunInDir runs the review example into a run directory and checks every file: the trace
// (whose hash the manifest gives), the manifest (the trace header's scenario hash, the seed, the
// models, the inputs by hash and relative path, the parameters), the timeline (a row per tick,
// the phases summing to the agents alive), the stage graphs (every edge of the blueprint), the
// metrics tables (the run table agreeing with the summary) and the summary, written last.
func TestRunInDir(t *testing.T) {
	sc, err := warren.LoadParams(filepath.Join("scenarios", "examples", "review.toml"), nil, []warren.Param{{Name: "limits.max_ticks", Value: "300"}})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "run")
	params := []warren.Param{{Name: "limits.max_ticks", Value: "300"}}
	sum, err := warren.RunInDir(t.Context(), sc, warren.Options{}, dir, params)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{warren.RunTraceFile, warren.RunTimelineFile, warren.RunGraphFile, warren.RunManifestFile, warren.RunSummaryFile,
		filepath.Join(warren.RunMetricsDir, "run.csv"), filepath.Join(warren.RunMetricsDir, "visits.csv"), filepath.Join(warren.RunMetricsDir, "memory.csv")} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("the run directory lacks %s: %v", name, err)
		}
	}
	tr, err := os.ReadFile(filepath.Join(dir, warren.RunTraceFile))
	if err != nil {
		t.Fatal(err)
	}
	h, events, err := trace.ReadAll(bytes.NewReader(tr))
	if err != nil {
		t.Fatal(err)
	}

	var m warren.Manifest
	readJSON(t, filepath.Join(dir, warren.RunManifestFile), &m)
	sha := sha256.Sum256(tr)
	if m.Format != warren.ManifestFormat || m.ScenarioHash != h.ScenarioHash || m.Seed != sum.Seed || m.TraceSHA256 != "sha256:"+hex.EncodeToString(sha[:]) {
		t.Errorf("manifest %+v does not name the run's trace (hash %s, seed %d)", m, h.ScenarioHash, sum.Seed)
	}
	if !slices.Equal(m.Params, params) || m.Agents != 5 {
		t.Errorf("manifest params %v, agents %d", m.Params, m.Agents)
	}
	var ids []string
	for _, mm := range m.Models {
		ids = append(ids, mm.ID)
	}
	if want := []string{"js:stubborn", "scripted:careful", "scripted:learner", "scripted:reviewer"}; !slices.Equal(ids, want) {
		t.Errorf("manifest models %v, want %v", ids, want)
	}
	var inputs []string
	for _, in := range m.Inputs {
		data, err := os.ReadFile(filepath.Join("scenarios", "examples", in.Path))
		sum := sha256.Sum256(data)
		if err != nil || in.SHA256 != "sha256:"+hex.EncodeToString(sum[:]) {
			t.Errorf("input %s: hash %s does not match its file (%v)", in.Path, in.SHA256, err)
		}
		inputs = append(inputs, in.Path)
	}
	if want := []string{"review.toml", "review/pipeline.toml", "review/tools/grade.js", "review/stubborn.js"}; !slices.Equal(inputs, want) {
		t.Errorf("manifest inputs %v, want %v", inputs, want)
	}

	timeline := readCSV(t, filepath.Join(dir, warren.RunTimelineFile))
	if len(timeline)-1 != int(sum.Ticks) {
		t.Errorf("timeline has %d rows for %d ticks", len(timeline)-1, sum.Ticks)
	}
	last := timeline[len(timeline)-1]
	if last[len(last)-2] != strconv.Itoa(sum.Agents) || last[len(last)-1] != strconv.Itoa(len(events)-1) {
		t.Errorf("the last tick's row %v: want %d finished, %d events", last, sum.Agents, len(events)-1)
	}
	for _, row := range timeline[1:] {
		alive := 0
		for _, cell := range row[2 : len(row)-2] {
			n, _ := strconv.Atoi(cell)
			alive += n
		}
		finished, _ := strconv.Atoi(row[len(row)-2])
		if alive+finished != sum.Agents {
			t.Errorf("tick %s: %d agents in phases and %d finished, want %d in all", row[0], alive, finished, sum.Agents)
		}
	}

	var graphs []struct {
		Blueprint string   `json:"blueprint"`
		Stages    []string `json:"stages"`
		Edges     []struct {
			From, To, On, When, End string
		} `json:"edges"`
	}
	readJSON(t, filepath.Join(dir, warren.RunGraphFile), &graphs)
	bp := sc.Blueprints["pipeline"]
	if len(graphs) != 1 || graphs[0].Blueprint != "pipeline" || len(graphs[0].Edges) != len(bp.Edges()) {
		t.Fatalf("graph.json %+v, want the pipeline's %d edges", graphs, len(bp.Edges()))
	}
	if e := graphs[0].Edges[slices.IndexFunc(graphs[0].Edges, func(e struct{ From, To, On, When, End string }) bool { return e.When != "" })]; e.From != "review" || e.End != "done" || e.To != "" {
		t.Errorf("the first conditional edge is %+v, want review ending done", e)
	}

	run := readCSV(t, filepath.Join(dir, warren.RunMetricsDir, "run.csv"))
	if column(t, run, "model_turns") != strconv.FormatUint(sum.ModelTurns, 10) || column(t, run, "done") != "4" || column(t, run, "status") != "finished" {
		t.Errorf("run.csv %v disagrees with the summary (%d turns)", run, sum.ModelTurns)
	}
	var s struct {
		Status   string         `json:"status"`
		ByStatus map[string]int `json:"by_status"`
		Models   []struct {
			ID    string `json:"id"`
			Turns uint64 `json:"turns"`
		} `json:"models"`
	}
	readJSON(t, filepath.Join(dir, warren.RunSummaryFile), &s)
	if s.Status != "finished" || s.ByStatus["done"] != 4 || s.ByStatus["failed"] != 1 || len(s.Models) != 4 || s.Models[3].ID != "scripted:reviewer" || s.Models[3].Turns != 18 {
		t.Errorf("summary.json %+v", s)
	}

	// The same run again gives the same trace, manifest and graphs.
	again := filepath.Join(t.TempDir(), "again")
	if _, err := warren.RunInDir(t.Context(), sc, warren.Options{}, again, params); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{warren.RunTraceFile, warren.RunManifestFile, warren.RunGraphFile} {
		a, _ := os.ReadFile(filepath.Join(dir, name))
		b, _ := os.ReadFile(filepath.Join(again, name))
		if !bytes.Equal(a, b) {
			t.Errorf("%s differs between two runs of the same scenario and seed", name)
		}
	}
}

// TestOpenRunDirRefuses: a directory holding files, and options that carry a trace of their own,
// are refused before anything is written.
func TestOpenRunDirRefuses(t *testing.T) {
	sc, err := warren.Load(filepath.Join("scenarios", "examples", "on_error.toml"))
	if err != nil {
		t.Fatal(err)
	}
	full := t.TempDir()
	writeFile(t, full, "notes.txt", "mine")
	for _, tc := range []struct {
		name string
		dir  string
		opt  warren.Options
		want string
	}{
		{"a directory with files", full, warren.Options{}, "holds files already (notes.txt)"},
		{"a trace of its own", filepath.Join(t.TempDir(), "new"), warren.Options{Trace: &bytes.Buffer{}}, "keeps the run's trace"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := warren.OpenRunDir(tc.dir, sc, &tc.opt)
			if !errors.Is(err, warren.ErrRunDir) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want ErrRunDir saying %q", err, tc.want)
			}
		})
	}
	if data, err := os.ReadFile(filepath.Join(full, "notes.txt")); err != nil || string(data) != "mine" {
		t.Fatal("a refused run directory was written to")
	}
}

// readJSON decodes a JSON file into v.
func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}
