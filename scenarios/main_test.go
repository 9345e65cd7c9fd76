package scenarios

import (
	"os"
	"testing"
	"time"
)

// TestMain runs the tests in UTC local time, as `host run` does: a script's local-time Date
// methods reach the golden traces, which must not depend on the machine's time zone.
func TestMain(m *testing.M) {
	time.Local = time.UTC
	os.Exit(m.Run())
}
