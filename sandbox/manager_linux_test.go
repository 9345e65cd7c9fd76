package sandbox

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestRunExitStatus(t *testing.T) {
	t.Parallel()
	for _, m := range allModes {
		t.Run(m.String(), func(t *testing.T) {
			t.Parallel()
			mgr := newTestManager(t, m, nil)
			// A command killed by a signal inside bwrap shows as 128+n: bwrap's convention.
			termCode, termSignal := -1, "terminated"
			if m == ModeBwrap {
				termCode, termSignal = 128+15, ""
			}
			for _, tc := range []struct {
				name       string
				line       string
				wantCode   int
				wantSignal string
				wantOutput string
			}{
				{"success", "echo ok", 0, "", "ok"},
				{"failure", "echo no; exit 3", 3, "", "no"},
				{"missing program", "warren-no-such-program", 127, "", "warren-no-such-program"},
				{"syntax error", "if then", 2, "", "syntax error near unexpected token"},
				{"killed by a signal", "kill -TERM $$", termCode, termSignal, ""},
			} {
				o, err := mgr.Run(context.Background(), tc.line)
				if err != nil {
					t.Fatalf("%s: Run: %v", tc.name, err)
				}
				if o.ExitCode != tc.wantCode || o.Signal != tc.wantSignal {
					t.Errorf("%s: exit %d signal %q, want %d %q (output %q)", tc.name, o.ExitCode, o.Signal, tc.wantCode, tc.wantSignal, o.Output)
				}
				if !strings.Contains(output(o), tc.wantOutput) {
					t.Errorf("%s: output %q does not contain %q", tc.name, o.Output, tc.wantOutput)
				}
				if o.TimedOut || o.Cancelled || o.Boundary.Mode != m || o.Warning != "" {
					t.Errorf("%s: unexpected outcome %+v", tc.name, o)
				}
			}
		})
	}
}

func TestRunOutputCap(t *testing.T) {
	t.Parallel()
	for _, m := range allModes {
		t.Run(m.String(), func(t *testing.T) {
			t.Parallel()
			for _, tc := range []struct {
				name        string
				cap         uint64
				line        string
				wantOutput  string
				wantDropped uint64
			}{
				{"stdout and stderr combined", 1024, "echo out; echo err >&2", "out\nerr\n", 0},
				{"cut at the cap", 10, "printf 0123456789abcdef; printf xyz >&2", "0123456789", 9},
				{"a flood keeps draining", 1000, "head -c 1000000 /dev/zero", strings.Repeat("\x00", 1000), 999000},
				{"exactly the cap", 3, "printf abc", "abc", 0},
				{"no output", 8, "true", "", 0},
			} {
				mgr := newTestManager(t, m, func(b *Boundary) { b.Limits.OutputBytes = tc.cap })
				o, err := mgr.Run(context.Background(), tc.line)
				if err != nil {
					t.Fatalf("%s: Run: %v", tc.name, err)
				}
				if string(o.Output) != tc.wantOutput || o.Dropped != tc.wantDropped {
					t.Errorf("%s: output %q dropped %d, want %q dropped %d", tc.name, o.Output, o.Dropped, tc.wantOutput, tc.wantDropped)
				}
			}
		})
	}
}

func TestRunEnvironment(t *testing.T) {
	t.Setenv("WARREN_TEST_ALLOWED", "passed")
	t.Setenv("WARREN_TEST_SECRET", "s3cret")
	for _, m := range allModes {
		t.Run(m.String(), func(t *testing.T) {
			mgr := newTestManager(t, m, func(b *Boundary) {
				b.AllowEnv = []string{"PATH", "WARREN_TEST_ALLOWED", "WARREN_TEST_UNSET"}
			})
			o, err := mgr.Run(context.Background(), `echo "allowed=$WARREN_TEST_ALLOWED secret=${WARREN_TEST_SECRET-unset} unset=${WARREN_TEST_UNSET-unset}"; env`)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			out := output(o)
			if first, _, _ := strings.Cut(out, "\n"); first != "allowed=passed secret=unset unset=unset" {
				t.Errorf("first line %q", first)
			}
			if strings.Contains(out, "s3cret") {
				t.Errorf("the secret reached the command:\n%s", out)
			}
			if !strings.Contains(out, "PATH="+os.Getenv("PATH")) {
				t.Errorf("PATH was not passed:\n%s", out)
			}
		})
	}
}

