package scenarios_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/warrenhq/warren/blueprint"
	"github.com/warrenhq/warren/ecs"
	"github.com/warrenhq/warren/internal/golden"
	"github.com/warrenhq/warren/internal/tomlfile"
	"github.com/warrenhq/warren/models"
	"github.com/warrenhq/warren/resources"
	"github.com/warrenhq/warren/scenarios"
)

// stablePaths rewrites absolute paths under the package directory (blueprints loaded through a
// Cache are named absolutely) to paths relative to it, so golden error texts do not depend on
// where the repository is checked out.
func stablePaths(t *testing.T, text string) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return strings.ReplaceAll(text, wd+string(filepath.Separator), "")
}

// TestLoadBadCorpus loads every scenario under testdata/bad, each of which is wrong in a known
// way, and compares the complete error text with its .err golden file. Paths are given relative
// to the package directory so the goldens are stable.
func TestLoadBadCorpus(t *testing.T) {
	checkBadCorpus(t, golden.Corpus(t, "bad", "*.toml"), 30, false)
}

// checkBadCorpus loads every file of a bad corpus (at least min of them): each must be refused
// with tomlfile.Errors that name the file (and a line, when withLine), and the whole report must
// match the file's .err golden.
func checkBadCorpus(t *testing.T, files []string, min int, withLine bool) {
	t.Helper()
	if len(files) < min {
		t.Fatalf("the bad corpus has %d files, want at least %d", len(files), min)
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".toml")
		t.Run(name, func(t *testing.T) {
			sc, err := scenarios.Load(file, scenarios.KnownTools())
			if err == nil {
				t.Fatalf("scenarios.Load accepted a bad scenario (name %q)", sc.Name)
			}
			if sc != nil {
				t.Errorf("scenarios.Load returned a scenario along with an error")
			}
			var errs tomlfile.Errors
			if !errors.As(err, &errs) || len(errs) == 0 {
				t.Fatalf("error %T is not tomlfile.Errors: %v", err, err)
			}
			for _, e := range errs {
				if e.File != file || (withLine && e.Line == 0) {
					t.Errorf("problem %q is placed at %s:%d, want (a line of) %s", e.Error(), e.File, e.Line, file)
				}
			}
			golden.Check(t, strings.TrimSuffix(file, ".toml")+".err", stablePaths(t, err.Error())+"\n")
		})
	}
}

// sentinelCase is a bad corpus file and a cause its load error must keep visible to errors.Is.
type sentinelCase struct {
	file string
	want error
}

// checkSentinels loads each case's file from dir and checks errors.Is finds the cause.
func checkSentinels(t *testing.T, dir string, cases []sentinelCase) {
	t.Helper()
	for _, tt := range cases {
		t.Run(strings.TrimSuffix(tt.file, ".toml")+"/"+tt.want.Error(), func(t *testing.T) {
			_, err := scenarios.Load(filepath.Join(dir, tt.file), scenarios.KnownTools())
			if err == nil {
				t.Fatal("scenarios.Load accepted a bad scenario")
			}
			if !errors.Is(err, tt.want) {
				t.Errorf("errors.Is(err, %q) = false; err:\n%v", tt.want, err)
			}
		})
	}
}

// TestLoadBadSentinels checks that the problems in the bad corpus keep their cause visible to
// errors.Is, so callers can tell a syntax error from an unknown key, a missing file or a broken
// blueprint without parsing messages.
func TestLoadBadSentinels(t *testing.T) {
	checkSentinels(t, filepath.Join("testdata", "bad"), []sentinelCase{
		{"syntax_error.toml", tomlfile.ErrSyntax},
		{"unknown_top_level_key.toml", tomlfile.ErrUnknownKey},
		{"misspelled_group_key.toml", tomlfile.ErrUnknownKey},
		{"blueprint_file_missing.toml", fs.ErrNotExist},
		{"blueprint_with_errors.toml", blueprint.ErrInvalidName},
		{"blueprint_with_errors.toml", blueprint.ErrUnknownTool},
		{"bad_when_exhausted.toml", models.ErrInvalidScript},
	})
}

// TestLoadMissingFile reports a scenario that does not exist plainly, with fs.ErrNotExist.
func TestLoadMissingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "absent.toml")
	_, err := scenarios.Load(path, scenarios.KnownTools())
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("err = %v, want fs.ErrNotExist", err)
	}
	if !strings.Contains(err.Error(), path) {
		t.Errorf("error %q does not name the file", err)
	}
}

