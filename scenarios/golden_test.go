package scenarios_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/warrenhq/warren"
	"github.com/warrenhq/warren/internal/fakellm"
	"github.com/warrenhq/warren/internal/golden"
	"github.com/warrenhq/warren/scenarios"
	"github.com/warrenhq/warren/trace"
)

// goldenAgents is the Agents option each example runs with for its golden trace and its
// expectation check. Zero keeps the file's own counts. quickstart.toml spawns 10,000 agents,
// whose trace would be megabytes; its golden is taken at 20 agents (the group rescaled), which
// still exercises every stage, tool and transition of the scenario. gossip.toml's 10,000 voters
// would write a 60 MB trace; at 200 its golden still holds every turn of the policy, the voters
// at the end of the line whose missing neighbours fail to read, and a tally that depends on
// every voter's seeded stream. sandbox.toml runs real commands in real namespaces (about 50 ms
// each): 5 builders cover every command. mcp.toml's 1,001 agents would write 2.8 MB; 20 (19
// clients and the auditor) make every kind of call, the session's start and stop, and the cut
// kv_list answer, and TestDeterminism runs it at full size.
var goldenAgents = map[string]int{"quickstart.toml": 20, "gossip.toml": 200, "sandbox.toml": 5, "mcp.toml": 20}

// exampleModes names the sandbox mode an example's commands run in. On a machine without it
// those commands are refused and the run is another run, so the example's runs follow
// internal/testenv's rule there (requireExample): skipped with the reason, or failed under
// WARREN_REQUIRE_SANDBOX=1.
var exampleModes = map[string]string{"sandbox.toml": "namespace"}

// requireExample applies requireMode to an example that runs commands, and gives an example on a
// live model (live.toml) its provider: the fake, answering by the rules shipped beside it, at the
// OPENAI_BASE_URL the example reads (stopped when the test ends).
func requireExample(t testing.TB, base string) {
	t.Helper()
	if mode, ok := exampleModes[base]; ok {
		requireMode(t, mode)
	}
	if rules, ok := exampleProviders[base]; ok {
		srv, err := fakellm.StartRules(rules)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = srv.Close() })
		t.Setenv("OPENAI_BASE_URL", srv.URL)
	}
}

// exampleProviders names the fake provider's rules of each example on a live model.
var exampleProviders = map[string]string{"live.toml": filepath.Join("examples", "live", "fake-rules.toml")}

// expectedFailures lists the examples that fail on purpose, with their exact failure lists. Every
// other example's expectations must all hold.
var expectedFailures = map[string][]string{
	"expect_fail.toml": {
		filepath.Join("examples", "expect_fail.toml") + `:20: expect[0] (group quick): 2 of 2 agents differ
    quick-0: status is done, want failed; final stage is "poll", want "summarise"
    quick-1: status is done, want failed; final stage is "poll", want "summarise"`,
		filepath.Join("examples", "expect_fail.toml") + `:25: expect[1] (agent quick-1): 1 of 1 agents differ
    quick-1: todo_list called 0 times, want 2`,
		filepath.Join("examples", "expect_fail.toml") + `:29: expect_run.status.done: 2 agents done, want 0`,
	},
	// Its prompts wait for people, and a run with none refuses them (TestPeopleAnswer runs it
	// with people).
	"people.toml": unansweredPeople(),
}

// unansweredPeople is what the people example reports run with nobody to answer it.
func unansweredPeople() []string {
	var out []string
	for _, at := range []struct {
		tick int
		what string
	}{{0, `ask_user_choice question "Which tone should %s write in?"`}, {2, "write_file (keys write_file)"}, {6, "write_file (keys write_file)"}} {
		for _, agent := range []string{"editors-0", "editors-1"} {
			what := strings.ReplaceAll(at.what, "%s", agent)
			out = append(out, fmt.Sprintf("agent %s asked about %s at tick %d and nothing answers it (add an [[interactions]] entry, or give it to people: host run --interactive, host serve); it was refused", agent, what, at.tick))
		}
	}
	return out
}

// runTraced loads and runs a scenario with opt, returning its summary and the trace bytes.
func runTraced(t testing.TB, file string, opt warren.Options) (*warren.Summary, []byte) {
	t.Helper()
	sc, err := scenarios.Load(file, scenarios.KnownTools())
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	opt.Trace = &buf
	sum, err := warren.Run(context.Background(), sc, opt)
	if err != nil {
		t.Fatalf("warren.Run(%s): %v", file, err)
	}
	return sum, buf.Bytes()
}

// TestGoldenTraces runs every shipped example and compares its trace byte for byte with
// testdata/golden/<example>.jsonl (go test -update rewrites them; the header holds the hash of the
// example and its blueprints, so any edit to them, even of a comment, needs -update), then checks
// the example's expectations: all hold, except in the examples that fail on purpose, whose exact failures are
// asserted.
func TestGoldenTraces(t *testing.T) {
	skipUnderRace(t)
	for _, file := range exampleFiles(t) {
		base := filepath.Base(file)
		t.Run(strings.TrimSuffix(base, ".toml"), func(t *testing.T) {
			requireExample(t, base)
			sum, got := runTraced(t, file, warren.Options{Agents: goldenAgents[base]})
			goldenPath := filepath.Join("testdata", "golden", strings.TrimSuffix(base, ".toml")+".jsonl")
			if golden.Updating() {
				if err := os.WriteFile(goldenPath, got, 0o644); err != nil {
					t.Fatal(err)
				}
			} else {
				want, err := os.ReadFile(goldenPath)
				if err != nil {
					t.Fatalf("reading golden trace (run go test -update to create it): %v", err)
				}
				if !bytes.Equal(got, want) {
					report, err := trace.Diff(bytes.NewReader(want), bytes.NewReader(got))
					if err != nil {
						t.Fatalf("trace differs from %s and cannot be diffed: %v", goldenPath, err)
					}
					t.Errorf("trace differs from %s (go test -update rewrites it):\n%s", goldenPath, report)
				}
			}

			header, events, err := trace.ReadAll(bytes.NewReader(got))
			if err != nil {
				t.Fatalf("trace does not read back: %v", err)
			}
			if header.Scenario != sum.Scenario || header.Seed != sum.Seed || header.Clock != trace.ClockVirtual {
				t.Errorf("header = %+v, want scenario %q, seed %d, virtual clock", header, sum.Scenario, sum.Seed)
			}
			if uint64(len(events)) != sum.TraceEvents {
				t.Errorf("trace has %d events, summary says %d", len(events), sum.TraceEvents)
			}

			if want, failing := expectedFailures[base]; failing {
				if !slices.Equal(sum.Failures, want) {
					t.Errorf("failures:\n%s\nwant:\n%s", strings.Join(sum.Failures, "\n"), strings.Join(want, "\n"))
				}
			} else if len(sum.Failures) > 0 {
				t.Errorf("expectations failed:\n%s", strings.Join(sum.Failures, "\n"))
			}
		})
	}
}

// TestGoldenCoverage keeps the golden folder in step with the examples: a golden trace without
// its example is stale.
func TestGoldenCoverage(t *testing.T) {
	goldens, err := filepath.Glob(filepath.Join("testdata", "golden", "*.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range goldens {
		example := filepath.Join("examples", strings.TrimSuffix(filepath.Base(g), ".jsonl")+".toml")
		if _, err := os.Stat(example); err != nil {
			t.Errorf("golden trace %s has no example %s", g, example)
		}
	}
	for name := range expectedFailures {
		if _, err := os.Stat(filepath.Join("examples", name)); err != nil {
			t.Errorf("expectedFailures names %s, which is not an example", name)
		}
	}
}
