package metrics

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/warrenhq/warren/table"
	"github.com/warrenhq/warren/trace"
)

var handHeader = trace.Header{Scenario: "hand", ScenarioHash: "sha256:abc", Clock: trace.ClockVirtual, Seed: 7}

// handTrace writes a small trace whose every metric is worked out by hand in the tests below:
//
//   - a-0 (id 1, blueprint bp): work (3 turns: two calls at tick 0, one asking and answered 3
//     ticks later, then a denied call), review (its transition sets tries = 1 in its memory) on
//     a live model after a retry, back to work on error (visit 2), done there at tick 10;
//   - parent-0 (id 2, blueprint boss) spawns parent-0/1 (id 3), which spawns parent-0/1/1 (id 4)
//     and ends done; parent-0 fails at tick 4; parent-0/1/1 never ends.
//
// With end set, the trace ends with its end event.
func handTrace(t *testing.T, end bool) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := trace.NewWriter(&buf, handHeader)
	if err != nil {
		t.Fatal(err)
	}
	a := trace.AgentRef{ID: 1, Name: "a-0"}
	p := trace.AgentRef{ID: 2, Name: "parent-0"}
	k := trace.AgentRef{ID: 3, Name: "parent-0/1"}
	g := trace.AgentRef{ID: 4, Name: "parent-0/1/1"}
	args := json.RawMessage(`{}`)
	call := func(tick uint64, who trace.AgentRef, stage, id, tool, verdict, layer string) {
		w.ToolCall(tick, who, stage, id, tool, args, []string{tool}, verdict, layer, "because")
	}

	w.Spawn(0, a, "g", 0, "bp", "m1", "task")
	w.Spawn(0, p, "g2", 0, "boss", "m1", "lead")
	w.StageEnter(0, a, "work", 1)
	w.StageEnter(0, p, "lead", 1)
	w.ModelTurn(0, a, "work", "m1", 0, "", 2, "", nil)
	call(0, a, "work", "a-c0", "todo_add", "allow", "default")
	call(0, a, "work", "a-c1", "write_file", "ask", "default")
	w.Prompt(0, a, "work", "a-c1", "write_file", "approval", []string{"write_file"}, "", 100)
	w.ModelTurn(0, p, "lead", "m1", 0, "", 1, "", nil)
	call(0, p, "lead", "p-c0", "spawn_agent", "allow", "default")

	w.ToolResult(1, a, "work", "a-c0", "todo_add", true, "added")
	w.SpawnChild(1, k, "kids", 0, "kid", "m1", "help", p, "p-c0", 1, false, -1)
	w.StageEnter(1, k, "solo", 1)
	w.SpawnChild(1, g, "kids", 0, "kid", "m1", "help more", k, "k-c0", 2, false, -1)

	w.ModelTurn(2, k, "solo", "m1", 0, "", 0, "", nil)
	w.Terminal(2, k, "done", "", "solo")
	w.Reap(2, k, "done", 1, 0, 0, nil)
	w.Message(2, p, k, "notify", "parent-0/1 ended: done")
	w.StageEnter(2, g, "solo", 1)
	w.ModelTurn(2, g, "solo", "m1", 0, "", 1, "", nil)

	w.Answer(3, a, "work", "a-c1", "write_file", "once", "script", "allow")
	w.ToolResult(3, p, "lead", "p-c0", "spawn_agent", true, "spawned")

	w.ToolResult(4, a, "work", "a-c1", "write_file", true, "wrote")
	w.ModelTurn(4, p, "lead", "m1", 1, "", 0, "", nil)
	w.Terminal(4, p, "failed", "gave up", "lead")
	w.Reap(4, p, "failed", 2, 1, 0, nil)

	w.ModelTurn(5, a, "work", "m1", 1, "", 1, "", nil)
	call(5, a, "work", "a-c2", "edit_file", "deny", "blueprint:stage")
	w.ToolResult(6, a, "work", "a-c2", "edit_file", false, "permission denied")
	w.ModelTurn(7, a, "work", "m1", 2, "", 0, "", nil)
	w.Transition(7, a, "work", "review", "done", "", "")
	w.Memory(7, a, "work", "tries", "1")

	w.StageEnter(8, a, "review", 1)
	w.ModelRetry(8, a, "review", 3, 1, "pool", "rate limited", 429, 100)
	w.ModelTurn(9, a, "review", "m2", 0, "", 0, "", &trace.LiveTurn{Pool: "pool", Attempts: 2, Prompt: 100, Completion: 20, CacheRead: 5, Cost: 1e11})
	w.Transition(9, a, "review", "work", "error", "", "")

	w.StageEnter(10, a, "work", 2)
	w.ModelTurn(10, a, "work", "m2", 0, "", 0, "", &trace.LiveTurn{Pool: "pool", Attempts: 1, Prompt: 200, Completion: 30, Cost: 2e11})
	w.Terminal(10, a, "done", "", "work")
	w.Reap(10, a, "done", 5, 3, 1, &trace.Spent{Tokens: 350, Cost: 3e11})
	if end {
		w.End(10, trace.RunTickLimit, 11, 4, 9, 4, 1, &trace.Spent{Tokens: 350, Cost: 3e11})
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// handSamples end tick n at (n+1) × 2 ms, given out of order.
func handSamples() []Sample {
	var s []Sample
	for _, tick := range []uint64{10, 3, 0, 1, 2, 4, 9, 5, 6, 7, 8} {
		s = append(s, Sample{Tick: tick, WallNanos: int64(tick+1) * 2e6})
	}
	return s
}

// byName returns the table named name.
func byName(t *testing.T, tabs []table.Table, name string) table.Table {
	t.Helper()
	for _, tab := range tabs {
		if tab.Name == name {
			return tab
		}
	}
	t.Fatalf("no table %q", name)
	return table.Table{}
}

// rowMap returns row n of tab as column name → value.
func rowMap(tab table.Table, n int) map[string]any {
	m := map[string]any{}
	for i, c := range tab.Columns {
		m[c.Name] = tab.Rows[n][i]
	}
	return m
}

// checkRows checks that tab has len(want) rows and that each has the wanted values (the columns
// want names; the others are checked elsewhere).
func checkRows(t *testing.T, tab table.Table, want []map[string]any) {
	t.Helper()
	if len(tab.Rows) != len(want) {
		t.Fatalf("%s has %d rows, want %d", tab.Name, len(tab.Rows), len(want))
	}
	for n, w := range want {
		got := rowMap(tab, n)
		for col, v := range w {
			g, ok := got[col]
			if !ok {
				t.Errorf("%s has no column %q", tab.Name, col)
				continue
			}
			if !reflect.DeepEqual(g, v) {
				t.Errorf("%s row %d %s = %#v, want %#v", tab.Name, n, col, g, v)
			}
		}
	}
}

func handTables(t *testing.T, end bool, samples []Sample) []table.Table {
	t.Helper()
	tabs, err := FromTrace(bytes.NewReader(handTrace(t, end)), samples)
	if err != nil {
		t.Fatal(err)
	}
	return tabs
}

func TestVisits(t *testing.T) {
	tabs := handTables(t, false, handSamples())
	checkRows(t, byName(t, tabs, "visits"), []map[string]any{
		{"agent": int64(1), "stage": "work", "visit": int64(1), "model": "m1", "enter_tick": int64(0), "exit_tick": int64(7), "ticks": int64(7),
			"model_turns": int64(3), "tool_calls": int64(3), "tool_errors": int64(1), "prompts": int64(1), "outcome": "done", "to": "review",
			// tool waits 1 + 4 + 1; model waits 0 (stage_enter) + 1 (after the result at 4) + 1 (after 6); the prompt 0 → 3.
			"wait_tool_ticks": int64(6), "wait_model_ticks": int64(2), "wait_prompt_ticks": int64(3), "wall_ms": 16.0, "tokens": int64(0), "cost_usd": "0"},
		{"agent": int64(1), "stage": "review", "visit": int64(1), "model": "m2", "enter_tick": int64(8), "exit_tick": int64(9), "ticks": int64(1),
			"outcome": "error", "to": "work", "wait_model_ticks": int64(1), "wall_ms": 4.0, "tokens": int64(120), "cost_usd": "0.1"},
		{"agent": int64(1), "stage": "work", "visit": int64(2), "model": "m2", "enter_tick": int64(10), "exit_tick": int64(10), "ticks": int64(0),
			"outcome": "done", "to": "", "wait_model_ticks": int64(0), "wall_ms": 2.0, "tokens": int64(230), "cost_usd": "0.2"},
		{"agent": int64(2), "name": "parent-0", "group": "g2", "blueprint": "boss", "stage": "lead", "exit_tick": int64(4), "ticks": int64(4),
			"model_turns": int64(2), "tool_calls": int64(1), "outcome": "failed", "to": "", "wait_tool_ticks": int64(3), "wait_model_ticks": int64(1), "wall_ms": 10.0},
		{"agent": int64(3), "stage": "solo", "enter_tick": int64(1), "exit_tick": int64(2), "ticks": int64(1), "outcome": "done", "to": "", "wait_model_ticks": int64(1)},
		{"agent": int64(4), "stage": "solo", "enter_tick": int64(2), "exit_tick": nil, "ticks": nil, "model_turns": int64(1), "outcome": nil, "to": nil, "wall_ms": nil},
	})
	if got := rowMap(byName(t, handTables(t, false, nil), "visits"), 0)["wall_ms"]; got != nil {
		t.Errorf("without samples wall_ms = %v, want nil", got)
	}
}

func TestAgents(t *testing.T) {
	tabs := handTables(t, false, nil)
	checkRows(t, byName(t, tabs, "agents"), []map[string]any{
		{"agent": int64(1), "name": "a-0", "group": "g", "blueprint": "bp", "parent": int64(0), "root": "a-0", "depth": int64(0),
			"status": "done", "reason": "", "final_stage": "work", "spawn_tick": int64(0), "end_tick": int64(10), "ticks": int64(10),
			"stage_visits": int64(3), "model_turns": int64(5), "tool_calls": int64(3), "tool_errors": int64(1), "denied": int64(1), "asked": int64(1),
			"prompts": int64(1), "prompt_ticks": int64(3), "tokens": int64(350), "cost_usd": "0.3", "retries": int64(1), "messages_in": int64(0), "children": int64(0)},
		{"agent": int64(2), "root": "parent-0", "depth": int64(0), "status": "failed", "reason": "gave up", "final_stage": "lead", "end_tick": int64(4),
			"model_turns": int64(2), "tool_calls": int64(1), "messages_in": int64(1), "children": int64(1)},
		{"agent": int64(3), "group": "kids", "parent": int64(2), "root": "parent-0", "depth": int64(1), "status": "done", "spawn_tick": int64(1),
			"end_tick": int64(2), "ticks": int64(1), "children": int64(1)},
		{"agent": int64(4), "parent": int64(3), "root": "parent-0", "depth": int64(2), "status": nil, "reason": nil, "final_stage": nil,
			"end_tick": nil, "ticks": nil, "model_turns": int64(1), "stage_visits": int64(1)},
	})
}

func TestStages(t *testing.T) {
	tabs := handTables(t, false, handSamples())
	checkRows(t, byName(t, tabs, "stages"), []map[string]any{
		{"blueprint": "boss", "stage": "lead", "visits": int64(1), "ended": int64(1)},
		// work: visits of 7 and 0 ticks; nearest rank: p50 is rank 1, p95 rank 2.
		{"blueprint": "bp", "stage": "work", "visits": int64(2), "agents": int64(1), "model_turns": int64(4), "tool_calls": int64(3),
			"tool_errors": int64(1), "prompts": int64(1), "ticks_total": int64(7), "ticks_mean": 3.5, "ticks_p50": int64(0), "ticks_p95": int64(7),
			"ticks_max": int64(7), "wall_ms_total": 18.0, "wait_tool_ticks": int64(6), "wait_model_ticks": int64(2), "wait_prompt_ticks": int64(3),
			"tokens": int64(230), "cost_usd": "0.2", "done": int64(1), "error": int64(0), "max_iterations": int64(0), "ended": int64(1), "unfinished": int64(0)},
		{"blueprint": "bp", "stage": "review", "visits": int64(1), "error": int64(1), "done": int64(0), "ticks_p50": int64(1)},
		{"blueprint": "kid", "stage": "solo", "visits": int64(2), "agents": int64(2), "ticks_total": int64(1), "ticks_mean": 1.0,
			"ended": int64(1), "unfinished": int64(1)},
	})
	checkRows(t, byName(t, handTables(t, false, nil), "stages"), []map[string]any{
		{"wall_ms_total": nil}, {"wall_ms_total": nil}, {"wall_ms_total": nil}, {"wall_ms_total": nil, "ticks_mean": 1.0}})
}

func TestGroupsAndTrees(t *testing.T) {
	tabs := handTables(t, false, nil)
	checkRows(t, byName(t, tabs, "groups"), []map[string]any{
		{"group": "g", "agents": int64(1), "done": int64(1), "model_turns": int64(5), "tokens": int64(350), "cost_usd": "0.3", "ticks_mean": 10.0},
		{"group": "g2", "agents": int64(1), "failed": int64(1), "ticks_mean": 4.0},
		{"group": "kids", "agents": int64(2), "done": int64(1), "unfinished": int64(1), "model_turns": int64(2), "ticks_mean": 1.0},
	})
	checkRows(t, byName(t, tabs, "trees"), []map[string]any{
		{"root": int64(1), "root_name": "a-0", "group": "g", "agents": int64(1), "max_depth": int64(0), "done": int64(1), "end_tick": int64(10)},
		{"root": int64(2), "root_name": "parent-0", "group": "g2", "agents": int64(3), "max_depth": int64(2), "done": int64(1), "failed": int64(1),
			"killed": int64(0), "unfinished": int64(1), "model_turns": int64(4), "tool_calls": int64(1), "end_tick": nil},
	})
}

func TestModelsAndTools(t *testing.T) {
	tabs := handTables(t, false, nil)
	checkRows(t, byName(t, tabs, "models"), []map[string]any{
		{"model": "m1", "agents": int64(4), "turns": int64(7), "errors": int64(0), "tool_calls_asked": int64(5), "attempts": int64(0), "retries": int64(0), "cost_usd": "0"},
		{"model": "m2", "agents": int64(1), "turns": int64(2), "prompt_tokens": int64(300), "completion_tokens": int64(50),
			"cache_read_tokens": int64(5), "cache_write_tokens": int64(0), "cost_usd": "0.3", "attempts": int64(3), "retries": int64(1)},
	})
	checkRows(t, byName(t, tabs, "tools"), []map[string]any{
		{"tool": "edit_file", "verdict": "deny", "layer": "blueprint:stage", "calls": int64(1), "results": int64(1), "errors": int64(1), "agents": int64(1), "wait_ticks_total": int64(1), "wait_ticks_max": int64(1)},
		{"tool": "spawn_agent", "verdict": "allow", "layer": "default", "calls": int64(1), "errors": int64(0), "wait_ticks_total": int64(3)},
		{"tool": "todo_add", "verdict": "allow", "wait_ticks_total": int64(1)},
		{"tool": "write_file", "verdict": "ask", "wait_ticks_total": int64(4)},
	})
}

func TestRun(t *testing.T) {
	wallS := 0.022 // a variable, so that 9 / wallS is divided in floats as the table's is
	for _, tt := range []struct {
		name    string
		end     bool
		samples []Sample
		want    map[string]any
	}{
		{"incomplete, no samples", false, nil, map[string]any{"status": nil, "ticks": int64(11), "wall_s": nil, "steps_per_s": nil, "events": int64(40)}},
		{"complete, sampled", true, handSamples(), map[string]any{"status": "tick_limit", "ticks": int64(11), "wall_s": 0.022, "steps_per_s": 9 / wallS, "events": int64(40)}},
		{"one sample", true, []Sample{{Tick: 4, WallNanos: 3e9}}, map[string]any{"wall_s": 3.0, "steps_per_s": 3.0}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			want := map[string]any{"scenario": "hand", "seed": int64(7), "clock": "virtual", "agents": int64(4), "done": int64(2), "failed": int64(1),
				"killed": int64(0), "unfinished": int64(1), "model_turns": int64(9), "tool_calls": int64(4), "tool_errors": int64(1), "denied": int64(1),
				"asked": int64(1), "prompts": int64(1), "tokens": int64(350), "cost_usd": "0.3", "ticks_per_agent_mean": (10.0 + 4 + 1) / 3}
			for k, v := range tt.want {
				want[k] = v
			}
			checkRows(t, byName(t, handTables(t, tt.end, tt.samples), "run"), []map[string]any{want})
		})
	}
}

