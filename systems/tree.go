package systems

import (
	"cmp"
	"slices"

	"github.com/warrenhq/warren/components"
	"github.com/warrenhq/warren/ecs"
	"github.com/warrenhq/warren/subagents"
)

// treeState is the world's side of the agent tree, shared by the sub-agent system (which acts on
// the tools' calls) and reap (which ends agents and kills their orphans). Everything in it is
// keyed by agent id and touched only by the world's goroutine.
type treeState struct {
	tree *subagents.Tree
	// entities maps the live agents of the tree (every agent that spawned or was spawned) to
	// their entities.
	entities map[uint64]ecs.Entity
	// requests are the sub-agent tool calls handed over this tick, settled by the sub-agent
	// system in canonical order (agent id, call index).
	requests []subRequest
	// waiters maps an agent to the calls parked until it ends.
	waiters map[uint64][]waiter
	// ended holds the sub-agents reaped since the sub-agent system last ran: their waiters,
	// parents and fan-outs hear of it on its next update.
	ended []uint64
	// workers maps a fan-out worker to its fan-out and item.
	workers map[uint64]workerRef
	// profiles remembers the profile index of each profile Offspring returned.
	profiles map[*components.Profile]uint32
	// blueprints names the blueprint of each group of spawned agents, for the status of a
	// reaped child.
	blueprints map[string]string
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

// workerRef says which fan-out a worker belongs to and which item it works on.
type workerRef struct {
	fan  *fanOut
	item int
}

func newTreeState() *treeState {
	return &treeState{
		tree:       subagents.NewTree(),
		entities:   map[uint64]ecs.Entity{},
		waiters:    map[uint64][]waiter{},
		workers:    map[uint64]workerRef{},
		profiles:   map[*components.Profile]uint32{},
		blueprints: map[string]string{},
	}
}

// sortRequests puts the tick's requests in canonical order.
func (t *treeState) sortRequests() {
	slices.SortFunc(t.requests, func(a, b subRequest) int {
		return cmp.Or(cmp.Compare(a.agent, b.agent), cmp.Compare(a.index, b.index))
	})
}
