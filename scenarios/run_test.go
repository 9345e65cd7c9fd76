package scenarios_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warrenhq/warren"
	"github.com/warrenhq/warren/components"
	"github.com/warrenhq/warren/ecs"
	"github.com/warrenhq/warren/scenarios"
)

// runFile loads and runs a scenario, failing the test on any error.
func runFile(t *testing.T, path string, opt warren.Options) *warren.Summary {
	t.Helper()
	sc, err := scenarios.Load(path, scenarios.KnownTools())
	if err != nil {
		t.Fatal(err)
	}
	sum, err := warren.Run(context.Background(), sc, opt)
	if err != nil {
		t.Fatal(err)
	}
	return sum
}

// wantFile fails the test unless path holds exactly content.
func wantFile(t *testing.T, path, content string) {
	t.Helper()
	got, err := os.ReadFile(path)
	if err != nil {
		t.Errorf("reading a file the run should have written: %v", err)
		return
	}
	if string(got) != content {
		t.Errorf("%s holds %q, want %q", path, got, content)
	}
}

// wantAbsent fails the test if path exists.
func wantAbsent(t *testing.T, path string) {
	t.Helper()
	if _, err := os.Lstat(path); err == nil {
		t.Errorf("%s exists; the run should not have created it", path)
	} else if !os.IsNotExist(err) {
		t.Errorf("stat %s: %v", path, err)
	}
}

func TestRunWorkRootKeepsFiles(t *testing.T) {
	t.Run("default workdirs", func(t *testing.T) {
		root := filepath.Join(t.TempDir(), "kept", "root") // made by the run
		sum := runFile(t, filepath.Join("examples", "on_error.toml"), warren.Options{WorkRoot: root})
		if len(sum.Failures) > 0 {
			t.Fatalf("expectations failed: %v", sum.Failures)
		}
		wantFile(t, filepath.Join(root, "stumbles", "stumbles-0", "recovery.log"), "stumbles-0 recovered\n")
		wantFile(t, filepath.Join(root, "stumbles", "stumbles-1", "recovery.log"), "stumbles-1 recovered\n")
		wantFile(t, filepath.Join(root, "steady", "steady-0", "result.txt"), "steady-0")
		wantFile(t, filepath.Join(root, "steady", "steady-1", "result.txt"), "steady-1")
		// doomed-0 never touches a file, and workdirs are made on first use.
		wantAbsent(t, filepath.Join(root, "doomed"))
	})
	t.Run("workdir template", func(t *testing.T) {
		root := t.TempDir()
		sum := runFile(t, filepath.Join("examples", "quickstart.toml"), warren.Options{WorkRoot: root, Agents: 3})
		if len(sum.Failures) > 0 {
			t.Fatalf("expectations failed: %v", sum.Failures)
		}
		// workdir = "{{.Group}}": the three agents share one folder.
		for i, name := range []string{"researchers-0", "researchers-1", "researchers-2"} {
			dir := filepath.Join(root, "researchers")
			wantFile(t, filepath.Join(dir, "notes", name+".md"), "# Notes of "+name+"\nagent "+string(rune('0'+i))+" was here\n")
			wantFile(t, filepath.Join(dir, "reports", name+".md"), "Report of "+name+": done.\n")
		}
	})
}

// TestRunRemovesTemporaryWorkRoot checks that without WorkRoot the run works in a fresh temporary
// folder, which exists while agents run and is gone afterwards.
func TestRunRemovesTemporaryWorkRoot(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	var during []string
	sum := runFile(t, filepath.Join("examples", "on_error.toml"), warren.Options{Progress: func(int, int) {
		if during == nil {
			during, _ = filepath.Glob(filepath.Join(tmp, "warren-run-*"))
		}
	}})
	if sum.ToolCalls == 0 {
		t.Fatal("the run made no tool calls, so it proves nothing about its workdir")
	}
	if len(during) != 1 {
		t.Errorf("during the run %s held %v, want one warren-run-* folder", tmp, during)
	}
	left, err := os.ReadDir(tmp)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range left {
		t.Errorf("%s left behind after the run", filepath.Join(tmp, e.Name()))
	}
}

// escapeScenario runs one agent of group "g" that writes f.txt; group holds extra group keys.
func escapeScenario(group string) string {
	return `name = "escape"

[blueprints]
worker = "blueprints/worker.toml"

[models.writer]
kind = "scripted"
  [[models.writer.turns]]
    [[models.writer.turns.calls]]
    tool = "write_file"
    args = { path = "f.txt", content = "escaped" }
  [[models.writer.turns]]
  text = "done"

[[groups]]
name = "g"
blueprint = "worker"
model = "writer"
count = 1
` + group + "\n"
}

