package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/warrenhq/warren"
	"github.com/warrenhq/warren/internal/fakellm"
	"github.com/warrenhq/warren/internal/testenv"
	"github.com/warrenhq/warren/sandbox"
	"github.com/warrenhq/warren/state"
)

// stateRun runs the real host binary from the repository root with args (runIn).
func stateRun(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	return stateRunEnv(t, nil, args...)
}

// stateRunEnv is stateRun with extra environment.
func stateRunEnv(t *testing.T, env []string, args ...string) (int, string, string) {
	t.Helper()
	bin, repo := buildBinary(t)
	return runIn(t, bin, repo, env, args...)
}

// crashCase is a shipped scenario the crash property runs, scaled down where it is large.
type crashCase struct {
	name string
	args []string
}

// fullSync names the shipped scenarios the crash property runs with --state-sync full (the
// default); the others run with --state-sync process, which survives what the property does to
// the host (SIGKILL, not a power cut) and spares a test of a thousand-tick run a thousand fsyncs
// (wait_storm: 18 s a run synced, 2 s not). Both modes commit the same bytes at the same ticks.
var fullSync = map[string]bool{"on_error.toml": true, "review.toml": true, "fanout.toml": true}

// crashArgs scales the large or slow shipped scenarios down for the crash property (sandbox:
// every contained command starts the host's binary twice, about a quarter second of CPU, so 20
// builders' 140 commands take 24 s a run on 2 cores; wait_storm: a thousand-tick run).
var crashArgs = map[string][]string{
	"quickstart.toml": {"--agents", "200"},
	"mcp.toml":        {"--agents", "40"},
	"gossip.toml":     {"--agents", "200"},
	"sandbox.toml":    {"--agents", "4"},
	"wait_storm.toml": {"--agents", "200"},
}

// crashCases is every shipped scenario.
func crashCases(t *testing.T) []crashCase {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(examples, "*.toml"))
	if err != nil || len(files) < 10 {
		t.Fatalf("the shipped scenarios: %v (%d)", err, len(files))
	}
	var out []crashCase
	for _, f := range files {
		base := filepath.Base(f)
		args := slicesClone(crashArgs[base])
		if !fullSync[base] {
			args = append(args, "--state-sync", "process")
		}
		out = append(out, crashCase{name: strings.TrimSuffix(base, ".toml"), args: args})
	}
	return out
}

// crashEnv gives a case what it needs to run: bubblewrap for the sandbox example (skipped with
// its reason, or failed under WARREN_REQUIRE_SANDBOX=1, where the machine lacks it), the fake
// provider for the live one.
func crashEnv(t *testing.T, name string) []string {
	t.Helper()
	switch name {
	case "sandbox":
		m, err := sandbox.ParseMode("namespace")
		if err != nil {
			t.Fatal(err)
		}
		testenv.MustHave(t, sandbox.Probe().Unavailable(m))
	case "live":
		srv, err := fakellm.StartRules(filepath.Join(examples, "live", "fake-rules.toml"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = srv.Close() })
		return []string{"OPENAI_BASE_URL=" + srv.URL}
	}
	return nil
}

// TestCrashResumeProperty is the durability property: a shipped scenario run with --state and
// killed with SIGKILL at a tick (after its commit, once the side-effecting calls that started have
// returned), resumed, possibly killed and resumed again, ends with the trace and the recording of
// the same run never interrupted, byte for byte. The killed runs take a world snapshot every two
// ticks, which their resumes restore and never set aside (the reference run takes none: snapshots
// change nothing), and one kill falls inside a snapshot's write. Each case is killed at its first
// tick, at its last, and at one drawn from a seeded RNG and again during that resume, so a failure
// names kill points that reproduce it. Every run of a case uses the same state directory path (one
// after the other), so paths in the trace agree; the cases run two at a time.
func TestCrashResumeProperty(t *testing.T) {
	for _, c := range crashCases(t) {
		t.Run(c.name, func(t *testing.T) {
			// Two at a time: much of a case is process starts, fsyncs and commands' sleeps.
			t.Parallel()
			env := crashEnv(t, c.name)
			dir := filepath.Join(t.TempDir(), "state")
			scenario := filepath.Join("scenarios", "examples", c.name+".toml")
			base := append([]string{"run", scenario, "--state", dir, "--no-progress"}, c.args...)
			if code, out, errOut := stateRunEnv(t, env, append(slicesClone(base), "--snapshot-every", "off")...); code != 0 && code != 1 {
				t.Fatalf("the uninterrupted run exited %d\n%s\n%s", code, out, errOut)
			}
			refTrace, refRec := readBoth(t, dir)
			ticks := endTicks(t, refTrace)
			if err := os.RemoveAll(dir); err != nil {
				t.Fatal(err)
			}
			run := append(slicesClone(base), "--snapshot-every", "2")
			rng := rand.New(rand.NewPCG(uint64(len(c.name)), 16))
			points := []uint64{0, ticks - 1, rng.Uint64N(ticks)}
			restored := 0
			check := func(kills string) {
				gotTrace, gotRec := readBoth(t, dir)
				if !bytes.Equal(gotTrace, refTrace) {
					t.Errorf("killed %s: the resumed trace differs from the uninterrupted one at %s", kills, firstDiffLine(refTrace, gotTrace))
				}
				if !bytes.Equal(gotRec, refRec) {
					t.Errorf("killed %s: the resumed recording differs from the uninterrupted one at %s", kills, firstDiffLine(refRec, gotRec))
				}
				info, err := warren.InspectState(dir)
				if err != nil {
					t.Fatal(err)
				}
				for _, r := range info.Resumes {
					if r.Snapshot != nil {
						restored++
					}
				}
				if err := os.RemoveAll(dir); err != nil {
					t.Fatal(err)
				}
			}
			for i, at := range points {
				kills := []uint64{at}
				if i == len(points)-1 && at+1 < ticks {
					kills = append(kills, at+1+rng.Uint64N(ticks-at-1)) // killed again during the resume
				}
				crashAndResume(t, env, dir, append(slicesClone(run), "--crash-after-tick", strconv.FormatUint(kills[0], 10)), kills[1:])
				check(fmt.Sprintf("at ticks %v", kills))
			}
			if ticks > 3 && restored == 0 {
				t.Errorf("no resume of the %d-tick run restored a world snapshot", ticks)
			}
			if ticks >= 6 {
				// Killed inside the second snapshot's write: its file is there, not indexed; the
				// resume restores the first.
				crashAndResume(t, env, dir, append(slicesClone(run), "--crash-in-snapshot", "2"), nil)
				check("inside the second snapshot's write")
			}
		})
	}
}

