package components

// An agent carries exactly one phase marker. Each system queries only its own marker, so an
// agent in one phase is never visited by the systems of another, and a tick costs
// O(agents with work), not O(agents).
type (
	// Entering: the agent is about to enter the stage its cursor names (sync_stage).
	Entering struct{}
	// ReadyToInfer: the agent's next step is a model turn (infer_dispatch).
	ReadyToInfer struct{}
	// AwaitingInference: a model call is on the model lane (infer_collect).
	AwaitingInference struct{}
	// ReadyForTools: the last model turn asked for tool calls (tool_dispatch).
	ReadyForTools struct{}
	// AwaitingTools: tool calls are on the tool lane (tool_collect).
	AwaitingTools struct{}
	// ResolveTransition: the stage visit ended with an outcome; pick the next stage (transition).
	ResolveTransition struct{}
	// Terminal: the agent's run is over; its record is written and its entity removed (reap).
	Terminal struct{}
)