// TestRunWorkdirTemplateCannotEscape gives agents workdir templates that leave the work root:
// such an agent has no workdir, its file tools fail, and nothing is written outside the root.
func TestRunWorkdirTemplateCannotEscape(t *testing.T) {
	base := t.TempDir()
	outside := filepath.Join(base, "escaped")
	tests := []struct {
		name, workdir string
	}{
		{"parent", "../escaped"},
		{"through the group", "{{.Group}}/../../escaped"},
		{"absolute", outside},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := writeScenario(t, dir, escapeScenario("workdir = '"+tt.workdir+"'"))
			root := filepath.Join(base, "root")
			var tr bytes.Buffer
			sum := runFile(t, path, warren.Options{WorkRoot: root, Trace: &tr})
			wantAbsent(t, outside)
			wantAbsent(t, filepath.Join(dir, "escaped"))
			if len(sum.Records) != 1 {
				t.Fatalf("%d records, want 1", len(sum.Records))
			}
			r := sum.Records[0]
			if r.ByTool.Of("write_file") != 1 || r.Counters.ToolErrors != 1 {
				t.Errorf("write_file calls %d, tool errors %d; want the one call to fail", r.ByTool.Of("write_file"), r.Counters.ToolErrors)
			}
			if !strings.Contains(tr.String(), "no usable workdir") {
				t.Errorf("the trace does not say the agent had no workdir:\n%s", tr.String())
			}
		})
	}
}

// TestRunAgentNameCannotEscapeWorkRoot: with the default workdir <root>/<group>/<name>, an
// agent_name with ".." must not place an agent's workdir outside the work root either (the
// scenario docs promise every workdir is under the root).
func TestRunAgentNameCannotEscapeWorkRoot(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "scenario")
	path := writeScenario(t, dir, escapeScenario(`agent_name = "../../escaped-{{.Index}}"`))
	root := filepath.Join(base, "root")
	sc, err := scenarios.Load(path, scenarios.KnownTools())
	if err != nil {
		if !strings.Contains(err.Error(), "agent_name") {
			t.Fatalf("Load: %v", err)
		}
		return // refusing such a name at load time, at the agent_name key, is a fix too
	}
	sum, err := warren.Run(context.Background(), sc, warren.Options{WorkRoot: root})
	if err != nil {
		t.Fatal(err)
	}
	wantAbsent(t, filepath.Join(base, "escaped-0"))
	if sum.Records[0].Counters.ToolErrors != 1 {
		t.Errorf("the write outside the work root did not fail: %+v", sum.Records[0])
	}
}

// TestRunProgress checks the Progress callback: called every tick with the run's total, never
// going back, and ending with every agent finished.
func TestRunProgress(t *testing.T) {
	type call struct{ finished, total int }
	var calls []call
	sum := runFile(t, filepath.Join("examples", "on_error.toml"), warren.Options{Progress: func(finished, total int) {
		calls = append(calls, call{finished, total})
	}})
	if len(calls) < 2 {
		t.Fatalf("Progress called %d times, want once per tick", len(calls))
	}
	for i, c := range calls {
		if c.total != sum.Agents {
			t.Errorf("call %d: total %d, want %d", i, c.total, sum.Agents)
		}
		if i > 0 && c.finished < calls[i-1].finished {
			t.Errorf("call %d: finished went back from %d to %d", i, calls[i-1].finished, c.finished)
		}
	}
	if last := calls[len(calls)-1]; last != (call{sum.Agents, sum.Agents}) {
		t.Errorf("last call %+v, want every one of %d agents finished", last, sum.Agents)
	}
	if calls[0].finished == sum.Agents {
		t.Errorf("the first call already reports every agent finished: %+v", calls[0])
	}
}

// slowScenario needs many ticks: each agent writes a file every turn, forever.
const slowScenario = `name = "slow"

[limits]
max_ticks = 3

[blueprints]
worker = "blueprints/worker.toml"

[models.looper]
kind = "scripted"
when_exhausted = "repeat_last"
  [[models.looper.turns]]
    [[models.looper.turns.calls]]
    tool = "write_file"
    args = { path = "f.txt", content = "again" }

[[groups]]
name = "loopers"
blueprint = "worker"
model = "looper"
count = 4

[[expect]]
group = "loopers"
status = "done"
`

