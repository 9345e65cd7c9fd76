package testenv

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// running reports whether process pid exists and has not ended: a zombie (ended, not yet reaped
// by whoever adopted it) counts as ended.
func running(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	end := strings.LastIndexByte(string(stat), ')')
	fields := strings.Fields(string(stat[end+1:]))
	return len(fields) > 0 && fields[0] != "Z" && fields[0] != "X"
}

// waitFor polls cond until it holds or d passes.
func waitFor(d time.Duration, cond func() bool) bool {
	for deadline := time.Now().Add(d); ; time.Sleep(20 * time.Millisecond) {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
	}
}

func TestBurn(t *testing.T) {
	var pids []int
	t.Run("burning", func(t *testing.T) {
		b := Burn(t, 2)
		pids = b.PIDs()
		if len(pids) != 2 {
			t.Fatalf("Burn(t, 2) started %d burners", len(pids))
		}
		// Each burner's own CPU time grows: they spin, they do not sleep. 100ms each is ten
		// clock ticks, which even a machine loaded by other work gives a spinning process in
		// well under the wait.
		for _, pid := range pids {
			var used time.Duration
			if !waitFor(20*time.Second, func() bool {
				var err error
				used, err = ProcessCPUTime(pid)
				if err != nil {
					t.Fatalf("burner %d: %v", pid, err)
				}
				return used >= 100*time.Millisecond
			}) {
				t.Errorf("burner %d used %v of CPU in 20s, want at least 100ms", pid, used)
			}
		}
		before, err := b.CPUTime()
		if err != nil {
			t.Fatal(err)
		}
		if err := b.Stop(); err != nil {
			t.Fatal(err)
		}
		after, err := b.CPUTime()
		if err != nil {
			t.Fatal(err)
		}
		if after < before || after < 200*time.Millisecond {
			t.Errorf("burners' CPU time: %v while running, %v once stopped; want at least 200ms and no less than before", before, after)
		}
		for _, pid := range pids {
			if running(pid) {
				t.Errorf("burner %d still runs after Stop", pid)
			}
		}
	})
	t.Run("cleanup stops them", func(t *testing.T) {
		t.Run("burning", func(t *testing.T) {
			pids = Burn(t, 1).PIDs()
			if !running(pids[0]) {
				t.Errorf("burner %d does not run", pids[0])
			}
		})
		if running(pids[0]) {
			t.Errorf("burner %d still runs after the test's cleanup", pids[0])
		}
	})
	t.Run("one per core by default", func(t *testing.T) {
		if got := len(Burn(t, 0).PIDs()); got != runtime.NumCPU() {
			t.Errorf("Burn(t, 0) started %d burners, want runtime.NumCPU() = %d", got, runtime.NumCPU())
		}
	})
}

// TestBurnersOutliveNoTest runs TestBurnHelper in a child test binary, which starts a burner and
// exits without its cleanup (as a crashed or killed test would), and checks the burner ends too.
func TestBurnersOutliveNoTest(t *testing.T) {
	if os.Getenv("WARREN_TESTENV_BURN_HELPER") == "1" {
		t.Skip("the child itself")
	}
	cmd := exec.Command(os.Args[0], "-test.run", "^TestBurnHelper$")
	cmd.Env = append(os.Environ(), "WARREN_TESTENV_BURN_HELPER=1")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	var pid int
	for line := range strings.Lines(string(out)) {
		if p, ok := strings.CutPrefix(strings.TrimSpace(line), "burner pid "); ok {
			pid, _ = strconv.Atoi(p)
		}
	}
	if pid == 0 {
		t.Fatalf("the child named no burner:\n%s", out)
	}
	if !waitFor(10*time.Second, func() bool { return !running(pid) }) {
		_ = syscall.Kill(pid, syscall.SIGKILL) // a failing test leaves no load behind
		t.Fatalf("burner %d still runs 10s after its test binary exited", pid)
	}
}

// TestBurnHelper is the child of TestBurnersOutliveNoTest: it starts a burner, makes sure it
// spins, names it and exits with the burner still running.
func TestBurnHelper(t *testing.T) {
	if os.Getenv("WARREN_TESTENV_BURN_HELPER") != "1" {
		t.Skip("run by TestBurnersOutliveNoTest")
	}
	pid := Burn(t, 1).PIDs()[0]
	if !waitFor(10*time.Second, func() bool { d, _ := ProcessCPUTime(pid); return d > 0 }) {
		t.Fatalf("burner %d did not start spinning", pid)
	}
	w := bufio.NewWriter(os.Stdout)
	fmt.Fprintf(w, "burner pid %d\n", pid)
	_ = w.Flush()
	// No cleanup: the burner is left to notice its parent is gone. (os.Exit would be refused
	// inside a test.)
	syscall.Exit(0)
}