// crashAndResume runs run (which must kill the host), then resumes, killed after each of kills,
// and resumes to the end (which may exit 1: some shipped scenarios fail expectations on purpose).
func crashAndResume(t *testing.T, env []string, dir string, run []string, kills []uint64) {
	t.Helper()
	if code, out, errOut := stateRunEnv(t, env, run...); code != -int(syscall.SIGKILL) {
		t.Fatalf("host %s exited %d, want killed\n%s\n%s", strings.Join(run, " "), code, out, errOut)
	}
	for _, k := range kills {
		code, out, errOut := stateRunEnv(t, env, "resume", dir, "--crash-after-tick", strconv.FormatUint(k, 10))
		if code != -int(syscall.SIGKILL) {
			t.Fatalf("resume killed at %d exited %d\n%s\n%s", k, code, out, errOut)
		}
		noFallback(t, errOut)
	}
	code, out, errOut := stateRunEnv(t, env, "resume", dir)
	if code != 0 && code != 1 {
		t.Fatalf("resume after kills at %v exited %d\n%s\n%s", kills, code, out, errOut)
	}
	noFallback(t, errOut)
}

// noFallback fails when a resume set a snapshot aside: one the run wrote whole must restore and
// replay exactly (a fallback would hide it behind a replay from an earlier one).
func noFallback(t *testing.T, stderr string) {
	t.Helper()
	for _, w := range []string{"does not restore", "did not replay the committed ticks exactly", "unusable"} {
		if strings.Contains(stderr, w) {
			t.Errorf("the resume set a snapshot aside:\n%s", stderr)
		}
	}
}

func slicesClone(s []string) []string { return append([]string(nil), s...) }

