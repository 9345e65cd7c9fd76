package traceexport

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/warrenhq/warren/table"
	"github.com/warrenhq/warren/trace"
)

// duckdbDir holds the Node.js package through which the test runs DuckDB: package.json pins
// @duckdb/node-api, package-lock.json its whole tree, run.mjs runs a job of SQL steps.
const duckdbDir = "testdata/duckdb"

// requireDuckDB and requirePandas name the variables that turn the DuckDB and pandas tests'
// skips (no node, no network, no pandas) into failures; .ci/run sets both.
const (
	requireDuckDB = "WARREN_REQUIRE_DUCKDB"
	requirePandas = "WARREN_REQUIRE_PANDAS"
)

// skipOrFail skips the test with the reason, or fails it when env is set to 1.
func skipOrFail(t *testing.T, env, reason string) {
	t.Helper()
	if os.Getenv(env) == "1" {
		t.Fatalf("%s, and %s=1 requires this test", reason, env)
	}
	t.Skip(reason + " (" + env + "=1 makes this a failure)")
}

// step is one SQL statement of a DuckDB job.
type step struct {
	Name string `json:"name"`
	SQL  string `json:"sql"`
}

// runDuckDB runs the steps through run.mjs in one in-memory database and returns each step's
// answer by name. The first call installs the pinned package with npm ci when node_modules is
// missing or holds another version.
func runDuckDB(t *testing.T, steps []step) map[string]answer {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		skipOrFail(t, requireDuckDB, "node is not installed (apt-get install nodejs npm)")
	}
	installDuckDB(t)
	job, err := json.Marshal(map[string][]step{"steps": steps})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "run.mjs")
	cmd.Dir = duckdbDir
	cmd.Stdin = bytes.NewReader(job)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node run.mjs: %v\n%s", err, stderr.String())
	}
	var answers map[string]answer
	dec := json.NewDecoder(bytes.NewReader(out))
	dec.UseNumber()
	if err := dec.Decode(&answers); err != nil {
		t.Fatalf("node run.mjs wrote %q: %v", out, err)
	}
	return answers
}

// installDuckDB runs npm ci in duckdbDir unless node_modules holds the version package.json pins.
func installDuckDB(t *testing.T) {
	t.Helper()
	var pkg struct {
		Dependencies map[string]string `json:"dependencies"`
		Version      string            `json:"version"`
	}
	readJSON(t, filepath.Join(duckdbDir, "package.json"), &pkg)
	want := pkg.Dependencies["@duckdb/node-api"]
	installed := filepath.Join(duckdbDir, "node_modules", "@duckdb", "node-api", "package.json")
	if _, err := os.Stat(installed); err == nil {
		readJSON(t, installed, &pkg)
		if pkg.Version == want {
			return
		}
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		skipOrFail(t, requireDuckDB, "npm is not installed (apt-get install npm), and "+duckdbDir+"/node_modules is not there")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, npm, "ci", "--no-audit", "--no-fund")
	cmd.Dir = duckdbDir
	if out, err := cmd.CombinedOutput(); err != nil {
		skipOrFail(t, requireDuckDB, fmt.Sprintf("npm ci in %s failed (no network?): %v\n%s", duckdbDir, err, out))
	}
}

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

