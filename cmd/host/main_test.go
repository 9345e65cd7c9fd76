package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/warrenhq/warren/internal/testenv"
	"github.com/warrenhq/warren/sandbox"
	"github.com/warrenhq/warren/trace"
)

// examples is where the shipped example scenarios are, from this package's folder.
var examples = filepath.Join("..", "..", "scenarios", "examples")

// goldenTraces is where the scenarios package keeps the examples' golden traces.
var goldenTraces = filepath.Join("..", "..", "scenarios", "testdata", "golden")

// result is what one invocation of the command did.
type result struct {
	code           int
	stdout, stderr string
}

// host runs the command in-process with args, as main would, capturing its output.
func host(t *testing.T, args ...string) result {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(&env{stdout: &stdout, stderr: &stderr, ctx: context.Background()}, args)
	return result{code, stdout.String(), stderr.String()}
}

// wantCode fails the test unless r exited with code, showing the output when it did not.
func wantCode(t *testing.T, r result, code int) {
	t.Helper()
	if r.code != code {
		t.Fatalf("exit code %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, code, r.stdout, r.stderr)
	}
}

// example returns the path of a shipped example from this package's folder; the commands report
// scenario paths as they were typed.
func example(name string) string { return filepath.Join(examples, name) }

// throughputLine matches the one summary line that depends on wall time.
var throughputLine = regexp.MustCompile(`(?m)^throughput   \d+ agent-steps/s over \S+\n`)

func TestRunExamples(t *testing.T) {
	tests := []struct {
		file string
		args []string
		want string
	}{
		{"on_error.toml", nil, `scenario     on-error (seed 7, virtual clock)
agents       5: done 4, failed 1
ticks        9 (fixed_point)
model turns  18
  model scripted:doomed      2 turns (1 failed)
  model scripted:steady      6 turns (0 failed)
  model scripted:stumbles    10 turns (2 failed)
tool calls   6 (0 errors)
expectations all 5 held
`},
		{"bad_calls.toml", nil, `scenario     bad-calls (seed 11, virtual clock)
agents       1: done 1
ticks        6 (fixed_point)
model turns  3
tool calls   4 (4 errors)
expectations all 2 held
`},
		{"max_iterations.toml", nil, `scenario     max-iterations (seed 3, virtual clock)
agents       3: failed 3
ticks        7 (fixed_point)
model turns  12
tool calls   12 (0 errors)
expectations all 2 held
`},
		{"quickstart.toml", []string{"--agents", "50"}, `scenario     quickstart (seed 42, virtual clock)
agents       50: done 50
ticks        10 (fixed_point)
model turns  250
tool calls   250 (0 errors)
expectations all 3 held
`},
		{"kill_tree.toml", nil, `scenario     kill-tree (seed 3, virtual clock)
agents       4: done 1, killed 3
tree         3 spawned as sub-agents
  depth 0    1: done 1
  depth 1    1: killed 1
  depth 2    1: killed 1
  depth 3    1: killed 1
ticks        11 (fixed_point)
model turns  28
  model scripted:link        18 turns (0 failed)
  model scripted:root        10 turns (0 failed)
tool calls   27 (1 errors)
expectations all 4 held
`},
		{"fanout.toml", nil, `scenario     fanout (seed 11, virtual clock)
agents       1001: done 981, failed 20
tree         1000 spawned as sub-agents
  depth 0    1: done 1
  depth 1    1000: done 980, failed 20
ticks        49 (fixed_point)
model turns  1004
  model scripted:item_worker 1000 turns (20 failed)
  model scripted:splitter    4 turns (0 failed)
tool calls   3 (0 errors)
expectations all 3 held
`},
		{"mcp.toml", nil, `scenario     mcp (seed 7, virtual clock)
agents       1001: done 1001
ticks        7 (fixed_point)
model turns  3003
  model scripted:auditor     3 turns (0 failed)
  model scripted:client      3000 turns (0 failed)
tool calls   3002 (0 errors)
expectations all 3 held
`},
		{"on_error.toml", []string{"--seed", "99"}, `scenario     on-error (seed 99, virtual clock)
agents       5: done 4, failed 1
ticks        9 (fixed_point)
model turns  18
  model scripted:doomed      2 turns (1 failed)
  model scripted:steady      6 turns (0 failed)
  model scripted:stumbles    10 turns (2 failed)
tool calls   6 (0 errors)
expectations all 5 held
`},
	}
	for _, tt := range tests {
		t.Run(strings.Join(append([]string{tt.file}, tt.args...), " "), func(t *testing.T) {
			r := host(t, append([]string{"run", example(tt.file)}, tt.args...)...)
			wantCode(t, r, exitOK)
			if !throughputLine.MatchString(r.stdout) {
				t.Errorf("no throughput line in:\n%s", r.stdout)
			}
			if got := throughputLine.ReplaceAllString(r.stdout, ""); got != tt.want {
				t.Errorf("summary:\n%s\nwant:\n%s", got, tt.want)
			}
			if r.stderr != "" {
				t.Errorf("stderr at the default log level: %q", r.stderr)
			}
		})
	}
}

func TestRunFailingExpectations(t *testing.T) {
	r := host(t, "run", example("expect_fail.toml"))
	wantCode(t, r, exitExpect)
	file := example("expect_fail.toml")
	want := `expectations 3 failed:
  ` + file + `:20: expect[0] (group quick): 2 of 2 agents differ
    quick-0: status is done, want failed; final stage is "poll", want "summarise"
    quick-1: status is done, want failed; final stage is "poll", want "summarise"
  ` + file + `:25: expect[1] (agent quick-1): 1 of 1 agents differ
    quick-1: todo_list called 0 times, want 2
  ` + file + `:29: expect_run.status.done: 2 agents done, want 0
`
	if !strings.HasSuffix(r.stdout, want) {
		t.Errorf("stdout:\n%s\nwant it to end with:\n%s", r.stdout, want)
	}
	if !strings.HasPrefix(r.stdout, "scenario     expect-fail (seed 5, virtual clock)\nagents       2: done 2\n") {
		t.Errorf("the summary does not come first:\n%s", r.stdout)
	}
}

// writeFile writes content to name under dir and returns its path.
func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// invalidScenario has two problems, on lines 1 and 3.
const invalidScenario = `name = "Not Valid"

seed = -1
`

func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	invalid := writeFile(t, dir, "invalid.toml", invalidScenario)
	missing := filepath.Join(dir, "missing.toml")
	tests := []struct {
		name string
		args []string
		// stderr must contain each of these.
		stderr []string
	}{
		{"missing file", []string{"run", missing}, []string{"host: " + missing + " is not a valid scenario:", missing + ": file does not exist"}},
		{"invalid scenario", []string{"run", invalid}, []string{
			"host: " + invalid + " is not a valid scenario:",
			invalid + `:1:1: name: "Not Valid": use lower-case letters`,
			invalid + ":3:1: seed: -1: the seed must be zero or positive",
		}},
		{"unknown flag", []string{"run", "--frobnicate", example("on_error.toml")}, []string{"host: unknown flag --frobnicate", "Run 'host --help' for usage."}},
		{"negative agents", []string{"run", "--agents=-1", example("on_error.toml")}, []string{"host: --agents -1: give a positive number of agents"}},
		{"negative agents as a separate argument", []string{"run", "--agents", "-1", example("on_error.toml")}, []string{"host: --agents:"}},
		{"bad log level", []string{"run", "--log-level", "loud", example("on_error.toml")}, []string{"--log-level", "loud"}},
		{"seed not a number", []string{"run", "--seed", "seven", example("on_error.toml")}, []string{"--seed"}},
		{"no command", nil, []string{"expected one of"}},
		{"unknown command", []string{"launch"}, []string{"launch"}},
		{"run without a file", []string{"run"}, []string{"<file>"}},
		{"trace file in a missing folder", []string{"run", "--trace", filepath.Join(dir, "no", "such", "t.jsonl"), example("on_error.toml")}, []string{"host: --trace:"}},
		{"trace diff of a missing file", []string{"trace", "diff", missing, missing}, []string{"missing.toml"}},
		{"trace diff of a file that is not a trace", []string{"trace", "diff", invalid, invalid}, []string{"host: ", "invalid.toml"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := host(t, tt.args...)
			wantCode(t, r, exitBadInput)
			for _, want := range tt.stderr {
				if !strings.Contains(r.stderr, want) {
					t.Errorf("stderr does not contain %q:\n%s", want, r.stderr)
				}
			}
			if strings.Contains(r.stdout, "scenario     ") {
				t.Errorf("a summary was printed for bad input:\n%s", r.stdout)
			}
		})
	}
}