// writeScenario writes a scenario and a one-stage blueprint into dir and returns the
// scenario's path. The blueprint allows write_file (loosenable without host opt-in), so the
// scenarios here need no prompt answers.
func writeScenario(t testing.TB, dir, scenario string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, "blueprints"), 0o755); err != nil {
		t.Fatal(err)
	}
	bp := "name = \"worker\"\n\n[tool_permissions]\nwrite_file = \"allow\"\n\n[[stages]]\nname = \"work\"\navailable_tools = [\"write_file\", \"read_file\"]\nmax_iterations = 3\n"
	if err := os.WriteFile(filepath.Join(dir, "blueprints", "worker.toml"), []byte(bp), 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "scenario.toml")
	if err := os.WriteFile(path, []byte(scenario), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// minimalScenario sets nothing optional: every default applies.
const minimalScenario = `name = "minimal"

[blueprints]
worker = "blueprints/worker.toml"

[models.worker]
kind = "scripted"
  [[models.worker.turns]]
  text = "done"

[[groups]]
name = "workers"
blueprint = "worker"
model = "worker"
count = 3
`

func TestLoadDefaults(t *testing.T) {
	sc, err := scenarios.Load(writeScenario(t, t.TempDir(), minimalScenario), scenarios.KnownTools())
	if err != nil {
		t.Fatal(err)
	}
	if sc.Name != "minimal" || sc.Seed != 0 || sc.MaxTicks != scenarios.DefaultMaxTicks || sc.MaxTurnsPerAgent != resources.DefaultMaxModelTurns {
		t.Errorf("name/seed/max_ticks/max_turns_per_agent = %q/%d/%d/%d, want minimal/0/%d/%d", sc.Name, sc.Seed, sc.MaxTicks, sc.MaxTurnsPerAgent,
			scenarios.DefaultMaxTicks, resources.DefaultMaxModelTurns)
	}
	if sc.Clock.Mode != ecs.Virtual || sc.Clock.TickLength != 0 {
		t.Errorf("clock = %+v, want virtual with the default tick length", sc.Clock)
	}
	if sc.Latency.Model != 1 || sc.Latency.Tool != 1 || sc.Latency.PerTool != nil {
		t.Errorf("latency = %+v, want model 1, tool 1, no per-tool latencies", sc.Latency)
	}
	if want := (scenarios.LaneSizes{ModelCapacity: 64, ToolCapacity: 256, ToolWorkers: 0}); sc.Lanes != want {
		t.Errorf("lanes = %+v, want %+v", sc.Lanes, want)
	}
	if len(sc.Groups) != 1 || sc.Groups[0].Count != 3 || sc.Groups[0].Blueprint != sc.Blueprints["worker"] || sc.Groups[0].Model == nil {
		t.Errorf("groups = %+v, want one group of 3 bound to blueprint and model", sc.Groups)
	}
	if len(sc.Expect) != 0 || sc.ExpectRun != nil {
		t.Errorf("expectations = %v / %v, want none", sc.Expect, sc.ExpectRun)
	}
	if !strings.HasPrefix(sc.Hash, "sha256:") || len(sc.Hash) != len("sha256:")+64 {
		t.Errorf("hash = %q, want sha256:<64 hex>", sc.Hash)
	}
}

func TestLoadSettings(t *testing.T) {
	src := strings.Replace(minimalScenario, "[blueprints]", `seed = 99

[limits]
max_ticks = 50
max_turns_per_agent = 20

[clock]
mode = "wall"
tick = "250ms"
model_latency = 3
tool_latency = 4
tool_latencies = { write_file = 7 }

[lanes]
model_capacity = 8
tool_capacity = 16
tool_workers = 2

[blueprints]`, 1)
	sc, err := scenarios.Load(writeScenario(t, t.TempDir(), src), scenarios.KnownTools())
	if err != nil {
		t.Fatal(err)
	}
	if sc.Seed != 99 || sc.MaxTicks != 50 || sc.MaxTurnsPerAgent != 20 {
		t.Errorf("seed/max_ticks/max_turns_per_agent = %d/%d/%d, want 99/50/20", sc.Seed, sc.MaxTicks, sc.MaxTurnsPerAgent)
	}
	if sc.Clock.Mode != ecs.Wall || sc.Clock.TickLength != 250*time.Millisecond {
		t.Errorf("clock = %+v, want wall, 250ms", sc.Clock)
	}
	want := resources.Latency{Model: 3, Tool: 4, PerTool: map[string]uint64{"write_file": 7}}
	if sc.Latency.Model != want.Model || sc.Latency.Tool != want.Tool || len(sc.Latency.PerTool) != 1 || sc.Latency.PerTool["write_file"] != 7 {
		t.Errorf("latency = %+v, want %+v", sc.Latency, want)
	}
	if want := (scenarios.LaneSizes{ModelCapacity: 8, ToolCapacity: 16, ToolWorkers: 2}); sc.Lanes != want {
		t.Errorf("lanes = %+v, want %+v", sc.Lanes, want)
	}
}

// TestLoadExamples loads every shipped example: they must all be valid.
func TestLoadExamples(t *testing.T) {
	for _, file := range exampleFiles(t) {
		t.Run(filepath.Base(file), func(t *testing.T) {
			sc, err := scenarios.Load(file, scenarios.KnownTools())
			if err != nil {
				t.Fatal(err)
			}
			if sc.Path != file || sc.Dir != filepath.Dir(file) {
				t.Errorf("Path/Dir = %q/%q, want %q/%q", sc.Path, sc.Dir, file, filepath.Dir(file))
			}
			for _, e := range sc.Expect {
				if !strings.HasPrefix(e.Where, file+":") || !strings.HasPrefix(e.Label, "expect[") {
					t.Errorf("expectation Where/Label = %q/%q, want %s:<line> and expect[n]", e.Where, e.Label, file)
				}
			}
		})
	}
}

// exampleFiles lists the shipped example scenarios.
func exampleFiles(t testing.TB) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("examples", "*.toml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no example scenarios: %v", err)
	}
	return files
}

