package metrics

import (
	"bytes"
	"cmp"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/warrenhq/warren/table"
	"github.com/warrenhq/warren/trace"
)

// goldenTraces are the scenarios' golden traces: real runs of every shipped example.
func goldenTraces(t testing.TB) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "scenarios", "testdata", "golden", "*.jsonl"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden traces: %v", err)
	}
	return files
}

// goldenTables returns the metrics tables of the golden trace of the example name.
func goldenTables(t *testing.T, name string) []table.Table {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "scenarios", "testdata", "golden", name+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	tabs, err := FromTrace(bytes.NewReader(data), nil)
	if err != nil {
		t.Fatal(err)
	}
	return tabs
}

// counts is what an end or reap event counts.
type counts struct {
	Agent      int64  `json:"agent"`
	Kind       string `json:"kind"`
	Status     string `json:"status"`
	Ticks      int64  `json:"ticks"`
	Agents     int64  `json:"agents"`
	Events     int64  `json:"events"`
	ModelTurns int64  `json:"model_turns"`
	ToolCalls  int64  `json:"tool_calls"`
	ToolErrors int64  `json:"tool_errors"`
	Tokens     int64  `json:"tokens"`
	Cost       string `json:"cost_usd"`
}

// columnOf returns the values of the column name of tab.
func columnOf(t *testing.T, tab table.Table, name string) []any {
	t.Helper()
	for i, c := range tab.Columns {
		if c.Name == name {
			out := make([]any, len(tab.Rows))
			for n, row := range tab.Rows {
				out[n] = row[i]
			}
			return out
		}
	}
	t.Fatalf("%s has no column %q", tab.Name, name)
	return nil
}

// sum adds up an integer or decimal column (a decimal in picodollars).
func sum(t *testing.T, tab table.Table, name string) int64 {
	t.Helper()
	var total int64
	for _, v := range columnOf(t, tab, name) {
		switch v := v.(type) {
		case int64:
			total += v
		case string:
			pico, err := parseDollars([]byte(v))
			if err != nil {
				t.Fatal(err)
			}
			total += pico
		default:
			t.Fatalf("%s.%s holds %T", tab.Name, name, v)
		}
	}
	return total
}