func TestHelp(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"-h"}, {"run", "--help"}, {"trace", "diff", "--help"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			r := host(t, args...)
			wantCode(t, r, exitOK)
			if !strings.Contains(r.stdout, "Usage: host") {
				t.Errorf("no usage on stdout:\n%s", r.stdout)
			}
		})
	}
	r := host(t, "run", "--help")
	for _, flag := range []string{"--trace", "--agents", "--seed", "--workdir", "--log-level", "--no-progress"} {
		if !strings.Contains(r.stdout, flag) {
			t.Errorf("run --help does not document %s:\n%s", flag, r.stdout)
		}
	}
}

func TestValidate(t *testing.T) {
	dir := t.TempDir()
	invalid := writeFile(t, dir, "invalid.toml", invalidScenario)
	onError, maxIter := example("on_error.toml"), example("max_iterations.toml")

	t.Run("good files", func(t *testing.T) {
		r := host(t, "validate", onError, maxIter)
		wantCode(t, r, exitOK)
		want := onError + ": ok (scenario on-error, 3 groups, 5 agents, 1 blueprints)\n" +
			maxIter + ": ok (scenario max-iterations, 1 groups, 3 agents, 1 blueprints)\n"
		if r.stdout != want || r.stderr != "" {
			t.Errorf("stdout:\n%s\nstderr:\n%s\nwant stdout:\n%s", r.stdout, r.stderr, want)
		}
	})
	t.Run("every example", func(t *testing.T) {
		files, err := filepath.Glob(filepath.Join(examples, "*.toml"))
		if err != nil || len(files) == 0 {
			t.Fatalf("no examples: %v", err)
		}
		r := host(t, append([]string{"validate"}, files...)...)
		wantCode(t, r, exitOK)
		if n := strings.Count(r.stdout, ": ok (scenario "); n != len(files) {
			t.Errorf("%d ok lines for %d files:\n%s", n, len(files), r.stdout)
		}
	})
	t.Run("a bad file among good ones", func(t *testing.T) {
		r := host(t, "validate", onError, invalid, maxIter)
		wantCode(t, r, exitBadInput)
		if strings.Count(r.stdout, ": ok (") != 2 {
			t.Errorf("the good files were not all checked:\n%s", r.stdout)
		}
		for _, want := range []string{invalid + ": invalid:\n", invalid + ":1:1: name:", invalid + ":3:1: seed:"} {
			if !strings.Contains(r.stderr, want) {
				t.Errorf("stderr does not contain %q:\n%s", want, r.stderr)
			}
		}
	})
	t.Run("no files", func(t *testing.T) {
		wantCode(t, host(t, "validate"), exitBadInput)
	})
}

