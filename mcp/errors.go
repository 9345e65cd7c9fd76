package mcp

import "errors"

// Sentinel errors. Call failures reach an agent as error results (so the call's Note survives);
// these sentinels are what Discover, Add and the host-bug paths of Tool.Execute wrap, so callers
// can tell the failures apart with errors.Is.
var (
	// ErrStart means the server could not be started or did not complete the MCP handshake.
	ErrStart = errors.New("mcp server could not start")
	// ErrProtocol means the server sent something that is not MCP (a non-JSON line on stdout).
	ErrProtocol = errors.New("mcp server sent a malformed reply")
	// ErrTimeout means the server did not answer in time.
	ErrTimeout = errors.New("mcp server did not answer in time")
	// ErrServerExited means the server process ended while it was needed.
	ErrServerExited = errors.New("mcp server exited")
	// ErrUnknownServer means a tool names a server the Manager was never given.
	ErrUnknownServer = errors.New("unknown mcp server")
	// ErrDuplicateServer means a second server was added under a name already taken.
	ErrDuplicateServer = errors.New("duplicate mcp server")
	// ErrUnknownServerTool means an allow-list names a tool the server does not offer.
	ErrUnknownServerTool = errors.New("mcp server does not offer the tool")
	// ErrToolListRefused means a server's tool list went past a bound of its entry (max_tools,
	// max_reply_bytes, max_tool_schema_bytes), so the host will not use the server.
	ErrToolListRefused = errors.New("mcp server's tool list is refused")
	// ErrReplyTooLarge means a reply went past max_reply_bytes and was discarded: the call's
	// error result says so (a streamable HTTP body read past the bound fails with it).
	ErrReplyTooLarge = errors.New("mcp server's reply is over max_reply_bytes")
	// ErrClosed means the Manager was closed (the world ended).
	ErrClosed = errors.New("mcp manager is closed")
)