// TestGoldenTraces checks the tables of every golden trace against what the trace itself counts:
// the run row against the end event, each agent's row against its reap event, and every table
// that partitions the run (agents, groups, trees, stages, models, tools) against the run row, and
// each memory row against itself and its group. It also checks that Observe, fed the lines one
// by one, gives what FromTrace gives.
func TestGoldenTraces(t *testing.T) {
	for _, path := range goldenTraces(t) {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".jsonl"), func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			tabs, err := FromTrace(bytes.NewReader(data), nil)
			if err != nil {
				t.Fatal(err)
			}
			h, events, err := trace.ReadAll(bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			var end counts
			reaps := map[int64]counts{}
			enters := 0
			for _, raw := range events {
				var ev counts
				if err := json.Unmarshal(raw, &ev); err != nil {
					t.Fatal(err)
				}
				switch ev.Kind {
				case trace.KindEnd:
					end = ev
				case trace.KindReap:
					reaps[ev.Agent] = ev
				case trace.KindStageEnter:
					enters++
				}
			}
			if end.Kind != trace.KindEnd {
				t.Fatal("the golden trace has no end event")
			}

			run := rowMap(byName(t, tabs, "run"), 0)
			endCost, err := parseDollars([]byte(cmp.Or(end.Cost, "0")))
			if err != nil {
				t.Fatal(err)
			}
			for col, want := range map[string]any{
				"status": end.Status, "ticks": end.Ticks, "agents": end.Agents, "events": end.Events, "model_turns": end.ModelTurns,
				"tool_calls": end.ToolCalls, "tool_errors": end.ToolErrors, "tokens": end.Tokens, "cost_usd": trace.DollarsOf(endCost),
				"scenario": h.Scenario, "unfinished": int64(0),
			} {
				if run[col] != want {
					t.Errorf("run %s = %v, the end event says %v", col, run[col], want)
				}
			}

			agents := byName(t, tabs, "agents")
			if int64(len(agents.Rows)) != run["agents"] {
				t.Errorf("%d agent rows, run says %v agents", len(agents.Rows), run["agents"])
			}
			for n := range agents.Rows {
				a := rowMap(agents, n)
				reap, ok := reaps[a["agent"].(int64)]
				if !ok {
					t.Errorf("agent %v has no reap event", a["agent"])
					continue
				}
				cost, _ := parseDollars([]byte(cmp.Or(reap.Cost, "0")))
				if a["status"] != reap.Status || a["model_turns"] != reap.ModelTurns || a["tool_calls"] != reap.ToolCalls ||
					a["tool_errors"] != reap.ToolErrors || a["tokens"] != reap.Tokens || a["cost_usd"] != trace.DollarsOf(cost) {
					t.Errorf("agent %v: %v; its reap event says %+v", a["agent"], a, reap)
				}
			}
			for _, status := range []string{"done", "failed", "killed"} {
				var n int64
				for _, v := range columnOf(t, agents, "status") {
					if v == status {
						n++
					}
				}
				if n != run[status] {
					t.Errorf("%d agents with status %s, run says %v", n, status, run[status])
				}
			}
			for _, col := range []string{"model_turns", "tool_calls", "tool_errors", "denied", "asked", "prompts", "tokens"} {
				if got := sum(t, agents, col); got != run[col] {
					t.Errorf("agents' %s sum to %d, run says %v", col, got, run[col])
				}
			}

			visits := byName(t, tabs, "visits")
			if len(visits.Rows) != enters {
				t.Errorf("%d visits, the trace has %d stage_enter events", len(visits.Rows), enters)
			}
			for _, part := range []struct{ table, col, runCol string }{
				{"visits", "model_turns", "model_turns"}, {"visits", "tool_calls", "tool_calls"}, {"visits", "tool_errors", "tool_errors"},
				{"stages", "visits", ""}, {"stages", "model_turns", "model_turns"}, {"stages", "tokens", "tokens"},
				{"groups", "agents", "agents"}, {"groups", "tool_errors", "tool_errors"}, {"groups", "cost_usd", "cost_usd"},
				{"trees", "agents", "agents"}, {"trees", "model_turns", "model_turns"}, {"trees", "cost_usd", "cost_usd"},
				{"models", "turns", "model_turns"}, {"models", "cost_usd", "cost_usd"},
				{"tools", "calls", "tool_calls"}, {"tools", "errors", "tool_errors"},
			} {
				want := int64(enters)
				if part.runCol == "cost_usd" {
					want = endCost
				} else if part.runCol != "" {
					want = run[part.runCol].(int64)
				}
				if got := sum(t, byName(t, tabs, part.table), part.col); got != want {
					t.Errorf("%s.%s sums to %d, want %d", part.table, part.col, got, want)
				}
			}

			// Every memory value is a number, a string or another value, and a group's rows
			// count no more agents than the group has.
			groupAgents := map[any]any{}
			groups := byName(t, tabs, "groups")
			for n := range groups.Rows {
				g := rowMap(groups, n)
				groupAgents[g["group"]] = g["agents"]
			}
			memory := byName(t, tabs, "memory")
			for n := range memory.Rows {
				m := rowMap(memory, n)
				if m["agents"] != m["numbers"].(int64)+m["strings"].(int64)+m["others"].(int64) {
					t.Errorf("memory %v: agents are not numbers + strings + others", m)
				}
				if ga, ok := groupAgents[m["group"]]; !ok || m["agents"].(int64) > ga.(int64) {
					t.Errorf("memory %v: more agents than group %v has (%v)", m, m["group"], ga)
				}
			}

			c := NewCollector(h)
			for _, raw := range events {
				if err := c.Observe(raw); err != nil {
					t.Fatal(err)
				}
			}
			if !reflect.DeepEqual(c.Tables(nil), tabs) {
				t.Error("Observe line by line gave other tables than FromTrace")
			}
		})
	}
}
