package mcpdemo

import (
	"os"

	"github.com/moby/sys/reexec"
)

// ReexecName is the argv[0] under which a Warren binary runs this server instead of its own
// main: an [[mcp_servers]] entry with command "@demo" starts /proc/self/exe under this name, so
// the shipped scenarios need no second binary and no Go toolchain at run time. The binary's main
// (and the TestMain of every package whose tests start it) must call reexec.Init first, which
// sandbox.Init does.
const ReexecName = "warren-mcp-demo"

func init() {
	reexec.Register(ReexecName, func() {
		os.Exit(Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	})
}
