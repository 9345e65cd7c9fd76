package warren_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warrenhq/warren"
	"github.com/warrenhq/warren/trace"
)

// quickstart loads the shipped quickstart, the run these tests stop in the middle.
func quickstart(t *testing.T) *warren.Scenario {
	t.Helper()
	sc, err := warren.Load(filepath.Join("scenarios", "examples", "quickstart.toml"))
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// endEvent reads the trace in data, which must be complete, and returns its end event.
func endEvent(t *testing.T, data []byte) map[string]any {
	t.Helper()
	tr, err := trace.Read(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if !tr.Complete {
		t.Fatalf("trace incomplete: %q", tr.Notes)
	}
	var end map[string]any
	if err := json.Unmarshal(tr.Events[len(tr.Events)-1], &end); err != nil {
		t.Fatal(err)
	}
	return end
}

// TestRunStatus: a finished run and one at its tick limit say so in the summary and in the
// trace's end event, whose counts are the summary's.
func TestRunStatus(t *testing.T) {
	sc := quickstart(t)
	var buf bytes.Buffer
	sum, err := warren.Run(context.Background(), sc, warren.Options{Agents: 30, Trace: &buf})
	if err != nil {
		t.Fatal(err)
	}
	end := endEvent(t, buf.Bytes())
	if sum.Status != warren.RunFinished || sum.Err != nil || end["status"] != "finished" ||
		end["ticks"] != float64(sum.Ticks) || end["tick"] != float64(sum.Ticks-1) || end["agents"] != float64(30) ||
		end["events"] != float64(sum.TraceEvents-1) || end["model_turns"] != float64(sum.ModelTurns) ||
		end["tool_calls"] != float64(sum.ToolCalls) || end["tool_errors"] != float64(sum.ToolErrors) {
		t.Errorf("summary %s (%v), %d ticks, %d events; end event %v", sum.Status, sum.Err, sum.Ticks, sum.TraceEvents, end)
	}

	limited := *sc
	limited.MaxTicks = 3
	buf.Reset()
	sum, err = warren.Run(context.Background(), &limited, warren.Options{Agents: 30, Trace: &buf})
	if err != nil {
		t.Fatal(err)
	}
	end = endEvent(t, buf.Bytes())
	if sum.Status != warren.RunTickLimit || sum.Err != nil || sum.Ticks != 3 || end["status"] != "tick_limit" || end["ticks"] != float64(3) {
		t.Errorf("at the tick limit: summary %s (%v), %d ticks; end event %v", sum.Status, sum.Err, sum.Ticks, end)
	}
}

// TestRunInterrupted: a run whose context ends stops at the end of that tick, returns its summary
// without an error, and ends its trace with status interrupted, the ticks that ran, and the
// context's cause in Summary.Err.
func TestRunInterrupted(t *testing.T) {
	sc := quickstart(t)
	stopAfter := 3
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	why := errors.New("the operator stopped it")
	ticks := 0
	var buf bytes.Buffer
	sum, err := warren.Run(ctx, sc, warren.Options{Agents: 300, Trace: &buf, Progress: func(int, int) {
		if ticks++; ticks == stopAfter {
			cancel(why)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	end := endEvent(t, buf.Bytes())
	if sum.Status != warren.RunInterrupted || !errors.Is(sum.Err, why) || sum.Ticks != uint64(stopAfter) ||
		end["status"] != "interrupted" || end["ticks"] != float64(stopAfter) || end["tick"] != float64(stopAfter-1) {
		t.Errorf("summary %s (%v) after %d ticks; end event %v", sum.Status, sum.Err, sum.Ticks, end)
	}
	if sum.ByStatus[0] == 0 {
		t.Errorf("no agent left unfinished: %v", sum.ByStatus)
	}
}

// failAfter accepts limit bytes, then fails every write, like a disk that fills up.
type failAfter struct {
	limit, written, failures int
}

var errFull = errors.New("no space left on the test's device")

func (f *failAfter) Write(p []byte) (int, error) {
	if f.written+len(p) > f.limit {
		f.failures++
		return 0, errFull
	}
	f.written += len(p)
	return len(p), nil
}

// TestRunStopsWhenTheTraceFails: a trace write error stops the run at the end of the tick in
// which it happened: Run returns the summary so far with ErrTrace wrapping the write error, and
// nothing is written after it (no end event).
func TestRunStopsWhenTheTraceFails(t *testing.T) {
	sc := quickstart(t)
	full, err := warren.Run(context.Background(), sc, warren.Options{Agents: 300})
	if err != nil {
		t.Fatal(err)
	}
	out := &failAfter{limit: 200 << 10}
	var lastTick float64
	lines := 0
	sum, err := warren.Run(context.Background(), sc, warren.Options{Agents: 300, Trace: out, Events: func(line []byte) {
		var ev struct{ Tick float64 }
		_ = json.Unmarshal(line, &ev)
		lastTick = ev.Tick
		lines++
	}})
	if !errors.Is(err, warren.ErrTrace) || !errors.Is(err, errFull) {
		t.Fatalf("Run = %v, want ErrTrace wrapping the write error", err)
	}
	if sum == nil || sum.Status != warren.RunFailed || !errors.Is(sum.Err, errFull) {
		t.Fatalf("summary %+v", sum)
	}
	// The write that failed was made in the tick of the last event the tap saw, or the next one.
	if last := float64(sum.Ticks - 1); last < lastTick || last > lastTick+1 || sum.Ticks >= full.Ticks {
		t.Errorf("the run stopped after tick %v, the last event written was at tick %v; the whole run has %d ticks", last, lastTick, full.Ticks)
	}
	if out.failures != 1 || uint64(lines) > sum.TraceEvents {
		t.Errorf("%d writes after the first failure, %d events tapped of %d counted: the trace went on", out.failures-1, lines, sum.TraceEvents)
	}
	if !strings.Contains(err.Error(), "the trace could not be written") {
		t.Errorf("the error does not say what failed: %v", err)
	}
}
