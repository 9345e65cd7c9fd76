package warren_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/warrenhq/warren"
)

// TestExportTrace runs a shipped example with its trace in a file, exports the trace, and checks
// the tables against the run's own summary: one spawn row per agent, one model_turn row per model
// turn, one tool_call row per tool call; then that a second export is refused and a bad format
// named.
func TestExportTrace(t *testing.T) {
	sc, err := warren.Load("scenarios/examples/faults.toml")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "run.jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := warren.Run(context.Background(), sc, warren.Options{Trace: f})
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	st, err := warren.ExportTrace(context.Background(), path, out, warren.ExportOptions{Format: warren.ExportParquet})
	if err != nil {
		t.Fatal(err)
	}
	if !st.Complete || st.Events != int64(sum.TraceEvents) || st.Header.Scenario != sum.Scenario || st.Header.Seed != sum.Seed {
		t.Errorf("exported %d events of %s (seed %d, complete %v); the run wrote %d of %s (seed %d)",
			st.Events, st.Header.Scenario, st.Header.Seed, st.Complete, sum.TraceEvents, sum.Scenario, sum.Seed)
	}
	rows := map[string]int64{}
	for _, tb := range st.Tables {
		rows[tb.Name] = tb.Rows
	}
	for table, want := range map[string]uint64{"spawn": uint64(sum.Agents), "model_turn": sum.ModelTurns, "tool_call": sum.ToolCalls, "end": 1} {
		if rows[table] != int64(want) {
			t.Errorf("%s has %d rows; the run's summary says %d", table, rows[table], want)
		}
	}
	if _, err := warren.ExportTrace(context.Background(), path, out, warren.ExportOptions{Format: warren.ExportCSV}); !errors.Is(err, warren.ErrExportExists) {
		t.Errorf("a second export into the folder = %v, want ErrExportExists", err)
	}
	if _, err := warren.ExportTrace(context.Background(), path, out, warren.ExportOptions{Format: "xlsx"}); !errors.Is(err, warren.ErrExportFormat) {
		t.Errorf("an export as xlsx = %v, want ErrExportFormat", err)
	}
}
