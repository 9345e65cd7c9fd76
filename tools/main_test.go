package tools_test

import (
	"os"
	"testing"

	"github.com/warrenhq/warren/sandbox"
)

// TestMain runs the sandbox's re-exec entry points when the test binary was started as one: the
// shell tool's commands in a contained mode re-exec it.
func TestMain(m *testing.M) {
	sandbox.Init()
	os.Exit(m.Run())
}