func TestWallClock(t *testing.T) {
	// Ticks 3 and 4 were skipped (nothing was due); 7 is after the last sample.
	w := newWallClock([]Sample{{Tick: 5, WallNanos: 9e6}, {Tick: 0, WallNanos: 1e6}, {Tick: 2, WallNanos: 4e6}, {Tick: 6, WallNanos: 12e6}})
	for _, tt := range []struct {
		name        string
		enter, exit uint64
		want        float64
		ok          bool
	}{
		{"from the run's start", 0, 0, 1, true},
		{"across skipped ticks", 3, 5, 5, true},
		{"entered in a skipped tick", 4, 6, 8, true},
		{"after the samples", 5, 7, 0, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := w.span(tt.enter, tt.exit)
			if got != tt.want || ok != tt.ok {
				t.Errorf("span(%d, %d) = %v, %v; want %v, %v", tt.enter, tt.exit, got, ok, tt.want, tt.ok)
			}
		})
	}
	if _, ok := (*wallClock)(nil).span(0, 1); ok {
		t.Error("no samples gave a wall time")
	}
}

func TestNearestRank(t *testing.T) {
	ticks := []int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20}
	for _, tt := range []struct {
		values []int64
		p      int
		want   any
	}{
		{nil, 50, nil},
		{[]int64{4}, 95, int64(4)},
		{[]int64{1, 2}, 50, int64(1)},
		{[]int64{1, 2, 3}, 50, int64(2)},
		{ticks, 95, int64(19)}, // rank 19 exactly: 0.95 × 20 in floats is 19.000000000000004
		{ticks, 100, int64(20)},
		{ticks, 1, int64(1)},
	} {
		if got := nearestRank(tt.values, tt.p); got != tt.want {
			t.Errorf("nearestRank(%v, %d) = %v, want %v", tt.values, tt.p, got, tt.want)
		}
	}
}

