package warren

import (
	"fmt"
	"slices"
	"testing"

	"github.com/warrenhq/warren/gate"
	"github.com/warrenhq/warren/tools"
)

// TestPermissionUnattendedAdvertising checks what the asker's stages offer the model: in an
// unattended run a stage advertises a human tool only if its required_tools lists it, and the
// tool it keeps quiet about resolves to the stand-in that answers at once.
func TestPermissionUnattendedAdvertising(t *testing.T) {
	sc, err := Load("scenarios/testdata/permissions/unattended.toml")
	if err != nil {
		t.Fatal(err)
	}
	g := &sc.Groups[0]
	tests := []struct {
		unattended bool
		solo       []string
		confirm    []string
	}{
		{true, []string{"read_file", "write_file"}, []string{"ask_user_confirm"}},
		{false, []string{"ask_user_text", "read_file", "write_file"}, []string{"ask_user_confirm", "ask_user_text"}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("unattended=%v", tt.unattended), func(t *testing.T) {
			reg := tools.NewRegistry()
			if err := tools.RegisterBuiltins(reg); err != nil {
				t.Fatal(err)
			}
			pol, err := gate.ForGroup(g.Blueprint, sc.Host, sc.Launch, gate.Modes{Unattended: tt.unattended, SafetyMode: g.SafetyMode, PlanFile: g.PlanFile})
			if err != nil {
				t.Fatal(err)
			}
			p, err := profile(g, tools.NewScoped(reg), t.TempDir(), pol, sc.Host.SandboxCeiling(), nil)
			if err != nil {
				t.Fatal(err)
			}
			advertised := func(stage int) []string {
				var names []string
				for _, info := range p.StageTools[stage] {
					names = append(names, info.Name)
				}
				return names
			}
			if got := advertised(0); !slices.Equal(got, tt.solo) {
				t.Errorf("stage solo advertises %v, want %v", got, tt.solo)
			}
			if got := advertised(1); !slices.Equal(got, tt.confirm) {
				t.Errorf("stage confirm advertises %v, want %v", got, tt.confirm)
			}
			h, ok := p.Registry(0).Lookup(tools.NameAskUserText)
			if !ok {
				t.Fatal("ask_user_text does not resolve in stage solo")
			}
			_, interactive := h.Tool().(tools.Interactive)
			if interactive == tt.unattended {
				t.Errorf("ask_user_text in stage solo: interactive %v, want the stand-in only when unattended", interactive)
			}
		})
	}
}

// TestPermissionWriteBudget spends a 20-byte per-run budget across several batches: writes past
// a ceiling are refused with the ceiling's message, refused writes cost nothing and leave the file