func TestRunWritesTrace(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out.jsonl")
	r := host(t, "run", example("on_error.toml"), "--trace", out)
	wantCode(t, r, exitOK)
	if !strings.Contains(r.stdout, "trace        "+out+" (78 events)\n") {
		t.Errorf("the summary does not name the trace and its events:\n%s", r.stdout)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	header, events, err := trace.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	if header.Scenario != "on-error" || header.Seed != 7 || header.Clock != trace.ClockVirtual || !strings.HasPrefix(header.ScenarioHash, "sha256:") {
		t.Errorf("header %+v, want scenario on-error, seed 7, virtual clock, a sha256 hash", header)
	}
	if len(events) != 78 || !strings.Contains(string(events[77]), `"kind":"end","status":"finished"`) {
		t.Errorf("%d events, want 78 ending with the end event", len(events))
	}

	t.Run("diff with the golden trace", func(t *testing.T) {
		r := host(t, "trace", "diff", filepath.Join(goldenTraces, "on_error.jsonl"), out)
		wantCode(t, r, exitOK)
		if r.stdout != "traces are identical\n" {
			t.Errorf("stdout %q, want \"traces are identical\"", r.stdout)
		}
	})
}

func TestTraceDiff(t *testing.T) {
	dir := t.TempDir()
	seed7 := filepath.Join(dir, "seed7.jsonl")
	seed8 := filepath.Join(dir, "seed8.jsonl")
	wantCode(t, host(t, "run", example("on_error.toml"), "--trace", seed7), exitOK)
	wantCode(t, host(t, "run", example("on_error.toml"), "--trace", seed8, "--seed", "8"), exitOK)

	t.Run("identical", func(t *testing.T) {
		r := host(t, "trace", "diff", seed7, seed7)
		wantCode(t, r, exitOK)
		if r.stdout != "traces are identical\n" {
			t.Errorf("stdout %q", r.stdout)
		}
	})
	t.Run("different header", func(t *testing.T) {
		r := host(t, "trace", "diff", seed7, seed8)
		wantCode(t, r, exitExpect)
		want := "--- want " + seed7 + "\n+++ got  " + seed8 + "\nheader differs (line 1):\n- seed: 7\n+ seed: 8\n"
		if r.stdout != want {
			t.Errorf("stdout:\n%s\nwant:\n%s", r.stdout, want)
		}
	})
	t.Run("different events", func(t *testing.T) {
		r := host(t, "trace", "diff", filepath.Join(goldenTraces, "on_error.jsonl"), filepath.Join(goldenTraces, "max_iterations.jsonl"))
		wantCode(t, r, exitExpect)
		for _, want := range []string{
			"first difference at line 2; want has 78 events, got has 58\n",
			"want: seq 1, tick 0, agent stumbles-0 (id 1), kind spawn\n",
			"got:  seq 1, tick 0, agent pollers-0 (id 1), kind spawn\n",
			"- name: \"stumbles-0\"\n+ name: \"pollers-0\"\n",
		} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("stdout does not contain %q:\n%s", want, r.stdout)
			}
		}
	})
	t.Run("one trace ends early", func(t *testing.T) {
		data, err := os.ReadFile(seed7)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.SplitAfter(string(data), "\n")
		short := writeFile(t, dir, "short.jsonl", strings.Join(lines[:10], ""))
		r := host(t, "trace", "diff", seed7, short)
		wantCode(t, r, exitExpect)
		if !strings.Contains(r.stdout, "got ends early after line 10: want has 78 events, got has 9\n") {
			t.Errorf("stdout does not say where the short trace ends:\n%s", r.stdout)
		}
		if !strings.HasPrefix(r.stdout, "note: got: trace incomplete: no end event\n") {
			t.Errorf("stdout does not note that the short trace has no end event:\n%s", r.stdout)
		}
	})
}

