package systems

import "github.com/warrenhq/warren/ecs"

// Pipeline returns the systems of one tick in the order they run. Background comes first, so a
// background command's report is in the inbox before the turns of the tick. Collect systems follow their
// dispatch systems so inline work finishes within the tick that started it; interact settles
// the prompts due this tick before tool_collect files lane results; subagents settles the
// sub-agent calls handed over by both (spawning children, parking waits, killing subtrees);
// transition and reap come last so an agent that ends this tick is gone, with its subtree,
// before the next.
func Pipeline() []ecs.System {
	return []ecs.System{
		&Background{},
		&SyncStage{},
		&InferDispatch{},
		&InferCollect{},
		&ToolDispatch{},
		&Interact{},
		&ToolCollect{},
		&Subagents{},
		&Transition{},
		&Reap{},
	}
}
