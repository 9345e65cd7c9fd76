package trace

// KindMCPServer is the kind of an mcp_server event.
const KindMCPServer = "mcp_server"

// MCPServer records a change in the life of an MCP server session, which belongs to the world
// rather than to one agent (agent 0, name ""): event is "start" (session 1 on first use, or a
// later session after a stop), "stop" (no agent holds a lease any more, or the world ended),
// "exit" (the server ended on its own, or broke the protocol, while in use) or "restart" (the
// session after an exit, with reason saying why the previous one ended). Session numbers count
// 1, 2, … per server. The systems write these events at the first tick after they happened,
// ordered by server and then by when they happened on that server, so they are deterministic
// whenever the calls that caused them are.
func (w *Writer) MCPServer(tick uint64, server, event string, session uint64, transport, reason string) {
	e := w.begin(tick, AgentRef{}, KindMCPServer)
	if e == nil {
		return
	}
	e.Str("server", server).Str("event", event).Uint64("session", session).Str("transport", transport)
	w.appendText(e, "reason", reason)
	e.Msg("")
}
