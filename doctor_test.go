package warren_test

import (
	"strings"
	"testing"

	"github.com/warrenhq/warren"
)

// TestCheckSandbox: the report lists the machine's mechanisms and resolves the ceiling: the
// built-in one without a config, and a config's own, which mode none always meets.
func TestCheckSandbox(t *testing.T) {
	r := warren.CheckSandbox(nil)
	if report := strings.Join(r.Machine, "\n"); !strings.Contains(report, "namespaces: ") || !strings.Contains(report, "mode none: ") {
		t.Errorf("machine report:\n%s", report)
	}
	if got, want := r.Ceiling.String(), warren.DefaultHostConfig().SandboxCeiling().String(); got != want {
		t.Errorf("ceiling %s, want the built-in %s", got, want)
	}
	if r.Refused == nil && r.Effective.Mode.String() == "" {
		t.Errorf("neither refused nor an effective mode: %+v", r)
	}

	host, err := warren.LoadHostConfig(writeFile(t, t.TempDir(), "host.toml", "[sandbox]\nmode = \"none\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	r = warren.CheckSandbox(host)
	if r.Ceiling.Mode.String() != "none" || r.Refused != nil || r.Degraded != "" || r.Effective.Mode.String() != "none" {
		t.Errorf("mode none: ceiling %s, effective %s, degraded %q, refused %v", r.Ceiling, r.Effective.Mode, r.Degraded, r.Refused)
	}
}
