package systems

import (
	"bytes"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/warrenhq/warren/components"
	"github.com/warrenhq/warren/sandbox"
	"github.com/warrenhq/warren/tools"
)

func TestWarnDegradedOncePerWarning(t *testing.T) {
	var buf bytes.Buffer
	log := zerolog.New(&buf)
	h := &Host{Log: &log}
	notes := []tools.Note{
		{Fn: "sandbox", Text: "namespace ...", OK: true},
		{Fn: "sandbox", Text: "degraded", Err: "landlock: not in this kernel"},
		{Fn: "sandbox", Text: "degraded", Err: "landlock: not in this kernel"},
		{Fn: "read_file", Text: "x", Err: "refused"},
		{Fn: "sandbox", Text: "degraded", Err: "bwrap: not installed; running namespace"},
	}
	for _, n := range notes {
		h.warnDegraded(n)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], "landlock: not in this kernel") || !strings.Contains(lines[1], "bwrap: not installed") {
		t.Errorf("log lines %q, want each distinct degradation once", lines)
	}
	(&Host{}).warnDegraded(notes[1]) // no logger: nothing to do, no panic
}

func TestStageBoundary(t *testing.T) {
	tight := sandbox.Ceiling(sandbox.Spec{})
	tight.Limits.Timeout /= 2
	p := &components.Profile{Sandbox: []sandbox.Boundary{sandbox.Ceiling(sandbox.Spec{}), tight}}
	if got := stageBoundary(p, 1); got.Limits.Timeout != tight.Limits.Timeout {
		t.Errorf("stage 1: %v, want the profile's", got)
	}
	if got := stageBoundary(&components.Profile{}, 0); got.String() != defaultBoundary.String() {
		t.Errorf("a profile without boundaries: %v, want the default ceiling", got)
	}
}
