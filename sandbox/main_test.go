package sandbox

import (
	"crypto/rand"
	"flag"
	"os"
	"runtime"
	"strconv"
	"testing"
)

// escapeSecretVar is a variable of the host's environment that no boundary passes: TestMain sets
// it, for the whole run, since the escape suite runs in parallel, where t.Setenv is refused.
const escapeSecretVar = "WARREN_ESCAPE_SECRET"

// TestMain runs the sandbox's re-exec entry points when the test binary was started as one.
//
// The tests mostly wait on the commands they start (timeouts, held gains, sleeps, a host's
// death), so twice as many run at once as the default -test.parallel (GOMAXPROCS) lets, unless
// -parallel is given: the escape suite, which runs its own attempts at once, holds one slot for
// its whole run, and the other tests that only use their own managers and folders run beside it.
// Tests that read or change what the process shares (its environment, current directory,
// descriptors, the host's mount table) are not parallel, and so run alone before the others.
func TestMain(m *testing.M) {
	Init()
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		_ = flag.Set("test.parallel", strconv.Itoa(2*runtime.GOMAXPROCS(0)))
	}
	os.Setenv(escapeSecretVar, rand.Text())
	os.Exit(m.Run())
}
