package main

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/warrenhq/warren"
	"github.com/warrenhq/warren/sweep"
)

// sweepDone reads host sweep's closing line: the runs, those finished, those kept from an
// earlier sweep, those that did not finish and those whose expectations failed.
var sweepDone = regexp.MustCompile(`(?m)^sweep done   (\d+) runs: (\d+) finished \((\d+) kept from an earlier sweep\), (\d+) did not finish, (\d+) failed expectations$`)

// sweepSummaries lists the summary.json files of a sweep directory's runs.
func sweepSummaries(dir string) []string {
	found, _ := filepath.Glob(filepath.Join(dir, "runs", "*", "*", warren.RunSummaryFile))
	return found
}

// TestSweepKilledAndResumed runs host sweep through the real binary, kills it with SIGKILL once
// two of its runs finished, and runs the same command again: the rerun keeps the runs that
// finished, runs the others (the one the kill cut off from nothing) and completes the sweep, with
// every run's files whole and a results table of the twelve, and exits 0.
func TestSweepKilledAndResumed(t *testing.T) {
	bin, repo := buildBinary(t)
	out := filepath.Join(t.TempDir(), "sweep")
	args := []string{"sweep", "scenarios/examples/gossip.toml", "--param", "peers=1,2,3", "--seeds", "1..4",
		"--agents", "200", "--parallel", "1", "--out", out}

	cmd := exec.Command(bin, args...)
	cmd.Dir = repo
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// A run takes about a second here; a loaded machine may take many times that.
	twoDone := waitFor(3*time.Minute, func() bool { return len(sweepSummaries(out)) >= 2 })
	_ = cmd.Process.Kill()
	err := cmd.Wait()
	if !twoDone {
		t.Fatalf("no two runs finished in 3 minutes\nstdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
	}
	var exit *exec.ExitError
	if !errors.As(err, &exit) || !exit.Sys().(syscall.WaitStatus).Signaled() {
		t.Fatalf("the first sweep was not killed (%v): it finished too soon to test a resume\nstdout:\n%s", err, stdout.String())
	}
	left := len(sweepSummaries(out))
	t.Logf("killed with %d runs' summaries written", left)

	code, rerun, rerunErr := runIn(t, bin, repo, nil, args...)
	if code != exitOK {
		t.Fatalf("the rerun exited %d, want %d\nstdout:\n%s\nstderr:\n%s", code, exitOK, rerun, rerunErr)
	}
	m := sweepDone.FindStringSubmatch(rerun)
	if m == nil {
		t.Fatalf("the rerun's output has no closing line:\n%s", rerun)
	}
	kept, _ := strconv.Atoi(m[3])
	if m[1] != "12" || m[2] != "12" || m[4] != "0" || m[5] != "0" || kept < 2 || kept > left {
		t.Errorf("the rerun says %q; want 12 runs, 12 finished, 2 to %d kept, 0 unfinished, 0 failed expectations", m[0], left)
	}
	if n := strings.Count(rerun, ": finished in an earlier sweep (kept)\n"); n != kept {
		t.Errorf("the rerun lists %d kept runs and counts %d:\n%s", n, kept, rerun)
	}
	if n := strings.Count(rerun, ": finished: 200 agents, "); n != 12-kept {
		t.Errorf("the rerun ran %d runs, want %d:\n%s", n, 12-kept, rerun)
	}

	dirs, _ := filepath.Glob(filepath.Join(out, "runs", "*", "seed-*"))
	if len(dirs) != 12 {
		t.Fatalf("%d run directories, want 12: %v", len(dirs), dirs)
	}
	for _, dir := range dirs {
		if _, err := os.Stat(filepath.Join(dir, warren.RunSummaryFile)); err != nil {
			t.Errorf("%s: %v", dir, err)
		}
		tr := readTrace(t, filepath.Join(dir, warren.RunTraceFile))
		if !tr.Complete || !strings.Contains(string(tr.Events[len(tr.Events)-1]), `"status":"finished"`) {
			t.Errorf("%s: the trace does not end with a finished end event (%v)", dir, tr.Notes)
		}
	}

	data, err := os.ReadFile(filepath.Join(out, sweep.ResultsFile))
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 13 {
		t.Fatalf("results.csv has %d rows, want 12:\n%s", len(recs)-1, data)
	}
	for i, rec := range recs[1:] {
		wantPeers := fmt.Sprint(i/4 + 1)
		if rec[1] != "finished" || rec[2] != fmt.Sprint(i%4+1) || rec[3] != wantPeers {
			t.Errorf("results row %d: %v, want finished, seed %d, peers %s", i+1, rec[:4], i%4+1, wantPeers)
		}
	}
}

// TestSweepKeepsFailedExpectations: a run kept from an earlier sweep keeps the expectations it
// failed. The review example stopped at 5 ticks fails its expectations (its agents have not
// ended), so its sweep exits 1; the same sweep again, every run kept, says so and exits 1 too.
func TestSweepKeepsFailedExpectations(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sweep")
	args := []string{"sweep", example("review.toml"), "--param", "limits.max_ticks=5,400", "--parallel", "2", "--out", dir}
	short := regexp.MustCompile(`(?m)^run \d/2 limits.max_ticks=5 seed 1 \(runs/000_max_ticks-5/seed-1\): (.*)$`)
	long := regexp.MustCompile(`(?m)^run \d/2 limits.max_ticks=400 seed 1 \(runs/001_max_ticks-400/seed-1\): (.*)$`)
	tests := []struct {
		name, kept  string
		short, long *regexp.Regexp // what the runs' lines say
	}{
		{"the first sweep", "0", regexp.MustCompile(`^tick_limit: 5 agents, 5 ticks, \d+ model turns, [1-9]\d* failed expectations, `),
			regexp.MustCompile(`^finished: 5 agents, \d+ ticks, \d+ model turns, 0 failed expectations, `)},
		{"the same sweep again", "2", regexp.MustCompile(`^finished in an earlier sweep \(kept\), [1-9]\d* failed expectations$`),
			regexp.MustCompile(`^finished in an earlier sweep \(kept\)$`)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := host(t, args...)
			wantCode(t, r, exitExpect)
			m := sweepDone.FindStringSubmatch(r.stdout)
			if m == nil || m[1] != "2" || m[2] != "2" || m[3] != tt.kept || m[4] != "0" || m[5] != "1" {
				t.Errorf("want 2 runs finished, %s kept, 1 failed expectations:\n%s", tt.kept, r.stdout)
			}
			if s := short.FindStringSubmatch(r.stdout); s == nil || !tt.short.MatchString(s[1]) {
				t.Errorf("the 5-tick run's line does not match %s:\n%s", tt.short, r.stdout)
			}
			if l := long.FindStringSubmatch(r.stdout); l == nil || !tt.long.MatchString(l[1]) {
				t.Errorf("the 400-tick run's line does not match %s:\n%s", tt.long, r.stdout)
			}
		})
	}
}

