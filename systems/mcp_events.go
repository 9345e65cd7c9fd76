package systems

import (
	"github.com/warrenhq/warren/ecs"
	"github.com/warrenhq/warren/internal/leases"
	"github.com/warrenhq/warren/resources"
)

// MCPEvents writes the lifecycle events of the world's MCP sessions (start, stop, exit,
// restart) into the trace. It runs first in the tick: a session starts or breaks on the tool
// lane, during the previous tick's lane work, and stops in the previous tick's reap, so every
// event has happened by then, and writing them before any agent moves keeps their place in the
// trace independent of the lane's scheduling. Events are stamped with the tick that writes them.
type MCPEvents struct {
	leases *leases.Leases
}

var _ ecs.System = (*MCPEvents)(nil)

func init() {
	Register(Info{ID: IDPrefix + "mcp_events", Order: 10, New: func() ecs.System { return &MCPEvents{} }})
}

// Name implements ecs.System.
func (*MCPEvents) Name() string { return "mcp_events" }

// Initialize implements ecs.System.
func (s *MCPEvents) Initialize(w *ecs.World) (err error) {
	s.leases, err = resources.Get[leases.Leases](w)
	return err
}

// Update implements ecs.System. Writing events touches no agent, so it does not keep the world
// from a fixed point.
func (s *MCPEvents) Update(w *ecs.World) {
	s.leases.WriteEvents(w.Tick())
}

// Finalize implements ecs.System.
func (*MCPEvents) Finalize(*ecs.World) {}
