package sandbox

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/moby/sys/reexec"
)

// dyingHostName is the re-exec entry point of a host that starts one command and waits to be
// killed: the test kills it as an operator or the OOM killer would, and looks for what it left.
const dyingHostName = "warren-test-dying-host"

func init() { reexec.Register(dyingHostName, runDyingHost) }

// dyingHostStarted is what the dying host prints once its command has started.
const dyingHostStarted = "started"

// runDyingHost is the dying host: argv is the boundary (JSON), the workdir and the line. It
// starts the line under a manager, says so on stdout, and blocks until it is killed.
func runDyingHost() {
	var b Boundary
	if len(os.Args) != 4 || json.Unmarshal([]byte(os.Args[1]), &b) != nil {
		fmt.Fprintln(os.Stderr, "usage: "+dyingHostName+" boundary-json workdir line")
		os.Exit(2)
	}
	mgr := NewManager(os.Args[2], Probe(), b)
	if _, err := mgr.Start(context.Background(), os.Args[3]); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(dyingHostStarted)
	select {}
}

// hostKilledGrace bounds how long the command's processes may outlive their host: the kernel
// kills a namespace at once, none mode's reaper needs a scan of /proc, and this machine is busy.
const hostKilledGrace = 15 * time.Second

// killHostWhileRunning runs line from a dying host under b in workdir, waits until a process
// carrying each of markers runs, kills the host with sig and waits for it to be gone. It returns
// the host's stderr for messages.
func killHostWhileRunning(t testing.TB, b Boundary, workdir, line string, sig syscall.Signal, markers ...string) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	boundary, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	host := &exec.Cmd{Path: self, Args: []string{dyingHostName, string(boundary), workdir, line}, Stderr: &stderr}
	stdout, err := host.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := host.Start(); err != nil {
		t.Fatalf("starting the host: %v", err)
	}
	exited := make(chan struct{})
	go func() {
		_ = host.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		_ = host.Process.Kill()
		<-exited
	})
	if first, _ := bufio.NewReader(stdout).ReadString('\n'); strings.TrimSpace(first) != dyingHostStarted {
		<-exited
		t.Fatalf("the host did not start the command: %q, %s", first, stderr.String())
	}
	for _, m := range markers {
		waitPresent(t, m)
		// Whatever carries the marker at the end, should the test fail to see it gone.
		t.Cleanup(func() {
			for _, pid := range processesWith(t, m) {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		})
	}
	if err := host.Process.Signal(sig); err != nil {
		t.Fatalf("signalling the host: %v", err)
	}
	select {
	case <-exited:
	case <-time.After(hostKilledGrace):
		t.Fatalf("the host outlived %v by %v", sig, hostKilledGrace)
	}
	if ws, ok := host.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != sig {
		t.Fatalf("the host ended %v, want killed by %v", host.ProcessState, sig)
	}
	return stderr.String()
}

// survivors waits up to hostKilledGrace for every process carrying one of markers to be gone and
// returns those still alive.
func survivors(t testing.TB, markers ...string) []string {
	t.Helper()
	deadline := time.Now().Add(hostKilledGrace)
	for {
		var left []string
		for _, m := range markers {
			for _, pid := range processesWith(t, m) {
				left = append(left, fmt.Sprintf("%d (%s)", pid, m))
			}
		}
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestCommandsDieWithTheHost: a host killed by SIGKILL or SIGTERM while its command runs takes the
// command's whole tree with it, in every mode: the command's own process, a background child, a
// double-forked one and one in a session of its own.
func TestCommandsDieWithTheHost(t *testing.T) {
	t.Parallel()
	for _, m := range allModes {
		for _, sig := range []syscall.Signal{syscall.SIGKILL, syscall.SIGTERM} {
			t.Run(m.String()+"/"+sig.String(), func(t *testing.T) {
				t.Parallel()
				requireMode(t, m)
				plain, background, doubleForked, setsid := marker(), marker(), marker(), marker()
				line := fmt.Sprintf("sleep %s & (sleep %s &); setsid sleep %s & sleep %s", background, doubleForked, setsid, plain)
				stderr := killHostWhileRunning(t, testBoundary(m, nil), t.TempDir(), line, sig, plain, background, doubleForked, setsid)
				if left := survivors(t, plain, background, doubleForked, setsid); len(left) > 0 {
					t.Errorf("processes outlived the host (%v) by more than %v: %v (host stderr: %s)", sig, hostKilledGrace, left, stderr)
				}
			})
		}
	}
}

// runKillingHost is an escape attempt's run from a dying host killed with sig once the run's
// marker runs (escapeCase.killHost); the attempt's check looks for survivors.
func (r *escapeRun) runKillingHost(b Boundary, line string, sig syscall.Signal) Outcome {
	start := time.Now()
	killHostWhileRunning(r.t, b, r.workdir, line, sig, r.marker)
	r.elapsed = time.Since(start)
	return Outcome{ExitCode: -1, Signal: sig.String(), Boundary: b}
}

// escapeOutlivedHost is the check of the attempts that kill their host.
func escapeOutlivedHost(r *escapeRun, _ Outcome) string {
	if left := survivors(r.t, r.marker); len(left) > 0 {
		return fmt.Sprintf("processes %v outlived their host by more than %v", left, hostKilledGrace)
	}
	return ""
}