// scenarioWithCounts builds a scenarios.Scenario whose groups have the given counts, for GroupCounts.
func scenarioWithCounts(counts ...int) *scenarios.Scenario {
	sc := &scenarios.Scenario{}
	for _, c := range counts {
		sc.Groups = append(sc.Groups, scenarios.Group{Count: c})
	}
	return sc
}

func TestGroupCounts(t *testing.T) {
	tests := []struct {
		name   string
		counts []int
		agents int
		want   []int
	}{
		{"zero keeps the file's counts", []int{3, 5}, 0, []int{3, 5}},
		{"negative keeps the file's counts", []int{3, 5}, -4, []int{3, 5}},
		{"same total", []int{3, 5}, 8, []int{3, 5}},
		{"exact scale up", []int{1, 3}, 40, []int{10, 30}},
		{"exact scale down", []int{10000}, 20, []int{20}},
		{"largest remainder gets the spare", []int{1, 1, 1}, 10, []int{4, 3, 3}},
		{"remainders decide rounding", []int{2, 5, 3}, 7, []int{1, 4, 2}},
		{"rounding ties go to the first group", []int{1, 1}, 3, []int{2, 1}},
		{"a tiny group keeps one agent", []int{1, 999}, 10, []int{1, 9}},
		{"every group keeps one agent", []int{1, 1, 98}, 5, []int{1, 1, 3}},
		{"scale down to one per group", []int{5, 5, 5}, 3, []int{1, 1, 1}},
		{"fewer agents than groups still gives each one", []int{5, 5, 5}, 2, []int{1, 1, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sc := scenarioWithCounts(tt.counts...)
			got := sc.GroupCounts(tt.agents)
			if !slices.Equal(got, tt.want) {
				t.Errorf("GroupCounts(%d) of %v = %v, want %v", tt.agents, tt.counts, got, tt.want)
			}
			for i, g := range sc.Groups {
				if g.Count != tt.counts[i] {
					t.Errorf("GroupCounts changed group %d's Count to %d", i, g.Count)
				}
			}
		})
	}
}

// TestGroupCountsInvariants checks, over many shapes, that a rescale keeps every group at one
// agent or more and sums to the requested total whenever there are at least as many agents as
// groups.
func TestGroupCountsInvariants(t *testing.T) {
	shapes := [][]int{{1}, {7, 1}, {1, 2, 3, 4}, {10000, 1, 1}, {3, 3, 3, 3, 3, 3, 3}, {999, 1000, 1001}}
	for _, shape := range shapes {
		sc := scenarioWithCounts(shape...)
		for agents := len(shape); agents <= 2500; agents += 7 {
			got := sc.GroupCounts(agents)
			sum := 0
			for i, n := range got {
				if n < 1 {
					t.Fatalf("GroupCounts(%d) of %v: group %d has %d agents", agents, shape, i, n)
				}
				sum += n
			}
			if sum != agents {
				t.Fatalf("GroupCounts(%d) of %v = %v, sums to %d", agents, shape, got, sum)
			}
		}
	}
}

