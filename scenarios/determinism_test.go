package scenarios_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/warrenhq/warren"
	"github.com/warrenhq/warren/internal/golden"
	"github.com/warrenhq/warren/trace"
)

// determinismAgents lists the examples TestDeterminism runs at another scale than their golden
// trace (goldenAgents), with the Agents option it uses: quickstart.toml at 200 agents, enough to
// fill its lanes for several ticks while keeping the test quick, and mcp.toml at its full 1,001
// (0: the file's own counts), so a thousand clients share one session. Every other example runs
// at its golden scale, where its golden trace is what each run must equal.
var determinismAgents = map[string]int{"quickstart.toml": 200, "mcp.toml": 0}

// goldenTrace reads an example's golden trace.
func goldenTrace(t *testing.T, base string) []byte {
	t.Helper()
	want, err := os.ReadFile(filepath.Join("testdata", "golden", strings.TrimSuffix(base, ".toml")+".jsonl"))
	if err != nil {
		t.Fatalf("reading golden trace (run go test -update to create it): %v", err)
	}
	return want
}

// traceDiff explains how two traces differ, for a failing test's output.
func traceDiff(t *testing.T, want, got []byte) string {
	t.Helper()
	report, err := trace.Diff(bytes.NewReader(want), bytes.NewReader(got))
	if err != nil {
		return "cannot diff: " + err.Error()
	}
	return report
}

// TestDeterminism requires every shipped example to give byte-identical traces whether its tool
// workers run on many threads or on one, and run after run. At its golden scale an example runs
// once with GOMAXPROCS(1) and must equal its golden trace, which TestGoldenTraces' run with the
// default GOMAXPROCS equals too (so two runs in one process, on different thread counts, and the
// run that wrote the file all agree). At its own scale (determinismAgents) it runs twice, with
// the default GOMAXPROCS and with one, and the two traces must be equal. While golden traces are
// being rewritten (-update), the golden-scale examples are compared with a default run instead.
func TestDeterminism(t *testing.T) {
	skipUnderRace(t)
	for _, file := range exampleFiles(t) {
		base := filepath.Base(file)
		t.Run(strings.TrimSuffix(base, ".toml"), func(t *testing.T) {
			requireExample(t, base)
			agents, ownScale := determinismAgents[base]
			if !ownScale {
				agents = goldenAgents[base]
			}
			opt := warren.Options{Agents: agents}
			var want []byte
			what := "the golden trace"
			if ownScale || golden.Updating() {
				_, want = runTraced(t, file, opt)
				what = fmt.Sprintf("GOMAXPROCS(%d)", runtime.GOMAXPROCS(0))
			} else {
				want = goldenTrace(t, base)
			}
			previous := runtime.GOMAXPROCS(0)
			single := func() []byte {
				runtime.GOMAXPROCS(1)
				defer runtime.GOMAXPROCS(previous) // restored even when runTraced fails the test
				_, tr := runTraced(t, file, opt)
				return tr
			}()
			if !bytes.Equal(want, single) {
				t.Errorf("GOMAXPROCS(1) gave a different trace than %s:\n%s", what, traceDiff(t, want, single))
			}
		})
	}
}

// TestSeedOverride checks that warren.Options.Seed replaces the scenario's seed in the summary and in
// the trace header, so traces of different seeds are never mistaken for one another.
func TestSeedOverride(t *testing.T) {
	skipUnderRace(t)
	for _, file := range exampleFiles(t) {
		base := filepath.Base(file)
		t.Run(strings.TrimSuffix(base, ".toml"), func(t *testing.T) {
			requireExample(t, base)
			// The run with the scenario's own seed is the golden one: its header is the file's
			// (a default run while the golden traces are being rewritten).
			opt := warren.Options{Agents: goldenAgents[base]}
			var defaultTrace []byte
			if golden.Updating() {
				_, defaultTrace = runTraced(t, file, opt)
			} else {
				defaultTrace = goldenTrace(t, base)
			}
			defaultHeader, _, err := trace.ReadAll(bytes.NewReader(defaultTrace))
			if err != nil {
				t.Fatal(err)
			}
			seed := defaultHeader.Seed + 1000
			opt.Seed = &seed
			seededSum, seededTrace := runTraced(t, file, opt)
			seededHeader, _, err := trace.ReadAll(bytes.NewReader(seededTrace))
			if err != nil {
				t.Fatal(err)
			}
			if seededHeader.Seed != seed || seededSum.Seed != seed {
				t.Errorf("seeded run: header seed %d, summary seed %d, want %d", seededHeader.Seed, seededSum.Seed, seed)
			}
			if defaultHeader.Seed == seededHeader.Seed {
				t.Errorf("header seed %d is the same with and without the override", defaultHeader.Seed)
			}
			if defaultHeader.Scenario != seededHeader.Scenario || defaultHeader.ScenarioHash != seededHeader.ScenarioHash {
				t.Errorf("the seed override changed what the header says was run: %+v vs %+v", defaultHeader, seededHeader)
			}
		})
	}
}
