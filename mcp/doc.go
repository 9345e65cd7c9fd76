// Package mcp is Warren's client side of the Model Context Protocol: the tool servers declared in
// [[mcp_servers]] (host config, or a blueprint when the host opts in), reached over stdio or
// streamable HTTP through mcp-go. A Manager keeps one session per server per world, started on
// first use, leased by the agents that may call it and stopped when the last lease goes; calls
// from many agents run concurrently up to the server's limit, never behind a world-wide lock.
// Every server tool is a tools.Tool named `<server>__<tool>`, so it passes the same gate as any
// other tool. See docs/mcp.md.
//
// Discover lists a server's tools at load time (start, handshake, list, stop). At run time a
// Manager starts a server's session lazily, on the first call, once however many calls race for
// it; a stdio child runs in its own process group with only PATH, HOME, LANG and TZ from the host
// plus its entry's env. A child that exits, or writes a line to stdout that is not JSON, ends
// every call in flight with an error result and is restarted by the next call after a doubling
// backoff. Calls that fail (timeout, exit, malformed reply, server error) are error results
// carrying a Note, never Go errors, so the trace shows them like any other tool result.
// Lifecycle changes are kept as Events, drained by the world in a deterministic order.
package mcp
