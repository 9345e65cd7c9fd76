//go:build race

package scenarios_test

// raceDetector reports whether the tests run under the race detector, which slows every run
// several times over.
const raceDetector = true
