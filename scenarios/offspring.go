package scenarios

import (
	"fmt"
	"github.com/warrenhq/warren/sandbox"

	"github.com/warrenhq/warren/components"
	"github.com/warrenhq/warren/hostconfig"
	"github.com/warrenhq/warren/policy"
	"github.com/warrenhq/warren/subagents"
	"github.com/warrenhq/warren/tools"
)

// offspring builds the profiles of sub-agents (systems.Offspring): one per (parent profile,
// parent stage, blueprint key), shared by every child spawned alike, so a fan-out of 10^5
// workers costs one profile.
type offspring struct {
	sc         *Scenario
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

// Profile implements systems.Offspring.
func (o *offspring) Profile(parent *components.Profile, stage int32, key string) (*components.Profile, error) {
	k := offspringKey{parent: parent, stage: stage, key: key}
	if p, ok := o.cache[k]; ok {
		return p, nil
	}
	sp, ok := o.sc.Spawn[key]
	if !ok {
		return nil, fmt.Errorf("%w %q; this scenario spawns: %s", subagents.ErrUnknownBlueprint, key, listOrNone(sortedKeys(o.sc.Spawn)))
	}
	pol, err := o.policy(parent, stage, sp)
	if err != nil {
		return nil, err
	}
	g := &Group{Name: key, BlueprintKey: key, Blueprint: sp.Blueprint, ModelKey: sp.ModelKey, Model: sp.Model}
	p, err := profile(g, o.scoped, o.root, pol, o.host.SandboxCeiling(), o.sc.leasedServers(g.Blueprint))
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

// policy builds a child's tool policy: its own blueprint under the host's ceiling and the run's
// launch overrides without --allow (an --allow grant is the user's answer for the agents they
// launched, not for whatever those spawn), with the parent's permission in its spawn-time stage
// (and the parent's own ceilings) on top. Unattended, yolo, the read-only floor and auto mode
// are inherited; grants are not (a child starts with none).
func (o *offspring) policy(parent *components.Profile, stage int32, sp *Spawnable) (*components.ToolPolicy, error) {
	pp := parent.Policy
	if pp == nil || pp.Resolver == nil {
		return nil, fmt.Errorf("spawn %q: the parent's group %q has no tool policy to inherit", sp.Key, parent.Group)
	}
	stageName := ""
	if int(stage) >= 0 && int(stage) < len(parent.Blueprint.Stages) {
		stageName = parent.Blueprint.Stages[stage].Name
	}
	ceilings := make([]policy.Ceiling, 0, 1+len(pp.Ceilings))
	ceilings = append(ceilings, policy.Ceiling{Resolver: pp.Resolver, Stage: int(stage), Safe: pp.Safe,
		Agent: "of group " + parent.Group, StageName: stageName})
	ceilings = append(ceilings, pp.Ceilings...)
	// Layer 3 of a child: for each host function the stricter of its own blueprint's value and
	// its parent's (inherit then asks the gate, which judges under the parent's ceilings too).
	pol, err := blueprintPolicy(sp.Blueprint, o.host, o.launch.Inherited(), inheritScripts(sp.Blueprint.ScriptPermissions, pp.Scripts))
	if err != nil {
		return nil, fmt.Errorf("spawn %q: %w", sp.Key, err)
	}
	pol.Safe = policy.SafeUnder(pol.Safe, ceilings)
	pol.Unattended = pp.Unattended || o.unattended
	pol.Ceilings = ceilings
	switch {
	case pp.SafetyMode == tools.SafetyReadOnly || pp.PlanFile != "":
		pol.SafetyMode = tools.SafetyReadOnly // a parent drafting a plan has children that only read
	case pp.SafetyMode == tools.SafetyAuto:
		pol.SafetyMode, pol.Classifier = tools.SafetyAuto, pp.Classifier
	}
	return pol, nil
}

// inheritScripts is a child's [tool_script_permissions]: per host function, the stricter of its
// own blueprint's value (the default where it says nothing) and its parent's effective one.
func inheritScripts(own map[string]policy.ScriptVerdict, parent *policy.ScriptPermissions) map[string]policy.ScriptVerdict {
	if parent == nil {
		return own
	}
	out := make(map[string]policy.ScriptVerdict, len(policy.ScriptFuncs()))
	for _, fn := range policy.ScriptFuncs() {
		v, ok := own[fn]
		if !ok {
			v = policy.DefaultScriptVerdict(fn)
		}
		pv, _ := parent.Verdict(fn)
		out[fn] = max(v, pv)
	}
	return out
}
