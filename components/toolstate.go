package components

import (
	"github.com/warrenhq/warren/policy"
	"github.com/warrenhq/warren/tools"
)

// ToolPolicy is the immutable half of an agent's tool state (the reference's AgentToolState):
// the resolved permission layers (host ceiling, blueprint, launch overrides, defaults), the safe
// keys, the unattended switch, the write ceilings and the safety mode. Everything here is fixed
// for one (host config, blueprint, launch, group), so every agent of a group shares one by
// pointer.
type ToolPolicy struct {
	// Resolver decides a call's base verdict and covers asks with safe keys and grants.
	Resolver *policy.Resolver
	// Safe are the safe shell keys: the shipped list, the host's [safe_commands], and the
	// blueprint's when the host opts in.
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

// AgentToolState is the per-agent half of the tool state, in the agent store: which stage's
// policy is in force, the grants the agent was given, its write budget and its open prompts.
// Grants and the budget are allocated on first use, so an agent that never asks or writes pays
// for neither.
type AgentToolState struct {
	// Stage is the stage index sync_stage last applied (-1 before the first entry).
	Stage int32
	// Grants are the once/stage/run answers the agent holds (nil until the first grant).
	Grants *policy.Grants
	// Writes is the run's write budget, shared by every batch of calls (nil until the first
	// call that may write).
	Writes *tools.WriteBudget
	// Prompts counts the agent's open prompts and Waits its calls parked until a sub-agent
	// ends; while either is non-zero the agent shows as waiting.
	Prompts int32
	Waits   int32
}
