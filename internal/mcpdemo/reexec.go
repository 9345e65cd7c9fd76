package mcpdemo

import (
	"os"

	"github.com/moby/sys/reexec"

	"github.com/warrenhq/warren/mcp/mcpconfig"
)

// init registers this server under mcpconfig.DemoReexecName, the argv[0] under which the MCP
// client re-executes the running binary for an [[mcp_servers]] entry with command "@demo". So a
// binary runs "@demo" only if it links this package (cmd/host does) and its main (or the
// TestMain of every package whose tests start it) calls reexec.Init first, which sandbox.Init
// does.
func init() {
	reexec.Register(mcpconfig.DemoReexecName, func() {
		os.Exit(Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	})
}
