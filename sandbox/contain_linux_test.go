package sandbox

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// runIn runs line in a fresh manager of mode m and returns its trimmed output.
func runIn(t *testing.T, m Mode, edit func(*Boundary), line string) (string, Outcome) {
	t.Helper()
	o, err := newTestManager(t, m, edit).Run(context.Background(), line)
	if err != nil {
		t.Fatalf("Run(%q): %v", line, err)
	}
	return output(o), o
}

func TestContainedFileSystem(t *testing.T) {
	t.Parallel()
	hostFile, err := os.CreateTemp("", "warren-visible-")
	if err != nil {
		t.Fatal(err)
	}
	hostFile.Close()
	t.Cleanup(func() { os.Remove(hostFile.Name()) })
	home, err := os.UserHomeDir()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range containedModes {
		t.Run(m.String(), func(t *testing.T) {
			t.Parallel()
			inner := filepath.Join(os.TempDir(), "warren-inner-"+marker())
			for _, tc := range []struct {
				name, line, want string
			}{
				{"the host's / is read-only", "touch /etc/warren-sandbox-probe 2>&1 || echo denied", "denied"},
				{"home is read-only", "touch " + filepath.Join(home, "warren-sandbox-probe") + " 2>&1 || echo denied", "denied"},
				{"the host's /tmp is invisible", "test -e " + hostFile.Name() + " && echo visible || echo invisible", "invisible"},
				{"/tmp is writable and private", "echo x > " + inner + " && cat " + inner, "x"},
				{"/dev/null and /dev/zero work", "echo gone > /dev/null && head -c 3 /dev/zero | od -An -tx1", "00 00 00"},
				{"/dev/shm is writable", "echo shm > /dev/shm/f && cat /dev/shm/f", "shm"},
				{"/dev/stdout and /proc/self/fd work", "echo a > /dev/stdout; echo b > /proc/self/fd/2; echo c", "a\nb\nc"},
				{"proc shows the command's own pid namespace", "ls /proc | grep -c '^[0-9]'", ""},
			} {
				out, o := runIn(t, m, nil, tc.line)
				if tc.want != "" && !strings.HasSuffix(out, tc.want) {
					t.Errorf("%s: output %q (exit %d), want it to end in %q", tc.name, out, o.ExitCode, tc.want)
				}
				if tc.want == "" {
					if n, err := strconv.Atoi(out); err != nil || n > 8 {
						t.Errorf("%s: %q processes visible, want a handful", tc.name, out)
					}
				}
			}
			if _, err := os.Stat("/etc/warren-sandbox-probe"); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("a sandboxed command wrote /etc: %v", err)
			}
			if _, err := os.Stat(inner); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the sandbox's /tmp leaked to the host: %v", err)
			}
		})
	}
}

