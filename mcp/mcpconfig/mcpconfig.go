// Package mcpconfig is the configuration of an MCP tool server as the host config and blueprints
// declare it ([[mcp_servers]]): the validated entry (Server), the defaults of what an entry leaves
// out, and the rules of the names the host gives server tools. The loaders (hostconfig,
// blueprint) produce it and the client (package mcp) consumes it; it imports nothing of Warren,
// so a config package can name a server without importing the client. Parsing and validation
// live with the loaders, in hostconfig.CompileMCPServers.
package mcpconfig

import (
	"fmt"
	"time"
)

// Defaults for what an [[mcp_servers]] entry leaves out.
const (
	// DefaultCallTimeout bounds one tool call when the entry sets no call_timeout.
	DefaultCallTimeout = 30 * time.Second
	// DefaultMaxConcurrency is how many calls one server session runs at once when the entry sets
	// no max_concurrency; further calls wait their turn (their timeout keeps running).
	DefaultMaxConcurrency = 64
	// DefaultMaxResultBytes is the longest result text handed to an agent when the entry sets no
	// max_result_bytes; longer text is cut, with a note saying how much.
	DefaultMaxResultBytes = 64 << 10
	// DefaultMaxReplyBytes bounds what the client reads of one message from the server (a call's
	// reply, a page of its tool list) when the entry sets no max_reply_bytes, or sets a
	// max_result_bytes larger than it (then that is the bound). A longer reply is not read: the
	// call gets an error result, and a tool list is refused.
	DefaultMaxReplyBytes = 4 << 20
	// DefaultMaxTools is how many tools a server may list when the entry sets no max_tools; a
	// longer list is refused when the scenario loads.
	DefaultMaxTools = 1000
	// DefaultMaxToolSchemaBytes bounds each of a listed tool's description, input schema and
	// output schema (as JSON) when the entry sets no max_tool_schema_bytes; a tool over it makes
	// the list refused.
	DefaultMaxToolSchemaBytes = 64 << 10
)

// Server is one validated [[mcp_servers]] entry, from the host config or (when the host opts in)
// a blueprint. Exactly one of Command and URL is set: Command starts a child process that speaks
// MCP on its stdin and stdout; URL reaches a streamable HTTP endpoint.
type Server struct {
	// Name is the server's name, the prefix of its tools (`<name>__<tool>`): 1 to 32 characters,
	// lower-case letters, digits, '_' and '-', starting with a letter, with no "__".
	Name string
	// Command and Args start a stdio server. Env adds variables to the child's environment,
	// which otherwise holds only PATH, HOME, LANG and TZ of the host (secrets are never passed by
	// default). Dir is the child's working directory: the folder of the file that declared it.
	Command string
	Args    []string
	Env     map[string]string
	Dir     string
	// URL and Headers reach a streamable HTTP server.
	URL     string
	Headers map[string]string
	// CallTimeout bounds the server's answer to one call, from the moment the request goes out
	// (the wait for the session to start and for a free slot does not count); MaxConcurrency
	// bounds the calls in flight on the session; MaxResultBytes bounds the result text an agent
	// reads (longer text is cut).
	CallTimeout    time.Duration
	MaxConcurrency int
	MaxResultBytes int
	// MaxReplyBytes bounds what is read of one message from the server; MaxTools the tools it may
	// list; MaxToolSchemaBytes each listed tool's description, input schema and output schema.
	// They hold a hostile or broken server to what the host can afford: a reply over the bound is
	// an error result, a tool list over one is refused at load. Zero means the default.
	MaxReplyBytes      int
	MaxTools           int
	MaxToolSchemaBytes int
	// Tools, when not nil, is the allow-list of the server's tools the host advertises (the
	// server's own names, without the prefix); nil means all of them.
	Tools []string
	// ReadOnlyTools are the server's tools (its own names, sorted) that the config vouches only
	// read: the read-only floor lets those through. A server's own readOnlyHint annotation is
	// a hint from the server, which the MCP specification says a client must not trust from a
	// server it does not trust, so it alone declares nothing.
	ReadOnlyTools []string
	// File, Line and Key say where the entry was declared (the config or blueprint file, the
	// line of its table, and its key such as "mcp_servers[0]"), for messages and `host mcp list`.
	File string
	Line int
	Key  string
	// Blueprint is true for an entry declared in a blueprint rather than the host config.
	Blueprint bool
}

// Origin renders where the entry was declared, "file:line: key", for messages.
func (c *Server) Origin() string {
	return fmt.Sprintf("%s:%d: %s", c.File, c.Line, c.Key)
}

// Transport names how the server is reached: "stdio" or "http".
func (c *Server) Transport() string {
	if c.URL != "" {
		return "http"
	}
	return "stdio"
}

// ToolName is the name the host gives a server's tool: the server's name, two underscores and
// the tool's own name.
func ToolName(server, tool string) string { return server + Separator + tool }

// InheritedEnv are the only variables of the host's environment a stdio server's process
// inherits; everything else, secrets above all, reaches it only when its entry's env names it.
var InheritedEnv = []string{"HOME", "LANG", "PATH", "TZ"}

// DataEnv is the environment variable a stdio server's process finds its data folder in: a
// folder of its own under the run's work root, made before the server starts, where a server
// that keeps state can keep it so that it outlives its process (a restart, or a resumed run's
// reconnect: docs/state.md).
const DataEnv = "WARREN_MCP_DATA"

// DemoCommand, written as an entry's command, starts Warren's demo MCP server (a key-value
// store, echo, a slow tool and fault injectors; package internal/mcpdemo) by re-executing the
// running binary under the name DemoReexecName, so a shipped scenario needs no second program.
// The binary's main must call reexec.Init first (sandbox.Init does): the host's main and the
// TestMain of every package whose tests run scenarios do.
const DemoCommand = "@demo"

// DemoReexecName is the argv[0] under which a Warren binary runs the demo server instead of its
// own main: the client starts /proc/self/exe under this name for an entry whose command is
// DemoCommand, and package internal/mcpdemo registers its server under it (in its init), so the
// shipped scenarios need no second binary and no Go toolchain at run time. It lives here, not in
// the client or the server, so that neither imports the other: a binary that runs "@demo" must
// link internal/mcpdemo itself (cmd/host does, and so do the tests that start it), and call
// reexec.Init first.
const DemoReexecName = "warren-mcp-demo"

// Separator joins a server's name and its tool's name in the host's tool names.
const Separator = "__"
