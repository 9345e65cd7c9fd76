package warren

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/warrenhq/warren/components"
	"github.com/warrenhq/warren/gate"
	"github.com/warrenhq/warren/hostconfig"
	"github.com/warrenhq/warren/policy"
	"github.com/warrenhq/warren/resources"
	"github.com/warrenhq/warren/sandbox"
	"github.com/warrenhq/warren/scenarios"
	"github.com/warrenhq/warren/subagents"
	"github.com/warrenhq/warren/tools"
)

// offspring builds the profiles of sub-agents (resources.Offspring): one per (parent profile,
// parent stage, blueprint key), shared by every child spawned alike, so a fan-out of 10^5
// workers costs one profile.
type offspring struct {
	sc         *scenarios.Scenario
	scoped     *tools.ScopedToolRegistry
	host       *hostconfig.Config
	launch     policy.Launch
	unattended bool
	root       string
	cache      map[offspringKey]*components.Profile
}

type offspringKey struct {
	parent *components.Profile
	stage  int32
	key    string
}

// Profile implements resources.Offspring.
func (o *offspring) Profile(parent *components.Profile, stage int32, key string) (*components.Profile, error) {
	k := offspringKey{parent: parent, stage: stage, key: key}
	if p, ok := o.cache[k]; ok {
		return p, nil
	}
	sp, ok := o.sc.Spawn[key]
	if !ok {
		return nil, fmt.Errorf("%w %q; this scenario spawns: %s", subagents.ErrUnknownBlueprint, key, listOrNone(slices.Sorted(maps.Keys(o.sc.Spawn))))
	}
	pol, err := o.policy(parent, stage, sp)
	if err != nil {
		return nil, err
	}
	g := &scenarios.Group{Name: key, BlueprintKey: key, Blueprint: sp.Blueprint, ModelKey: sp.ModelKey, Model: sp.Model, StageModels: sp.StageModels, Watches: sp.Watches}
	p, err := profile(g, o.scoped, o.root, pol, o.host.SandboxCeiling(), o.sc.LeasedServers(g.Blueprint))
	if err != nil {
		return nil, err
	}
	// A child's commands are never less contained than its parent's in the stage it spawned
	// from: each of its stages' boundaries meets the parent's.
	if int(stage) < len(parent.Sandbox) {
		for i := range p.Sandbox {
			p.Sandbox[i] = sandbox.Meet(p.Sandbox[i], parent.Sandbox[stage])
		}
	}
	p.Workdir = nil // a child works in a folder of its parent's workdir, set when it is spawned
	if o.cache == nil {
		o.cache = map[offspringKey]*components.Profile{}
	}
	o.cache[k] = p
	return p, nil
}

// policy builds a child's tool policy with the gate's inheritance: its own blueprint under the
// host's ceiling and the run's launch overrides without --allow, with the parent's permission in
// its spawn-time stage (and the parent's own ceilings) on top.
func (o *offspring) policy(parent *components.Profile, stage int32, sp *scenarios.Spawnable) (*gate.Policy, error) {
	stageName := ""
	if int(stage) >= 0 && int(stage) < len(parent.Blueprint.Stages) {
		stageName = parent.Blueprint.Stages[stage].Name
	}
	pol, err := gate.Inherit(gate.Parent{Policy: parent.Policy, Stage: int(stage), StageName: stageName, Who: "of group " + parent.Group},
		sp.Blueprint, o.host, o.launch, o.unattended)
	if err != nil {
		return nil, fmt.Errorf("spawn %q: %w", sp.Key, err)
	}
	return pol, nil
}

var _ resources.Offspring = (*offspring)(nil)

// listOrNone lists names for an error message, or says there are none.
func listOrNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}