func TestRunWorkdirAndLogs(t *testing.T) {
	root := filepath.Join(t.TempDir(), "work")
	r := host(t, "run", example("on_error.toml"), "--workdir", root, "--log-level", "info")
	wantCode(t, r, exitOK)
	data, err := os.ReadFile(filepath.Join(root, "steady", "steady-0", "result.txt"))
	if err != nil || string(data) != "steady-0" {
		t.Errorf("result.txt = %q, %v; want the file the steady-0 agent wrote kept", data, err)
	}
	for _, want := range []string{"run started", "scenario=on-error", "run finished", "stop=fixed_point"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("info logs on stderr do not contain %q:\n%s", want, r.stderr)
		}
	}
	if strings.Contains(r.stdout, "run started") {
		t.Errorf("logs went to stdout:\n%s", r.stdout)
	}
}

// buildBinary builds the real host binary (once per test run, into a folder TestMain removes)
// and returns it with the repository root, where a user runs it from.
func buildBinary(t testing.TB) (bin, repo string) {
	t.Helper()
	built.once.Do(func() {
		goTool, err := exec.LookPath("go")
		if err != nil {
			built.err = fmt.Errorf("the go tool is needed to build the binary: %w", err)
			return
		}
		dir, err := os.MkdirTemp("", "warren-host-")
		if err != nil {
			built.err = err
			return
		}
		built.dir = dir
		built.bin = filepath.Join(dir, "host")
		// No build tags: the binary is what `go build` makes, its packages the ones the test
		// build compiled (tzdata.go builds the time zone database in, which
		// TestBinaryTimeZone needs on a machine without one).
		build := exec.Command(goTool, "build", "-o", built.bin, ".")
		if out, err := build.CombinedOutput(); err != nil {
			built.err = fmt.Errorf("go build: %w\n%s", err, out)
		}
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	repo, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return built.bin, repo
}

// built is the binary buildBinary shares between the tests.
var built struct {
	once     sync.Once
	dir, bin string
	err      error
}

// runIn runs bin in dir with extra environment, returning its exit code (minus the signal's
// number for a process a signal killed) and output.
func runIn(t testing.TB, bin, dir string, env []string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0, stdout.String(), stderr.String()
	case errors.As(err, &exit):
		if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return -int(ws.Signal()), stdout.String(), stderr.String()
		}
		return exit.ExitCode(), stdout.String(), stderr.String()
	}
	t.Fatalf("running %s: %v", bin, err)
	return -1, "", ""
}

