package scenarios_test

import (
	"os"
	"testing"
	"time"

	"github.com/warrenhq/warren/sandbox"
)

// TestMain runs the sandbox's re-exec entry points when the binary was started as one (the
// shell tool's commands re-exec it), and otherwise runs the tests in UTC local time, as `host run` does: a script's local-time Date
// methods reach the golden traces, which must not depend on the machine's time zone.
func TestMain(m *testing.M) {
	sandbox.Init()
	time.Local = time.UTC
	os.Exit(m.Run())
}
