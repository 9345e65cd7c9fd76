// Package testenv decides what a test does when this machine lacks something it needs to run
// at all: bubblewrap, user namespaces, Landlock, a program such as strace. It follows Go's own
// internal/testenv (MustHaveExec and the like), with one switch for CI.
//
// The rule: a test that needs a mechanism this machine lacks skips, with the reason (what is
// missing and how to get it), so that `go test ./...` passes on a machine with only Go. With
// WARREN_REQUIRE_SANDBOX=1 in the environment it fails instead, with the same reason: .ci/run
// sets it once it has installed bubblewrap and the programs the tests run, and there a missing
// mechanism is a broken setup, which a skip would hide (the test would check nothing and pass).
//
// What is missing is decided by whoever knows: the sandbox's own probe (sandbox.Probe, whose
// Capabilities.Unavailable names what a mode lacks here) for the sandbox's mechanisms, and
// exec.LookPath for programs (MustHaveProgram). This package does not import sandbox, so that
// the sandbox's own tests can use it too:
//
//	testenv.MustHave(t, sandbox.Probe().Unavailable(sandbox.ModeBwrap))
package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"testing"
)

// RequireVar is the environment variable that turns a skip for a missing mechanism into a
// failure when it is "1".
const RequireVar = "WARREN_REQUIRE_SANDBOX"

// Required reports whether RequireVar says this machine must have every mechanism the tests use.
func Required() bool { return os.Getenv(RequireVar) == "1" }

// MustHave applies the rule to what a test needs: reason is "" when the machine has it, and
// otherwise says what is missing and how to get it. t is skipped with the reason, or failed with
// it under WARREN_REQUIRE_SANDBOX=1; either way the test goes no further.
func MustHave(t testing.TB, reason string) {
	t.Helper()
	if reason == "" {
		return
	}
	if Required() {
		t.Fatalf("%s=1, and this machine lacks what the test needs: %s", RequireVar, reason)
		return
	}
	t.Skipf("skipped, this machine lacks what the test needs: %s (with %s=1 this fails instead)", reason, RequireVar)
}

// MustHaveProgram returns the path of the program name found in PATH, applying the rule when
// there is none; pkg is the Debian package that installs it.
func MustHaveProgram(t testing.TB, name, pkg string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		MustHave(t, fmt.Sprintf("%s not found in PATH: install it (apt-get install -y %s)", name, pkg))
		return ""
	}
	return path
}
