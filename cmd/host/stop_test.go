package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/warrenhq/warren/internal/testenv"
	"github.com/warrenhq/warren/sandbox"
	"github.com/warrenhq/warren/trace"
)

// TestRunInterruptedExits3: a run whose context ends (what a signal does to host run) prints its
// summary, saying it was interrupted, and exits 3, even with every expectation holding.
func TestRunInterruptedExits3(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	out := filepath.Join(t.TempDir(), "t.jsonl")
	var stdout, stderr bytes.Buffer
	code := run(&env{stdout: &stdout, stderr: &stderr, ctx: ctx}, []string{"run", example("bad_calls.toml"), "--trace", out})
	if code != exitIncomplete || !strings.HasSuffix(stdout.String(), "stopped      interrupted (context canceled) after 0 ticks: the run did not finish\n") {
		t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, exitIncomplete, stdout.String(), stderr.String())
	}
	tr := readTrace(t, out)
	if !tr.Complete || !strings.Contains(string(tr.Events[len(tr.Events)-1]), `"kind":"end","status":"interrupted","ticks":0,`) {
		t.Errorf("the trace does not end with the interrupted end event: %s", tr.Events[len(tr.Events)-1])
	}
}

// readTrace reads the trace at path as host trace diff does, incomplete or not.
func readTrace(t *testing.T, path string) *trace.Trace {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr, err := trace.Read(f)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// processesWith lists the pids of this machine's processes whose command line is exactly args.
func processesWith(t *testing.T, args ...string) []string {
	t.Helper()
	want := strings.Join(args, "\x00") + "\x00"
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var pids []string
	for _, e := range entries {
		if cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline")); err == nil && string(cmdline) == want {
			pids = append(pids, e.Name())
		}
	}
	return pids
}

// waitFor polls cond every 50ms until it holds or d passes, and reports whether it held.
func waitFor(d time.Duration, cond func() bool) bool {
	for deadline := time.Now().Add(d); ; time.Sleep(50 * time.Millisecond) {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
	}
}

