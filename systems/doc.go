// Package systems holds the systems of the tick, and only them: one system per file, each
// registered in its file's init (Register, namespaced "tick.<name>") and resolving the small
// typed world resources it needs (package resources) once in Initialize, so that Update only
// does the work. Pipeline builds the registered systems in their order; Registered lists them,
// and docs/architecture.md's table of systems is checked against that list by a test.
//
// Each system queries only its own phase marker, so a tick costs O(agents with work). Any of
// them may send an agent to Terminal when its model or a tool panics: that agent fails alone,
// the panic is in the trace, and the world goes on. The services the systems share (the gate and
// its hub, the agent tree, MCP leases, the sandbox wiring, the script host) live in packages of
// their own and are tested without a world.
package systems
