package sandbox

import (
	"strings"
	"testing"
)

func TestProbeThisMachine(t *testing.T) {
	c := Probe()
	if Probe() != c {
		t.Error("Probe probed twice")
	}
	for name, s := range map[string]Support{"namespaces": c.Namespaces, "bwrap": c.Bwrap, "seccomp": c.Seccomp, "landlock": c.Landlock} {
		if !s.Available || s.Reason != "" {
			t.Errorf("%s unavailable on this machine (CI must provide it): %q", name, s.Reason)
		}
	}
	if c.BwrapPath == "" || !strings.HasPrefix(c.BwrapVersion, "bubblewrap ") || c.LandlockABI < 2 {
		t.Errorf("bwrap %q %q, landlock ABI %d", c.BwrapPath, c.BwrapVersion, c.LandlockABI)
	}
	if c.InsideUID == 0 || c.InsideGID == 0 || (c.UID != 0 && c.InsideUID != c.UID) {
		t.Errorf("host uid %d maps to %d inside", c.UID, c.InsideUID)
	}
	report := c.Report()
	for i, prefix := range []string{"namespaces: yes", "bwrap: " + c.BwrapPath + " (bubblewrap ", "landlock: ABI ", "seccomp: yes", "rlimits: hard ", "ids: host ", "mode none: contains nothing", "mode namespace: contains ", "mode bwrap: contains "} {
		if i >= len(report) || !strings.HasPrefix(report[i], prefix) {
			t.Errorf("report line %d should start with %q:\n%s", i, prefix, strings.Join(report, "\n"))
		}
	}
}