// samplingTrace writes a valid trace whose first 20,482 events are spawns and stage_enters of
// 10,241 agents, with the one tool call after them: the shape of the 10,000-agent quickstart's
// trace, on which DuckDB's read_json_auto, sampling its first 20,480 lines, never sees tool.
func samplingTrace(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "sampling.jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := trace.NewWriter(f, trace.Header{Scenario: "sampling", ScenarioHash: "sha256:0", Clock: trace.ClockVirtual, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	const agents = 10_241
	ref := func(i int) trace.AgentRef { return trace.AgentRef{ID: uint64(i + 1), Name: fmt.Sprintf("a-%d", i)} }
	for i := range agents {
		w.Spawn(0, ref(i), "a", i, "b", "scripted:a", "")
	}
	for i := range agents {
		w.StageEnter(0, ref(i), "work", 1)
	}
	w.ToolCall(1, ref(0), "work", "a-0-t0-c0", "todo_add", json.RawMessage(`{"text":"x"}`), []string{"todo_add"}, "allow", "default", "")
	w.ToolResult(2, ref(0), "work", "a-0-t0-c0", "todo_add", true, "added")
	w.End(2, trace.RunTickLimit, 3, agents, 1, 1, 0, nil)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestDuckDB runs the DuckDB blocks of docs/analysis.md: the three questions over the Parquet
// export and over the raw trace (through the documented macro) of each shipped trace, checked
// against the Go answers; the macro DuckDB writes from a header, checked against the documented
// one; the sampling failure the page describes and both of its fixes, on a trace shaped like the
// 10,000-agent quickstart's; and money read back exactly from both.
func TestDuckDB(t *testing.T) {
	blocks := docBlocks(t, "duckdb:macro", "duckdb:macro-from-header", "duckdb:sampling-fails", "duckdb:sample-all",
		"duckdb:parquet q1", "duckdb:parquet q2", "duckdb:parquet q3", "duckdb:jsonl q1", "duckdb:jsonl q2", "duckdb:jsonl q3")
	traces := exportGolden(t)
	sampling := samplingTrace(t)
	samplingEvents := readEvents(t, sampling)

	steps := []step{
		{"version", "SELECT version()"},
		{"macro-from-header", sqlFor(blocks["duckdb:macro-from-header"], traces[0].trace, "")},
		{"macro", blocks["duckdb:macro"]},
		{"sampling/fails", sqlFor(blocks["duckdb:sampling-fails"], sampling, "")},
		{"sampling/macro", sqlFor(blocks["duckdb:jsonl q1"], sampling, "")},
		{"sampling/sample-all", sqlFor(blocks["duckdb:sample-all"], sampling, "")},
	}
	for _, e := range traces {
		for _, q := range questions {
			steps = append(steps,
				step{e.name + "/parquet/" + q, sqlFor(blocks["duckdb:parquet "+q], e.trace, e.dirs[table.Parquet])},
				step{e.name + "/jsonl/" + q, sqlFor(blocks["duckdb:jsonl "+q], e.trace, "")})
		}
		steps = append(steps, step{e.name + "/sample-all", sqlFor(blocks["duckdb:sample-all"], e.trace, "")})
	}
	live, err := filepath.Abs(goldenTrace("live"))
	if err != nil {
		t.Fatal(err)
	}
	liveDir := filepath.Join(t.TempDir(), "live")
	if _, err := ExportFile(context.Background(), live, liveDir, Options{Format: table.Parquet}); err != nil {
		t.Fatal(err)
	}
	steps = append(steps,
		step{"money/parquet", "SELECT sum(cost_usd)::VARCHAR AS cost FROM '" + liveDir + "/model_turn.parquet'"},
		step{"money/jsonl", "SELECT sum(cost_usd)::VARCHAR AS cost FROM warren_trace('" + live + "') WHERE kind = 'model_turn'"})

	got := runDuckDB(t, steps)
	t.Logf("DuckDB %v", got["version"].Rows)

	t.Run("macro from the header", func(t *testing.T) {
		a := got["macro-from-header"]
		if a.Error != "" || len(a.Rows) != 1 || a.Rows[0][0] != blocks["duckdb:macro"] {
			t.Errorf("DuckDB writes the macro %v (error %q); docs/analysis.md has\n%s", a.Rows, a.Error, blocks["duckdb:macro"])
		}
		if a := got["macro"]; a.Error != "" {
			t.Fatalf("the documented macro does not run: %s", a.Error)
		}
	})
	t.Run("sampling", func(t *testing.T) {
		if a := got["sampling/fails"]; !strings.Contains(a.Error, `Referenced column "tool" not found`) {
			t.Errorf("read_json_auto on a trace whose first 20,480 lines have no tool gave %v (error %q); docs/analysis.md says it fails", a.Rows, a.Error)
		}
		if d := compareAnswers(goToolCalls(samplingEvents), got["sampling/macro"]); d != "" {
			t.Errorf("question 1 through the macro: %s", d)
		}
		if d := compareAnswers(goCallsByTool(samplingEvents), got["sampling/sample-all"]); d != "" {
			t.Errorf("sample_size = -1: %s", d)
		}
	})
	for _, e := range traces {
		t.Run(e.name, func(t *testing.T) {
			for _, q := range questions {
				want := goAnswer(q, e.events)
				for _, from := range []string{"parquet", "jsonl"} {
					if d := compareAnswers(want, got[e.name+"/"+from+"/"+q]); d != "" {
						t.Errorf("%s over %s: %s", q, from, d)
					}
				}
			}
			if d := compareAnswers(goCallsByTool(e.events), got[e.name+"/sample-all"]); d != "" {
				t.Errorf("sample_size = -1: %s", d)
			}
		})
	}
	t.Run("money", func(t *testing.T) {
		want := exactCost(t, readEvents(t, live), trace.KindModelTurn)
		for _, from := range []string{"parquet", "jsonl"} {
			if a := got["money/"+from]; a.Error != "" || len(a.Rows) != 1 || a.Rows[0][0] != want {
				t.Errorf("the live trace's model turns cost %v over %s (error %q), want exactly %s", a.Rows, from, a.Error, want)
			}
		}
	})
}

// goCallsByTool answers the sample_size = -1 block: tool calls by tool.
func goCallsByTool(events []map[string]any) answer {
	counts := map[string]int64{}
	for _, e := range events {
		if e["kind"] == trace.KindToolCall {
			counts[str(e, "tool")]++
		}
	}
	a := answer{Columns: []string{"tool", "calls"}}
	for tool, n := range counts {
		a.Rows = append(a.Rows, []any{tool, n})
	}
	return a
}

// exactCost sums the cost_usd of the events of kind exactly, as DuckDB prints a DECIMAL(38,12).
func exactCost(t *testing.T, events []map[string]any, kind string) string {
	t.Helper()
	sum := new(big.Rat)
	n := 0
	for _, e := range events {
		if e["kind"] != kind || e["cost_usd"] == nil {
			continue
		}
		r, ok := new(big.Rat).SetString(str(e, "cost_usd"))
		if !ok {
			t.Fatalf("cost_usd %v is not a decimal", e["cost_usd"])
		}
		sum.Add(sum, r)
		n++
	}
	if n == 0 {
		t.Fatalf("no %s event has a cost", kind)
	}
	return sum.FloatString(12)
}
