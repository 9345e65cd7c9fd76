package sandbox

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

// testBoundary is the default ceiling in mode m with a generous timeout, edited by edit.
func testBoundary(m Mode, edit func(*Boundary)) Boundary {
	b := Ceiling(Spec{Mode: &m})
	b.Limits.Timeout = 30 * time.Second
	if edit != nil {
		edit(&b)
	}
	return b
}

// syntheticCaps is a machine with every mechanism, edited by edit.
func syntheticCaps(edit func(*Capabilities)) *Capabilities {
	c := &Capabilities{
		Shell: Support{Available: true}, ShellVersion: "GNU bash, version 5.2.15(1)-release (x86_64-pc-linux-gnu)",
		Namespaces: Support{Available: true}, Bwrap: Support{Available: true},
		BwrapPath: "/usr/bin/bwrap", BwrapVersion: "bubblewrap 0.8.0",
		LandlockABI: 7, Landlock: Support{Available: true}, Seccomp: Support{Available: true},
		HardLimits: Limits{OpenFiles: 4096}, UID: 1001, GID: 1001, InsideUID: 1001, InsideGID: 1001,
		CommandUID: 1001, CommandGID: 1001,
	}
	if edit != nil {
		edit(c)
	}
	return c
}

func noNamespaces(c *Capabilities) { c.Namespaces = Support{Reason: "user namespaces are disabled"} }
func noBwrap(c *Capabilities)      { c.Bwrap = Support{Reason: "bwrap not found in PATH"} }
func noLandlock(c *Capabilities) {
	c.LandlockABI, c.Landlock = 0, Support{Reason: "the kernel has no Landlock"}
}
func noSeccomp(c *Capabilities) { c.Seccomp = Support{Reason: "no seccomp filter support"} }
func noShell(c *Capabilities) {
	c.Shell, c.ShellVersion = Support{Reason: "/bin/bash --version failed: no such file"}, ""
}

// rootHost is a host running as root, whose commands run as the unprivileged id.
func rootHost(c *Capabilities) {
	c.UID, c.GID, c.InsideUID, c.InsideGID = 0, 0, 1000, 1000
	c.CommandUID, c.CommandGID = unprivilegedID, unprivilegedID
}

func TestReport(t *testing.T) {
	all := syntheticCaps(nil).Report()
	want := []string{
		"shell: /bin/bash (GNU bash, version 5.2.15(1)-release (x86_64-pc-linux-gnu)); every mode runs command lines with it",
		"namespaces: yes",
		"bwrap: /usr/bin/bwrap (bubblewrap 0.8.0)",
		"landlock: ABI 7",
		"seccomp: yes",
		"rlimits: hard cpu=unlimited as=unlimited nofile=4096 nproc=unlimited fsize=unlimited (a command's limits are capped at these)",
		"ids: host uid=1001 gid=1001; contained commands run as host uid=1001 gid=1001 (uid=1001 gid=1001 in their namespace)",
		"mode none: contains nothing (the command runs on the host in its workdir; timeout, output cap, and a reaper that ends the whole process tree, setsid'd children included, when the command ends, times out or the host dies)",
		"mode namespace: contains user namespace (not root), read-only host filesystem, private /tmp, hidden paths, pid namespace (whole tree killed), network namespace (unless network = true), uts, ipc, rlimits, landlock, seccomp; missing: nothing",
		"mode bwrap: contains user namespace (not root), read-only host filesystem, private /tmp, hidden paths, pid namespace (whole tree killed), network namespace (unless network = true), uts, ipc, rlimits, seccomp; missing: landlock (bwrap mode does not apply it)",
	}
	if !slices.Equal(all, want) {
		t.Errorf("report:\n%s\nwant:\n%s", strings.Join(all, "\n"), strings.Join(want, "\n"))
	}
	for _, tc := range []struct {
		name  string
		edit  func(*Capabilities)
		lines []string
	}{
		{"namespaces missing", noNamespaces, []string{
			"namespaces: no (user namespaces are disabled)",
			`mode namespace: unavailable (namespaces: user namespaces are disabled); on_unavailable = "warn" would run bwrap`,
		}},
		{"everything missing", func(c *Capabilities) { noNamespaces(c); noBwrap(c); noLandlock(c); noSeccomp(c) }, []string{
			"bwrap: no (bwrap not found in PATH)",
			"landlock: no (the kernel has no Landlock)",
			"seccomp: no (no seccomp filter support)",
			`mode namespace: unavailable (namespaces: user namespaces are disabled); on_unavailable = "warn" would run none (no sandbox)`,
			`mode bwrap: unavailable (bwrap: bwrap not found in PATH); on_unavailable = "warn" would run none (no sandbox)`,
		}},
		{"root host", rootHost, []string{
			"ids: host uid=0 gid=0; contained commands run as host uid=65533 gid=65533 (uid=1000 gid=1000 in their namespace), which must be able to reach each workdir (every folder above it searchable, or under /tmp) and to write each writable path",
		}},
		{"root host without the unprivileged id", func(c *Capabilities) { rootHost(c); c.CommandUID, c.CommandGID = 0, 0 }, []string{
			"ids: host uid=0 gid=0; contained commands run as host uid=0 gid=0 (uid=1000 gid=1000 in their namespace): this user namespace does not map uid 65533, so commands keep root's file access and are exempt from the process limit",
		}},
		{"filters missing", func(c *Capabilities) { noLandlock(c); noSeccomp(c) }, []string{
			"mode namespace: contains user namespace (not root), read-only host filesystem, private /tmp, hidden paths, pid namespace (whole tree killed), network namespace (unless network = true), uts, ipc, rlimits; missing: landlock (the kernel has no Landlock), seccomp (no seccomp filter support)",
		}},
	} {
		report := syntheticCaps(tc.edit).Report()
		for _, line := range tc.lines {
			if !slices.Contains(report, line) {
				t.Errorf("%s: report lacks %q:\n%s", tc.name, line, strings.Join(report, "\n"))
			}
		}
	}
}