func TestRunWorkdir(t *testing.T) {
	t.Parallel()
	for _, m := range allModes {
		t.Run(m.String(), func(t *testing.T) {
			t.Parallel()
			workdir := filepath.Join(t.TempDir(), "created", "on", "demand")
			mgr := NewManager(workdir, requireMode(t, m), testBoundary(m, nil))
			t.Cleanup(func() { _ = mgr.Close() })
			o, err := mgr.Run(context.Background(), "pwd; echo written > note.txt; mkdir sub && mv note.txt sub/")
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if output(o) != workdir || o.ExitCode != 0 {
				t.Errorf("cwd %q (exit %d), want %q", o.Output, o.ExitCode, workdir)
			}
			data, err := os.ReadFile(filepath.Join(workdir, "sub", "note.txt"))
			if err != nil || string(data) != "written\n" {
				t.Errorf("the command's file on the host: %q, %v", data, err)
			}
		})
	}
}

func TestRunTimeoutKillsTheTree(t *testing.T) {
	t.Parallel()
	for _, m := range allModes {
		t.Run(m.String(), func(t *testing.T) {
			t.Parallel()
			mgr := newTestManager(t, m, func(b *Boundary) { b.Limits.Timeout = 500 * time.Millisecond })
			plain, doubleForked, setsid := marker(), marker(), marker()
			start := time.Now()
			o, err := mgr.Run(context.Background(),
				"sleep "+plain+" & (sleep "+doubleForked+" &) ; (setsid sleep "+setsid+" &) ; wait")
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if elapsed := time.Since(start); elapsed > 5*time.Second {
				t.Errorf("Run took %v after a 500ms timeout", elapsed)
			}
			if !o.TimedOut || o.Cancelled || o.ExitCode != -1 || o.Signal != "killed" {
				t.Errorf("outcome %+v, want timed out and killed", o)
			}
			// In none mode too: the reaper is the subreaper of everything the command starts.
			waitGone(t, plain)
			waitGone(t, doubleForked)
			waitGone(t, setsid)
		})
	}
}

func TestRunEndKillsLeftovers(t *testing.T) {
	t.Parallel()
	for _, m := range allModes {
		t.Run(m.String(), func(t *testing.T) {
			t.Parallel()
			mgr := newTestManager(t, m, nil)
			background := marker()
			o, err := mgr.Run(context.Background(), "sleep "+background+" & echo started")
			if err != nil || output(o) != "started" || o.ExitCode != 0 {
				t.Fatalf("Run: %+v, %v", o, err)
			}
			waitGone(t, background)
		})
	}
}

func TestRunCancel(t *testing.T) {
	t.Parallel()
	for _, m := range allModes {
		t.Run(m.String(), func(t *testing.T) {
			t.Parallel()
			mgr := newTestManager(t, m, nil)
			ctx, cancel := context.WithCancel(context.Background())
			sleeper := marker()
			time.AfterFunc(300*time.Millisecond, cancel)
			start := time.Now()
			o, err := mgr.Run(ctx, "sleep "+sleeper)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if elapsed := time.Since(start); elapsed > 5*time.Second {
				t.Errorf("Run took %v after cancellation", elapsed)
			}
			if !o.Cancelled || o.TimedOut || o.ExitCode != -1 || o.Signal != "killed" {
				t.Errorf("outcome %+v, want cancelled and killed", o)
			}
			waitGone(t, sleeper)
		})
	}
}

func TestCloseKillsBackgroundCommands(t *testing.T) {
	t.Parallel()
	for _, m := range allModes {
		t.Run(m.String(), func(t *testing.T) {
			t.Parallel()
			mgr := NewManager(t.TempDir(), requireMode(t, m), testBoundary(m, nil))
			first, second := marker(), marker()
			var procs []*Process
			for _, arg := range []string{first, second} {
				p, err := mgr.Start(context.Background(), "sleep "+arg)
				if err != nil {
					t.Fatalf("Start: %v", err)
				}
				procs = append(procs, p)
				waitPresent(t, arg)
			}
			private := mgr.private
			if err := mgr.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}
			for i, p := range procs {
				if o := p.Wait(); !o.Cancelled || o.Signal != "killed" {
					t.Errorf("command %d after Close: %+v", i, o)
				}
			}
			waitGone(t, first)
			waitGone(t, second)
			// Namespace mode assembles its root there, bwrap mode stages there on a root host.
			if wantPrivate := m == ModeNamespace || m == ModeBwrap && requireMode(t, m).dropsPrivileges(); wantPrivate != (private != "") {
				t.Errorf("private directory %q, want one: %v", private, wantPrivate)
			}
			if _, err := os.Stat(private); private != "" && !errors.Is(err, os.ErrNotExist) {
				t.Errorf("private directory %s left behind: %v", private, err)
			}
			if err := mgr.Close(); err != nil {
				t.Errorf("second Close: %v", err)
			}
			if _, err := mgr.Run(context.Background(), "true"); !errors.Is(err, ErrClosed) {
				t.Errorf("Run after Close: %v, want ErrClosed", err)
			}
			if _, err := mgr.Start(context.Background(), "true"); !errors.Is(err, ErrClosed) {
				t.Errorf("Start after Close: %v, want ErrClosed", err)
			}
		})
	}
}

