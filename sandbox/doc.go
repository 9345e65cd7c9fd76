// Package sandbox contains the commands agents run: a Manager per agent executes a command under
// the Boundary of the agent's current stage, resolved from the host's ceiling and tightened by
// the agent's blueprint and stage (Ceiling, Tighten).
package sandbox