// TestBinaryStopsOnSignals runs the real binary on a scenario that only a signal ends (its agent
// waits on a command in the foreground, with another in the background), sends it SIGINT, SIGTERM
// or SIGHUP once both commands run, and checks that each stops the run as Ctrl-C does: exit 3, the
// summary saying which signal, the trace ended with status interrupted, both commands killed (in
// the sandbox modes this machine has), and the temporary work root, like everything else the run
// made in TMPDIR, removed.
func TestBinaryStopsOnSignals(t *testing.T) {
	bin, _ := buildBinary(t)
	tmpl, err := os.ReadFile(runData(filepath.Join("interrupt", "interrupt.toml.tmpl")))
	if err != nil {
		t.Fatal(err)
	}
	blueprint, err := os.ReadFile(runData(filepath.Join("interrupt", "sleeper.toml")))
	if err != nil {
		t.Fatal(err)
	}
	caps := sandbox.Probe()
	cases := []struct {
		mode string
		sig  syscall.Signal
		text string
	}{
		{"none", syscall.SIGINT, "interrupt signal received"},
		{"none", syscall.SIGTERM, "terminated signal received"},
		{"none", syscall.SIGHUP, "hangup signal received"},
		{"namespace", syscall.SIGTERM, "terminated signal received"},
	}
	for i, tc := range cases {
		t.Run(tc.mode+"/"+tc.sig.String(), func(t *testing.T) {
			mode, err := sandbox.ParseMode(tc.mode)
			if err != nil {
				t.Fatal(err)
			}
			testenv.MustHave(t, caps.Unavailable(mode))
			dir := t.TempDir()
			tmp := filepath.Join(dir, "tmp")
			if err := os.Mkdir(tmp, 0o755); err != nil {
				t.Fatal(err)
			}
			mark := fmt.Sprintf("%d%d", os.Getpid(), i)
			scenario := strings.NewReplacer("MODE", tc.mode, "MARK", mark).Replace(string(tmpl))
			writeFile(t, dir, "interrupt.toml", scenario)
			writeFile(t, dir, "sleeper.toml", string(blueprint))
			out := filepath.Join(dir, "t.jsonl")

			cmd := exec.Command(bin, "run", "interrupt.toml", "--trace", out)
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			foreground := []string{"sleep", "600." + mark}
			background := []string{"sleep", "601." + mark}
			running := waitFor(30*time.Second, func() bool {
				return len(processesWith(t, foreground...)) == 1 && len(processesWith(t, background...)) == 1
			})
			if !running {
				_ = cmd.Process.Kill()
				<-exited
				t.Fatalf("the commands did not start within 30s\nstdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
			}
			if err := cmd.Process.Signal(tc.sig); err != nil {
				t.Fatal(err)
			}
			var werr error
			select {
			case werr = <-exited:
			case <-time.After(30 * time.Second):
				_ = cmd.Process.Kill()
				<-exited
				t.Fatalf("the host did not stop within 30s of %v\nstdout:\n%s\nstderr:\n%s", tc.sig, stdout.String(), stderr.String())
			}
			var exit *exec.ExitError
			if !errors.As(werr, &exit) || exit.ExitCode() != exitIncomplete {
				t.Errorf("exit %v, want code %d", werr, exitIncomplete)
			}
			stopped := regexp.MustCompile(`(?m)^stopped      interrupted \(` + tc.text + `\) after \d+ ticks?: the run did not finish\n\z`)
			if !stopped.MatchString(stdout.String()) || !strings.Contains(stdout.String(), "agents       1: active 1\n") ||
				!strings.Contains(stdout.String(), "\nexpectations not judged (0): the run did not finish\n") {
				t.Errorf("stdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
			}
			tr := readTrace(t, out)
			if !tr.Complete || !strings.Contains(string(tr.Events[len(tr.Events)-1]), `"kind":"end","status":"interrupted",`) {
				t.Errorf("the trace does not end with the interrupted end event (notes %q)", tr.Notes)
			}
			if !waitFor(5*time.Second, func() bool {
				return len(processesWith(t, foreground...))+len(processesWith(t, background...)) == 0
			}) {
				t.Errorf("commands outlived the host: foreground %v, background %v", processesWith(t, foreground...), processesWith(t, background...))
			}
			if left, _ := os.ReadDir(tmp); len(left) > 0 {
				var names []string
				for _, e := range left {
					names = append(names, e.Name())
				}
				t.Errorf("the run left %v in TMPDIR", names)
			}
		})
	}
}

// TestBinaryTraceWriteFails: a trace that cannot be written (/dev/full answers every write with
// ENOSPC) stops the run at the end of the tick in which the write failed, long before the run's
// own end; the summary so far is printed, saying why, and the host exits 3.
func TestBinaryTraceWriteFails(t *testing.T) {
	bin, repo := buildBinary(t)
	code, stdout, stderr := runIn(t, bin, repo, nil, "run", "scenarios/examples/quickstart.toml", "--agents", "300")
	if code != exitOK {
		t.Fatalf("the whole run: exit %d\n%s\n%s", code, stdout, stderr)
	}
	fullTicks := regexp.MustCompile(`(?m)^ticks        (\d+) \(fixed_point\)$`).FindStringSubmatch(stdout)
	if fullTicks == nil {
		t.Fatalf("no ticks line:\n%s", stdout)
	}

	code, stdout, stderr = runIn(t, bin, repo, nil, "run", "scenarios/examples/quickstart.toml", "--agents", "300", "--trace", "/dev/full")
	if code != exitIncomplete {
		t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, exitIncomplete, stdout, stderr)
	}
	// The first 64 KiB of this trace are written during tick 0: the run stops after it.
	for _, want := range []string{
		"ticks        1 (cancelled)\n",
		"trace        /dev/full: incomplete, the writing failed (no end event)\n",
		"expectations not judged (3): the run did not finish\n",
		"stopped      failed after 1 tick: the trace could not be written: write /dev/full: no space left on device\n",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout does not contain %q (the whole run has %s ticks):\n%s", want, fullTicks[1], stdout)
		}
	}
	if !strings.Contains(stderr, "host: run scenarios/examples/quickstart.toml failed: the trace could not be written: write /dev/full: no space left on device\n") {
		t.Errorf("stderr:\n%s", stderr)
	}
}

