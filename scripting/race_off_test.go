//go:build !race

package scripting

// raceDetector reports whether the tests run under the race detector, which slows goja (and so
// every allocation a script makes) about tenfold.
const raceDetector = false