// readBoth reads a state directory's trace and recording.
func readBoth(t *testing.T, dir string) ([]byte, []byte) {
	t.Helper()
	tr, err := os.ReadFile(filepath.Join(dir, "trace.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	rec, err := os.ReadFile(filepath.Join(dir, "recording.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	return tr, rec
}

// endTicks is the tick count a whole trace's end event gives.
func endTicks(t *testing.T, tr []byte) uint64 {
	t.Helper()
	lines := bytes.Split(bytes.TrimSpace(tr), []byte("\n"))
	last := string(lines[len(lines)-1])
	i := strings.Index(last, `"ticks":`)
	if i < 0 {
		t.Fatalf("the trace has no end event: %s", last)
	}
	n, err := strconv.ParseUint(strings.TrimRight(strings.SplitN(last[i+len(`"ticks":`):], ",", 2)[0], "}"), 10, 64)
	if err != nil || n == 0 {
		t.Fatalf("the end event's ticks: %s", last)
	}
	return n
}

// firstDiffLine says where two files first differ.
func firstDiffLine(want, got []byte) string {
	wl, gl := bytes.Split(want, []byte("\n")), bytes.Split(got, []byte("\n"))
	for i := range min(len(wl), len(gl)) {
		if !bytes.Equal(wl[i], gl[i]) {
			return fmt.Sprintf("line %d\n  want %s\n  got  %s", i+1, wl[i], gl[i])
		}
	}
	return fmt.Sprintf("the end: %d lines against %d", len(wl), len(gl))
}

// TestShellInFlightIsInterrupted: a host killed inside a side-effecting call, after its intent is
// journaled and before it runs, leaves the shell calls whose intents went to disk "may or may not
// have happened" (the host cannot tell what a command did): the resume answers each as
// interrupted, with a resume note in the trace, and runs none of them again (the logs they would
// append to are as they were at the kill), and the summary and state inspect say so. The
// write_file calls cut off beside them are settled exactly once (their targets say whether they
// happened): none is answered as interrupted, each agent's file holds what it wrote, and their
// results are the uninterrupted run's, byte for byte.
func TestShellInFlightIsInterrupted(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	scenario := filepath.Join("cmd", "host", "testdata", "state", "shell.toml")
	if code, out, errOut := stateRun(t, "run", scenario, "--state", dir, "--no-progress"); code != 0 {
		t.Fatalf("the uninterrupted run exited %d\n%s\n%s", code, out, errOut)
	}
	ref, _ := readBoth(t, dir)
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := stateRun(t, "run", scenario, "--state", dir, "--no-progress", "--crash-in-effect", "2"); code != -int(syscall.SIGKILL) {
		t.Fatalf("exit %d, want killed\n%s\n%s", code, out, errOut)
	}
	code, out, errOut := stateRun(t, "state", "inspect", dir)
	m := regexp.MustCompile(`in flight    \d+ journaled calls \(\d+ returned, (\d+) may or may not have happened\)`).FindStringSubmatch(out)
	if code != 0 || !strings.Contains(out, "status       running\n") || m == nil || m[1] == "0" {
		t.Fatalf("state inspect exited %d:\n%s\n%s", code, out, errOut)
	}
	work := func(agent, file string) string { return filepath.Join(dir, "work", "agents", agent, file) }
	logs := map[string]string{}
	for i := range 8 {
		agent := fmt.Sprintf("agents-%d", i)
		b, _ := os.ReadFile(work(agent, "log.txt"))
		logs[agent] = string(b)
	}
	code, out, errOut = stateRun(t, "resume", dir, "--no-progress")
	if code != 0 {
		t.Fatalf("resume exited %d\n%s\n%s", code, out, errOut)
	}
	named := regexp.MustCompile(`(?m)^  interrupted (\S+) (\S+) \((\S+)\)$`).FindAllStringSubmatch(out, -1)
	if len(named) == 0 || !strings.Contains(out, strconv.Itoa(len(named))+" calls interrupted") {
		t.Fatalf("the resume's summary names %d interrupted calls:\n%s", len(named), out)
	}
	tr, _ := readBoth(t, dir)
	for _, n := range named {
		agent, callID, tool := n[1], n[2], n[3]
		if tool != "shell" {
			t.Errorf("%s's %s call %s was answered as interrupted: a file tool's call is settled exactly once", agent, tool, callID)
			continue
		}
		var note, result string
		for _, line := range strings.Split(string(tr), "\n") {
			if strings.Contains(line, `"call_id":"`+callID+`"`) && strings.Contains(line, `"kind":"tool_note"`) {
				note = line
			}
			if strings.Contains(line, `"call_id":"`+callID+`"`) && strings.Contains(line, `"kind":"tool_result"`) {
				result = line
			}
		}
		if !strings.Contains(note, `"fn":"resume"`) || !strings.Contains(note, "interrupted") {
			t.Errorf("no resume note for %s's call %s: %q", agent, callID, note)
		}
		if !strings.Contains(result, `"ok":false`) || !strings.Contains(result, "may or may not have happened") {
			t.Errorf("the interrupted call's result: %q", result)
		}
		if b, _ := os.ReadFile(work(agent, "log.txt")); string(b) != logs[agent] {
			t.Errorf("%s's log was %q at the kill and is %q after the resume: the interrupted command ran again", agent, logs[agent], b)
		}
	}
	writes := func(tr []byte) []string {
		var out []string
		for _, line := range strings.Split(string(tr), "\n") {
			if strings.Contains(line, `"kind":"tool_result"`) && strings.Contains(line, `"tool":"write_file"`) {
				out = append(out, line[strings.Index(line, `"agent":`):]) // without its tick and seq
			}
		}
		slices.Sort(out)
		return out
	}
	if got, want := writes(tr), writes(ref); !slices.Equal(got, want) || len(want) != 8 {
		t.Errorf("the write_file results after the resume:\n%s\nwant the uninterrupted run's:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for i := range 8 {
		agent := fmt.Sprintf("agents-%d", i)
		if b, err := os.ReadFile(work(agent, agent+".md")); err != nil || string(b) != agent+" was here\n" {
			t.Errorf("%s's file: %q, %v", agent, b, err)
		}
	}
	if code, out, _ := stateRun(t, "resume", dir); code != 0 || !strings.HasPrefix(out, "nothing to resume: ") {
		t.Errorf("resume of a finished run exited %d: %s", code, out)
	}
}

// killPoint is one place the exactly-once property kills the quickstart: a kill switch and its n.
type killPoint struct {
	flag string
	n    uint64
}

// fullResumeEnv names the environment variable that runs the exactly-once property at all its
// kill points (20) instead of the first 5.
const fullResumeEnv = "WARREN_FULL_RESUME"

// TestExactlyOnceKillPoints is the exactly-once property of the built-in tools: the quickstart
// (write_file, read_file, todo_add, todo_done) run with --state, killed with SIGKILL at a point a
// seeded RNG draws (inside the n-th side-effecting call once its intent is on disk, inside the
// n-th write between its temporary file and its rename, after a tick's commit, inside a world
// snapshot's write), and resumed, ends with the trace and the recording of the run never killed,
// byte for byte: no call is answered as interrupted and none is run twice, whatever was in flight.
// Five points by default; WARREN_FULL_RESUME=1 runs twenty.
func TestExactlyOnceKillPoints(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	base := []string{"run", filepath.Join("scenarios", "examples", "quickstart.toml"), "--agents", "200", "--state", dir, "--no-progress", "--snapshot-every", "2"}
	if code, out, errOut := stateRun(t, base...); code != 0 {
		t.Fatalf("the uninterrupted run exited %d\n%s\n%s", code, out, errOut)
	}
	refTrace, refRec := readBoth(t, dir)
	ticks := endTicks(t, refTrace)
	writes := uint64(bytes.Count(refTrace, []byte(`"tool":"write_file","ok":true`))) // its side-effecting calls
	if writes < 2 || ticks < 4 {
		t.Fatalf("the reference run: %d writes, %d ticks", writes, ticks)
	}
	rng := rand.New(rand.NewPCG(31, 4))
	// The first points are one of each kind; the rest are drawn.
	kinds := []string{"--crash-in-write", "--crash-in-effect", "--crash-in-snapshot", "--crash-after-tick", "--crash-in-write"}
	var points []killPoint
	for i := range 20 {
		kind := kinds[i%len(kinds)]
		if i >= len(kinds) {
			kind = kinds[rng.IntN(len(kinds))]
		}
		var n uint64
		switch kind {
		case "--crash-in-write", "--crash-in-effect":
			n = 1 + rng.Uint64N(writes)
		case "--crash-in-snapshot":
			n = 1 + rng.Uint64N(ticks/2-1)
		case "--crash-after-tick":
			n = rng.Uint64N(ticks)
		}
		points = append(points, killPoint{kind, n})
	}
	if os.Getenv(fullResumeEnv) != "1" {
		points = points[:5]
	}
	for _, p := range points {
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
		if code, out, errOut := stateRun(t, append(slicesClone(base), p.flag, strconv.FormatUint(p.n, 10))...); code != -int(syscall.SIGKILL) {
			t.Fatalf("%s %d: the host exited %d, want killed\n%s\n%s", p.flag, p.n, code, out, errOut)
		}
		code, out, errOut := stateRun(t, "resume", dir, "--no-progress")
		if code != 0 {
			t.Fatalf("%s %d: resume exited %d\n%s\n%s", p.flag, p.n, code, out, errOut)
		}
		noFallback(t, errOut)
		gotTrace, gotRec := readBoth(t, dir)
		if !strings.Contains(out, " 0 calls interrupted, 0 run again") || bytes.Contains(gotTrace, []byte(`"fn":"resume"`)) {
			t.Errorf("%s %d: the resume answered a call as interrupted or ran one again:\n%s", p.flag, p.n, out)
		}
		if !bytes.Equal(gotTrace, refTrace) {
			t.Errorf("%s %d: the resumed trace differs from the uninterrupted one at %s", p.flag, p.n, firstDiffLine(refTrace, gotTrace))
		}
		if !bytes.Equal(gotRec, refRec) {
			t.Errorf("%s %d: the resumed recording differs from the uninterrupted one at %s", p.flag, p.n, firstDiffLine(refRec, gotRec))
		}
		t.Logf("%s %d: %s", p.flag, p.n, regexp.MustCompile(`(?m)^resumed .*$`).FindString(out))
	}
}

// TestResumeStricterStage is the reference runtime's known gap, closed: an agent whose current
// stage is stricter than its entry stage resumes under the stricter stage's policy. The run is
// killed right after the agent entered its locked stage; its first call there, made by the
// resumed host, is denied, and the file it would have written is not written.
func TestResumeStricterStage(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	scenario := filepath.Join("cmd", "host", "testdata", "state", "stricter.toml")
	// Tick 3: the agent entered "locked" and added a checklist item; its write comes at tick 4.
	code, out, errOut := stateRun(t, "run", scenario, "--state", dir, "--crash-after-tick", "3")
	if code != -int(syscall.SIGKILL) {
		t.Fatalf("exit %d, want killed\n%s\n%s", code, out, errOut)
	}
	tr, _ := readBoth(t, dir)
	if !bytes.Contains(tr, []byte(`"kind":"stage_enter","stage":"locked"`)) || bytes.Contains(tr, []byte(`"path":"locked.md"`)) {
		t.Fatalf("the kill point is not between the agent's entry into locked and its first call there:\n%s", tr)
	}
	if code, out, errOut := stateRun(t, "resume", dir); code != 0 {
		t.Fatalf("resume exited %d\n%s\n%s", code, out, errOut)
	}
	tr, _ = readBoth(t, dir)
	var verdict string
	for _, line := range strings.Split(string(tr), "\n") {
		if strings.Contains(line, `"kind":"tool_call"`) && strings.Contains(line, `"path":"locked.md"`) {
			verdict = line
		}
	}
	if !strings.Contains(verdict, `"verdict":"deny"`) {
		t.Errorf("the first call in the stricter stage after the resume was not denied: %s", verdict)
	}
	if _, err := os.Stat(filepath.Join(dir, "work", "agents", "agents-0", "locked.md")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("locked.md was written (err %v)", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "work", "agents", "agents-0", "open.md")); err != nil {
		t.Errorf("open.md, written before the kill, is gone: %v", err)
	}
}

// TestStateRefusals: what a state directory refuses, with a clear error: a second run into one
// that holds a run, a directory of another version, a run whose scenario changed, a directory that
// is not one, and --record beside --state.
func TestStateRefusals(t *testing.T) {
	tmp := t.TempDir()
	scenario := filepath.Join(tmp, "s.toml")
	src, err := os.ReadFile(filepath.Join("testdata", "state", "stricter.toml"))
	if err != nil {
		t.Fatal(err)
	}
	bp, err := os.ReadFile(filepath.Join("testdata", "state", "guarded.toml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tmp, "guarded.toml"), bp, 0o644); err != nil {
		t.Fatal(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(scenario, src, 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(tmp, "state")
	if code, out, errOut := stateRun(t, "run", scenario, "--state", dir, "--crash-after-tick", "1"); code != -int(syscall.SIGKILL) {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"a run into a used directory", []string{"run", scenario, "--state", dir}, "the state directory already holds a run"},
		{"not a state directory", []string{"resume", tmp}, "not a Warren state directory: " + tmp + " has no state.db"},
		{"inspect not a state directory", []string{"state", "inspect", tmp}, "not a Warren state directory"},
		{"record beside state", []string{"run", scenario, "--state", filepath.Join(tmp, "other"), "--record", filepath.Join(tmp, "r.jsonl")}, "--record with --state"},
		{"a snapshot interval that is neither", []string{"run", scenario, "--state", filepath.Join(tmp, "other"), "--snapshot-every", "10q"},
			`--snapshot-every "10q": give a number of ticks (100), a wall-clock duration (30s, 5m) or off`},
	} {
		if code, _, errOut := stateRun(t, c.args...); code != 2 || !strings.Contains(errOut, c.want) {
			t.Errorf("%s: exit %d, stderr %q, want 2 and %q", c.name, code, errOut, c.want)
		}
	}
	if _, err := os.Stat(filepath.Join(tmp, "other")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused run made its state directory: %v", err)
	}
	// The scenario changes under the stopped run: refused, and the directory is untouched.
	before, _ := readBoth(t, dir)
	if err := os.WriteFile(scenario, append([]byte("description = \"edited\"\n"), src...), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := stateRun(t, "resume", dir); code != 2 || !strings.Contains(errOut, "the scenario changed since the run started") {
		t.Errorf("resume of a changed scenario: exit %d, %s", code, errOut)
	}
	if after, _ := readBoth(t, dir); !bytes.Equal(before, after) {
		t.Error("a refused resume changed the trace")
	}
	if err := os.WriteFile(scenario, src, 0o644); err != nil {
		t.Fatal(err)
	}
	// Another host version, then another state format version.
	for _, c := range []struct {
		edit func(*state.Meta)
		want string
	}{
		{func(m *state.Meta) { m.Host = "0.0.1-other" }, "was started by Warren 0.0.1-other; this is " + warren.Version},
		{func(m *state.Meta) { m.Version = 99 }, "is format \"warren-state\" version 99; this host reads \"warren-state\" version 1"},
	} {
		editMeta(t, dir, c.edit)
		if code, out, errOut := stateRun(t, "resume", dir); code != 2 || !strings.Contains(errOut, "the state directory is of another version") || !strings.Contains(errOut, c.want) {
			t.Errorf("resume of another version: exit %d\n%s\n%s\nwant %q", code, out, errOut, c.want)
		}
		editMeta(t, dir, func(m *state.Meta) { m.Host, m.Version = warren.Version, state.Version })
	}
	if code, out, errOut := stateRun(t, "resume", dir); code != 0 {
		t.Errorf("the resume after the refusals exited %d\n%s\n%s", code, out, errOut)
	}
}

// editMeta changes a state directory's run description as another host would have written it.
func editMeta(t *testing.T, dir string, edit func(*state.Meta)) {
	t.Helper()
	editEntry(t, dir, "meta", []byte("meta"), edit)
}

// editEntry changes the JSON entry at key of a bucket of a state directory's state.db.
func editEntry[T any](t *testing.T, dir, bucket string, key []byte, edit func(*T)) {
	t.Helper()
	db, err := bolt.Open(filepath.Join(dir, state.DBFile), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte(bucket))
		var v T
		if err := json.Unmarshal(b.Get(key), &v); err != nil {
			return err
		}
		edit(&v)
		raw, err := json.Marshal(v)
		if err != nil {
			return err
		}
		return b.Put(key, raw)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestRandomKill: the host is killed from outside at a moment a seeded RNG draws (the kill may
// land anywhere: inside a tick, inside a commit's transaction, inside a call), then resumed. The
// resumed trace is the uninterrupted one, except that each call the kill cut off in mid-run is
// answered as interrupted: up to the first of those results the two traces are the same byte for
// byte, and with none of them the whole trace is.
func TestRandomKill(t *testing.T) {
	bin, repo := buildBinary(t)
	dir := filepath.Join(t.TempDir(), "state")
	run := []string{"run", filepath.Join("scenarios", "examples", "quickstart.toml"), "--agents", "2000", "--state", dir, "--no-progress", "--commit-every", "5ms"}
	if code, out, errOut := stateRun(t, run...); code != 0 {
		t.Fatalf("the uninterrupted run exited %d\n%s\n%s", code, out, errOut)
	}
	ref, _ := readBoth(t, dir)
	rng := rand.New(rand.NewPCG(7, 11))
	for i := range 3 {
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(bin, run...)
		cmd.Dir = repo
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// The run takes about a second on the project's machine: kill it somewhere in its first
		// 600 ms (a loaded machine only moves the kill earlier in the run).
		after := time.Duration(50+rng.IntN(550)) * time.Millisecond
		time.Sleep(after)
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if _, err := os.Stat(filepath.Join(dir, state.DBFile)); err != nil {
			continue // killed before the directory was made: nothing to resume
		}
		code, out, errOut := stateRun(t, "resume", dir, "--no-progress")
		if code != 0 && !strings.Contains(out, "nothing to resume") {
			t.Fatalf("kill %d: resume exited %d\n%s\n%s", i, code, out, errOut)
		}
		got, _ := readBoth(t, dir)
		first := bytes.Index(got, []byte(`"fn":"resume"`))
		t.Logf("kill %d after %s: %s", i, after, strings.TrimSpace(regexp.MustCompile(`(?m)^resumed .*$`).FindString(out)))
		if first < 0 {
			if !bytes.Equal(got, ref) {
				t.Errorf("kill %d: no call was cut off, and the trace differs at %s", i, firstDiffLine(ref, got))
			}
			continue
		}
		// The line before the first resume note is the last one both runs wrote alike.
		cut := bytes.LastIndexByte(got[:first], '\n')
		if !bytes.Equal(got[:cut], ref[:min(cut, len(ref))]) {
			t.Errorf("kill %d: the trace differs before the first interrupted call, at %s", i, firstDiffLine(ref[:min(cut, len(ref))], got[:cut]))
		}
		if !strings.Contains(out, "calls interrupted") {
			t.Errorf("kill %d: the trace has a resume note but the summary counts no interrupted call:\n%s", i, out)
		}
	}
}

// TestCrashResumeProcessSync: with --state-sync process nothing is synced, and a run killed with
// SIGKILL (the kernel keeps its writes) resumes to the uninterrupted trace as with full sync.
func TestCrashResumeProcessSync(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	run := []string{"run", filepath.Join("scenarios", "examples", "quickstart.toml"), "--agents", "200", "--state", dir, "--no-progress", "--state-sync", "process"}
	if code, out, errOut := stateRun(t, run...); code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	ref, refRec := readBoth(t, dir)
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	crashAndResume(t, nil, dir, append(slicesClone(run), "--snapshot-every", "2", "--crash-after-tick", "3"), []uint64{6})
	got, gotRec := readBoth(t, dir)
	if !bytes.Equal(got, ref) || !bytes.Equal(gotRec, refRec) {
		t.Errorf("the resumed trace or recording differs: %s", firstDiffLine(ref, got))
	}
}

// TestDamagedState: a state directory whose files were damaged after the run stopped is refused
// with an error that names what is wrong, and nothing of it is changed: state.db overwritten with
// garbage, the trace or the recording cut shorter than the last commit made durable, the
// directory moved.
func TestDamagedState(t *testing.T) {
	scenario := filepath.Join("cmd", "host", "testdata", "state", "stricter.toml")
	for _, c := range []struct {
		name   string
		damage func(dir string) (string, error)
		want   string
	}{
		{"state.db garbage", func(dir string) (string, error) {
			return dir, os.WriteFile(filepath.Join(dir, "state.db"), bytes.Repeat([]byte("garbage!"), 4096), 0o600)
		}, "not a Warren state directory: " + "%s/state.db is damaged: invalid database"},
		{"trace cut short", func(dir string) (string, error) {
			return dir, os.Truncate(filepath.Join(dir, "trace.jsonl"), 100)
		}, "%s/trace.jsonl is 100 bytes long, shorter than the"},
		{"recording cut short", func(dir string) (string, error) {
			return dir, os.Truncate(filepath.Join(dir, "recording.jsonl"), 10)
		}, "%s/recording.jsonl: not a valid recording: line 1 is cut in the middle"},
		{"moved", func(dir string) (string, error) {
			return dir + "-moved", os.Rename(dir, dir+"-moved")
		}, "the state directory was moved: %s was made at "},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "state")
			if code, out, errOut := stateRun(t, "run", scenario, "--state", dir, "--crash-after-tick", "3"); code != -int(syscall.SIGKILL) {
				t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
			}
			dir, err := c.damage(dir)
			if err != nil {
				t.Fatal(err)
			}
			before, _ := readBoth(t, dir)
			code, out, errOut := stateRun(t, "resume", dir)
			if want := fmt.Sprintf(c.want, dir); code != 2 || !strings.Contains(errOut, want) {
				t.Errorf("exit %d, stderr %q, want 2 and %q\n%s", code, errOut, want, out)
			}
			if after, _ := readBoth(t, dir); !bytes.Equal(before, after) {
				t.Error("the refused resume changed the trace")
			}
		})
	}
}

// TestSnapshotFallback: a resume whose last world snapshot is damaged (its file no longer matches
// its checksum) or restores to a run that does not write the committed trace again (its index
// names the wrong offset) restores the snapshot before it instead, and still ends with the
// uninterrupted run's trace; state inspect lists both snapshots, and the resume names the one it
// restored.
func TestSnapshotFallback(t *testing.T) {
	base := []string{"run", filepath.Join("scenarios", "examples", "planner.toml"), "--no-progress"}
	refDir := filepath.Join(t.TempDir(), "state")
	if code, out, errOut := stateRun(t, append(slicesClone(base), "--state", refDir, "--snapshot-every", "off")...); code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	ref, _ := readBoth(t, refDir)
	for _, c := range []struct {
		name   string
		damage func(t *testing.T, dir string, last state.Snapshot)
	}{
		{"damaged file", func(t *testing.T, dir string, last state.Snapshot) {
			p := filepath.Join(dir, state.SnapshotDir, last.File)
			raw, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			raw[len(raw)/2] ^= 0xff
			if err := os.WriteFile(p, raw, 0o600); err != nil {
				t.Fatal(err)
			}
		}},
		{"wrong offset", func(t *testing.T, dir string, last state.Snapshot) {
			editSnapshot(t, dir, last.Done, func(s *state.Snapshot) { s.TraceBytes -= 10 })
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(filepath.Dir(refDir), "state") // the reference's path: paths in the trace agree
			if err := os.RemoveAll(dir); err != nil {
				t.Fatal(err)
			}
			run := append(slicesClone(base), "--state", dir, "--snapshot-every", "20", "--crash-after-tick", "90")
			if code, out, errOut := stateRun(t, run...); code != -int(syscall.SIGKILL) {
				t.Fatalf("exit %d, want killed\n%s\n%s", code, out, errOut)
			}
			info, err := warren.InspectState(dir)
			if err != nil {
				t.Fatal(err)
			}
			if len(info.Snapshots) != 2 {
				t.Fatalf("the directory keeps %d snapshots, want the last two", len(info.Snapshots))
			}
			code, out, errOut := stateRun(t, "state", "inspect", dir)
			if code != 0 || !strings.Contains(out, fmt.Sprintf("snapshot     at tick %d", info.Snapshots[0].Tick)) ||
				!strings.Contains(out, fmt.Sprintf("earlier      at tick %d", info.Snapshots[1].Tick)) {
				t.Fatalf("state inspect (exit %d) does not list both snapshots:\n%s%s", code, out, errOut)
			}
			c.damage(t, dir, info.Snapshots[0])
			code, out, errOut = stateRun(t, "resume", dir, "--log-level", "warn")
			if code != 0 {
				t.Fatalf("resume exited %d\n%s\n%s", code, out, errOut)
			}
			want := fmt.Sprintf("from the snapshot at tick %d", info.Snapshots[1].Tick)
			if !strings.Contains(out, want) || !strings.Contains(errOut, "earlier one") {
				t.Errorf("the resume does not say it restored the earlier snapshot (%q) after warning of the last:\n%s%s", want, out, errOut)
			}
			got, _ := readBoth(t, dir)
			if !bytes.Equal(got, ref) {
				t.Errorf("the resumed trace differs from the uninterrupted one at %s", firstDiffLine(ref, got))
			}
		})
	}
}

// editSnapshot changes the index entry of the snapshot taken after done ticks.
func editSnapshot(t *testing.T, dir string, done uint64, edit func(*state.Snapshot)) {
	t.Helper()
	editEntry(t, dir, "snapshots", binary.BigEndian.AppendUint64(nil, done), edit)
}

// TestResumeWallClock: a wall-clock run killed with SIGKILL (and its resume killed again) resumes:
// the committed passes replay as recorded (their times, and each lane result at the pass it came
// in), writing the committed trace and recording again byte for byte, and the run goes on live in
// wall time to its end. The whole resumed run is then a recorded wall-clock run like any other:
// host replay --check replays its recording to its trace exactly.
func TestResumeWallClock(t *testing.T) {
	for example, c := range map[string]struct {
		args []string
		kill string // a tick well before the run's end, which at 1 ms a tick comes soon
	}{"quickstart.toml": {[]string{"--agents", "200"}, "5"}, "on_error.toml": {nil, "1"}} {
		t.Run(strings.TrimSuffix(example, ".toml"), func(t *testing.T) {
			dir := t.TempDir()
			scenario := wallScenario(t, dir, example)
			state := filepath.Join(dir, "state")
			run := append([]string{"run", scenario, "--state", state, "--no-progress", "--commit-every", "1ms"}, c.args...)
			if code, out, errOut := stateRun(t, append(run, "--crash-after-tick", c.kill)...); code != -int(syscall.SIGKILL) {
				t.Fatalf("exit %d, want killed\n%s\n%s", code, out, errOut)
			}
			info, err := warren.InspectState(state)
			if err != nil {
				t.Fatal(err)
			}
			crashed, _ := readBoth(t, state)
			prefix := crashed[:info.Commit.TraceBytes]
			if code, out, errOut := stateRun(t, "resume", state, "--crash-after-tick", strconv.FormatUint(info.Commit.Ticks+5, 10)); code != -int(syscall.SIGKILL) && code != 0 {
				t.Fatalf("the first resume exited %d\n%s\n%s", code, out, errOut)
			}
			code, out, errOut := stateRun(t, "resume", state)
			if code != 0 && !strings.Contains(out, "nothing to resume") {
				t.Fatalf("resume exited %d\n%s\n%s", code, out, errOut)
			}
			got, _ := readBoth(t, state)
			if !bytes.HasPrefix(got, prefix) {
				t.Fatalf("the resumed trace does not begin with the %d bytes committed before the kill: %s", len(prefix), firstDiffLine(prefix, got[:min(len(got), len(prefix))]))
			}
			if !bytes.Contains(got[bytes.LastIndexByte(bytes.TrimSpace(got), '\n'):], []byte(`"status":"finished"`)) {
				t.Fatalf("the resumed trace does not end finished: %s", got[bytes.LastIndexByte(bytes.TrimSpace(got), '\n'):])
			}
			code, out, errOut = stateRun(t, "replay", filepath.Join(state, "recording.jsonl"), "--check")
			if code != 0 || !strings.Contains(out, "replay       identical to") || !strings.Contains(out, "wall clock") {
				t.Fatalf("host replay --check of the resumed recording exited %d\n%s\n%s", code, out, errOut)
			}
		})
	}
}

// TestResumeKeepsMCPSessionEvents: killed with its last commit at tick 0 (commits an hour apart)
// and its MCP calls of the next ticks returned and journaled, the mcp scenario resumes by serving
// those calls without running them, so no session starts again; the session's start and stop
// events come from the journal, and the trace and recording are the uninterrupted run's, byte for
// byte. (The resumed trace used to lose them whenever a loaded machine delayed the commits.)
func TestResumeKeepsMCPSessionEvents(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	base := []string{"run", filepath.Join("scenarios", "examples", "mcp.toml"), "--state", dir, "--no-progress", "--agents", "40", "--state-sync", "process"}
	if code, out, errOut := stateRun(t, append(slicesClone(base), "--snapshot-every", "off")...); code != 0 {
		t.Fatalf("the uninterrupted run exited %d\n%s\n%s", code, out, errOut)
	}
	refTrace, refRec := readBoth(t, dir)
	if !bytes.Contains(refTrace, []byte(`"kind":"mcp_server","server":"kv","event":"start"`)) {
		t.Fatal("the uninterrupted run has no session start event to keep")
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	crashAndResume(t, nil, dir, append(slicesClone(base), "--snapshot-every", "2", "--commit-every", "1h", "--crash-in-snapshot", "2"), nil)
	gotTrace, gotRec := readBoth(t, dir)
	if !bytes.Equal(gotTrace, refTrace) {
		t.Errorf("the resumed trace differs from the uninterrupted one at %s", firstDiffLine(refTrace, gotTrace))
	}
	if !bytes.Equal(gotRec, refRec) {
		t.Errorf("the resumed recording differs from the uninterrupted one at %s", firstDiffLine(refRec, gotRec))
	}
	info, err := warren.InspectState(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(info.Resumes) != 1 || info.Resumes[0].Served == 0 {
		t.Errorf("resumes %+v, want one that served journaled calls", info.Resumes)
	}
}