// gossipLineCol finds where the gossip example sets key (a line "key = value"): the line, and
// the column of the value, as a load error names them.
func gossipLineCol(t *testing.T, key string) (int, int) {
	t.Helper()
	data, err := os.ReadFile(example("gossip.toml"))
	if err != nil {
		t.Fatal(err)
	}
	for i, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, key+" = "); ok && rest != "" {
			return i + 1, len(key+" = ") + 1
		}
	}
	t.Fatalf("gossip.toml sets no %s", key)
	return 0, 0
}

// TestSweepBadInput: host sweep refuses bad flags, parameters no scenario of the grid can take,
// and a sweep directory holding another sweep, with exit 2, a message naming the problem, and
// no run made.
func TestSweepBadInput(t *testing.T) {
	gossip := example("gossip.toml")
	line, col := gossipLineCol(t, "max_ticks")
	// existing makes a sweep directory of peers=1,2 over seeds 1 and 2 (its manifest only).
	existing := func(t *testing.T, dir string) {
		spec := sweep.Spec{Scenario: gossip, Axes: []sweep.Axis{{Name: "peers", Values: []string{"1", "2"}}}, Seeds: []uint64{1, 2}, Dir: dir}
		if _, _, err := sweep.Open(spec); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name  string
		args  []string // after host sweep <gossip>; --out <dir> is added unless noOut
		noOut bool
		setup func(t *testing.T, dir string)
		want  []string // parts of stderr
	}{
		{"a parameter with no values", []string{"--param", "peers"}, false, nil,
			[]string{`--param "peers": write name=value1,value2`}},
		{"a parameter with an empty list", []string{"--param", "peers="}, false, nil,
			[]string{`--param "peers=": write name=value1,value2`}},
		{"a value given twice", []string{"--param", "peers=1,2,1"}, false, nil,
			[]string{`--param peers: the value "1" is given twice`}},
		{"a parameter given twice", []string{"--param", "peers=1", "--param", "peers=2"}, false, nil,
			[]string{"--param peers is given twice"}},
		{"no such [params] entry", []string{"--param", "nope=1,2"}, false, nil,
			[]string{gossip + " with nope=1 is not a valid scenario", "declares no such parameter in [params] (declared: peers, radius)"}},
		{"no such group", []string{"--param", "groups.nope.count=5"}, false, nil,
			[]string{`has no group "nope" (groups: voters)`}},
		{"not an integer", []string{"--param", "limits.max_ticks=ten"}, false, nil,
			[]string{"with limits.max_ticks=ten is not a valid scenario", fmt.Sprintf("%s:%d:%d sets it to an integer, and the new value is not an integer", gossip, line, col)}},
		{"a bad value late in the grid", []string{"--param", "peers=1,2,x"}, false, nil,
			[]string{"with peers=x is not a valid scenario", "not an integer"}},
		{"seeds that go down", []string{"--seeds", "5..1"}, false, nil,
			[]string{`--seeds "5..1": the range 5..1 goes down`}},
		{"a seed that is no number", []string{"--seeds", "one"}, false, nil,
			[]string{`"one" is not a seed`}},
		{"a seed given twice", []string{"--seeds", "1..3,2"}, false, nil,
			[]string{"seed 2 is given twice"}},
		{"negative agents", []string{"--agents=-1"}, false, nil,
			[]string{"--agents -1: give a positive number of agents"}},
		{"no --out", nil, true, nil,
			[]string{"missing flags: --out"}},
		{"another sweep's directory", []string{"--param", "peers=1,2", "--seeds", "1..3"}, false, existing,
			[]string{"the directory holds another sweep", "its seeds are [1 2], these [1 2 3]"}},
		{"a directory of other files", nil, false, func(t *testing.T, dir string) {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("mine"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, []string{"holds files and no sweep.json"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "sweep")
			var before map[string][]byte
			if tt.setup != nil {
				tt.setup(t, dir)
				before = filesIn(t, dir)
			}
			args := append([]string{"sweep", gossip}, tt.args...)
			if !tt.noOut {
				args = append(args, "--out", dir)
			}
			r := host(t, args...)
			wantCode(t, r, exitBadInput)
			for _, w := range tt.want {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("stderr does not say %q:\n%s", w, r.stderr)
				}
			}
			if strings.Contains(r.stdout, "run 1/") {
				t.Errorf("a run was made:\n%s", r.stdout)
			}
			after := filesIn(t, dir)
			if len(after) != len(before) {
				t.Errorf("the sweep directory holds %d files, %d before", len(after), len(before))
			}
			for name, data := range before {
				if !bytes.Equal(after[name], data) {
					t.Errorf("%s was changed", name)
				}
			}
		})
	}
}

// filesIn maps every file under dir (none when dir does not exist), by path relative to it, to
// its content.
func filesIn(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.Walk(dir, func(path string, info os.FileInfo, err error) error {
		if errors.Is(err, os.ErrNotExist) && path == dir {
			return filepath.SkipDir
		}
		if err != nil || info.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		out[rel], err = os.ReadFile(path)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
