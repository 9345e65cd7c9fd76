package sweep_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/warrenhq/warren"
	"github.com/warrenhq/warren/sweep"
)

// gossip is the shipped gossip example (a JavaScript policy reading params.peers), from this
// package's folder.
var gossip = filepath.Join("..", "scenarios", "examples", "gossip.toml")

// voters is how many agents the tests' runs have: the example's 10,000 scaled down, so that a
// run takes well under a second.
const voters = 30

// gossipSpec is a sweep of the gossip example at voters agents, 2 runs at a time, over axes and
// seeds into dir.
func gossipSpec(dir string, seeds []uint64, axes ...sweep.Axis) sweep.Spec {
	return sweep.Spec{Scenario: gossip, Axes: axes, Seeds: seeds, Agents: voters, Parallel: 2, Dir: dir, Log: zerolog.Nop()}
}

// carry carries out spec under ctx, failing the test on an error of the sweep itself.
func carry(t *testing.T, ctx context.Context, spec sweep.Spec) *sweep.Report {
	t.Helper()
	rep, err := sweep.Carry(ctx, spec)
	if err != nil {
		t.Fatalf("Carry: %v", err)
	}
	if len(rep.Outcomes) != rep.Manifest.Runs {
		t.Fatalf("Carry reported %d outcomes of %d runs", len(rep.Outcomes), rep.Manifest.Runs)
	}
	return rep
}

// readFile reads a file, failing the test if it cannot.
func readFile(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// results reads a sweep directory's results.csv: its header, and its rows as maps by column.
func results(t *testing.T, dir string) ([]string, []map[string]string) {
	t.Helper()
	recs, err := csv.NewReader(bytes.NewReader(readFile(t, filepath.Join(dir, sweep.ResultsFile)))).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", sweep.ResultsFile, err)
	}
	if len(recs) == 0 {
		t.Fatalf("%s is empty", sweep.ResultsFile)
	}
	var rows []map[string]string
	for _, rec := range recs[1:] {
		row := map[string]string{}
		for i, c := range recs[0] {
			row[c] = rec[i]
		}
		rows = append(rows, row)
	}
	return recs[0], rows
}

// aloneTrace runs r of a gossipSpec sweep alone, as a user would without the sweep
// (warren.LoadParams, then warren.RunInDir into a directory of its own), and returns its trace.
func aloneTrace(t *testing.T, r sweep.Run) []byte {
	t.Helper()
	sc, err := warren.LoadParams(gossip, nil, r.Params)
	if err != nil {
		t.Fatal(err)
	}
	seed := r.Seed
	dir := filepath.Join(t.TempDir(), "alone")
	sum, err := warren.RunInDir(context.Background(), sc, warren.Options{Seed: &seed, Agents: voters, Log: zerolog.Nop()}, dir, r.Params)
	if err != nil || sum.Status != warren.RunFinished {
		t.Fatalf("%s alone: %v (%v)", r.Dir, err, sum)
	}
	return readFile(t, filepath.Join(dir, warren.RunTraceFile))
}

// firstDiff says where two traces first differ: the line, with both versions of it.
func firstDiff(want, got []byte) string {
	wl, gl := bytes.Split(want, []byte("\n")), bytes.Split(got, []byte("\n"))
	for i := range min(len(wl), len(gl)) {
		if !bytes.Equal(wl[i], gl[i]) {
			return fmt.Sprintf("line %d\n  want %.300s\n  got  %.300s", i+1, wl[i], gl[i])
		}
	}
	return fmt.Sprintf("the end: %d lines against %d", len(wl), len(gl))
}

// snapshot maps every file under dir, by path relative to it, to its content and modification
// time: two snapshots are equal when nothing under dir was made, removed or written.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		info, err := d.Info()
		if err != nil {
			return err
		}
		if d.IsDir() {
			out[rel+"/"] = ""
			return nil
		}
		data, err := os.ReadFile(path)
		out[rel] = info.ModTime().String() + "\n" + string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// sameSnapshot fails the test unless the snapshots before and after are equal, naming a file
