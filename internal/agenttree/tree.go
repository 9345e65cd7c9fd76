// Package agenttree is the world's side of the agent tree: the sub-agent tree itself
// (subagents.Tree, pure data), what the world knows about each of its agents (the entity while it
// lives, the final record once reaped, the calls parked until it ends, the fan-out it works for),
// the sub-agent calls handed over in a tick and the agents reaped since the sub-agent system last
// ran. The subagents and reap systems share one State as a world resource; it is touched only by
// the world's goroutine, and it is tested without a world.
package agenttree

import (
	"cmp"
	"slices"

	"github.com/warrenhq/warren/components"
	"github.com/warrenhq/warren/ecs"
	"github.com/warrenhq/warren/subagents"
)

// State is the world's side of the agent tree. What the world knows about one agent hangs off its
// tree node (Node), so it lives exactly as long as the tree remembers the agent, and no id-keyed
// map keeps the high-water mark of a wide tree after it is gone.
type State struct {
	// Tree is the agent tree.
	Tree *subagents.Tree
	// Requests are the sub-agent tool calls handed over this tick, settled by the sub-agent
	// system in canonical order (agent id, call index; see SortRequests).
	Requests []Request
	// Ended holds the sub-agents reaped since the sub-agent system last ran: their waiters,
	// parents and fan-outs hear of it on its next update.
	Ended []*Node
	// Profiles remembers the profile index of each profile the spawner registered for children.
	Profiles map[*components.Profile]uint32
	// Blueprints names the blueprint of each group of spawned agents, for the status of a
	// reaped child.
	Blueprints map[string]string
}

// Node is the world's data about one agent of the tree, kept in its tree node.
type Node struct {
	// Entity is the agent's entity while it lives.
	Entity ecs.Entity
	// Record is its final record, once reaped: check_agent and wait_for_agent read it for as
	// long as someone can address the agent.
	Record *components.FinalRecord
	// Waiters are the calls parked until it ends.
	Waiters []Waiter
	// Fan is the fan-out it works for (nil unless it is a fan-out worker), Item its item, and
	// Slot its place in the fan-out's running list.
	Fan        *FanOut
	Item, Slot int
}

// Request is one allowed sub-agent tool call, parked until the sub-agent system runs.
type Request struct {
	Entity ecs.Entity
	Agent  uint64
	Index  int
	Op     subagents.Op
}

// Waiter is one call parked until an agent ends: wait_for_agent, or spawn_agent with wait.
type Waiter struct {
	Entity ecs.Entity
	Agent  uint64
	Index  int
	CallID string
}

// FanOut is one running fan-out: a parent parked on one call while workers, one per item, run
// with at most MaxWorkers alive at once.
type FanOut struct {
	Parent     ecs.Entity
	Index      int
	CallID     string
	Key        string
	Items      []string
	Next       int
	Running    []uint64 // live workers, in start order
	MaxWorkers int
	FailAll    bool
	Stopped    bool
	Budget     int
	Results    []subagents.WorkerResult
	Done       int
	Failed     int
	Killed     int
	// Err is why the fan-out could not go on (a worker could not be spawned with none running).
	Err error
}

// New returns an empty state.
func New() *State {
	return &State{
		Tree:       subagents.NewTree(),
		Profiles:   map[*components.Profile]uint32{},
		Blueprints: map[string]string{},
	}
}

// DataOf returns the world's data about node n, attaching an empty one the first time.
func DataOf(n *subagents.Node) *Node {
	nd, _ := n.Data.(*Node)
	if nd == nil {
		nd = &Node{}
		n.Data = nd
	}
	return nd
}

// Node returns the tree's node of agent id and the world's data about it.
func (t *State) Node(id uint64) (*subagents.Node, *Node, bool) {
	n, ok := t.Tree.Get(id)
	if !ok {
		return nil, nil, false
	}
	return n, DataOf(n), true
}

// SortRequests puts the tick's requests in canonical order (agent id, then call index), so the
// sub-agent system settles them the same way whatever order dispatch handed them over in.
func (t *State) SortRequests() {
	slices.SortFunc(t.Requests, func(a, b Request) int {
		return cmp.Or(cmp.Compare(a.Agent, b.Agent), cmp.Compare(a.Index, b.Index))
	})
}

// maxIdleRequests bounds the capacity the request queue keeps between ticks: one tick that
// handed over 10^5 calls should not pin their list forever.
const maxIdleRequests = 4096

// ResetRequests empties the queue after a tick, releasing it when it grew past maxIdleRequests.
func (t *State) ResetRequests() {
	if cap(t.Requests) > maxIdleRequests {
		t.Requests = nil
		return
	}
	clear(t.Requests)
	t.Requests = t.Requests[:0]
}
