package systems

import "github.com/warrenhq/warren/ecs"

// Pipeline returns the systems of one tick in the order they run. mcp_events comes first, so
// the MCP sessions' lifecycle events of the previous tick are written before any agent moves
// (see MCPEvents). Collect systems follow their
// dispatch systems so inline work finishes within the tick that started it; interact settles
// the prompts due this tick before tool_collect files lane results; subagents settles the
// sub-agent calls handed over by both (spawning children, parking waits, killing subtrees);
// transition and reap come last but one so an agent that ends this tick is gone, with its
// subtree, before the next; background comes after reap, so a background command whose agent
// ended this tick is not waited for (reap killed it), and a report lands in the inbox for the
// agent's next turn.
func Pipeline() []ecs.System {
	return []ecs.System{
		&MCPEvents{},
		&SyncStage{},
		&InferDispatch{},
		&InferCollect{},
		&ToolDispatch{},
		&Interact{},
		&ToolCollect{},
		&Subagents{},
		&Transition{},
		&Reap{},
		&Background{},
	}
}
