package traceexport_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/warrenhq/warren/table"
	"github.com/warrenhq/warren/trace"
	"github.com/warrenhq/warren/traceexport"
)

// Export a two-agent trace as Parquet, with a table of one's own beside the trace's, and see
// what was written: every kind has its table, and the events land in their kind's.
func ExampleExport() {
	var run bytes.Buffer
	w, err := trace.NewWriter(&run, trace.Header{Scenario: "notes", ScenarioHash: "sha256:0", Seed: 7, Clock: trace.ClockVirtual})
	if err != nil {
		fmt.Println(err)
		return
	}
	for i, name := range []string{"noter-0", "noter-1"} {
		a := trace.AgentRef{ID: uint64(i + 1), Name: name}
		w.Spawn(0, a, "noter", i, "noter", "scripted:noter", "take notes")
		w.StageEnter(0, a, "work", 1)
		w.ToolCall(1, a, "work", name+"-t0-c0", "todo_add", json.RawMessage(`{"text":"review the draft"}`), []string{"todo_add"}, "allow", "default", "")
		w.ToolResult(1, a, "work", name+"-t0-c0", "todo_add", true, "added")
		w.Terminal(2, a, "done", "", "work")
	}
	w.End(2, trace.RunFinished, 3, 2, 2, 2, 0, nil)
	if err := w.Close(); err != nil {
		fmt.Println(err)
		return
	}

	dir, err := os.MkdirTemp("", "export")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	notes := table.Table{Name: "notes", Doc: "one row per agent", Columns: []table.Column{
		{Name: "agent", Type: table.String}, {Name: "cost_usd", Type: table.Decimal}},
		Rows: [][]any{{"noter-0", "0.000042"}, {"noter-1", nil}}}
	st, err := traceexport.Export(context.Background(), &run, dir, traceexport.Options{Format: table.Parquet, Extra: []table.Table{notes}})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s (seed %d): %d events, complete: %v, %d tables\n", st.Header.Scenario, st.Header.Seed, st.Events, st.Complete, len(st.Tables))
	for _, t := range st.Tables {
		if t.Rows > 0 {
			fmt.Printf("%-20s %2d rows\n", t.Name+".parquet", t.Rows)
		}
	}
	// Output:
	// notes (seed 7): 11 events, complete: true, 26 tables
	// events.parquet       11 rows
	// end.parquet           1 rows
	// spawn.parquet         2 rows
	// stage_enter.parquet   2 rows
	// terminal.parquet      2 rows
	// tool_call.parquet     2 rows
	// tool_result.parquet   2 rows
	// notes.parquet         2 rows
}