// TestBinary builds the real binary and runs it the way a user does, from the repository root:
// exit codes, and a trace that is byte-identical whatever GOMAXPROCS the process runs with.
func TestBinary(t *testing.T) {
	bin, repo := buildBinary(t)
	runBinary := func(env []string, args ...string) (int, string, string) { return runIn(t, bin, repo, env, args...) }

	code, stdout, stderr := runBinary(nil, "run", "scenarios/examples/on_error.toml")
	if code != exitOK || !strings.Contains(stdout, "expectations all 5 held") {
		t.Errorf("host run on_error.toml: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	code, stdout, _ = runBinary(nil, "run", "scenarios/examples/expect_fail.toml")
	if code != exitExpect || !strings.Contains(stdout, "expectations 3 failed:") {
		t.Errorf("host run expect_fail.toml: exit %d, want %d\nstdout:\n%s", code, exitExpect, stdout)
	}
	code, _, stderr = runBinary(nil, "run", "scenarios/examples/absent.toml")
	if code != exitBadInput || !strings.Contains(stderr, "does not exist") {
		t.Errorf("host run absent.toml: exit %d, want %d\nstderr:\n%s", code, exitBadInput, stderr)
	}

	traces := t.TempDir()
	for _, procs := range []string{"1", "2", "8"} {
		out := filepath.Join(traces, "gomaxprocs-"+procs+".jsonl")
		code, stdout, stderr := runBinary([]string{"GOMAXPROCS=" + procs},
			"run", "scenarios/examples/quickstart.toml", "--agents", "300", "--trace", out)
		if code != exitOK {
			t.Fatalf("GOMAXPROCS=%s: exit %d\n%s\n%s", procs, code, stdout, stderr)
		}
	}
	want, err := os.ReadFile(filepath.Join(traces, "gomaxprocs-1.jsonl"))
	if err != nil || len(want) == 0 {
		t.Fatalf("no trace at GOMAXPROCS=1: %v", err)
	}
	for _, procs := range []string{"2", "8"} {
		got, err := os.ReadFile(filepath.Join(traces, "gomaxprocs-"+procs+".jsonl"))
		if err != nil || !bytes.Equal(want, got) {
			t.Errorf("the quickstart trace at GOMAXPROCS=%s differs from the one at GOMAXPROCS=1 (%v)", procs, err)
		}
	}
}

// TestBinaryTimeZone runs the script scenario, whose roll_dice returns a local-time Date string,
// in two time zones: the host keeps local time in UTC, so the traces are identical.
func TestBinaryTimeZone(t *testing.T) {
	bin, repo := buildBinary(t)
	traces := t.TempDir()
	for _, zone := range []string{"UTC", "Pacific/Auckland"} {
		out := filepath.Join(traces, strings.ReplaceAll(zone, "/", "-")+".jsonl")
		code, stdout, stderr := runIn(t, bin, repo, []string{"TZ=" + zone}, "run", "scenarios/examples/scripts.toml", "--trace", out)
		if code != exitOK {
			t.Fatalf("TZ=%s: exit %d\n%s\n%s", zone, code, stdout, stderr)
		}
	}
	utc, err := os.ReadFile(filepath.Join(traces, "UTC.jsonl"))
	if err != nil || !bytes.Contains(utc, []byte(`+0000`)) {
		t.Fatalf("the UTC trace has no local-time string from roll_dice (%v)", err)
	}
	auckland, err := os.ReadFile(filepath.Join(traces, "Pacific-Auckland.jsonl"))
	if err != nil || !bytes.Equal(utc, auckland) {
		t.Errorf("the trace at TZ=Pacific/Auckland differs from the one at TZ=UTC (%v)", err)
	}
}

// TestHostConfigToolsDir: the script tools of a --config host config's tools_dir are discovered
// when the scenario loads, so a blueprint may list them and its permission tables may name them;
// without the config the same scenario is invalid, and a tools_dir that does not compile is a
// load error of the host config.
func TestHostConfigToolsDir(t *testing.T) {
	scenario := runData(filepath.Join("hosttools", "shout.toml"))
	config := runData(filepath.Join("hosttools", "host", "host.toml"))

	r := host(t, "validate", scenario)
	wantCode(t, r, exitBadInput)
	if !strings.Contains(r.stderr, `unknown tool "shout"`) {
		t.Errorf("validate without --config:\n%s\nwant shout unknown", r.stderr)
	}
	wantCode(t, host(t, "validate", scenario, "--config", config), exitOK)

	dir := t.TempDir()
	out := filepath.Join(dir, "trace.jsonl")
	r = host(t, "run", scenario, "--config", config, "--trace", out, "--workdir", filepath.Join(dir, "work"))
	wantCode(t, r, exitOK)
	if !strings.HasSuffix(r.stdout, "expectations all 1 held\n") {
		t.Errorf("stdout:\n%s", r.stdout)
	}
	trace, err := os.ReadFile(out)
	if err != nil || bytes.Count(trace, []byte(`HELLO!`)) != 2 {
		t.Errorf("the trace has %d results of shout, want 2 (%v)", bytes.Count(trace, []byte(`HELLO!`)), err)
	}

	r = host(t, "run", scenario, "--config", runData(filepath.Join("hosttools", "broken", "host.toml")))
	wantCode(t, r, exitBadInput)
	for _, want := range []string{"broken/host.toml:4:1: scripting.tools_dir: script tools in", "bad.js:2:28: Unexpected token ;"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr:\n%s\nwant it to contain %q", r.stderr, want)
		}
	}
}

// TestDoctor: host doctor reports the machine's mechanisms, each mode, the ceiling and what it
// does here, from the built-in default or a --config file.
func TestDoctor(t *testing.T) {
	r := host(t, "doctor")
	wantCode(t, r, exitOK)
	// Whatever this machine has, the report is the probe's, line for line, then the ceiling.
	caps := sandbox.Probe()
	for _, want := range append(caps.Report(), "mode none: contains nothing", "ceiling (the built-in default): namespace network=off", "here: commands ") {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("host doctor:\n%s\nwant it to contain %q", r.stdout, want)
		}
	}
	t.Run("namespaces", func(t *testing.T) {
		testenv.MustHave(t, caps.Unavailable(sandbox.ModeNamespace))
		for _, want := range []string{"namespaces: yes\n", "mode namespace: contains user namespace", "here: commands run as namespace, as configured\n"} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("host doctor:\n%s\nwant it to contain %q", r.stdout, want)
			}
		}
	})
	t.Run("bwrap ceiling", func(t *testing.T) {
		testenv.MustHave(t, caps.Unavailable(sandbox.ModeBwrap))
		config := filepath.Join("testdata", "doctor", "warn_bwrap.toml")
		r := host(t, "doctor", "--config", config)
		wantCode(t, r, exitOK)
		for _, want := range []string{"ceiling (" + config + "): bwrap network=on", "on_unavailable=warn", "here: commands run as bwrap"} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("host doctor --config:\n%s\nwant it to contain %q", r.stdout, want)
			}
		}
	})
	wantCode(t, host(t, "doctor", "--config", runData("absent.toml")), exitBadInput)
}
