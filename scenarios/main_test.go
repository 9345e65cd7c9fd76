package scenarios_test

import (
	"os"
	"testing"
	"time"

	// The demo MCP server registers itself (in its init) under the name "@demo" re-executes this
	// binary with; the client does not import it, so the tests that run "@demo" must.
	_ "github.com/warrenhq/warren/internal/mcpdemo"
	"github.com/warrenhq/warren/sandbox"
)

// TestMain runs the re-exec entry points when the binary was started as one (the shell tool's
// commands re-exec it, and "@demo" runs the demo MCP server that way), and otherwise runs the
// tests in UTC local time, as `host run` does: a script's local-time Date methods reach the
// golden traces, which must not depend on the machine's time zone.
func TestMain(m *testing.M) {
	sandbox.Init()
	time.Local = time.UTC
	os.Exit(m.Run())
}