// copyTree copies the files under src (recursively) into dst.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestHash(t *testing.T) {
	load := func(path string) string {
		t.Helper()
		sc, err := scenarios.Load(path, scenarios.KnownTools())
		if err != nil {
			t.Fatal(err)
		}
		return sc.Hash
	}
	original := filepath.Join("examples", "on_error.toml")
	want := load(original)

	t.Run("stable across loads", func(t *testing.T) {
		if got := load(original); got != want {
			t.Errorf("hash changed between two loads: %s then %s", want, got)
		}
	})
	t.Run("same when copied elsewhere", func(t *testing.T) {
		dst := t.TempDir()
		copyTree(t, "examples", dst)
		if got := load(filepath.Join(dst, "on_error.toml")); got != want {
			t.Errorf("copied scenario hashes %s, original %s", got, want)
		}
		abs, err := filepath.Abs(original)
		if err != nil {
			t.Fatal(err)
		}
		if got := load(abs); got != want {
			t.Errorf("absolute path hashes %s, relative %s", got, want)
		}
	})
	t.Run("changes with a blueprint", func(t *testing.T) {
		dst := t.TempDir()
		copyTree(t, "examples", dst)
		bp := filepath.Join(dst, "blueprints", "flaky.toml")
		data, err := os.ReadFile(bp)
		if err != nil {
			t.Fatal(err)
		}
		edited := strings.Replace(string(data), "max_messages = 8", "max_messages = 9", 1)
		if edited == string(data) {
			t.Fatal("flaky.toml no longer sets max_messages = 8; update this test")
		}
		if err := os.WriteFile(bp, []byte(edited), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := load(filepath.Join(dst, "on_error.toml")); got == want {
			t.Errorf("hash %s did not change when the blueprint changed", got)
		}
	})
	t.Run("changes with the scenario", func(t *testing.T) {
		dst := t.TempDir()
		copyTree(t, "examples", dst)
		sc := filepath.Join(dst, "on_error.toml")
		data, err := os.ReadFile(sc)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(sc, append(data, "# one more comment\n"...), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := load(sc); got == want {
			t.Errorf("hash %s did not change when the scenario changed", got)
		}
	})
}

// TestLoadTypeErrorReportedAlone: a value of the wrong type stops go-toml's decoding part way, so
// the rest of the file is not decoded. scenarios.Load must report the type error alone, as the blueprint
// loader does, instead of going on to validate the half-decoded scenario and reporting tables
// that are in the file ([blueprints], [models], [[groups]]) as missing.
func TestLoadTypeErrorReportedAlone(t *testing.T) {
	tests := []struct {
		name, from, to, key string
	}{
		{"seed", "[blueprints]", "seed = \"seven\"\n\n[blueprints]", "seed"},
		{"group count", "count = 3", "count = \"three\"", "groups[0].count"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeScenario(t, t.TempDir(), strings.Replace(minimalScenario, tt.from, tt.to, 1))
			_, err := scenarios.Load(path, scenarios.KnownTools())
			var errs tomlfile.Errors
			if !errors.As(err, &errs) {
				t.Fatalf("err = %v, want tomlfile.Errors", err)
			}
			if len(errs) != 1 || errs[0].Key != tt.key || !errors.Is(errs[0], tomlfile.ErrType) {
				t.Errorf("got %d problems, want the one type error at %s:\n%v", len(errs), tt.key, err)
			}
		})
	}
}

// TestLoadRejectsNegativeExpectedCounts: an expected per-agent tool call count below zero is an
// error, and so must be the other counts an expectation can give, since none can ever hold.
func TestLoadRejectsNegativeExpectedCounts(t *testing.T) {
	tests := []struct {
		name, expect, key string
	}{
		{"tool_calls", "[[expect]]\ngroup = \"workers\"\ntool_calls = { write_file = -1 }\n", "expect[0].tool_calls.write_file"},
		{"model_turns", "[[expect]]\ngroup = \"workers\"\nmodel_turns = -1\n", "expect[0].model_turns"},
		{"expect_run.tool_calls", "[expect_run]\ntool_calls = -2\n", "expect_run.tool_calls"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeScenario(t, t.TempDir(), minimalScenario+"\n"+tt.expect)
			_, err := scenarios.Load(path, scenarios.KnownTools())
			var errs tomlfile.Errors
			if !errors.As(err, &errs) || len(errs) != 1 || errs[0].Key != tt.key {
				t.Errorf("scenarios.Load = %v, want one problem at %s", err, tt.key)
			}
		})
	}
}
