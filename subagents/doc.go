// Package subagents holds the parts of Warren's sub-agent trees that need no world: the seven
// sub-agent tools (their specs, argument parsing and result formats), the agent Tree with its
// spawn limits, addressing and forgetting rules, and the fan-out merge. The world's sub-agent
// system (in systems/) carries the calls out; this package imports neither the ECS nor the
// components, so every rule here is testable on its own.
//
// # Tools
//
// spawn_agent, check_agent, wait_for_agent, send_to_agent, kill_agent, list_agents and fan_out
// are WorldTools: their Execute refuses with ErrNeedsWorld, and the dispatch path, after the
// schema and the permission gate, hands the call to the sub-agent system by Op. The system parses
// the arguments with ParseSpawn, ParseTarget, ParseSend and ParseFanOut, and answers with
// AgentStatus.JSON, ListJSON, KillJSON, SentJSON or Merge.
//
// The tools register themselves in the tools package's built-in registry from this package's
// init, under the namespace "subagents" (Namespace): "subagents.spawn_agent",
// "subagents.check_agent" and so on. Tools and Register read that registry, sorted by id.
//
// # The tree
//
// Every agent that takes part in a sub-agent tree is a Node. A top-level agent is a root (depth
// 0, Parent 0), created on first use by Tree.Root; a spawned agent is a child, recorded by
// Tree.AddChild after Tree.CheckSpawn allowed it. Ids are allocated by the caller.
//
// Naming: a child's name is "<parent name>/<k>", k counting the children the parent has ever
// spawned, from 1: "planner-0/3" is the third child of "planner-0", "planner-0/3/1" the first
// child of that. Top-level names never contain '/', so child names never collide, and a name is
// never reused while anyone could still address it.
//
// Depth: each node has a Budget, the number of levels its subtree may still grow below it. A
// root's budget comes from its blueprint's max_child_depth; a child's is min(parent's budget - 1,
// the child blueprint's max_child_depth, the call's max_child_depth), so a child can never reach
// deeper than its parent could. The host adds an absolute depth cap, a cap on live children per
// parent (its own and the parent blueprint's, the smaller applies) and a cap on live sub-agents
// in the whole tree (Limits). A refused spawn wraps ErrDepth, ErrTooManyChildren or
// ErrTooManyAgents.
//
// Addressing: tools name agents by name (the id argument). An agent may address only itself and
// its descendants; Tree.Resolve refuses anything else with ErrOutsideSubtree, and unknown names
// with ErrUnknownAgent. Names are not indexed one by one: a name is walked from its root, "/k"
// being the k-th child, so a spawn adds one index entry (by id) and a lookup costs one id lookup
// per level. Only roots, and live agents whose ancestors were forgotten, are indexed by name.
//
// Ending: Tree.End marks an agent ended and returns its live children that are not detached;
// the caller kills each of them together with its subtree (Tree.LiveSubtree, then End on every
// node), which is also what kill_agent does. Detached children outlive their parent and keep
// their names.
//
// Forgetting: only live agents call tools and each addresses only its own subtree, so a node
// nobody can address any more is one that has ended and has no live ancestor. End drops such a
// node at once, with its ended descendants; live descendants stay, still findable. An ended
// child of a live parent is kept, so the parent can check it after it ended. When a whole tree
// has ended the tree holds nothing of it, and the indexes are rebuilt once they fall below a
// quarter of their peak, so the memory of a finished run of 10^5 sub-agents comes back.
//
// The Tree is owned by the world goroutine and takes no locks.
//
// # Fan-out
//
// fan_out runs one worker per item and merges their results with Merge: a header counting the
// outcomes, then one line per item. Each item's text gets a max-min fair share of a character
// budget (FairShares): short texts are shown whole and the long ones split the rest evenly.
package subagents
