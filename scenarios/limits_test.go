package scenarios_test

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/warrenhq/warren"
	"github.com/warrenhq/warren/blueprint"
	"github.com/warrenhq/warren/components"
	"github.com/warrenhq/warren/ecs"
	"github.com/warrenhq/warren/models"
	"github.com/warrenhq/warren/resources"
	"github.com/warrenhq/warren/scenarios"
)

// watcherBlueprint is a polling stage that sends itself back on every outcome: an on = "always"
// self-loop, which loads only with endless = true (the ENDLESS placeholder).
const watcherBlueprint = `name = "watcher"
ENDLESS

[[stages]]
name = "watch"
available_tools = ["read_file"]

  [[stages.transitions]]
  on = "always"
  to = "watch"
`

// watcherScenario runs two watchers whose model polls forever; LIMITS is replaced by the
// test's [limits] keys.
const watcherScenario = `name = "watchers"

[limits]
LIMITS

[clock]
CLOCK

[blueprints]
watcher = "watcher.toml"

[models.poll]
kind = "scripted"
when_exhausted = "repeat_last"
  [[models.poll.turns]]
  stage = "watch"
  text = "Still nothing."
    [[models.poll.turns.calls]]
    tool = "read_file"
    args = { path = "inbox.txt" }

[[groups]]
name = "watchers"
blueprint = "watcher"
model = "poll"
count = 2

[[expect]]
group = "watchers"
status = "failed"
reason = "turn limit"
`

// writeWatchers writes the watcher scenario with the given blueprint header line, [limits] keys
// and [clock] keys, returning its path.
func writeWatchers(t *testing.T, endless, limits, clock string) string {
	t.Helper()
	dir := t.TempDir()
	bp := strings.Replace(watcherBlueprint, "ENDLESS", endless, 1)
	if err := os.WriteFile(filepath.Join(dir, "watcher.toml"), []byte(bp), 0o644); err != nil {
		t.Fatal(err)
	}
	sc := strings.NewReplacer("LIMITS", limits, "CLOCK", clock).Replace(watcherScenario)
	path := filepath.Join(dir, "watchers.toml")
	if err := os.WriteFile(path, []byte(sc), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestEndlessLoopIsRefused: without endless = true, the watcher's always-loop does not load,
// and the error names the blueprint's transition.
func TestEndlessLoopIsRefused(t *testing.T) {
	_, err := scenarios.Load(writeWatchers(t, "", "", ""), scenarios.KnownTools())
	if !errors.Is(err, blueprint.ErrNoEnd) {
		t.Fatalf("err = %v, want blueprint.ErrNoEnd", err)
	}
	if !strings.Contains(err.Error(), "watcher.toml:8:12: stages[0].transitions[0]: stage graph has no end") {
		t.Errorf("error does not point at the loop's transition:\n%v", err)
	}
}

// TestTurnLimitEndsEndlessAgents runs the watchers (endless = true) to their turn limit: each
// ends failed after exactly that many model turns, in its stage, with the limit as its reason,
// and the run reaches a fixed point long before its tick limit.
func TestTurnLimitEndsEndlessAgents(t *testing.T) {
	tests := []struct {
		name   string
		limits string
		want   uint32
	}{
		{name: "the scenario's limit", limits: "max_turns_per_agent = 25", want: 25},
		{name: "the default limit", want: resources.DefaultMaxModelTurns},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sum := runFile(t, writeWatchers(t, "endless = true", tt.limits, ""), warren.Options{})
			if sum.Stop != ecs.FixedPoint {
				t.Errorf("stop %s after %d ticks, want a fixed point", sum.Stop, sum.Ticks)
			}
			want := "turn limit: " + strconv.Itoa(int(tt.want)) + " model turns (limits.max_turns_per_agent)"
			for _, r := range sum.Records {
				if r.Status != components.Failed || r.Reason != want || r.Stage != "watch" || r.Counters.ModelTurns != tt.want {
					t.Errorf("%s: %s in %q after %d turns (%q); want failed in \"watch\" after %d turns (%q)",
						r.Name, r.Status, r.Stage, r.Counters.ModelTurns, r.Reason, tt.want, want)
				}
			}
			if len(sum.Records) != 2 || len(sum.Failures) != 0 {
				t.Errorf("%d records, failures %q; want 2 and none", len(sum.Records), sum.Failures)
			}
		})
	}
}