func TestContainedWritableAndHiddenPaths(t *testing.T) {
	t.Parallel()
	for _, m := range containedModes {
		t.Run(m.String(), func(t *testing.T) {
			t.Parallel()
			caps := requireMode(t, m)
			writable, secrets := t.TempDir(), t.TempDir()
			secretFile := filepath.Join(t.TempDir(), "token")
			for path, content := range map[string]string{filepath.Join(secrets, "id_rsa"): "KEY", secretFile: "TOKEN"} {
				if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			// A writable path must be writable by the uid commands run as (the host operator's
			// part on a root host).
			if err := os.Chown(writable, caps.CommandUID, caps.CommandGID); err != nil {
				t.Fatal(err)
			}
			edit := func(b *Boundary) {
				b.Writable = []string{writable}
				b.Hidden = []string{secrets, secretFile, "/nonexistent-warren-hidden"}
			}
			out, o := runIn(t, m, edit, fmt.Sprintf(
				"echo w > %s/made && echo wrote; ls -A %s | wc -l; cat %s; echo end; touch %s/new 2>&1 || echo hidden-read-only",
				writable, secrets, secretFile, secrets))
			if o.ExitCode != 0 {
				t.Errorf("exit %d: %s", o.ExitCode, out)
			}
			lines := strings.Split(out, "\n")
			want := []string{"wrote", "0", "end"}
			if len(lines) < 4 || lines[0] != want[0] || strings.TrimSpace(lines[1]) != want[1] || lines[2] != want[2] || !strings.HasSuffix(out, "hidden-read-only") {
				t.Errorf("output:\n%s\nwant wrote, 0 entries, an empty token, end, then a read-only hidden dir", out)
			}
			if data, err := os.ReadFile(filepath.Join(writable, "made")); err != nil || string(data) != "w\n" {
				t.Errorf("the writable path on the host: %q, %v", data, err)
			}
		})
	}
}

func TestContainedIdentity(t *testing.T) {
	t.Parallel()
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range containedModes {
		t.Run(m.String(), func(t *testing.T) {
			t.Parallel()
			caps := requireMode(t, m)
			mgr := newTestManager(t, m, nil)
			o, err := mgr.Run(context.Background(), "id -u; id -g; hostname; grep -E '^Cap(Prm|Eff|Amb)' /proc/self/status; touch made; echo b > /dev/stdout")
			if err != nil {
				t.Fatal(err)
			}
			want := fmt.Sprintf("%d\n%d\n%s\nCapPrm:\t0000000000000000\nCapEff:\t0000000000000000\nCapAmb:\t0000000000000000\nb",
				caps.InsideUID, caps.InsideGID, sandboxHostname)
			if out := output(o); out != want {
				t.Errorf("identity:\n%s\nwant:\n%s", out, want)
			}
			if caps.InsideUID == 0 || sandboxHostname == host {
				t.Errorf("inside uid %d, host name %q: the sandbox must differ from root and the host", caps.InsideUID, host)
			}
			// A root host's supplementary groups (root's own) are not the command's.
			if groups, _ := runIn(t, m, nil, "grep '^Groups:' /proc/self/status"); caps.dropsPrivileges() && groups != "Groups:" {
				t.Errorf("supplementary groups %q, want none", groups)
			}
			// To the host's kernel the command is CommandUID: what it creates is that uid's.
			var st syscall.Stat_t
			if err := syscall.Lstat(filepath.Join(mgr.workdir, "made"), &st); err != nil || int(st.Uid) != caps.CommandUID || int(st.Gid) != caps.CommandGID {
				t.Errorf("the command's file belongs to %d:%d (%v), want %d:%d", st.Uid, st.Gid, err, caps.CommandUID, caps.CommandGID)
			}
		})
	}
}

func TestContainedNetwork(t *testing.T) {
	t.Parallel()
	listener, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { listener.Close() })
	go func() {
		for {
			c, err := listener.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	port := listener.Addr().(*net.TCPAddr).Port
	// bash's /dev/tcp connects without any network tool installed.
	connect := fmt.Sprintf("bash -c 'echo hi > /dev/tcp/127.0.0.1/%d' 2>/dev/null && echo connected || echo refused", port)
	for _, m := range containedModes {
		t.Run(m.String(), func(t *testing.T) {
			t.Parallel()
			for _, tc := range []struct {
				name    string
				network bool
				want    string
			}{
				{"off: the host's loopback is unreachable", false, "refused"},
				{"on: the host's network is shared", true, "connected"},
			} {
				out, _ := runIn(t, m, func(b *Boundary) { b.Network = tc.network }, connect)
				if out != tc.want {
					t.Errorf("%s: %q, want %q", tc.name, out, tc.want)
				}
			}
			// With the network off the command still has a loopback of its own.
			out, _ := runIn(t, m, nil, "bash -c 'exec 3<>/dev/tcp/127.0.0.1/1' 2>&1; ls /sys/class/net 2>/dev/null | grep -c . ; grep -c ' lo:' /proc/net/dev")
			if !strings.HasSuffix(out, "1") || !strings.Contains(out, "refused") {
				t.Errorf("own loopback: %q, want a refused connection on an up loopback", out)
			}
		})
	}
}

func TestContainedLimitsAndFilters(t *testing.T) {
	t.Parallel()
	for _, m := range containedModes {
		t.Run(m.String(), func(t *testing.T) {
			t.Parallel()
			caps := requireMode(t, m)
			limits := func(b *Boundary) {
				b.Limits = Limits{Timeout: 30 * time.Second, CPUSeconds: 7, AddressSpace: 1 << 30, OpenFiles: 64, Processes: 50, OutputBytes: 1 << 16}
			}
			out, _ := runIn(t, m, limits, "cat /proc/self/limits")
			for _, want := range []string{
				"Max cpu time              7                    7",
				"Max address space         1073741824           1073741824",
				"Max open files            64                   64",
				"Max processes             50                   50",
				"Max core file size        0                    0",
			} {
				if !strings.Contains(out, want) {
					t.Errorf("limits lack %q:\n%s", want, out)
				}
			}
			// The kernel exempts only root's uid from RLIMIT_NPROC, which a command never is
			// (CommandUID on a root host): the limit binds. The children outlive the loop however
			// slow the machine (the sandbox ends them with the command), and dash reports the
			// first refused fork at once where bash would retry it for half a minute.
			out, _ = runIn(t, m, limits, "sh -c 'for i in $(seq 60); do sleep 600 >/dev/null 2>&1 & done' 2>&1 | grep -c -i fork")
			if n, err := strconv.Atoi(out); err != nil || n == 0 {
				t.Errorf("60 background processes under a limit of 50 (command uid %d): %q fork failures", caps.CommandUID, out)
			}
			if !caps.Seccomp.Available {
				t.Fatalf("seccomp unavailable: %s", caps.Seccomp.Reason)
			}
			out, _ = runIn(t, m, nil, "unshare -U true 2>&1; echo rc=$?")
			if !strings.Contains(out, "Operation not permitted") || strings.HasSuffix(out, "rc=0") {
				t.Errorf("creating a user namespace inside: %q, want EPERM", out)
			}
			// Landlock scopes signals (ABI 6+): the namespace init is outside the command's
			// domain. bwrap mode has no Landlock, so its pid 1 is reachable.
			out, _ = runIn(t, m, nil, "kill -0 1 2>&1 && echo reachable || echo blocked")
			want := "reachable"
			if m == ModeNamespace && caps.LandlockABI >= 6 {
				want = "blocked"
			}
			if !strings.HasSuffix(out, want) {
				t.Errorf("signalling pid 1: %q, want %s", out, want)
			}
		})
	}
}

func TestKillDuringSetupLeavesNothing(t *testing.T) {
	t.Parallel()
	for _, m := range allModes {
		t.Run(m.String(), func(t *testing.T) {
			t.Parallel()
			for i := range 8 {
				mgr := NewManager(t.TempDir(), requireMode(t, m), testBoundary(m, nil))
				arg := marker()
				ctx, cancel := context.WithCancel(context.Background())
				p, err := mgr.Start(ctx, "sleep "+arg)
				if err != nil {
					t.Fatalf("Start: %v", err)
				}
				// Vary the moment of the kill across the helper's and the sandbox's setup.
				time.Sleep(time.Duration(i) * 3 * time.Millisecond)
				if i%2 == 0 {
					cancel()
				} else if err := mgr.Close(); err != nil {
					t.Fatalf("Close: %v", err)
				}
				if o := p.Wait(); o.Err == nil && !o.Cancelled {
					t.Errorf("kill %d: outcome %+v", i, o)
				}
				cancel()
				_ = mgr.Close()
				waitGone(t, arg)
			}
		})
	}
}
