package systems

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/warrenhq/warren/ecs"
)

// Info registers one system of the tick, Caddy style: a namespaced id, its place in the tick and
// a constructor. Warren's own systems register in the init of their files; an embedder registers
// its own the same way, before it builds a world, and Pipeline places it by Order.
type Info struct {
	// ID is "tick.<name>", where name is what the system's Name returns (and what the trace and
	// the scheduler's panic errors call it).
	ID string
	// Order places the system in the tick, ascending. Warren's systems hold multiples of ten
	// (see Registered), so an embedder's system goes between two of them.
	Order int
	// New returns a fresh instance: every world gets its own, since a system keeps the views and
	// resources it resolved.
	New func() ecs.System
}

// IDPrefix is the namespace of the tick's systems.
const IDPrefix = "tick."

var registry struct {
	sync.Mutex
	infos []Info
}

// Register adds a system to every pipeline built after it. It panics when the id is not in the
// tick namespace, or when its id or order is taken: both are programming errors, found the first
// time the program starts, as with Caddy's RegisterModule.
func Register(info Info) {
	if !strings.HasPrefix(info.ID, IDPrefix) || len(info.ID) == len(IDPrefix) || info.New == nil {
		panic(fmt.Sprintf("systems.Register: id %q must be %q followed by the system's name, with a constructor", info.ID, IDPrefix))
	}
	registry.Lock()
	defer registry.Unlock()
	for _, other := range registry.infos {
		if other.ID == info.ID || other.Order == info.Order {
			panic(fmt.Sprintf("systems.Register: %s (order %d) collides with %s (order %d)", info.ID, info.Order, other.ID, other.Order))
		}
	}
	registry.infos = append(registry.infos, info)
	slices.SortFunc(registry.infos, func(a, b Info) int { return cmp.Compare(a.Order, b.Order) })
}

// Registered lists the registered systems in the order they run.
func Registered() []Info {
	registry.Lock()
	defer registry.Unlock()
	return slices.Clone(registry.infos)
}

// Pipeline returns fresh instances of the registered systems, in the order they run every tick.
// Warren's order: mcp_events first, so the MCP sessions' lifecycle events of the previous tick are
// written before any agent moves; collect systems after their dispatch systems, so inline work
// finishes within the tick that started it; interact settles the prompts due this tick before
// tool_collect files lane results; subagents settles the sub-agent calls handed over by both
// (spawning children, parking waits, killing subtrees); transition and reap come last but one so
// an agent that ends this tick is gone, with its subtree, before the next; background comes after
// reap, so a background command whose agent ended this tick is not waited for (reap killed it),
// and a report lands in the inbox for the agent's next turn.
func Pipeline() []ecs.System {
	infos := Registered()
	out := make([]ecs.System, len(infos))
	for i, info := range infos {
		out[i] = info.New()
	}
	return out
}
