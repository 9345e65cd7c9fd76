package subagents

import "errors"

// Sentinel errors callers test with errors.Is. The texts are written for the model that made the
// call: the dispatch path shows an error's message verbatim as the tool's error result, so every
// error returned here (and by the world's sub-agent system, which wraps the same sentinels) names
// the agent and the numbers involved and says what to do instead.
var (
	// ErrNeedsWorld: a sub-agent tool's Execute was called directly. The tools change the world
	// (they create, park and end agent entities), so only the sub-agent system may carry them out.
	ErrNeedsWorld = errors.New("runs inside the world's sub-agent system; it cannot run here")
	// ErrUnknownAgent: no agent has that id (never existed, or ended long enough ago that nobody
	// can address it any more).
	ErrUnknownAgent = errors.New("no such agent")
	// ErrOutsideSubtree: the agent exists but is neither the caller nor one of its descendants, and
	// an agent may address only those.
	ErrOutsideSubtree = errors.New("not in your subtree")
	// ErrSelf: wait_for_agent or kill_agent named the caller itself (waiting on oneself would
	// never return; killing oneself is ending, which the agent's stage graph decides).
	ErrSelf = errors.New("an agent cannot wait on or kill itself")
	// ErrDepth: the caller may not grow its subtree any deeper (its depth budget is spent, or the
	// child would pass the host's depth cap).
	ErrDepth = errors.New("sub-agent depth limit reached")
	// ErrTooManyChildren: the caller already has as many live children as it may.
	ErrTooManyChildren = errors.New("too many live children")
	// ErrTooManyAgents: the host already runs as many live sub-agents as it allows.
	ErrTooManyAgents = errors.New("too many live sub-agents in this host")
	// ErrAlreadyEnded: the call needs a live agent (send, kill) and the one named has ended.
	ErrAlreadyEnded = errors.New("agent already ended")
	// ErrInboxFull: send_to_agent found the recipient's inbox at its cap; the recipient has not
	// read the queued messages yet.
	ErrInboxFull = errors.New("the agent's inbox is full")
	// ErrUnknownBlueprint: spawn_agent or fan_out named a blueprint the host has not loaded.
	ErrUnknownBlueprint = errors.New("unknown blueprint")
	// ErrNotSpawnable: the blueprint exists but the caller's blueprint does not list it among the
	// blueprints it may spawn.
	ErrNotSpawnable = errors.New("this agent may not spawn that blueprint")
	// ErrTooManyItems: fan_out was given more work items than the host allows in one call.
	ErrTooManyItems = errors.New("too many work items")
	// ErrNoItems: fan_out was given no work items.
	ErrNoItems = errors.New("no work items")
)
