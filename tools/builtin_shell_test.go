package tools

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/warrenhq/warren/internal/testenv"
	"github.com/warrenhq/warren/sandbox"
)

// shellContext is a call context whose commands run in a real sandbox manager of mode, in a fresh
// workdir, with limits adjusted by tune. A mode this machine cannot run skips t with the reason
// (fails it under WARREN_REQUIRE_SANDBOX=1).
func shellContext(t *testing.T, mode sandbox.Mode, tune func(*sandbox.Boundary)) (*ExecContext, string) {
	t.Helper()
	testenv.MustHave(t, sandbox.Probe().Unavailable(mode))
	b := sandbox.Ceiling(sandbox.Spec{Mode: &mode})
	b.Limits.Timeout = 20 * time.Second
	if tune != nil {
		tune(&b)
	}
	workdir := filepath.Join(t.TempDir(), "work")
	if err := os.MkdirAll(workdir, 0o755); err != nil {
		t.Fatal(err)
	}
	m := sandbox.NewManager(workdir, sandbox.Probe(), b)
	t.Cleanup(func() { _ = m.Close() })
	ec := NewExecContext(nil, "c1", 1, AgentRef{ID: 1, Name: "a"}, workdir)
	ec.Commands = m
	return ec, workdir
}

func TestShellResults(t *testing.T) {
	tests := []struct {
		name    string
		mode    sandbox.Mode
		tune    func(*sandbox.Boundary)
		args    string
		want    string // the whole content
		isError bool
	}{
		{"output and exit code", sandbox.ModeNone, nil, `{"command":"echo hello; echo oops >&2"}`, "hello\noops\n[exit code 0]", false},
		{"a failing command is an error result", sandbox.ModeNone, nil, `{"command":"echo no; exit 3"}`, "no\n[exit code 3]", true},
		{"output cut past the cap", sandbox.ModeNone, func(b *sandbox.Boundary) { b.Limits.OutputBytes = 5 }, `{"command":"printf 0123456789"}`,
			"01234\n[output cut: 5 more bytes not shown]\n[exit code 0]", false},
		{"invalid UTF-8 replaced", sandbox.ModeNone, nil, `{"command":"printf 'a\\377b'"}`, "a\uFFFDb\n[exit code 0]", false},
		{"the workdir is the current directory", sandbox.ModeNamespace, nil, `{"command":"echo x > f.txt; ls"}`, "f.txt\n[exit code 0]", false},
		{"the call's own timeout", sandbox.ModeNone, nil, `{"command":"sleep 30","timeout_seconds":1}`, "[killed: the command ran past its timeout]", true},
		{"the boundary's timeout", sandbox.ModeNamespace, func(b *sandbox.Boundary) { b.Limits.Timeout = time.Second }, `{"command":"sleep 30"}`,
			"[killed: the command ran past its timeout]", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel() // each has its own manager and workdir; two wait out a timeout
			ec, _ := shellContext(t, tt.mode, tt.tune)
			res, err := run(t, Shell{}, ec, tt.args)
			if err != nil {
				t.Fatal(err)
			}
			if res.Content != tt.want || res.IsError != tt.isError {
				t.Errorf("result %q (error %v), want %q (error %v)", res.Content, res.IsError, tt.want, tt.isError)
			}
			if len(res.Notes) == 0 || res.Notes[0].Fn != "sandbox" || !strings.HasPrefix(res.Notes[0].Text, tt.mode.String()+" ") {
				t.Errorf("notes %+v, want the %s boundary first", res.Notes, tt.mode)
			}
			timedOut := strings.Contains(tt.want, "past its timeout")
			if noted := slices.Contains(res.Notes, RealTimeNote("shell timeout")); noted != timedOut {
				t.Errorf("notes %+v: a real-time limit noted %v, want %v", res.Notes, noted, timedOut)
			}
		})
	}
}

func TestShellCancelled(t *testing.T) {
	t.Parallel()
	ec, _ := shellContext(t, sandbox.ModeNamespace, nil)
	ctx, cancel := context.WithCancel(context.Background())
	ec.Ctx = ctx
	time.AfterFunc(100*time.Millisecond, cancel)
	start := time.Now()
	res, err := run(t, Shell{}, ec, `{"command":"sleep 30"}`)
	if err != nil || res.Content != "[killed: the call was cancelled]" || !res.IsError {
		t.Errorf("result %+v, %v", res, err)
	}
	if elapsed := time.Since(start); elapsed > 10*time.Second {
		t.Errorf("the cancelled command took %v", elapsed)
	}
}