func TestPointChangesTheNextCommandOnly(t *testing.T) {
	t.Setenv("WARREN_TEST_STAGE", "first")
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	requireMode(t, ModeNamespace)
	first := testBoundary(ModeNone, func(b *Boundary) { b.AllowEnv = []string{"PATH", "WARREN_TEST_STAGE"} })
	mgr := NewManager(t.TempDir(), Probe(), first)
	t.Cleanup(func() { _ = mgr.Close() })
	running, err := mgr.Start(context.Background(), "sleep 0.3; echo ${WARREN_TEST_STAGE-unset} $(hostname)")
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	second := testBoundary(ModeNamespace, func(b *Boundary) { b.AllowEnv = []string{"PATH"} })
	mgr.Point(second)
	if got := mgr.Boundary(); got.Mode != ModeNamespace {
		t.Errorf("Boundary() after Point: %v", got)
	}
	o, err := mgr.Run(context.Background(), "echo ${WARREN_TEST_STAGE-unset} $(hostname)")
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if got := output(o); got != "unset "+sandboxHostname || o.Boundary.Mode != ModeNamespace {
		t.Errorf("command after Point: %q under %v", got, o.Boundary)
	}
	if o := running.Wait(); output(o) != "first "+host || o.Boundary.Mode != ModeNone {
		t.Errorf("command started before Point: %q under %v", o.Output, o.Boundary)
	}
}

func TestStartUnderFallback(t *testing.T) {
	none := &Capabilities{
		Shell:      Support{Available: true},
		Namespaces: Support{Reason: "no user namespaces"}, Bwrap: Support{Reason: "no bwrap"},
		Landlock: Support{Reason: "no landlock"}, Seccomp: Support{Reason: "no seccomp"},
	}
	t.Run("error", func(t *testing.T) {
		mgr := NewManager(t.TempDir(), none, testBoundary(ModeNamespace, nil))
		t.Cleanup(func() { _ = mgr.Close() })
		if _, err := mgr.Run(context.Background(), "true"); !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "no user namespaces") {
			t.Errorf("Run: %v, want ErrUnavailable naming the reason", err)
		}
		if _, err := mgr.Start(context.Background(), "true"); !errors.Is(err, ErrUnavailable) {
			t.Errorf("Start: %v, want ErrUnavailable", err)
		}
	})
	t.Run("warn", func(t *testing.T) {
		mgr := NewManager(t.TempDir(), none, testBoundary(ModeNamespace, func(b *Boundary) { b.OnUnavailable = FallbackWarn }))
		t.Cleanup(func() { _ = mgr.Close() })
		o, err := mgr.Run(context.Background(), "echo ran")
		if err != nil || output(o) != "ran" {
			t.Fatalf("Run: %+v, %v", o, err)
		}
		if o.Boundary.Mode != ModeNone || !strings.Contains(o.Warning, "NO sandbox") {
			t.Errorf("degraded outcome: mode %v warning %q", o.Boundary.Mode, o.Warning)
		}
	})
}

