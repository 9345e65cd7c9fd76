package testenv

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// burnerName is the argv[0] a CPU burner is started under: the test binary itself, re-executed,
// which this package's init recognises before any test (or TestMain) runs.
const burnerName = "warren-testenv-burner"

func init() {
	if filepath.Base(os.Args[0]) == burnerName {
		burnerMain()
	}
}

// burnerMain is a burner's whole life: one goroutine spinning, until its parent is gone. The
// parent's pid comes as the first argument; a burner whose parent is not (or no longer) that
// process, because the test binary died without its cleanup (a crash, a timeout's kill, os.Exit),
// was reparented and exits, so a burner never outlives its test by more than a moment.
func burnerMain() {
	parent := 0
	if len(os.Args) > 1 {
		parent, _ = strconv.Atoi(os.Args[1])
	}
	// Burn waits for this byte: from here on the burner spins.
	if _, err := os.Stdout.Write([]byte{'\n'}); err != nil {
		os.Exit(1)
	}
	_ = os.Stdout.Close()
	for i := uint64(0); ; i++ {
		if i&(1<<20-1) == 0 && os.Getppid() != parent {
			os.Exit(0)
		}
	}
}

// Burners are CPU burners started by Burn: separate processes, each keeping one core busy.
type Burners struct {
	cmds    []*exec.Cmd
	once    sync.Once
	stopErr error
}

// Burn starts n CPU burners (runtime.NumCPU() of them when n <= 0) for the rest of the test and
// stops them in t.Cleanup. Each is this test binary re-executed in a burner mode that spins one
// goroutine, at the test's own priority, so the machine is as loaded as a busy CI host or a
// developer's build: a test that must not depend on wall time (issue 14) runs with every core
// contended. Burners need no shell or other program. A burner whose test binary dies without
// cleaning up notices within milliseconds and exits.
func Burn(t testing.TB, n int) *Burners {
	t.Helper()
	if n <= 0 {
		n = runtime.NumCPU()
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatalf("burners: finding the test binary: %v", err)
	}
	b := &Burners{}
	t.Cleanup(func() {
		if err := b.Stop(); err != nil {
			t.Errorf("burners: %v", err)
		}
	})
	ready := make([]*os.File, 0, n)
	defer func() {
		for _, r := range ready {
			_ = r.Close()
		}
	}()
	for range n {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatalf("burners: %v", err)
		}
		ready = append(ready, r)
		cmd := &exec.Cmd{Path: exe, Args: []string{burnerName, strconv.Itoa(os.Getpid())}, Stdout: w}
		err = cmd.Start()
		_ = w.Close()
		if err != nil {
			t.Fatalf("burners: starting %s as a burner: %v", exe, err)
		}
		b.cmds = append(b.cmds, cmd)
	}
	// A loaded machine may take a while to start a process; a minute is a broken one.
	deadline := time.Now().Add(time.Minute)
	for i, r := range ready {
		_ = r.SetReadDeadline(deadline)
		if _, err := io.ReadFull(r, make([]byte, 1)); err != nil {
			t.Fatalf("burners: burner %d did not start spinning: %v", b.cmds[i].Process.Pid, err)
		}
	}
	return b
}

// PIDs returns the burners' process ids.
func (b *Burners) PIDs() []int {
	pids := make([]int, len(b.cmds))
	for i, cmd := range b.cmds {
		pids[i] = cmd.Process.Pid
	}
	return pids
}

// CPUTime returns the CPU time (user and system) the burners have used between them so far, or
// in all once stopped.
func (b *Burners) CPUTime() (time.Duration, error) {
	var total time.Duration
	for _, cmd := range b.cmds {
		if cmd.ProcessState != nil {
			total += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
			continue
		}
		d, err := ProcessCPUTime(cmd.Process.Pid)
		if err != nil {
			return 0, err
		}
		total += d
	}
	return total, nil
}

// Stop kills the burners and waits for them to end. Burn's cleanup calls it; calling it before
// (to end the load early) or again is harmless.
func (b *Burners) Stop() error {
	b.once.Do(func() {
		var errs []error
		for _, cmd := range b.cmds {
			if err := cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
				errs = append(errs, fmt.Errorf("killing burner %d: %w", cmd.Process.Pid, err))
			}
		}
		for _, cmd := range b.cmds {
			// A burner ends only by the kill (or by finding its parent gone, which this process
			// is not), so an exit error is what is expected here.
			err := cmd.Wait()
			var exit *exec.ExitError
			if err != nil && !errors.As(err, &exit) {
				errs = append(errs, fmt.Errorf("waiting for burner %d: %w", cmd.Process.Pid, err))
			}
		}
		b.stopErr = errors.Join(errs...)
	})
	return b.stopErr
}

// clockTicks is USER_HZ, the unit of /proc/PID/stat's times: 100 on every architecture Go's
// Linux ports run on.
const clockTicks = 100

// ProcessCPUTime reads from /proc the CPU time (user and system) process pid has used.
func ProcessCPUTime(pid int) (time.Duration, error) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name, field 2, is in parentheses and may hold spaces; the fields after it
	// start with the state (field 3), and utime and stime are fields 14 and 15.
	end := strings.LastIndexByte(string(stat), ')')
	if end < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: no command name in %q", pid, stat)
	}
	fields := strings.Fields(string(stat[end+1:]))
	if len(fields) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields after the command name, want at least 13", pid, len(fields))
	}
	var ticks int64
	for _, f := range fields[11:13] {
		v, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc/%d/stat: %w", pid, err)
		}
		ticks += v
	}
	return time.Duration(ticks) * time.Second / clockTicks, nil
}
