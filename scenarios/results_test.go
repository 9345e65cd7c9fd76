package scenarios_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/warrenhq/warren"
)

// examplesBlueprint is the absolute path of a shipped example blueprint, for scenarios the tests
// write elsewhere.
func examplesBlueprint(t *testing.T, name string) string {
	t.Helper()
	abs, err := filepath.Abs(filepath.Join("examples", "blueprints", name))
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

// writeWith writes scenario (with BLUEPRINTS replaced by the examples' blueprint folder) into a
// temporary folder and returns its path.
func writeWith(t *testing.T, scenario string) string {
	t.Helper()
	src := strings.ReplaceAll(scenario, "BLUEPRINTS", filepath.Dir(examplesBlueprint(t, "worker.toml")))
	path := filepath.Join(t.TempDir(), "results.toml")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestResultExpectationsFail runs tool_results.toml's agents under expectations that do not
// hold, and checks each failure's line: the wrong error count, a content no result had, an error
// where the calls succeeded, and a tool the agents never called.
func TestResultExpectationsFail(t *testing.T) {
	path := writeWith(t, `name = "results-fail"
[blueprints]
worker = "BLUEPRINTS/worker.toml"

[models.notes]
kind = "scripted"
  [[models.notes.turns]]
    [[models.notes.turns.calls]]
    tool = "write_file"
    args = { path = "note.md", content = "Note by {{.Name}}." }
    [[models.notes.turns.calls]]
    tool = "read_file"
    args = { path = "other.md" }
  [[models.notes.turns]]
  text = "done"

[[groups]]
name = "notes"
blueprint = "worker"
model = "notes"
count = 2

[[expect]]
group = "notes"
tool_errors = 0
results = [
  { tool = "read_file", contains = "Note by", ok = true },
  { tool = "write_file", ok = false },
  { tool = "list_dir" },
]

[[expect]]
agent = "notes-1"
results = [{ tool = "write_file", contains = "Wrote 15 bytes" }]

[expect_run]
tool_errors = 0
`)
	sum := runFile(t, path, warren.Options{})
	line := `    notes-%d: tool errors 1, want 0; no successful read_file result contains "Note by" (1 call; it failed: "cannot read \"other.md\": no such file or directory"); no failed write_file result (1 call; it succeeded: "Wrote 16 bytes to \"note.md\" (new file)"); no list_dir result (list_dir was not called)`
	want := []string{
		path + ":23: expect[0] (group notes): 2 of 2 agents differ\n" + strings.ReplaceAll(line, "%d", "0") + "\n" + strings.ReplaceAll(line, "%d", "1"),
		path + `:32: expect[1] (agent notes-1): 1 of 1 agents differ
    notes-1: no write_file result contains "Wrote 15 bytes" (1 call; it succeeded: "Wrote 16 bytes to \"note.md\" (new file)")`,
		path + ":36: expect_run.tool_errors: 2 tool errors in the run, want 0",
	}
	if !slices.Equal(sum.Failures, want) {
		t.Errorf("failures:\n%s\nwant:\n%s", strings.Join(sum.Failures, "\n"), strings.Join(want, "\n"))
	}
}

// TestResultExpectationsOfSubAgents: result expectations about a [spawn] group, and about one
// sub-agent by name, are watched in the children's profiles too.
func TestResultExpectationsOfSubAgents(t *testing.T) {
	path := writeWith(t, `name = "results-spawn"
[blueprints]
planner = "BLUEPRINTS/planner.toml"
worker = "BLUEPRINTS/worker.toml"

[spawn.worker]
model = "worker"

[models.planner]
kind = "scripted"
  [[models.planner.turns]]
  stage = "delegate"
  repeat = 2
    [[models.planner.turns.calls]]
    tool = "spawn_agent"
    args = { blueprint = "worker", task = "part {{add .Iteration 1}}", wait = true }
  [[models.planner.turns]]
  stage = "delegate"
  text = "delegated"
  [[models.planner.turns]]
  stage = "report"
  text = "reported"

[models.worker]
kind = "scripted"
  [[models.worker.turns]]
  stage = "work"
    [[models.worker.turns.calls]]
    tool = "write_file"
    args = { path = "summary.md", content = "{{.Task}} by {{.Name}}" }
  [[models.worker.turns]]
  stage = "work"
  text = "done"

[[groups]]
name = "planners"
blueprint = "planner"
model = "planner"
count = 1

[[expect]]
group = "worker"
status = "done"
results = [{ tool = "write_file", contains = "Wrote", ok = true }]

[[expect]]
agent = "planners-0/2"
results = [{ tool = "write_file", contains = "nothing like this" }]

[[expect]]
agent = "planners-0"
results = [{ tool = "spawn_agent", ok = true }]
`)
	sum := runFile(t, path, warren.Options{})
	want := []string{path + `:46: expect[1] (agent planners-0/2): 1 of 1 agents differ
    planners-0/2: no write_file result contains "nothing like this" (1 call; it succeeded: "Wrote 22 bytes to \"summary.md\" (new file)")`}
	if !slices.Equal(sum.Failures, want) {
		t.Errorf("failures:\n%s\nwant:\n%s", strings.Join(sum.Failures, "\n"), strings.Join(want, "\n"))
	}
}

// TestRecordsKeepNoResultsUnasked: a run that expects no results watches none, so no final
// record carries any.
func TestRecordsKeepNoResultsUnasked(t *testing.T) {
	sum := runFile(t, filepath.Join("examples", "bad_calls.toml"), warren.Options{})
	for _, r := range sum.Records {
		if r.Results != nil {
			t.Errorf("%s: results %+v kept, though no expectation asked", r.Name, r.Results)
		}
	}
}
