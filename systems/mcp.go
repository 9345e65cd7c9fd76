package systems

import (
	"github.com/warrenhq/warren/components"
	"github.com/warrenhq/warren/mcp"
)

// Servers is the world's MCP server sessions as the systems use them (*mcp.Manager implements
// it): an agent leases the servers its profile advertises from spawn to reap, and the sessions'
// lifecycle events (start, stop, exit, restart) reach the trace through the mcp_events system.
// Calls never go through it: a server's tools are ordinary tools that reach their session on
// the tool lane.
type Servers interface {
	// Lease records one more agent that may call server's tools; Release one fewer. A session
	// whose last lease goes stops once its calls in flight end.
	Lease(server string)
	Release(server string)
	// Drain returns the lifecycle events since the last Drain, ordered by server and then by
	// when they happened on that server.
	Drain() []mcp.Event
	// Close stops every session; its stop events are left for a last Drain.
	Close() error
}

var _ Servers = (*mcp.Manager)(nil)

// leaseServers gives agents new agents of p their leases on p's servers.
func (h *Host) leaseServers(p *components.Profile, agents int) {
	if h.MCP == nil {
		return
	}
	for _, server := range p.MCPServers {
		for range agents {
			h.MCP.Lease(server)
		}
	}
}

// releaseServers is the MCP teardown step: a terminal agent gives its leases back.
func (h *Host) releaseServers(id *components.Identity, _ *components.AgentData) {
	if h.MCP == nil {
		return
	}
	for _, server := range h.Profiles.Get(id.Profile).MCPServers {
		h.MCP.Release(server)
	}
}

// writeServerEvents writes the sessions' lifecycle events since the last call into the trace,
// stamped with tick.
func (h *Host) writeServerEvents(tick uint64) int {
	if h.MCP == nil {
		return 0
	}
	events := h.MCP.Drain()
	for _, e := range events {
		h.Trace.MCPServer(tick, e.Server, e.Kind, e.Session, e.Transport, e.Reason)
	}
	return len(events)
}

// CloseServers stops every MCP session at the end of a run and writes their stop events at tick,
// the run's last: the runner calls it after the scheduler stops and before it closes the trace.
func (h *Host) CloseServers(tick uint64) error {
	if h.MCP == nil {
		return nil
	}
	err := h.MCP.Close()
	h.writeServerEvents(tick)
	return err
}
