package scenarios_test

import (
	"bytes"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/warrenhq/warren"
	"github.com/warrenhq/warren/trace"
)

// determinismAgents is the Agents option for the determinism runs: quickstart.toml is rescaled
// to 200 agents, enough to fill its lanes for several ticks while keeping the test quick, and so
// is gossip.toml (JavaScript policies drawing from every voter's seeded stream); sandbox.toml at 5
// builders, each running its commands in a real sandbox.
var determinismAgents = map[string]int{"quickstart.toml": 200, "gossip.toml": 200, "sandbox.toml": 5}

// traceDiff explains how two traces differ, for a failing test's output.
func traceDiff(t *testing.T, want, got []byte) string {
	t.Helper()
	report, err := trace.Diff(bytes.NewReader(want), bytes.NewReader(got))
	if err != nil {
		return "cannot diff: " + err.Error()
	}
	return report
}

// TestDeterminism runs every shipped example several times and requires byte-identical traces:
// twice with the default GOMAXPROCS and once with GOMAXPROCS(1), so neither repetition nor the
// number of threads running tool workers can change what a run records.
func TestDeterminism(t *testing.T) {
	for _, file := range exampleFiles(t) {
		base := filepath.Base(file)
		t.Run(strings.TrimSuffix(base, ".toml"), func(t *testing.T) {
			opt := warren.Options{Agents: determinismAgents[base]}
			_, first := runTraced(t, file, opt)
			_, second := runTraced(t, file, opt)
			if !bytes.Equal(first, second) {
				t.Errorf("two runs gave different traces:\n%s", traceDiff(t, first, second))
			}

			previous := runtime.GOMAXPROCS(0)
			single := func() []byte {
				runtime.GOMAXPROCS(1)
				defer runtime.GOMAXPROCS(previous) // restored even when runTraced fails the test
				_, tr := runTraced(t, file, opt)
				return tr
			}()
			if !bytes.Equal(first, single) {
				t.Errorf("GOMAXPROCS(1) gave a different trace than GOMAXPROCS(%d):\n%s", previous, traceDiff(t, first, single))
			}
		})
	}
}

// TestSeedOverride checks that warren.Options.Seed replaces the scenario's seed in the summary and in
// the trace header, so traces of different seeds are never mistaken for one another.
func TestSeedOverride(t *testing.T) {
	for _, file := range exampleFiles(t) {
		base := filepath.Base(file)
		t.Run(strings.TrimSuffix(base, ".toml"), func(t *testing.T) {
			opt := warren.Options{Agents: goldenAgents[base]}
			defaultSum, defaultTrace := runTraced(t, file, opt)
			seed := defaultSum.Seed + 1000
			opt.Seed = &seed
			seededSum, seededTrace := runTraced(t, file, opt)

			defaultHeader, _, err := trace.ReadAll(bytes.NewReader(defaultTrace))
			if err != nil {
				t.Fatal(err)
			}
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
