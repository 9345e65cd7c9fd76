package gate

import (
	"fmt"

	"github.com/warrenhq/warren/blueprint"
	"github.com/warrenhq/warren/hostconfig"
	"github.com/warrenhq/warren/policy"
	"github.com/warrenhq/warren/tools"
)

// Policy is the immutable half of an agent's tool state (the reference's AgentToolState): the
// resolved permission layers (host ceiling, blueprint, launch overrides, defaults), the safe keys,
// the unattended switch, the write ceilings, the safety mode and the ceilings of the agent's
// ancestors. Everything here is fixed for one (host config, blueprint, launch, group, spawn
// point), so every agent spawned alike shares one by pointer.
type Policy struct {
	// Resolver decides a call's base verdict and covers asks with safe keys and grants.
	Resolver *policy.Resolver
	// Safe are the safe shell keys: the shipped list, the host's [safe_commands], and the
	// blueprint's when the host opts in (for a sub-agent, only what every ancestor calls safe).
	Safe policy.Coverer
	// Unattended: nobody is watching. Human tools are not advertised unless a stage requires
	// them, and an ask no grant or yolo covers is denied instead of prompted.
	Unattended bool
	// TimeoutTicks bounds how long a prompt stays open before it is denied.
	TimeoutTicks uint64
	// WritePerCall and WritePerRun are the write budget ceilings (0: none).
	WritePerCall, WritePerRun int64
	// SafetyMode and PlanFile: the read-only floor (with the plan file writable while a plan is
	// drafted) or auto mode, where Classifier settles asks (nil: fail safe to ask).
	SafetyMode tools.SafetyMode
	PlanFile   string
	Classifier tools.AutoClassifier
	// Scripts is Layer 3, [tool_script_permissions]: which host functions script tools may
	// call (nil: the defaults).
	Scripts *policy.ScriptPermissions
	// Ceilings are the agent's ancestors' permissions as they stood when each spawned the line
	// below it, nearest first: the gate never lets a sub-agent do what an ancestor could not
	// (nil for a top-level agent).
	Ceilings []policy.Ceiling
}

// ReadOnly reports whether the read-only floor applies: read-only mode, or a plan being drafted.
func (p *Policy) ReadOnly() bool { return p.SafetyMode == tools.SafetyReadOnly || p.PlanFile != "" }

// defaultPolicy is the policy of an agent whose profile names none: the built-in defaults alone,
// no ceiling, no launch overrides. The gate never runs without layers.
var defaultPolicy = func() *Policy {
	r, err := policy.NewResolver(policy.HostLayer{}, policy.BlueprintLayer{}, policy.Launch{})
	if err != nil {
		panic(err) // empty layers cannot be invalid
	}
	return &Policy{Resolver: r}
}()

// Build assembles what a policy takes from a blueprint under a host config: the blueprint's
// permission layers under the host's ceiling and the launch overrides, its safe keys (the shipped
// list, the host's, and the blueprint's when the host opts in), Layer 3 from scripts (the
// blueprint's own [tool_script_permissions], or what a child inherits), and the host's prompt
// timeout and write budget. Groups add their modes on top (ForGroup); sub-agents inherit theirs
// (Inherit).
func Build(bp *blueprint.Blueprint, host *hostconfig.Config, launch policy.Launch, scripts map[string]policy.ScriptVerdict) (*Policy, error) {
	resolver, err := policy.NewResolver(host.HostLayer(), bp.PolicyLayer(), launch)
	if err != nil {
		return nil, err
	}
	lists := [][]string{policy.ShippedSafeCommands, host.SafeCommands}
	if host.AllowBlueprintSafeCommands {
		lists = append(lists, bp.SafeCommands)
	}
	safe, err := policy.NewSafeKeys(lists...)
	if err != nil {
		return nil, fmt.Errorf("safe commands: %w", err)
	}
	layer3, err := policy.NewScriptPermissions(host.ScriptPermissions, scripts)
	if err != nil {
		return nil, err
	}
	return &Policy{Resolver: resolver, Safe: safe, Scripts: layer3, TimeoutTicks: host.TimeoutTicks,
		WritePerCall: host.WritePerCall, WritePerRun: host.WritePerRun}, nil
}

// Modes are how a group of top-level agents runs: whether anyone is watching, and its safety
// mode (with the plan file and the auto-mode classifier).
type Modes struct {
	Unattended bool
	SafetyMode tools.SafetyMode
	PlanFile   string
	// Classifier settles asks in auto mode (nil: auto mode fails safe to ask); other modes
	// ignore it.
	Classifier tools.AutoClassifier
}

// ForGroup builds the shared policy of a group of top-level agents of bp.
func ForGroup(bp *blueprint.Blueprint, host *hostconfig.Config, launch policy.Launch, m Modes) (*Policy, error) {
	pol, err := Build(bp, host, launch, bp.ScriptPermissions)
	if err != nil {
		return nil, err
	}
	pol.Unattended = m.Unattended
	pol.SafetyMode, pol.PlanFile = m.SafetyMode, m.PlanFile
	if m.SafetyMode == tools.SafetyAuto {
		pol.Classifier = m.Classifier
	}
	return pol, nil
}

// Parent is an agent as a child is spawned from it: its policy, the stage it is in, and names
// for reasons.
type Parent struct {
	Policy *Policy
	// Stage is the parent's stage index when it spawns; StageName names it in reasons.
	Stage     int
	StageName string
	// Who names the parent in reasons ("of group planner", "planner-0").
	Who string
}

// Inherit builds the policy of a sub-agent of blueprint bp spawned by parent: its own blueprint
// under the host's ceiling and the run's launch overrides without --allow (an --allow grant is the
// user's answer for the agents they launched, not for whatever those spawn), with the parent's
// permission in its spawn-time stage (and the parent's own ceilings) on top. Unattended, the
// read-only floor (a parent drafting a plan has children that only read) and auto mode are
// inherited; grants are not (a child starts with none); Layer 3 is the stricter of the child's
// blueprint and the parent's, per host function; a safe key must be safe for every ancestor.
func Inherit(parent Parent, bp *blueprint.Blueprint, host *hostconfig.Config, launch policy.Launch, unattended bool) (*Policy, error) {
	pp := parent.Policy
	if pp == nil || pp.Resolver == nil {
		return nil, fmt.Errorf("the parent (%s) has no tool policy to inherit", parent.Who)
	}
	ceilings := make([]policy.Ceiling, 0, 1+len(pp.Ceilings))
	ceilings = append(ceilings, policy.Ceiling{Resolver: pp.Resolver, Stage: parent.Stage, Safe: pp.Safe,
		Agent: parent.Who, StageName: parent.StageName})
	ceilings = append(ceilings, pp.Ceilings...)
	pol, err := Build(bp, host, launch.Inherited(), inheritScripts(bp.ScriptPermissions, pp.Scripts))
	if err != nil {
		return nil, err
	}
	pol.Safe = policy.SafeUnder(pol.Safe, ceilings)
	pol.Unattended = pp.Unattended || unattended
	pol.Ceilings = ceilings
	switch {
	case pp.ReadOnly():
		pol.SafetyMode = tools.SafetyReadOnly
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
