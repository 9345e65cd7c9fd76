// Package mcp is Warren's client side of the Model Context Protocol: the tool servers declared in
// [[mcp_servers]] (host config, or a blueprint when the host opts in), reached over stdio or
// streamable HTTP through mcp-go. A Manager keeps one session per server per world, started on
// first use, leased by the agents that may call it and stopped when the last lease goes; calls
// from many agents run concurrently up to the server's limit, never behind a world-wide lock.
// Every server tool is a tools.Tool named `<server>__<tool>`, so it passes the same gate as any
// other tool. See docs/mcp.md.
package mcp
