package sandbox

import (
	"os"
	"testing"
)

// TestMain runs the sandbox's re-exec entry points when the test binary was started as one.
func TestMain(m *testing.M) {
	Init()
	os.Exit(m.Run())
}