func TestShellBackground(t *testing.T) {
	t.Parallel()
	ec, workdir := shellContext(t, sandbox.ModeNamespace, nil)
	// The turn's context ends right away: a background command outlives it.
	ctx, cancel := context.WithCancel(context.Background())
	ec.Ctx = ctx
	res, err := run(t, Shell{}, ec, `{"command":"sleep 0.3; echo done > marker; echo finished; exit 4","background":true}`)
	cancel()
	if err != nil || res.IsError || res.Detached == nil || !strings.HasPrefix(res.Content, "Started in the background") {
		t.Fatalf("result %+v, %v", res, err)
	}
	report := res.Detached.Report()
	want := "[background command finished] sleep 0.3; echo done > marker; echo finished; exit 4\nfinished\n[exit code 4]"
	if report != want {
		t.Errorf("report %q, want %q", report, want)
	}
	if data, err := os.ReadFile(filepath.Join(workdir, "marker")); err != nil || string(data) != "done\n" {
		t.Errorf("marker = %q, %v: the background command did not run to its end", data, err)
	}
}

func TestShellRedirectsChargeTheWriteBudget(t *testing.T) {
	tests := []struct {
		name      string
		existing  string // content of out.txt before; "" for none
		command   string
		refused   bool
		remaining string // out.txt afterwards; "-" for absent
	}{
		{"within the budget", "", "printf 12345 > out.txt", false, "12345"},
		{"a new file over the budget is removed", "", "printf 0123456789abcdef > out.txt", true, "-"},
		{"an append over the budget is cut back", "keep", "printf 0123456789abcdef >> out.txt", true, "keep"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ec, workdir := shellContext(t, sandbox.ModeNamespace, nil)
			ec.Writes = NewWriteBudget(10, 0)
			path := filepath.Join(workdir, "out.txt")
			if tt.existing != "" {
				if err := os.WriteFile(path, []byte(tt.existing), 0o644); err != nil {
					t.Fatal(err)
				}
				// Files the host makes for an agent belong to the user its commands run as.
				if err := sandbox.Probe().ChownForCommands(path); err != nil {
					t.Fatal(err)
				}
			}
			res, err := run(t, Shell{}, ec, `{"command":"`+tt.command+`"}`)
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Contains(res.Content, "over the write budget"); got != tt.refused || res.IsError != tt.refused {
				t.Errorf("result %q (error %v), want refused=%v", res.Content, res.IsError, tt.refused)
			}
			data, err := os.ReadFile(path)
			switch {
			case tt.remaining == "-" && !errors.Is(err, os.ErrNotExist):
				t.Errorf("out.txt = %q, %v; want it removed", data, err)
			case tt.remaining != "-" && string(data) != tt.remaining:
				t.Errorf("out.txt = %q, %v; want %q", data, err, tt.remaining)
			}
			if !tt.refused && ec.Writes.Spent() != int64(len(tt.remaining)) {
				t.Errorf("spent %d bytes, want %d", ec.Writes.Spent(), len(tt.remaining))
			}
		})
	}
}

func TestShellWithoutASandbox(t *testing.T) {
	ec := NewExecContext(nil, "c1", 1, AgentRef{}, t.TempDir())
	if _, err := (Shell{}).Execute(ec, []byte(`{"command":"true"}`)); !errors.Is(err, ErrNoSandbox) {
		t.Errorf("err = %v, want ErrNoSandbox", err)
	}
}

func TestFileToolsHandWhatTheyCreateToTheCommandsUser(t *testing.T) {
	// The ids the probe found commands run as: the unprivileged 65533 on a root host whose user
	// namespace maps it, elsewhere the host's own (only root may give files away).
	caps := sandbox.Probe()
	owner := FileOwner{UID: caps.CommandUID, GID: caps.CommandGID}
	workdir := filepath.Join(t.TempDir(), "agent")
	ec := NewExecContext(nil, "c1", 1, AgentRef{ID: 1, Name: "a"}, workdir)
	ec.FileOwner = &owner
	if _, err := run(t, WriteFile{}, ec, `{"path":"deep/er/notes.txt","content":"hi"}`); err != nil {
		t.Fatal(err)
	}
	for _, rel := range []string{".", "deep", "deep/er", "deep/er/notes.txt"} {
		info, err := os.Lstat(filepath.Join(workdir, rel))
		if err != nil {
			t.Fatal(err)
		}
		st := info.Sys().(*syscall.Stat_t)
		if int(st.Uid) != owner.UID || int(st.Gid) != owner.GID {
			t.Errorf("%s is owned by %d:%d, want %d:%d", rel, st.Uid, st.Gid, owner.UID, owner.GID)
		}
	}
}
