package components

import (
	"github.com/warrenhq/warren/policy"
	"github.com/warrenhq/warren/tools"
)

// AgentToolState is the per-agent half of the tool state, in the agent store (the immutable half,
// shared by a group, is gate.Policy): which stage's policy is in force, the grants the agent was
// given, its write budget and its open prompts.
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
