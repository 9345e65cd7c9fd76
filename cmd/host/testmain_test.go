package main

import (
	"os"
	"testing"
	"time"

	"github.com/warrenhq/warren/sandbox"
)

// TestMain runs the sandbox's re-exec entry points when the binary was started as one (the
// shell tool's commands re-exec it), and otherwise runs the tests in UTC local time, as `host run` does (a script's local-time Date
// methods reach the golden traces, which must not depend on the machine's time zone), and removes
// the binary the tests built.
func TestMain(m *testing.M) {
	sandbox.Init()
	time.Local = time.UTC
	code := m.Run()
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	os.Exit(code)
}