// that differs.
func sameSnapshot(t *testing.T, before, after map[string]string) {
	t.Helper()
	for name, v := range after {
		if w, ok := before[name]; !ok {
			t.Errorf("%s was made", name)
		} else if w != v {
			t.Errorf("%s was written", name)
		}
	}
	for name := range before {
		if _, ok := after[name]; !ok {
			t.Errorf("%s was removed", name)
		}
	}
}

// TestCarry sweeps peers 1 and 3 over seeds 1 and 2, two runs at a time: four runs in their own
// directories, all finished, and a results table whose rows, in plan order, show what the policy
// makes of peers; and each run's trace is byte for byte the one of the same run done alone.
func TestCarry(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sweep")
	spec := gossipSpec(dir, []uint64{1, 2}, axis("peers", "1", "3"))
	var mu sync.Mutex
	var heard []sweep.Outcome
	ended := map[string]time.Time{}
	spec.Progress = func(o sweep.Outcome) {
		mu.Lock()
		defer mu.Unlock()
		heard = append(heard, o)
		ended[o.Dir] = time.Now()
	}
	rep := carry(t, context.Background(), spec)

	wantDirs := []string{"runs/000_peers-1/seed-1", "runs/000_peers-1/seed-2", "runs/001_peers-3/seed-1", "runs/001_peers-3/seed-2"}
	if len(rep.Outcomes) != len(wantDirs) || len(heard) != len(wantDirs) {
		t.Fatalf("%d outcomes, %d heard by Progress; want %d", len(rep.Outcomes), len(heard), len(wantDirs))
	}
	m := rep.Manifest
	if m.Format != sweep.ManifestFormat || m.Scenario != "gossip" || m.Runs != 4 || m.Agents != voters || !slices.Equal(m.Seeds, []uint64{1, 2}) ||
		len(m.Params) != 1 || m.Params[0].Name != "peers" || !slices.Equal(m.Params[0].Values, []string{"1", "3"}) {
		t.Errorf("manifest %+v", m)
	}
	if onDisk, err := sweep.ReadManifest(dir); err != nil || onDisk.ScenarioHash != m.ScenarioHash || onDisk.Runs != m.Runs {
		t.Errorf("%s on disk: %+v, %v; the report's: %+v", sweep.ManifestFile, onDisk, err, m)
	}
	for i, o := range rep.Outcomes {
		peers, _ := strconv.Atoi(o.Params[0].Value)
		if o.Dir != wantDirs[i] || o.Status != warren.RunFinished || !o.Done() || o.Skipped || o.Err != nil || o.Summary == nil {
			t.Fatalf("outcome %d: %s %s skipped %v err %v summary %v; want %s finished", i, o.Dir, o.Status, o.Skipped, o.Err, o.Summary != nil, wantDirs[i])
		}
		// Each voter writes three files and remembers two keys, and reads peers files in each
		// of two rounds.
		if want := uint64(voters * (3 + 2 + 2*peers)); o.Summary.ToolCalls != want {
			t.Errorf("%s: %d tool calls, want %d", o.Dir, o.Summary.ToolCalls, want)
		}
		for _, f := range []string{warren.RunTraceFile, warren.RunSummaryFile, warren.RunManifestFile, warren.RunTimelineFile, "metrics/run.csv", "metrics/memory.csv"} {
			if _, err := os.Stat(filepath.Join(dir, o.Dir, f)); err != nil {
				t.Errorf("%s: %v", o.Dir, err)
			}
		}
	}
	// The first two runs started together: the determinism below was under concurrency.
	if a, b := rep.Outcomes[0], rep.Outcomes[1]; !ended[a.Dir].Add(-a.Elapsed).Before(ended[b.Dir]) || !ended[b.Dir].Add(-b.Elapsed).Before(ended[a.Dir]) {
		t.Errorf("the sweep ran %s and %s one after the other, not 2 at a time", a.Dir, b.Dir)
	}

	header, rows := results(t, dir)
	if !slices.Equal(header[:4], []string{"run", "status", "seed", "peers"}) {
		t.Errorf("results header starts %v, want run,status,seed,peers", header[:4])
	}
	for _, c := range []string{"ticks", "agents", "model_turns", "tool_calls", "tool_errors", "events", "memory.agreement.mean", "memory.changed.mean"} {
		if !slices.Contains(header, c) {
			t.Errorf("results header %v lacks %s", header, c)
		}
	}
	for _, c := range []string{"seed", "status"} {
		if n := strings.Count(","+strings.Join(header, ",")+",", ","+c+","); n != 1 {
			t.Errorf("results header %v has %s %d times", header, c, n)
		}
	}
	for _, c := range []string{"scenario", "clock"} {
		if slices.Contains(header, c) {
			t.Errorf("results header %v has the sweep-wide column %s", header, c)
		}
	}
	if len(rows) != 4 {
		t.Fatalf("%d result rows, want 4", len(rows))
	}
	for i, row := range rows {
		o := rep.Outcomes[i]
		peers, _ := strconv.Atoi(o.Params[0].Value)
		want := map[string]string{"run": o.Dir, "status": "finished", "seed": fmt.Sprint(o.Seed), "peers": o.Params[0].Value,
			"agents": fmt.Sprint(voters), "ticks": fmt.Sprint(o.Summary.Ticks), "model_turns": fmt.Sprint(voters * 6),
			"tool_calls": fmt.Sprint(voters * (5 + 2*peers))}
		for c, v := range want {
			if row[c] != v {
				t.Errorf("row %d (%s): %s = %q, want %q", i+1, o.Dir, c, row[c], v)
			}
		}
		agreement, err1 := strconv.ParseFloat(row["memory.agreement.mean"], 64)
		changed, err2 := strconv.ParseFloat(row["memory.changed.mean"], 64)
		if err1 != nil || err2 != nil || agreement <= 0 || agreement > 1 || changed < 0 || changed > 1 {
			t.Errorf("row %d (%s): memory means agreement %q changed %q, want shares in [0, 1]", i+1, o.Dir, row["memory.agreement.mean"], row["memory.changed.mean"])
		}
		// With one peer a voter votes what it last heard: it always agrees with it.
		if peers == 1 && agreement != 1 || peers == 3 && agreement == 1 {
			t.Errorf("row %d (%s): memory.agreement.mean %v with %d peers", i+1, o.Dir, agreement, peers)
		}
	}

	for _, o := range rep.Outcomes {
		got := readFile(t, filepath.Join(dir, o.Dir, warren.RunTraceFile))
		if want := aloneTrace(t, o.Run); !bytes.Equal(got, want) {
			t.Errorf("%s: the sweep's trace differs from the run's alone at %s", o.Dir, firstDiff(want, got))
		}
	}
}

