package scenarios_test

import "testing"

// skipUnderRace skips a test that runs every shipped example (or one at scale) under the race
// detector: the plain pass runs it, and under -race it costs minutes of a CI budget while adding
// nothing a data race needs (the concurrent tests of this package, people, live pools, MCP and
// the sandbox, still run under it).
func skipUnderRace(t *testing.T) {
	t.Helper()
	if raceDetector {
		t.Skip("runs every example or one at scale: the plain test pass runs it; under -race it only costs time")
	}
}
