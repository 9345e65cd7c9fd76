package metrics

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"github.com/warrenhq/warren/trace"
)

// memoryTrace writes a trace whose memory table is worked out by hand in TestMemory: two groups,
// zeta spawned before alpha (so that first-spawned order, not names, orders them), written by
// memory_set calls and by transitions' sets (memory events):
//
//   - z-0 (zeta): score 3 then 5 (the last write wins), flag true, note "b", a denied
//     memory_set of secret (no effect), plan an object from a set, tmp set by a set and removed
//     by memory_set null; ends done.
//   - z-1 (zeta): score 2 from a set, flag false, note "a", then note "zzz" whose result is an
//     error (no effect), gone set then removed by a set's "null"; killed.
//   - a-0 (alpha): note "b", score 1.5, list an array.
//   - a-1 (alpha): note "a", score "n/a" (a string); its memory_set of late has no result yet.
//   - a-2 (alpha): note "b"; never ends.
//
// With end set, the trace ends with its end event.
func memoryTrace(t *testing.T, end bool) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := trace.NewWriter(&buf, handHeader)
	if err != nil {
		t.Fatal(err)
	}
	z0 := trace.AgentRef{ID: 1, Name: "z-0"}
	z1 := trace.AgentRef{ID: 2, Name: "z-1"}
	a0 := trace.AgentRef{ID: 3, Name: "a-0"}
	a1 := trace.AgentRef{ID: 4, Name: "a-1"}
	a2 := trace.AgentRef{ID: 5, Name: "a-2"}
	n := 0
	// set makes a memory_set call of key and value (JSON text) with verdict, and its result at
	// the next tick unless ok is nil (a call still waiting when the trace ends).
	set := func(tick uint64, who trace.AgentRef, key, value, verdict string, ok *bool) {
		n++
		id := fmt.Sprintf("%s-c%d", who.Name, n)
		args := json.RawMessage(`{"key":"` + key + `","value":` + value + `}`)
		w.ToolCall(tick, who, "work", id, memorySetTool, args, []string{memorySetTool}, verdict, "default", "")
		if ok != nil {
			w.ToolResult(tick+1, who, "work", id, memorySetTool, *ok, "")
		}
	}
	yes, no := new(bool), new(bool)
	*yes = true

	w.Spawn(0, z0, "zeta", 0, "bp", "m", "")
	w.Spawn(0, z1, "zeta", 1, "bp", "m", "")
	w.Spawn(0, a0, "alpha", 0, "bp", "m", "")
	w.Spawn(0, a1, "alpha", 1, "bp", "m", "")
	w.Spawn(0, a2, "alpha", 2, "bp", "m", "")
	for _, who := range []trace.AgentRef{z0, z1, a0, a1, a2} {
		w.StageEnter(0, who, "work", 1)
	}

	set(1, z0, "score", "3", "allow", yes)
	set(1, z0, "flag", "true", "allow", yes)
	set(3, z0, "score", "5", "allow", yes)
	set(3, z0, "note", `"b"`, "allow", yes)
	set(3, z0, "secret", `"x"`, "deny", no)
	w.Transition(5, z0, "work", "work", "done", "", "")
	w.Memory(5, z0, "work", "plan", `{"steps":[1,2]}`)
	w.Memory(5, z0, "work", "tmp", "7")
	w.StageEnter(6, z0, "work", 2)
	set(6, z0, "tmp", "null", "allow", yes)
	w.Terminal(8, z0, "done", "", "work")
	w.Reap(8, z0, "done", 0, 6, 1, nil)

	w.Transition(1, z1, "work", "work", "done", "", "")
	w.Memory(1, z1, "work", "score", "2")
	w.Memory(1, z1, "work", "gone", `"soon"`)
	w.StageEnter(2, z1, "work", 2)
	set(2, z1, "flag", "false", "allow", yes)
	set(2, z1, "note", `"a"`, "allow", yes)
	set(4, z1, "note", `"zzz"`, "allow", no)
	w.Transition(6, z1, "work", "work", "done", "", "")
	w.Memory(6, z1, "work", "gone", "null")
	w.Terminal(7, z1, "killed", "stopped", "work")

	set(1, a0, "note", `"b"`, "allow", yes)
	set(1, a0, "score", "1.5", "allow", yes)
	set(3, a0, "list", `[1,"two",{"k":null}]`, "allow", yes)
	set(1, a1, "note", `"a"`, "allow", yes)
	set(3, a1, "score", `"n/a"`, "allow", yes)
	set(9, a1, "late", "1", "allow", nil)
	set(1, a2, "note", `"b"`, "allow", yes)
	if end {
		w.End(10, trace.RunTickLimit, 11, 5, 0, 17, 2, nil)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestMemory checks the memory table of memoryTrace row by row, column by column.
func TestMemory(t *testing.T) {
	for _, end := range []bool{false, true} {
		tabs, err := FromTrace(bytes.NewReader(memoryTrace(t, end)), nil)
		if err != nil {
			t.Fatal(err)
		}
		none := map[string]any{"numbers": int64(0), "mean": nil, "min": nil, "max": nil}
		noStrings := map[string]any{"strings": int64(0), "top": nil, "top_count": int64(0)}
		row := func(group, key string, agents, others int64, parts ...map[string]any) map[string]any {
			r := map[string]any{"group": group, "key": key, "agents": agents, "others": others}
			for _, p := range parts {
				for k, v := range p {
					r[k] = v
				}
			}
			return r
		}
		checkRows(t, byName(t, tabs, "memory"), []map[string]any{
			row("zeta", "flag", 2, 0, noStrings, map[string]any{"numbers": int64(2), "mean": 0.5, "min": 0.0, "max": 1.0}),
			row("zeta", "note", 2, 0, none, map[string]any{"strings": int64(2), "top": "a", "top_count": int64(1)}), // a tie: "a" < "b"
			row("zeta", "plan", 1, 1, none, noStrings),
			row("zeta", "score", 2, 0, noStrings, map[string]any{"numbers": int64(2), "mean": 3.5, "min": 2.0, "max": 5.0}),
			row("alpha", "list", 1, 1, none, noStrings),
			row("alpha", "note", 3, 0, none, map[string]any{"strings": int64(3), "top": "b", "top_count": int64(2)}),
			row("alpha", "score", 2, 0, map[string]any{"numbers": int64(1), "mean": 1.5, "min": 1.5, "max": 1.5, "strings": int64(1), "top": "n/a", "top_count": int64(1)}),
		})
	}
}

// TestMemoryAsItStands checks that Tables, asked mid-trace, gives the memory as it stands then
// (a write whose result has not come yet does not count), and that Observe line by line gives
// what FromTrace gives.
func TestMemoryAsItStands(t *testing.T) {
	c := NewCollector(handHeader)
	lines := bytes.SplitAfter(memoryTrace(t, true), []byte("\n"))
	lines = lines[1 : len(lines)-1]
	called := 0
	for _, line := range lines {
		if err := c.Observe(line); err != nil {
			t.Fatal(err)
		}
		// z-0's first call (score 3), then its result.
		switch {
		case bytes.Contains(line, []byte(`"kind":"tool_call","stage":"work","call_id":"z-0-c1",`)):
			called++
			if rows := byName(t, c.Tables(nil), "memory").Rows; len(rows) != 0 {
				t.Errorf("before the first result, memory rows %v, want none", rows)
			}
		case bytes.Contains(line, []byte(`"kind":"tool_result","stage":"work","call_id":"z-0-c1",`)):
			called++
			checkRows(t, byName(t, c.Tables(nil), "memory"), []map[string]any{
				{"group": "zeta", "key": "score", "agents": int64(1), "numbers": int64(1), "mean": 3.0}})
		}
	}
	if called != 2 {
		t.Fatalf("saw %d of z-0's first call's two events", called)
	}
	want, err := FromTrace(bytes.NewReader(memoryTrace(t, true)), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(c.Tables(nil), want) {
		t.Error("Observe line by line gave other tables than FromTrace")
	}
}

// TestGoldenMemory checks the memory table of the review example's golden trace, whose
// transitions set verdict, rounds and missing: each group's reviewers hold what their last
// review wrote.
func TestGoldenMemory(t *testing.T) {
	tabs := goldenTables(t, "review")
	checkRows(t, byName(t, tabs, "memory"), []map[string]any{
		{"group": "careful", "key": "rounds", "agents": int64(2), "numbers": int64(2), "mean": 1.0, "min": 1.0, "max": 1.0, "strings": int64(0), "top": nil},
		{"group": "careful", "key": "verdict", "agents": int64(2), "numbers": int64(0), "mean": nil, "strings": int64(2), "top": "approve", "top_count": int64(2)},
		{"group": "learner", "key": "missing", "agents": int64(2), "strings": int64(2), "top": "## Limits", "top_count": int64(2)},
		{"group": "learner", "key": "rounds", "agents": int64(2), "mean": 2.0},
		{"group": "learner", "key": "verdict", "agents": int64(2), "top": "approve", "top_count": int64(2)},
		{"group": "stubborn", "key": "missing", "agents": int64(1), "top": "## Method, ## Results, ## Limits, at least 20 words"},
		{"group": "stubborn", "key": "rounds", "agents": int64(1), "mean": 3.0, "min": 3.0, "max": 3.0},
		{"group": "stubborn", "key": "verdict", "agents": int64(1), "top": "rejected", "top_count": int64(1), "others": int64(0)},
	})
}