// TestCarryResume damages a finished sweep as a kill would (one run's summary gone and its trace
// cut mid-line, another's status interrupted), then carries it out again: the untouched runs
// are skipped and left as they were, the other two run again from nothing to the same traces,
// and the results table has all four finished.
func TestCarryResume(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sweep")
	spec := gossipSpec(dir, []uint64{1, 2}, axis("peers", "1", "3"))
	first := carry(t, context.Background(), spec)
	traces := map[string][]byte{}
	for _, o := range first.Outcomes {
		if !o.Done() {
			t.Fatalf("%s: %s", o.Dir, o.Status)
		}
		traces[o.Dir] = readFile(t, filepath.Join(dir, o.Dir, warren.RunTraceFile))
	}
	killed, interrupted := first.Outcomes[0].Dir, first.Outcomes[3].Dir
	if err := os.Remove(filepath.Join(dir, killed, warren.RunSummaryFile)); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(filepath.Join(dir, killed, warren.RunTraceFile), int64(len(traces[killed])/2)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, killed, "leftover"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	var sum map[string]any
	path := filepath.Join(dir, interrupted, warren.RunSummaryFile)
	if err := json.Unmarshal(readFile(t, path), &sum); err != nil {
		t.Fatal(err)
	}
	sum["status"] = warren.RunInterrupted
	data, _ := json.Marshal(sum)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	kept := map[string]map[string]string{}
	for _, o := range first.Outcomes[1:3] {
		kept[o.Dir] = snapshot(t, filepath.Join(dir, o.Dir))
	}

	var heard []string
	spec.Progress = func(o sweep.Outcome) { heard = append(heard, fmt.Sprintf("%s skipped=%v", o.Dir, o.Skipped)) }
	rep := carry(t, context.Background(), spec)
	for i, o := range rep.Outcomes {
		rerun := o.Dir == killed || o.Dir == interrupted
		if o.Dir != first.Outcomes[i].Dir || o.Status != warren.RunFinished || o.Skipped == rerun || o.Err != nil {
			t.Errorf("outcome %d: %s %s skipped %v err %v; want %s finished, skipped %v", i, o.Dir, o.Status, o.Skipped, o.Err, first.Outcomes[i].Dir, !rerun)
		}
		if rerun != (o.Summary != nil) {
			t.Errorf("%s: a summary %v, want one only for a run run again", o.Dir, o.Summary != nil)
		}
		if got := readFile(t, filepath.Join(dir, o.Dir, warren.RunTraceFile)); !bytes.Equal(got, traces[o.Dir]) {
			t.Errorf("%s: the trace differs from the first sweep's at %s", o.Dir, firstDiff(traces[o.Dir], got))
		}
		if before, ok := kept[o.Dir]; ok {
			sameSnapshot(t, before, snapshot(t, filepath.Join(dir, o.Dir)))
		}
	}
	if len(heard) != 4 {
		t.Errorf("Progress heard %d runs, want 4: %v", len(heard), heard)
	}
	if _, err := os.Stat(filepath.Join(dir, killed, "leftover")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s was not run again from nothing: its leftover file is there (%v)", killed, err)
	}
	if _, rows := results(t, dir); len(rows) != 4 {
		t.Errorf("%d result rows, want 4", len(rows))
	} else {
		for i, row := range rows {
			if row["run"] != first.Outcomes[i].Dir || row["status"] != "finished" || row["tool_calls"] == "" {
				t.Errorf("row %d: %v, want %s finished with its metrics", i+1, row, first.Outcomes[i].Dir)
			}
		}
	}
}

// TestCarryKeepsTickLimitRuns: a run that stops at its tick limit (a key path of the file swept:
// limits.max_ticks) has ended as its scenario says, so a rerun keeps it, with the expectations
// it failed (its voters had not voted yet).
func TestCarryKeepsTickLimitRuns(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sweep")
	spec := gossipSpec(dir, []uint64{4}, axis("limits.max_ticks", "3"))
	var failures []string
	for i, wantSkipped := range []bool{false, true} {
		rep := carry(t, context.Background(), spec)
		o := rep.Outcomes[0]
		if o.Dir != "runs/000_max_ticks-3/seed-4" || o.Status != warren.RunTickLimit || !o.Done() || o.Skipped != wantSkipped {
			t.Fatalf("sweep %d: %s %s skipped %v (%v), want a tick_limit run, skipped %v", i+1, o.Dir, o.Status, o.Skipped, o.Err, wantSkipped)
		}
		if i == 0 {
			failures = o.Failures
		}
		if len(o.Failures) == 0 || !slices.Equal(o.Failures, failures) {
			t.Errorf("sweep %d: failed expectations %q, want the first sweep's %q (and some)", i+1, o.Failures, failures)
		}
		if o.Summary != nil && o.Summary.Ticks != 3 {
			t.Errorf("sweep %d: %d ticks, want 3", i+1, o.Summary.Ticks)
		}
		header, rows := results(t, dir)
		if !slices.Contains(header, "limits.max_ticks") || len(rows) != 1 || rows[0]["limits.max_ticks"] != "3" || rows[0]["status"] != warren.RunTickLimit || rows[0]["ticks"] != "3" {
			t.Errorf("sweep %d: results %v %v", i+1, header, rows)
		}
	}
}

// copyGossip copies the gossip example (its scenario file and its folder) into a temporary
// directory and returns the scenario's path there.
func copyGossip(t *testing.T) string {
	t.Helper()
	src := filepath.Dir(gossip)
	dst := t.TempDir()
	for _, name := range []string{"gossip.toml", "gossip/voter.toml", "gossip/voter.js"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dst, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, name), readFile(t, filepath.Join(src, name)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dst, "gossip.toml")
}

// TestCarryRefusesOtherSweep: into a directory holding a sweep, only the same sweep (the same
// scenario content, grid, seeds and agents) may go; another is refused with ErrOtherSweep and
// changes nothing. Nor may a sweep go into a directory that holds files but no sweep.
func TestCarryRefusesOtherSweep(t *testing.T) {
	scenario := copyGossip(t)
	dir := filepath.Join(t.TempDir(), "sweep")
	spec := gossipSpec(dir, []uint64{1}, axis("peers", "1", "3"))
	spec.Scenario = scenario
	carry(t, context.Background(), spec)

	// edit appends text to a file of the copied example, and restores the file when the test ends.
	edit := func(t *testing.T, name, text string) {
		path := filepath.Join(filepath.Dir(scenario), name)
		old := readFile(t, path)
		t.Cleanup(func() {
			if err := os.WriteFile(path, old, 0o644); err != nil {
				t.Error(err)
			}
		})
		if err := os.WriteFile(path, append(slices.Clone(old), text...), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name   string
		change func(t *testing.T, s *sweep.Spec)
		err    string // a part of the error
	}{
		{"other seeds", func(t *testing.T, s *sweep.Spec) { s.Seeds = []uint64{1, 2} }, "its seeds are [1], these [1 2]"},
		{"other values", func(t *testing.T, s *sweep.Spec) { s.Axes = []sweep.Axis{axis("peers", "1", "2")} }, "its grid is"},
		{"the values in another order", func(t *testing.T, s *sweep.Spec) { s.Axes = []sweep.Axis{axis("peers", "3", "1")} }, "its grid is"},
		{"another parameter", func(t *testing.T, s *sweep.Spec) { s.Axes = []sweep.Axis{axis("radius", "1", "3")} }, "its grid is"},
		{"one more axis", func(t *testing.T, s *sweep.Spec) {
			s.Axes = []sweep.Axis{axis("peers", "1", "3"), axis("radius", "4")}
		}, "its grid is"},
		{"no axes", func(t *testing.T, s *sweep.Spec) { s.Axes = nil }, "its grid is"},
		{"other agents", func(t *testing.T, s *sweep.Spec) { s.Agents = 40 }, fmt.Sprintf("it ran %d agents, this one 40", voters)},
		{"an edited scenario file", func(t *testing.T, s *sweep.Spec) { edit(t, "gossip.toml", "\n# edited\n") }, "now has other content"},
		{"an edited policy", func(t *testing.T, s *sweep.Spec) { edit(t, "gossip/voter.js", "\n// edited\n") }, "now has other content"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := snapshot(t, dir)
			other := spec
			tt.change(t, &other)
			ran := false
			other.Progress = func(sweep.Outcome) { ran = true }
			rep, err := sweep.Carry(context.Background(), other)
			if !errors.Is(err, sweep.ErrOtherSweep) || !strings.Contains(err.Error(), tt.err) || rep != nil || ran {
				t.Fatalf("Carry = %v, %v (progress %v); want ErrOtherSweep saying %q", rep, err, ran, tt.err)
			}
			sameSnapshot(t, before, snapshot(t, dir))
		})
	}

	t.Run("the same sweep resumes", func(t *testing.T) {
		rep := carry(t, context.Background(), spec)
		for _, o := range rep.Outcomes {
			if !o.Skipped || !o.Done() {
				t.Errorf("%s: %s, skipped %v; want kept", o.Dir, o.Status, o.Skipped)
			}
		}
	})

	t.Run("a directory of other files", func(t *testing.T) {
		other := filepath.Join(t.TempDir(), "notes")
		if err := os.MkdirAll(other, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(other, "notes.txt"), []byte("mine"), 0o644); err != nil {
			t.Fatal(err)
		}
		before := snapshot(t, other)
		s := spec
		s.Dir = other
		rep, err := sweep.Carry(context.Background(), s)
		if !errors.Is(err, sweep.ErrOtherSweep) || !strings.Contains(err.Error(), "holds files and no "+sweep.ManifestFile) || rep != nil {
			t.Fatalf("Carry = %v, %v; want ErrOtherSweep for files and no %s", rep, err, sweep.ManifestFile)
		}
		sameSnapshot(t, before, snapshot(t, other))
	})

	t.Run("an empty directory", func(t *testing.T) {
		empty := t.TempDir()
		s := spec
		s.Dir, s.Seeds = empty, []uint64{2}
		s.Axes = []sweep.Axis{axis("peers", "2")}
		if rep := carry(t, context.Background(), s); !rep.Outcomes[0].Done() {
			t.Errorf("a sweep into an empty directory: %s (%v)", rep.Outcomes[0].Status, rep.Outcomes[0].Err)
		}
	})
}

// TestCarryCancelled: a sweep whose context ended before it started runs nothing and reports
// every run interrupted; a later sweep runs them all.
func TestCarryCancelled(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sweep")
	spec := gossipSpec(dir, []uint64{1, 2, 3, 4, 5, 6})
	ctx, cancel := context.WithCancelCause(context.Background())
	stop := errors.New("stopped by the test")
	cancel(stop)
	rep := carry(t, ctx, spec)
	for _, o := range rep.Outcomes {
		if o.Status != warren.RunInterrupted || o.Done() || o.Skipped || o.Summary != nil || !errors.Is(o.Err, stop) {
			t.Errorf("%s: %s, skipped %v, summary %v, err %v; want interrupted by the test, not run", o.Dir, o.Status, o.Skipped, o.Summary != nil, o.Err)
		}
	}
	if entries, err := os.ReadDir(filepath.Join(dir, "runs")); !errors.Is(err, os.ErrNotExist) && len(entries) > 0 {
		t.Errorf("a cancelled sweep made run directories: %v (%v)", entries, err)
	}
	if _, rows := results(t, dir); len(rows) != len(rep.Outcomes) {
		t.Errorf("%d result rows, want %d", len(rows), len(rep.Outcomes))
	} else {
		for i, row := range rows {
			if row["status"] == warren.RunFinished || row["run"] != rep.Outcomes[i].Dir {
				t.Errorf("row %d: %v, want %s not finished", i+1, row, rep.Outcomes[i].Dir)
			}
		}
	}

	again := carry(t, context.Background(), spec)
	for _, o := range again.Outcomes {
		if o.Status != warren.RunFinished || o.Skipped {
			t.Errorf("%s after the cancelled sweep: %s, skipped %v (%v); want run to the end", o.Dir, o.Status, o.Skipped, o.Err)
		}
	}
}

// TestCarryCancelledStartsNoRun carries out, many times over, a sweep of many runs, 8 at a time,
// whose context ended before it started: however the sweep's goroutines are scheduled, no run
// starts (a run started under an ended context would leave a run directory of one tick).
func TestCarryCancelledStartsNoRun(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for i := range 60 {
		dir := filepath.Join(t.TempDir(), fmt.Sprint("sweep-", i))
		spec := gossipSpec(dir, valuesOfSeeds(40))
		spec.Parallel = 8
		rep := carry(t, ctx, spec)
		for _, o := range rep.Outcomes {
			if o.Summary != nil || o.Status != warren.RunInterrupted {
				t.Fatalf("sweep %d: %s was started under an ended context: %s", i+1, o.Dir, o.Status)
			}
		}
		if _, err := os.Stat(filepath.Join(dir, "runs")); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("sweep %d made run directories under an ended context (%v)", i+1, err)
		}
	}
}
