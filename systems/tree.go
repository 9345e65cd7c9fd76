package systems

import (
	"cmp"
	"slices"

	"github.com/warrenhq/warren/components"
	"github.com/warrenhq/warren/ecs"
	"github.com/warrenhq/warren/subagents"
)

// treeState is the world's side of the agent tree, shared by the sub-agent system (which acts on
// the tools' calls) and reap (which ends agents and kills their orphans). It is touched only by
// the world's goroutine. What the world knows about one agent of the tree hangs off its node
// (nodeData), so it lives exactly as long as the tree remembers the agent, and no id-keyed map
// keeps the high-water mark of a wide tree after it is gone.
type treeState struct {
	tree *subagents.Tree
	// requests are the sub-agent tool calls handed over this tick, settled by the sub-agent
	// system in canonical order (agent id, call index).
	requests []subRequest
	// ended holds the sub-agents reaped since the sub-agent system last ran: their waiters,
	// parents and fan-outs hear of it on its next update.
	ended []*nodeData
	// profiles remembers the profile index of each profile Offspring returned.
	profiles map[*components.Profile]uint32
	// blueprints names the blueprint of each group of spawned agents, for the status of a
	// reaped child.
	blueprints map[string]string
}

// nodeData is the world's data about one agent of the tree, kept in its node.
type nodeData struct {
	// entity is the agent's entity while it lives.
	entity ecs.Entity
	// record is its final record, once reaped: check_agent and wait_for_agent read it for as
	// long as someone can address the agent.
	record *components.FinalRecord
	// waiters are the calls parked until it ends.
	waiters []waiter
	// fan is the fan-out it works for (nil unless it is a fan-out worker), item its item, and
	// slot its place in the fan-out's running list.
	fan        *fanOut
	item, slot int
}

// subRequest is one allowed sub-agent tool call, parked until the sub-agent system runs.
type subRequest struct {
	entity ecs.Entity
	agent  uint64
	index  int
	op     subagents.Op
}

// waiter is one call parked until an agent ends: wait_for_agent, or spawn_agent with wait.
type waiter struct {
	entity ecs.Entity
	agent  uint64
	index  int
	callID string
}

func newTreeState() *treeState {
	return &treeState{
		tree:       subagents.NewTree(),
		profiles:   map[*components.Profile]uint32{},
		blueprints: map[string]string{},
	}
}

// dataOf returns the world's data about node n.
func dataOf(n *subagents.Node) *nodeData {
	nd, _ := n.Data.(*nodeData)
	if nd == nil {
		nd = &nodeData{}
		n.Data = nd
	}
	return nd
}

// node returns the tree's node of agent id and the world's data about it.
func (t *treeState) node(id uint64) (*subagents.Node, *nodeData, bool) {
	n, ok := t.tree.Get(id)
	if !ok {
		return nil, nil, false
	}
	return n, dataOf(n), true
}

// sortRequests puts the tick's requests in canonical order.
func (t *treeState) sortRequests() {
	slices.SortFunc(t.requests, func(a, b subRequest) int {
		return cmp.Or(cmp.Compare(a.agent, b.agent), cmp.Compare(a.index, b.index))
	})
}

// resetRequests empties the queue after a tick, releasing it when it grew large.
func (t *treeState) resetRequests() { t.requests = resetScratch(t.requests) }