func TestParseDollars(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"0", 0, true},
		{"0.0000225", 22_500_000, true},
		{"12.5", 12_500_000_000_000, true},
		{"-3", -3_000_000_000_000, true},
		{"0.000000000001", 1, true},
		{"9223371", 9_223_371_000_000_000_000, true},
		{"0.0000000000001", 0, false},
		{"9223372", 0, false},
		{"1.2.3", 0, false},
		{"", 0, false},
		{".5", 0, false},
		{"5.", 0, false},
		{"1e3", 0, false},
	} {
		t.Run(tt.in, func(t *testing.T) {
			got, err := parseDollars([]byte(tt.in))
			if (err == nil) != tt.ok || got != tt.want {
				t.Fatalf("parseDollars(%q) = %d, %v; want %d, ok %v", tt.in, got, err, tt.want, tt.ok)
			}
			if err != nil && !errors.Is(err, ErrMalformed) {
				t.Errorf("error %v does not wrap ErrMalformed", err)
			}
			if tt.ok && trace.DollarsOf(got) != tt.in {
				t.Errorf("DollarsOf(%d) = %q, want %q back", got, trace.DollarsOf(got), tt.in)
			}
		})
	}
}

func TestObserveRejectsMalformed(t *testing.T) {
	spawn := `{"tick":0,"seq":1,"agent":1,"name":"a","kind":"spawn","group":"g","index":0,"blueprint":"b","model":"m","task":""}`
	for _, tt := range []struct {
		name, line string
	}{
		{"not JSON", `{"tick":`},
		{"an array", `[1,2]`},
		{"no kind", `{"tick":0,"seq":2,"agent":1,"name":"a"}`},
		{"a string tick", `{"tick":"0","seq":2,"agent":1,"name":"a","kind":"message"}`},
		{"an unknown agent", `{"tick":0,"seq":2,"agent":9,"name":"z","kind":"stage_enter","stage":"s","visit":1}`},
		{"spawned twice", spawn},
		{"a bad cost", `{"tick":0,"seq":2,"agent":1,"name":"a","kind":"model_turn","stage":"s","model":"m","iteration":0,"text":"","calls":0,"cost_usd":"1,5"}`},
		{"a memory value not JSON", `{"tick":0,"seq":2,"agent":1,"name":"a","kind":"memory","stage":"s","key":"k","value":"{oops"}`},
		{"a memory value not a string", `{"tick":0,"seq":2,"agent":1,"name":"a","kind":"memory","stage":"s","key":"k","value":3}`},
		{"a memory event without its key", `{"tick":0,"seq":2,"agent":1,"name":"a","kind":"memory","stage":"s","value":"3"}`},
		{"a numeric cost", `{"tick":0,"seq":2,"agent":1,"name":"a","kind":"model_turn","stage":"s","model":"m","iteration":0,"text":"","calls":0,"cost_usd":1.5}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := NewCollector(handHeader)
			if err := c.Observe([]byte(spawn)); err != nil {
				t.Fatal(err)
			}
			if err := c.Observe([]byte(tt.line)); !errors.Is(err, ErrMalformed) {
				t.Errorf("Observe(%s) = %v, want ErrMalformed", tt.line, err)
			}
		})
	}
}

func TestFromTraceInput(t *testing.T) {
	whole := handTrace(t, true)
	lines := bytes.SplitAfter(whole, []byte("\n"))
	cut := append(bytes.Join(lines[:len(lines)-2], nil), []byte(`{"tick":10,"seq":`)...)
	for _, tt := range []struct {
		name   string
		in     []byte
		err    error
		status any
	}{
		{"whole", whole, nil, "tick_limit"},
		{"no final newline", bytes.TrimSuffix(whole, []byte("\n")), nil, "tick_limit"},
		{"cut mid-line", cut, nil, nil},
		{"empty", nil, trace.ErrBadHeader, nil},
		{"another version", bytes.Replace(whole, []byte(`"version":5`), []byte(`"version":4`), 1), trace.ErrBadHeader, nil},
		{"a blank line", bytes.Replace(whole, []byte("\n"), []byte("\n\n"), 3), ErrMalformed, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tabs, err := FromTrace(bytes.NewReader(tt.in), nil)
			if !errors.Is(err, tt.err) {
				t.Fatalf("FromTrace: %v, want %v", err, tt.err)
			}
			if err != nil {
				return
			}
			if got := rowMap(byName(t, tabs, "run"), 0)["status"]; got != tt.status {
				t.Errorf("status %v, want %v", got, tt.status)
			}
		})
	}
}

// TestTablesAreRepeatable checks that Tables changes nothing: asked twice, and once in the middle
// of the run, it gives what it gave; and that Observe, fed the lines one by one, gives what
// FromTrace gives.
func TestTablesAreRepeatable(t *testing.T) {
	c := NewCollector(handHeader)
	// With their newlines, as warren.Options.Events gives them.
	lines := bytes.SplitAfter(handTrace(t, true), []byte("\n"))
	lines = lines[1 : len(lines)-1]
	for n, line := range lines {
		if err := c.Observe(line); err != nil {
			t.Fatal(err)
		}
		if n == len(lines)/2 {
			mid := c.Tables(nil)
			if got := fmt.Sprint(rowMap(byName(t, mid, "run"), 0)["status"]); got != "<nil>" {
				t.Errorf("mid-run status %s", got)
			}
		}
	}
	first, second := c.Tables(handSamples()), c.Tables(handSamples())
	if !reflect.DeepEqual(first, second) {
		t.Error("Tables gave different tables the second time")
	}
	if want := handTables(t, true, handSamples()); !reflect.DeepEqual(first, want) {
		t.Error("Observe line by line gave other tables than FromTrace")
	}
}
