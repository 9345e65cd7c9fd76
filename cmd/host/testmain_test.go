package main

import (
	"os"
	"testing"
	"time"
)

// TestMain runs the tests in UTC local time, as `host run` does (a script's local-time Date
// methods reach the golden traces, which must not depend on the machine's time zone), and removes
// the binary the tests built.
func TestMain(m *testing.M) {
	time.Local = time.UTC
	code := m.Run()
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	os.Exit(code)
}
