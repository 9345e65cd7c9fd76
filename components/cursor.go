package components

import "github.com/warrenhq/warren/blueprint"

// Cursor is where an agent is in its blueprint's stage graph. Per-stage visit counts are
// AgentData.Visits.
type Cursor struct {
	// Stage is the index of the current stage.
	Stage int32
	// Iteration counts model turns in the current visit of the stage.
	Iteration int32
	// Turn counts model turns over the whole run.
	Turn int32
	// Outcome is how the current visit ended, set when the agent enters ResolveTransition;
	// AgentData.Reason says why for error and max_iterations outcomes.
	Outcome blueprint.Outcome
}
