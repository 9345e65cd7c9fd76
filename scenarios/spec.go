package scenarios

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"text/template"

	"github.com/warrenhq/warren/blueprint"
	"github.com/warrenhq/warren/ecs"
	"github.com/warrenhq/warren/hostconfig"
	"github.com/warrenhq/warren/models"
	"github.com/warrenhq/warren/resources"
)

// Spec is a scenario built from Go values rather than read from a file: an embedder's world of a
// few groups, with the defaults a scenario file gets for everything it leaves out (virtual
// clock, one-tick latencies, the default lanes and host config). FromSpec compiles it.
type Spec struct {
	// Name names the scenario in the trace header (lower-case letters, digits, '-', '_').
	Name string
	// Seed seeds the agents' random streams.
	Seed uint64
	// MaxTicks bounds the run (0: DefaultMaxTicks, as for a file; a run always ends).
	MaxTicks uint64
	// MaxTurnsPerAgent bounds each agent's model turns over its life (0:
	// resources.DefaultMaxModelTurns, as for a file).
	MaxTurnsPerAgent uint32
	// Budgets bound what live model turns may spend (zero: no limit), as [limits] does in a
	// file; every live model of the groups must then set max_tokens.
	Budgets Budgets
	// Groups are the agent groups, spawned in this order.
	Groups []GroupSpec
	// Host is the host config (nil: hostconfig.Default()).
	Host *hostconfig.Config
}

// GroupSpec is one group of a Spec.
type GroupSpec struct {
	// Name is the group's name; its agents are "<name>-<index>".
	Name string
	// Count is how many agents it has (1 to 10000000).
	Count int
	// Blueprint is what they run (blueprint.Parse, or warren.ParseBlueprint) and Model what
	// decides their turns.
	Blueprint *blueprint.Blueprint
	Model     models.Model
	// Task is each agent's first message, a template over {{.Name}}, {{.Index}} and {{.Group}}
	// ("": none).
	Task string
}

// ErrSpec marks a Spec that does not describe a runnable scenario.
var ErrSpec = errors.New("bad scenario spec")

// FromSpec compiles s into a Scenario, with the defaults a scenario file gets. Its hash covers
// the name, seed, limits as given and every group (name, count, blueprint hash, model id, task).
func FromSpec(s Spec) (*Scenario, error) {
	if !namePattern.MatchString(s.Name) {
		return nil, fmt.Errorf("%w: name %q: use lower-case letters, digits, '-' and '_'", ErrSpec, s.Name)
	}
	if len(s.Groups) == 0 {
		return nil, fmt.Errorf("%w: %s: give at least one group", ErrSpec, s.Name)
	}
	sc := &Scenario{
		Path: s.Name, Name: s.Name, Seed: s.Seed, MaxTicks: cmp.Or(s.MaxTicks, DefaultMaxTicks),
		MaxTurnsPerAgent: cmp.Or(s.MaxTurnsPerAgent, defaultTurnLimit), Budgets: s.Budgets,
		Clock:      ecs.ClockConfig{Mode: ecs.Virtual},
		Latency:    resources.Latency{Model: 1, Tool: 1},
		Lanes:      LaneSizes{ModelCapacity: defaultModelCapacity, ToolCapacity: defaultToolCapacity},
		Blueprints: map[string]*blueprint.Blueprint{},
		Host:       s.Host,
	}
	if sc.Host == nil {
		sc.Host = hostconfig.Default()
	}
	hash := sha256.New()
	fmt.Fprintf(hash, "spec %q seed %d max_ticks %d\n", s.Name, s.Seed, s.MaxTicks)
	if s.MaxTurnsPerAgent != 0 {
		// Hashed only when given, so that the hash of a spec written before the limit existed
		// stays what it was.
		fmt.Fprintf(hash, "max_turns_per_agent %d\n", s.MaxTurnsPerAgent)
	}
	if s.Budgets.Set() {
		fmt.Fprintf(hash, "budgets %d %d %v\n", s.Budgets.TokensPerAgent, s.Budgets.TokensPerRun, s.Budgets.CostUSD)
	}
	seen := map[string]bool{}
	for i, gs := range s.Groups {
		where := fmt.Sprintf("%s: group %d (%q)", s.Name, i, gs.Name)
		switch {
		case !namePattern.MatchString(gs.Name) || seen[gs.Name]:
			return nil, fmt.Errorf("%w: %s: a group name is unique, of lower-case letters, digits, '-' and '_'", ErrSpec, where)
		case gs.Count < 1 || gs.Count > 10_000_000:
			return nil, fmt.Errorf("%w: %s: count %d; a group has 1 to 10000000 agents", ErrSpec, where, gs.Count)
		case gs.Blueprint == nil || gs.Model == nil:
			return nil, fmt.Errorf("%w: %s: a group needs a blueprint and a model", ErrSpec, where)
		}
		if lm, ok := gs.Model.(models.Live); ok && lm.Live() && s.Budgets.Set() && lm.Spec().MaxTokens <= 0 {
			return nil, fmt.Errorf("%w: %s: a live model under a budget needs max_tokens, so a turn's worst case is known", ErrSpec, where)
		}
		seen[gs.Name] = true
		g := Group{Name: gs.Name, BlueprintKey: gs.Name, Blueprint: gs.Blueprint, ModelKey: gs.Name, Model: gs.Model, Count: gs.Count}
		if gs.Task != "" {
			t, err := template.New(gs.Name).Option("missingkey=error").Parse(gs.Task)
			if err == nil {
				err = t.Execute(discard{}, templateData{Name: "x", Group: "g"})
			}
			if err != nil {
				return nil, fmt.Errorf("%w: %s: task: bad template: %w (fields: {{.Name}}, {{.Index}}, {{.Group}})", ErrSpec, where, err)
			}
			g.task = t
		}
		sc.Blueprints[gs.Name] = gs.Blueprint
		sc.Groups = append(sc.Groups, g)
		fmt.Fprintf(hash, "group %q count %d blueprint %s model %s task %q\n", gs.Name, gs.Count, gs.Blueprint.Hash, gs.Model.ID(), gs.Task)
	}
	sc.Hash = "sha256:" + hex.EncodeToString(hash.Sum(nil))
	return sc, nil
}