// TestBinaryTraceFillsADisk runs the binary in a bubblewrap mount namespace whose trace folder is
// a 64 KiB tmpfs: the disk fills part-way through the run, which stops with exit 3, and the trace
// left behind, cut where the disk filled, is read and compared up to its last whole line, with
// notes saying what it lacks.
func TestBinaryTraceFillsADisk(t *testing.T) {
	bwrap := testenv.MustHaveProgram(t, "bwrap", "bubblewrap")
	bin, repo := buildBinary(t)
	dir := t.TempDir()
	disk, kept := filepath.Join(dir, "disk"), filepath.Join(dir, "kept")
	for _, d := range []string{disk, kept} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// --size (bubblewrap 0.5 and later) bounds the tmpfs; an older bwrap, or one this machine does
	// not let mount, cannot run the test.
	if out, err := exec.Command(bwrap, "--dev-bind", "/", "/", "--size", "65536", "--tmpfs", disk, "true").CombinedOutput(); err != nil {
		testenv.MustHave(t, fmt.Sprintf("bwrap cannot mount a 64 KiB tmpfs here (it needs --size, bubblewrap 0.5 or later, and a mount namespace): %v: %s", err, bytes.TrimSpace(out)))
	}
	whole := filepath.Join(dir, "whole.jsonl")
	if code, stdout, stderr := runIn(t, bin, repo, nil, "run", "scenarios/examples/quickstart.toml", "--agents", "300", "--trace", whole); code != exitOK {
		t.Fatalf("the whole run: exit %d\n%s\n%s", code, stdout, stderr)
	}

	script := `"$1" run scenarios/examples/quickstart.toml --agents 300 --trace "$2/t.jsonl"; code=$?; cp "$2/t.jsonl" "$3/t.jsonl"; exit $code`
	code, stdout, stderr := runIn(t, bwrap, repo, nil, "--dev-bind", "/", "/", "--size", "65536", "--tmpfs", disk,
		"--chdir", repo, "/bin/sh", "-c", script, "sh", bin, disk, kept)
	if code != exitIncomplete || !strings.Contains(stdout, "stopped      failed after ") || !strings.Contains(stdout, "no space left on device") {
		t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, exitIncomplete, stdout, stderr)
	}
	cut := filepath.Join(kept, "t.jsonl")
	tr := readTrace(t, cut)
	if tr.Complete || len(tr.Notes) == 0 || tr.Notes[0] != trace.NoteIncomplete || len(tr.Events) == 0 {
		t.Errorf("the cut trace: complete %v, %d events, notes %q", tr.Complete, len(tr.Events), tr.Notes)
	}
	r := host(t, "trace", "diff", whole, cut)
	wantCode(t, r, exitExpect)
	for _, want := range []string{"note: got: trace incomplete: no end event\n", "got ends early after line "} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("host trace diff does not say %q:\n%s", want, r.stdout)
		}
	}
	if tr.Cut != nil && !strings.Contains(r.stdout, "was cut mid-line") {
		t.Errorf("the trace's last line was cut, and host trace diff does not say so:\n%s", r.stdout)
	}
}

// TestBinaryKilled: SIGKILL gives the host no chance to finish anything. The trace it leaves is
// cut, but every whole line of it parses and a reader says it is incomplete; the recording it
// leaves has no end line, and host replay refuses it as cut off rather than replaying half a run.
func TestBinaryKilled(t *testing.T) {
	bin, _ := buildBinary(t)
	dir := t.TempDir()
	tr, rec := filepath.Join(dir, "t.jsonl"), filepath.Join(dir, "r.jsonl")
	cmd := exec.Command(bin, "run", example("quickstart.toml"), "--trace", tr, "--record", rec)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Kill it once its tool calls are being recorded (its first 20,000 events are spawns and
	// stage entries), well before its end (46 MB of trace in all).
	written := waitFor(120*time.Second, func() bool {
		info, err := os.Stat(rec)
		return err == nil && info.Size() > 256<<10
	})
	_ = cmd.Process.Kill()
	err := cmd.Wait()
	if !written {
		t.Fatalf("the recording did not grow past 256 KiB: %v\n%s", err, stderr.String())
	}
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("the host was not killed: %v", err)
	}
	got := readTrace(t, tr) // fails on any whole line that does not parse
	if got.Complete || len(got.Events) < 1000 || !strings.Contains(strings.Join(got.Notes, "\n"), "no end event") {
		t.Fatalf("complete %v, %d events, notes %q", got.Complete, len(got.Events), got.Notes)
	}
	r := host(t, "replay", rec)
	wantCode(t, r, exitBadInput)
	if !strings.Contains(r.stderr, "the run that wrote it was cut off") {
		t.Fatalf("stderr:\n%s", r.stderr)
	}
}
