package sandbox

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/warrenhq/warren/internal/testenv"
)

// allModes are the modes every behaviour test runs in.
var allModes = []Mode{ModeNone, ModeNamespace, ModeBwrap}

// containedModes are the modes that contain something.
var containedModes = []Mode{ModeNamespace, ModeBwrap}

// requireMode returns this machine's capabilities when mode m can run here, and otherwise skips
// the test with the reason, or fails it under WARREN_REQUIRE_SANDBOX=1 (internal/testenv).
func requireMode(t testing.TB, m Mode) *Capabilities {
	t.Helper()
	c := Probe()
	testenv.MustHave(t, c.Unavailable(m))
	return c
}

// mountHostTmpfs mounts a small tmpfs named source at dir on the host, unmounted at the test's
// end, and reports whether it could: a root without CAP_SYS_ADMIN (a container's) cannot, and
// the test then checks the host's own mounts only, as it does on an unprivileged host. Under
// WARREN_REQUIRE_SANDBOX=1 it fails instead: CI's root host can.
func mountHostTmpfs(t testing.TB, source, dir string) bool {
	t.Helper()
	if err := unix.Mount(source, dir, "tmpfs", 0, "size=64k"); err != nil {
		if testenv.Required() {
			t.Fatalf("mounting a host tmpfs at %s (%s=1): %v", dir, testenv.RequireVar, err)
		}
		t.Logf("cannot mount a host tmpfs at %s (%v): checking the host's own mounts only", dir, err)
		return false
	}
	t.Cleanup(func() { _ = unix.Unmount(dir, unix.MNT_DETACH) })
	return true
}

// newTestManager returns a manager in mode m on a fresh workdir, closed at the test's end.
func newTestManager(t testing.TB, m Mode, edit func(*Boundary)) *Manager {
	t.Helper()
	mgr := NewManager(t.TempDir(), requireMode(t, m), testBoundary(m, edit))
	t.Cleanup(func() {
		if err := mgr.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return mgr
}

// markers makes sleep durations no other process on the machine uses, so a test can find the
// processes its command started from the host (namespace pids differ from host pids).
var markers atomic.Uint64

// marker returns a unique "sleep" argument of about 1000 seconds.
func marker() string {
	return fmt.Sprintf("1000.%d%06d", os.Getpid(), markers.Add(1))
}

// processesWith lists the host pids of the live (not zombie) processes whose command line
// contains arg.
func processesWith(t testing.TB, arg string) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatalf("reading /proc: %v", err)
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !bytes.Contains(cmdline, []byte(arg)) {
			continue
		}
		if stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); err == nil && isZombie(stat) {
			continue
		}
		pids = append(pids, pid)
	}
	return pids
}

// isZombie reads the state field of /proc/<pid>/stat.
func isZombie(stat []byte) bool {
	i := bytes.LastIndexByte(stat, ')')
	return i >= 0 && i+2 < len(stat) && stat[i+2] == 'Z'
}

// waitGone waits (up to a few seconds: a killed process's exit is asynchronous) until no process
// carries arg, and fails if one still does.
func waitGone(t testing.TB, arg string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		pids := processesWith(t, arg)
		if len(pids) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("processes with %q still running: %v", arg, pids)
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitPresent waits until a process carries arg (a background command has got going).
func waitPresent(t testing.TB, arg string) []int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if pids := processesWith(t, arg); len(pids) > 0 {
			return pids
		}
		if time.Now().After(deadline) {
			t.Fatalf("no process with %q appeared", arg)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// output is an outcome's output as a trimmed string.
func output(o Outcome) string { return strings.TrimSpace(string(o.Output)) }
