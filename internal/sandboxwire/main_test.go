package sandboxwire

import (
	"os"
	"testing"

	"github.com/warrenhq/warren/sandbox"
)

// TestMain runs the sandbox's re-exec entry points when the test binary was started as one: a
// contained command re-execs it.
func TestMain(m *testing.M) {
	sandbox.Init()
	os.Exit(m.Run())
}
