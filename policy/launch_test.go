package policy

import (
	"errors"
	"testing"
)

func TestLaunchValidate(t *testing.T) {
	tests := []struct {
		name      string
		launch    Launch
		wantMsg   string // "" means valid
		conflicts bool
		empty     bool
	}{
		{name: "nothing given", launch: Launch{}},
		{name: "yolo alone", launch: Launch{Yolo: true}},
		{name: "yolo with ask and deny tightens", launch: Launch{Yolo: true, Ask: []string{"write_file"}, Deny: []string{"shell:rm"}}},
		{name: "distinct names in every flag", launch: Launch{Allow: []string{"shell:git"}, Ask: []string{"shell:git push"}, Deny: []string{"shell"}}},
		{name: "a name repeated in one flag", launch: Launch{Allow: []string{"write_file", "write_file"}}},
		{name: "allow and deny", launch: Launch{Allow: []string{"write_file"}, Deny: []string{"write_file"}}, conflicts: true,
			wantMsg: `conflicting launch flags: "write_file" is given to both --allow and --deny`},
		{name: "allow and ask", launch: Launch{Allow: []string{"shell:ls"}, Ask: []string{"shell:ls"}}, conflicts: true,
			wantMsg: `conflicting launch flags: "shell:ls" is given to both --allow and --ask`},
		{name: "ask and deny", launch: Launch{Ask: []string{"mcp__x"}, Deny: []string{"mcp__x"}}, conflicts: true,
			wantMsg: `conflicting launch flags: "mcp__x" is given to both --ask and --deny`},
		{name: "one name in all three flags", launch: Launch{Allow: []string{"edit_file"}, Ask: []string{"edit_file"}, Deny: []string{"edit_file"}}, conflicts: true,
			wantMsg: "conflicting launch flags: \"edit_file\" is given to both --allow and --ask\nconflicting launch flags: \"edit_file\" is given to both --allow and --deny"},
		{name: "several conflicts come sorted by name", launch: Launch{Allow: []string{"write_file", "edit_file"}, Deny: []string{"write_file", "edit_file"}}, conflicts: true,
			wantMsg: "conflicting launch flags: \"edit_file\" is given to both --allow and --deny\nconflicting launch flags: \"write_file\" is given to both --allow and --deny"},
		{name: "yolo does not excuse a conflict", launch: Launch{Yolo: true, Allow: []string{"x"}, Ask: []string{"x"}}, conflicts: true,
			wantMsg: `conflicting launch flags: "x" is given to both --allow and --ask`},
		{name: "empty name", launch: Launch{Ask: []string{""}}, empty: true,
			wantMsg: "empty launch flag name: --ask needs a tool or key name"},
		{name: "empty names in two flags and a conflict", launch: Launch{Allow: []string{"", "a", ""}, Deny: []string{"a", ""}}, conflicts: true, empty: true,
			wantMsg: "conflicting launch flags: \"a\" is given to both --allow and --deny\nempty launch flag name: --allow needs a tool or key name\nempty launch flag name: --deny needs a tool or key name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.launch.Validate()
			if tt.wantMsg == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil || err.Error() != tt.wantMsg {
				t.Fatalf("Validate() = %v\nwant %s", err, tt.wantMsg)
			}
			if errors.Is(err, ErrConflictingFlags) != tt.conflicts || errors.Is(err, ErrEmptyFlagName) != tt.empty {
				t.Errorf("errors.Is: conflicting=%v empty=%v, want %v %v", errors.Is(err, ErrConflictingFlags), errors.Is(err, ErrEmptyFlagName), tt.conflicts, tt.empty)
			}
			if r, rerr := NewResolver(HostLayer{}, BlueprintLayer{}, tt.launch); r != nil || rerr == nil || rerr.Error() != tt.wantMsg {
				t.Errorf("NewResolver = %v, %v; want the Validate error", r, rerr)
			}
		})
	}
}