// TestUnavailable: what a test skips on (internal/testenv) names the shell first, then the mode's
// own mechanism; Landlock and seccomp, which a contained mode runs without, are not named.
func TestUnavailable(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*Capabilities)
		want map[Mode]string
	}{
		{"everything", nil, map[Mode]string{}},
		{"no landlock or seccomp", func(c *Capabilities) { noLandlock(c); noSeccomp(c) }, map[Mode]string{}},
		{"no namespaces", noNamespaces, map[Mode]string{
			ModeNamespace: "sandbox mode namespace cannot run here: namespaces: user namespaces are disabled"}},
		{"no bwrap", noBwrap, map[Mode]string{ModeBwrap: "sandbox mode bwrap cannot run here: bwrap: bwrap not found in PATH"}},
		{"no shell", func(c *Capabilities) { noShell(c); noBwrap(c) }, map[Mode]string{
			ModeNone:      "commands run with /bin/bash, and it cannot run here: /bin/bash --version failed: no such file",
			ModeNamespace: "commands run with /bin/bash, and it cannot run here: /bin/bash --version failed: no such file",
			ModeBwrap:     "commands run with /bin/bash, and it cannot run here: /bin/bash --version failed: no such file"}},
	} {
		c := syntheticCaps(tc.edit)
		for _, m := range []Mode{ModeNone, ModeNamespace, ModeBwrap} {
			if got := c.Unavailable(m); got != tc.want[m] {
				t.Errorf("%s: Unavailable(%s) = %q, want %q", tc.name, m, got, tc.want[m])
			}
		}
	}
}

func TestEffective(t *testing.T) {
	for _, tc := range []struct {
		name        string
		edit        func(*Capabilities)
		mode        Mode
		fallback    Fallback
		wantMode    Mode
		wantWarning []string // substrings; none means no warning
		wantErr     []string // substrings of an ErrUnavailable error
	}{
		{"none runs as asked", func(c *Capabilities) { noNamespaces(c); noBwrap(c) }, ModeNone, FallbackError, ModeNone, nil, nil},
		{"no bash: none refused", noShell, ModeNone, FallbackWarn, 0, nil, []string{"commands run with /bin/bash", "no such file"}},
		{"no bash: namespace refused under warn", noShell, ModeNamespace, FallbackWarn, 0, nil, []string{"commands run with /bin/bash"}},
		{"namespace with everything", nil, ModeNamespace, FallbackError, ModeNamespace, nil, nil},
		{"bwrap with everything", nil, ModeBwrap, FallbackError, ModeBwrap, nil, nil},
		{"namespace missing: error", noNamespaces, ModeNamespace, FallbackError, 0, nil,
			[]string{`sandbox mode "namespace"`, "user namespaces are disabled", `on_unavailable = "warn"`}},
		{"bwrap missing: error", noBwrap, ModeBwrap, FallbackError, 0, nil, []string{"bwrap not found in PATH"}},
		{"namespace missing: warn runs bwrap", noNamespaces, ModeNamespace, FallbackWarn, ModeBwrap,
			[]string{`sandbox mode "namespace" unavailable`, "user namespaces are disabled", `running under "bwrap" instead`}, nil},
		{"bwrap missing: warn runs namespace", noBwrap, ModeBwrap, FallbackWarn, ModeNamespace,
			[]string{`running under "namespace" instead`}, nil},
		{"both missing: warn runs nothing", func(c *Capabilities) { noNamespaces(c); noBwrap(c) }, ModeNamespace, FallbackWarn, ModeNone,
			[]string{"NO sandbox"}, nil},
		{"landlock missing is a warning under error", noLandlock, ModeNamespace, FallbackError, ModeNamespace,
			[]string{`sandbox mode "namespace" runs without landlock (the kernel has no Landlock)`}, nil},
		{"bwrap never has landlock: no warning", noLandlock, ModeBwrap, FallbackError, ModeBwrap, nil, nil},
		{"seccomp missing is a warning", noSeccomp, ModeBwrap, FallbackWarn, ModeBwrap,
			[]string{"runs without seccomp (no seccomp filter support)"}, nil},
		{"substitute missing filters too", func(c *Capabilities) { noNamespaces(c); noSeccomp(c) }, ModeNamespace, FallbackWarn, ModeBwrap,
			[]string{`running under "bwrap" instead`, "seccomp"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			asked := testBoundary(tc.mode, func(b *Boundary) { b.OnUnavailable = tc.fallback })
			got, warning, err := syntheticCaps(tc.edit).Effective(asked)
			if tc.wantErr != nil {
				if !errors.Is(err, ErrUnavailable) {
					t.Fatalf("error %v, want ErrUnavailable", err)
				}
				for _, s := range tc.wantErr {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error %q lacks %q", err, s)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("Effective: %v", err)
			}
			if got.Mode != tc.wantMode {
				t.Errorf("mode %v, want %v", got.Mode, tc.wantMode)
			}
			got.Mode = asked.Mode
			if got.String() != asked.String() {
				t.Errorf("Effective changed more than the mode: %v", got)
			}
			if (warning == "") != (tc.wantWarning == nil) {
				t.Errorf("warning %q", warning)
			}
			for _, s := range tc.wantWarning {
				if !strings.Contains(warning, s) {
					t.Errorf("warning %q lacks %q", warning, s)
				}
			}
		})
	}
}
