package main

import (
	"strings"
	"testing"

	"github.com/warrenhq/warren/models"
)

// host --help and host validate --help list every model kind in the registry, by the name a
// scenario writes, so the help cannot drift from what a scenario may name.
func TestHelpListsModelKinds(t *testing.T) {
	ids := models.Kinds()
	if len(ids) < 2 {
		t.Fatalf("the host registers %q, want at least the scripted and js kinds", ids)
	}
	top := host(t, "--help")
	wantCode(t, top, exitOK)
	validate := host(t, "validate", "--help")
	wantCode(t, validate, exitOK)
	flat := func(s string) string { return strings.Join(strings.Fields(s), " ") } // kong wraps lines
	for _, id := range ids {
		k, _ := models.LookupKind(id)
		if want := k.Name() + " (" + k.Summary + ")"; !strings.Contains(flat(top.stdout), want) {
			t.Errorf("host --help does not list %q:\n%s", want, top.stdout)
		}
		if !strings.Contains(flat(validate.stdout), k.Name()) {
			t.Errorf("host validate --help does not list kind %q:\n%s", k.Name(), validate.stdout)
		}
	}
	if want := "Model kinds a scenario may name: " + modelKinds(false) + "."; !strings.Contains(flat(validate.stdout), want) {
		t.Errorf("host validate --help does not say %q:\n%s", want, validate.stdout)
	}
}