// TestRunMaxTicks stops a run at its tick limit: the agents are left unfinished, and their
// records (and the failed expectation) say so.
func TestRunMaxTicks(t *testing.T) {
	sum := runFile(t, writeScenario(t, t.TempDir(), slowScenario), warren.Options{})
	if sum.Stop != ecs.MaxTicks || sum.Ticks != 3 {
		t.Errorf("stop %s after %d ticks, want max_ticks after 3", sum.Stop, sum.Ticks)
	}
	if len(sum.Records) != 4 {
		t.Fatalf("%d records, want one per agent (4)", len(sum.Records))
	}
	for _, r := range sum.Records {
		if r.Status.Terminal() {
			t.Errorf("%s: status %s, want unfinished", r.Name, r.Status)
		}
		if !strings.Contains(r.Reason, "max_ticks") {
			t.Errorf("%s: reason %q does not mention max_ticks", r.Name, r.Reason)
		}
	}
	if sum.ByStatus[components.Done] != 0 || sum.ByStatus[components.Active]+sum.ByStatus[components.Waiting] != 4 {
		t.Errorf("by status %v, want all 4 active or waiting", sum.ByStatus)
	}
	if len(sum.Failures) != 1 || !strings.Contains(sum.Failures[0], "4 of 4 agents differ") || !strings.Contains(sum.Failures[0], "max_ticks") {
		t.Errorf("failures %q, want the done expectation to fail for all 4 with the max_ticks reason", sum.Failures)
	}
}

// TestRunCancelled stops at once when the context is already cancelled, leaving every agent
// unfinished with a reason that says why.
func TestRunCancelled(t *testing.T) {
	sc, err := scenarios.Load(writeScenario(t, t.TempDir(), slowScenario), scenarios.KnownTools())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	sum, err := warren.Run(ctx, sc, warren.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Stop != ecs.Cancelled {
		t.Errorf("stop %s, want cancelled", sum.Stop)
	}
	for _, r := range sum.Records {
		if r.Status.Terminal() || !strings.Contains(r.Reason, "cancelled") {
			t.Errorf("%s: status %s, reason %q; want unfinished, cancelled", r.Name, r.Status, r.Reason)
		}
	}
}

// TestRunSummary checks the counters of a run against what on_error.toml does.
func TestRunSummary(t *testing.T) {
	sum := runFile(t, filepath.Join("examples", "on_error.toml"), warren.Options{})
	want := warren.Summary{Scenario: "on-error", Seed: 7, Clock: "virtual", Agents: 5, Stop: ecs.FixedPoint, ModelTurns: 18, ToolCalls: 6}
	if sum.Scenario != want.Scenario || sum.Seed != want.Seed || sum.Clock != want.Clock || sum.Agents != want.Agents ||
		sum.Stop != want.Stop || sum.ModelTurns != want.ModelTurns || sum.ToolCalls != want.ToolCalls || sum.ToolErrors != 0 {
		t.Errorf("summary %+v, want %+v", sum, want)
	}
	if sum.ByStatus[components.Done] != 4 || sum.ByStatus[components.Failed] != 1 {
		t.Errorf("by status %v, want 4 done and 1 failed", sum.ByStatus)
	}
	if sum.TraceEvents != 0 {
		t.Errorf("%d trace events counted without a trace", sum.TraceEvents)
	}
}

// TestDuplicateAgentNamesRejected: agent names identify agents in expectations, call ids and the
// default workdir <root>/<group>/<name>. An agent_name template that gives two agents one name
// makes them share a workdir, and which of them finds a file already written then depends on tool
// worker timing, so the trace is no longer deterministic (seen with agent_name = "bot" and 50
// agents: "(new file)" and "(replaced the previous content)" swap between GOMAXPROCS settings).
// scenarios.Load (for the file's counts) or warren.Run (after --agents rescaling) must refuse such names.
func TestDuplicateAgentNamesRejected(t *testing.T) {
	tests := []struct {
		name   string
		groups string
	}{
		{"constant name", `agent_name = "bot"`},
		{"name from .Name, which is empty while naming", `agent_name = "{{.Name}}"`},
		{"collides with another group's default names", `agent_name = "h-{{.Index}}"

[[groups]]
name = "h"
blueprint = "worker"
model = "writer"
count = 1`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := strings.Replace(escapeScenario(tt.groups), "count = 1\n", "count = 2\n", 1)
			sc, err := scenarios.Load(writeScenario(t, t.TempDir(), src), scenarios.KnownTools())
			if err != nil {
				if !strings.Contains(err.Error(), "agent_name") {
					t.Errorf("scenarios.Load refused the scenario without naming agent_name: %v", err)
				}
				return
			}
			sum, err := warren.Run(context.Background(), sc, warren.Options{WorkRoot: t.TempDir()})
			if err == nil {
				names := make([]string, len(sum.Records))
				for i, r := range sum.Records {
					names[i] = r.Name
				}
				t.Errorf("the run went ahead with duplicate agent names %q", names)
			}
		})
	}
}
