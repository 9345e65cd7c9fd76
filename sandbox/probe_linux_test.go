package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warrenhq/warren/internal/testenv"
)

func TestProbeThisMachine(t *testing.T) {
	c := Probe()
	if Probe() != c {
		t.Error("Probe probed twice")
	}
	var missing []string
	for _, m := range []struct {
		name string
		s    Support
	}{{"shell", c.Shell}, {"namespaces", c.Namespaces}, {"bwrap", c.Bwrap}, {"seccomp", c.Seccomp}, {"landlock", c.Landlock}} {
		if m.s.Available != (m.s.Reason == "") {
			t.Errorf("%s: available %v with reason %q", m.name, m.s.Available, m.s.Reason)
		}
		if !m.s.Available {
			missing = append(missing, m.name+": "+m.s.Reason)
		}
	}
	// What follows checks a machine with every mechanism, as CI's.
	testenv.MustHave(t, strings.Join(missing, "; "))
	if c.BwrapPath == "" || !strings.HasPrefix(c.BwrapVersion, "bubblewrap ") || c.LandlockABI < 2 {
		t.Errorf("bwrap %q %q, landlock ABI %d", c.BwrapPath, c.BwrapVersion, c.LandlockABI)
	}
	if c.InsideUID == 0 || c.InsideGID == 0 || (c.UID != 0 && c.InsideUID != c.UID) {
		t.Errorf("host uid %d maps to %d inside", c.UID, c.InsideUID)
	}
	// This machine's root maps every id: commands run as the unprivileged one there.
	wantUID, wantGID := c.UID, c.GID
	if c.UID == 0 {
		wantUID, wantGID = unprivilegedID, unprivilegedID
	}
	if c.CommandUID != wantUID || c.CommandGID != wantGID {
		t.Errorf("host uid %d runs commands as %d:%d, want %d:%d", c.UID, c.CommandUID, c.CommandGID, wantUID, wantGID)
	}
	report := c.Report()
	for i, prefix := range []string{"shell: /bin/bash (GNU bash, version ", "namespaces: yes", "bwrap: " + c.BwrapPath + " (bubblewrap ", "landlock: ABI ", "seccomp: yes", "rlimits: hard ", "ids: host ", "mode none: contains nothing", "mode namespace: contains ", "mode bwrap: contains "} {
		if i >= len(report) || !strings.HasPrefix(report[i], prefix) {
			t.Errorf("report line %d should start with %q:\n%s", i, prefix, strings.Join(report, "\n"))
		}
	}
}

func TestIDMapped(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, content string
		id            int
		want          bool
	}{
		{"everything mapped", "         0          0 4294967295\n", unprivilegedID, true},
		{"root only", "         0       1000          1\n", unprivilegedID, false},
		{"the first id of a second range", "0 1000 1\n65533 200000 10\n", unprivilegedID, true},
		{"one past a range", "0 100000 65533\n", unprivilegedID, false},
		{"garbage", "not a map\n", 0, false},
	} {
		path := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-"))
		if err := os.WriteFile(path, []byte(tc.content), 0o600); err != nil {
			t.Fatal(err)
		}
		if got := idMapped(path, tc.id); got != tc.want {
			t.Errorf("%s: idMapped(%d) = %v, want %v", tc.name, tc.id, got, tc.want)
		}
	}
	if idMapped(filepath.Join(dir, "missing"), 0) {
		t.Error("a missing map file maps an id")
	}
}

// TestProbeUnderALinkedTMPDIR: the probe's trial workdirs lie under TMPDIR, which may be the
// operator's own link; managers refuse a workdir reached through a link, so the probe resolves
// its folder first and the contained modes still probe available.
func TestProbeUnderALinkedTMPDIR(t *testing.T) {
	for _, m := range containedModes {
		testenv.MustHave(t, Probe().Unavailable(m))
	}
	link := filepath.Join(t.TempDir(), "tmp-link")
	if err := os.Symlink(t.TempDir(), link); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", link)
	c := probeMachine()
	for name, s := range map[string]Support{"namespaces": c.Namespaces, "bwrap": c.Bwrap} {
		if !s.Available {
			t.Errorf("%s unavailable under a TMPDIR reached through a link: %s", name, s.Reason)
		}
	}
}
