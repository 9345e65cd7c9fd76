package warren_test

import (
	"os"
	"testing"

	"github.com/warrenhq/warren"
	// The demo MCP server, for the tests that start "@demo" servers: linking it registers its
	// re-exec entry, which warren.Init runs.
	_ "github.com/warrenhq/warren/internal/mcpdemo"
)

// TestMain runs the re-exec entry point the test binary was started as (the sandbox's helpers,
// which CheckSandbox's probe starts, and the demo MCP server), as a host's main does, and
// otherwise runs the tests.
func TestMain(m *testing.M) {
	warren.Init()
	os.Exit(m.Run())
}
