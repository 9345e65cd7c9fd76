//go:build race

package testenv

// Race reports whether the race detector is on, so a test sized for speed (10⁴ live turns) can
// scale itself down under it instead of taking minutes: its property still holds at the smaller
// size, and the plain run checks the full one.
const Race = true