// TestTickLimitEndsARun: a run whose agents are still busy stops at its tick limit, the
// scenario's or, when [limits] leaves it out, DefaultMaxTicks; the unfinished agents' records say
// why. A tool latency past the limit makes the default's 100,000 ticks cost nothing: virtual time
// jumps to the tick the result is due, which is past the limit.
func TestTickLimitEndsARun(t *testing.T) {
	tests := []struct {
		name          string
		limits, clock string
		wantMaxTicks  uint64
	}{
		{name: "the scenario's limit", limits: "max_ticks = 40\nmax_turns_per_agent = 1000000", wantMaxTicks: 40},
		{name: "the default limit", clock: "tool_latency = 1000000", wantMaxTicks: scenarios.DefaultMaxTicks},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeWatchers(t, "endless = true", tt.limits, tt.clock)
			sc, err := scenarios.Load(path, scenarios.KnownTools())
			if err != nil {
				t.Fatal(err)
			}
			if sc.MaxTicks != tt.wantMaxTicks {
				t.Fatalf("MaxTicks = %d, want %d", sc.MaxTicks, tt.wantMaxTicks)
			}
			sum := runFile(t, path, warren.Options{})
			if sum.Stop != ecs.MaxTicks {
				t.Errorf("stop %s after %d ticks, want max_ticks", sum.Stop, sum.Ticks)
			}
			for _, r := range sum.Records {
				if r.Status.Terminal() || !strings.Contains(r.Reason, "the run ended (max_ticks)") {
					t.Errorf("%s: %s (%q), want unfinished with the tick limit as the reason", r.Name, r.Status, r.Reason)
				}
			}
			if len(sum.Failures) != 1 || !strings.Contains(sum.Failures[0], "2 of 2 agents differ") {
				t.Errorf("failures %q, want the turn-limit expectation to fail for both", sum.Failures)
			}
		})
	}
}

// TestFromSpecLimits: a Spec built in Go gets the limits a file gets when it leaves them zero,
// and keeps those it gives; the turn limit joins its hash only when given, so the hash of a
// spec that gives none is what it was before the limit existed.
func TestFromSpecLimits(t *testing.T) {
	bp, err := blueprint.Parse("one.toml", []byte("name = \"one\"\n[[stages]]\nname = \"s\"\n"), scenarios.KnownTools())
	if err != nil {
		t.Fatal(err)
	}
	m, err := models.NewScripted("scripted:one", nil, models.ExhaustedFinish)
	if err != nil {
		t.Fatal(err)
	}
	spec := func(ticks uint64, turns uint32) *scenarios.Scenario {
		t.Helper()
		sc, err := scenarios.FromSpec(scenarios.Spec{Name: "s", MaxTicks: ticks, MaxTurnsPerAgent: turns,
			Groups: []scenarios.GroupSpec{{Name: "g", Count: 1, Blueprint: bp, Model: m}}})
		if err != nil {
			t.Fatal(err)
		}
		return sc
	}
	tests := []struct {
		name           string
		ticks          uint64
		turns          uint32
		wantTicks      uint64
		wantTurns      uint32
		sameHashAsZero bool
	}{
		{name: "defaults", wantTicks: scenarios.DefaultMaxTicks, wantTurns: resources.DefaultMaxModelTurns, sameHashAsZero: true},
		{name: "given", ticks: 7, turns: 3, wantTicks: 7, wantTurns: 3},
		{name: "the default turn limit, written", turns: resources.DefaultMaxModelTurns, wantTicks: scenarios.DefaultMaxTicks, wantTurns: resources.DefaultMaxModelTurns},
	}
	zero := spec(0, 0).Hash
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sc := spec(tt.ticks, tt.turns)
			if sc.MaxTicks != tt.wantTicks || sc.MaxTurnsPerAgent != tt.wantTurns {
				t.Errorf("limits %d ticks, %d turns; want %d, %d", sc.MaxTicks, sc.MaxTurnsPerAgent, tt.wantTicks, tt.wantTurns)
			}
			if (sc.Hash == zero) != tt.sameHashAsZero {
				t.Errorf("hash %s, zero spec's %s: same = %v, want %v", sc.Hash, zero, sc.Hash == zero, tt.sameHashAsZero)
			}
		})
	}
}
