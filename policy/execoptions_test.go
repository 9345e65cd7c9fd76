package policy

import (
	"slices"
	"testing"
)

// TestExecOptionsAreHandled holds the scan to what ExecOptions says of each way a modelled
// program runs a command: its example, which runs rm that way, is keyed with shell:rm when
// parsed, refused, or given an opaque key.
func TestExecOptionsAreHandled(t *testing.T) {
	list := ExecOptions()
	if len(list) < 60 {
		t.Fatalf("ExecOptions lists %d ways, want the modelled programs' (60 or more)", len(list))
	}
	for _, o := range list {
		a := AnalyzeShell(o.Example)
		switch o.Handling {
		case HandledParsed:
			if a.Why != "" || !slices.Contains(a.Keys, ProgramKey("rm", "")) {
				t.Errorf("%s %s: %q gives keys %q (%s), want shell:rm", o.Program, o.Option, o.Example, a.Keys, a.Why)
			}
		case HandledRefused:
			if a.Why == "" {
				t.Errorf("%s %s: %q gives keys %q, want it refused", o.Program, o.Option, o.Example, a.Keys)
			}
		case HandledOpaque:
			if a.Why != "" || len(a.Opaque) == 0 {
				t.Errorf("%s %s: %q gives keys %q (%s), want an opaque key", o.Program, o.Option, o.Example, a.Keys, a.Why)
			}
		default:
			t.Errorf("%s %s: handling %q", o.Program, o.Option, o.Handling)
		}
	}
}
