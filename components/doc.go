// Package components holds the data attached to agent entities: phase markers, identity,
// status, the stage cursor, counters and the random source, plus the side store (Agents) for
// everything per agent that holds references (name, conversation, visit counts, the tool calls
// of the current turn) and the compact final records reaping leaves behind. Components carry
// data and tiny methods only; systems/ does the work.
//
// # Components hold no pointers
//
// arche moves a component between archetypes with a raw byte copy, which bypasses the Go
// garbage collector's write barriers. A pointer (a string, slice, map, interface or *T) moved
// that way while the collector is marking can leave the object it refers to unmarked and freed
// while still in use, which corrupts the heap. So every component type here is pointer-free
// (TestComponentsArePointerFree enforces it), and what an agent owns that holds references lives
// in Agents, an ordinary Go store indexed by the agent's Slot, whose writes the collector sees.
// Shared things (blueprint, model, tool registry) are reached through the agent's Profile index.
//
// Memory is a design constraint too: a world holds up to 10^6 agents, so everything several
// agents share lives once in a Profile.
package components