// TestStartRefusesHiddenInWritable: a contained command whose boundary hides a path inside its
// workdir or a writable path never starts (it could move the hidden path's parent away from the
// next command's view); none mode, which hides nothing, runs it.
func TestStartRefusesHiddenInWritable(t *testing.T) {
	writable := t.TempDir()
	for _, m := range allModes {
		t.Run(m.String(), func(t *testing.T) {
			workdir := t.TempDir()
			for _, tc := range []struct {
				name, hidden, writable, named string
			}{
				{"inside the workdir", filepath.Join(workdir, "conf", "secret"), "", "the workdir " + workdir},
				{"inside a writable path", filepath.Join(writable, "conf"), writable, "writable path " + writable},
			} {
				mgr := NewManager(workdir, requireMode(t, m), testBoundary(m, func(b *Boundary) {
					b.Hidden = append(b.Hidden, tc.hidden)
					if tc.writable != "" {
						b.Writable = []string{tc.writable}
					}
				}))
				_, err := mgr.Run(context.Background(), "true")
				_ = mgr.Close()
				switch {
				case m == ModeNone && err != nil:
					t.Errorf("%s: none mode: %v", tc.name, err)
				case m != ModeNone && (!errors.Is(err, ErrHiddenInWritable) || !strings.Contains(err.Error(), tc.hidden) || !strings.Contains(err.Error(), tc.named)):
					t.Errorf("%s: %v, want ErrHiddenInWritable naming %s and %s", tc.name, err, tc.hidden, tc.named)
				}
			}
		})
	}
}

func TestSetupFailureIsAnError(t *testing.T) {
	for _, m := range containedModes {
		t.Run(m.String(), func(t *testing.T) {
			t.Parallel()
			caps := requireMode(t, m)
			// A workdir that does not exist (the manager would have created it) cannot be bound.
			spec := launchSpec{line: "true", workdir: "/nonexistent-warren-workdir", boundary: testBoundary(m, nil), env: []string{}, caps: caps,
				root: t.TempDir()}
			l, err := newLaunch(spec)
			if err != nil {
				t.Fatalf("newLaunch: %v", err)
			}
			p := &Process{boundary: spec.boundary, stop: make(chan struct{}), done: make(chan struct{})}
			if err := p.start(context.Background(), l); err != nil {
				t.Fatalf("start: %v", err)
			}
			o := p.Wait()
			if !errors.Is(o.Err, ErrSetup) || !strings.Contains(o.Err.Error(), "nonexistent-warren-workdir") {
				t.Errorf("outcome error %v, want ErrSetup naming the workdir", o.Err)
			}
		})
	}
}

// BenchmarkCommandView measures the host's per-command checks and view of a contained command
// under the default ceiling plus a writable path (hiddenInWritable, viewFor): what Start adds to
// the helper's start for every command.
func BenchmarkCommandView(b *testing.B) {
	workdir, writable := resolved(b.TempDir()), resolved(b.TempDir())
	spec := launchSpec{workdir: workdir, caps: Probe(), boundary: testBoundary(ModeNamespace, func(bd *Boundary) { bd.Writable = []string{writable} })}
	for b.Loop() {
		if err := hiddenInWritable(workdir, spec.boundary); err != nil {
			b.Fatal(err)
		}
		if _, err := viewFor(spec); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStart measures one `true` command per op, start to collected outcome, in each mode.
func BenchmarkStart(b *testing.B) {
	for _, m := range allModes {
		b.Run(m.String(), func(b *testing.B) {
			mgr := newTestManager(b, m, nil)
			ctx := context.Background()
			for b.Loop() {
				if o, err := mgr.Run(ctx, "true"); err != nil || o.ExitCode != 0 {
					b.Fatalf("Run: %+v, %v", o, err)
				}
			}
		})
	}
}

func TestNoDescriptorLeaks(t *testing.T) {
	openFDs := func() int {
		entries, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			t.Fatal(err)
		}
		return len(entries)
	}
	for _, m := range allModes {
		t.Run(m.String(), func(t *testing.T) {
			mgr := NewManager(t.TempDir(), requireMode(t, m), testBoundary(m, func(b *Boundary) { b.Limits.Timeout = 200 * time.Millisecond }))
			if _, err := mgr.Run(context.Background(), "true"); err != nil { // warm up the poller
				t.Fatal(err)
			}
			before := openFDs()
			for _, line := range []string{"echo ok", "exit 3", "sleep 100", "sleep 100 & echo bg"} {
				if _, err := mgr.Run(context.Background(), line); err != nil {
					t.Fatalf("Run(%q): %v", line, err)
				}
			}
			if _, err := mgr.Start(context.Background(), "sleep 100"); err != nil {
				t.Fatal(err)
			}
			if err := mgr.Close(); err != nil {
				t.Fatal(err)
			}
			if after := openFDs(); after != before {
				t.Errorf("%d descriptors open before, %d after", before, after)
			}
		})
	}
}
