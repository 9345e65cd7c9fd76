package hostconfig

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/warrenhq/warren/policy"
)

func TestLoadWithScripts(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "host.toml")
	src := "[scripting]\ntools_dir = \"mine\"\n\n[tool_permissions]\nshout = \"allow\"\n"
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	var asked []string
	names := func(folder string) ([]string, error) {
		asked = append(asked, folder)
		return []string{"shout"}, nil
	}
	tests := []struct {
		name  string
		names ScriptNames
		want  string // "" loads
	}{
		{"the folder's tools are known", names, ""},
		{"without names they are not", nil, `host.toml:5:1: tool_permissions.shout: unknown tool or key "shout"`},
		{"a folder that does not load", func(string) ([]string, error) { return nil, errors.New("bad.js:1:2: Unexpected token") },
			"host.toml:2:1: scripting.tools_dir: script tools in " + filepath.Join(dir, "mine") + ":\nbad.js:1:2: Unexpected token"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			asked = nil
			known := []string{"read_file"}
			cfg, err := LoadWithScripts(path, known, tt.names)
			if tt.want == "" {
				if err != nil || cfg.ToolPermissions["shout"] != policy.Allow {
					t.Fatalf("LoadWithScripts = %+v, %v", cfg, err)
				}
				if !slices.Equal(asked, []string{filepath.Join(dir, "mine")}) {
					t.Errorf("names asked for %q, want the tools_dir resolved against the file", asked)
				}
				if !slices.Equal(known, []string{"read_file"}) {
					t.Errorf("the caller's known tools changed: %q", known)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error:\n%v\nwant it to contain:\n%s", err, tt.want)
			}
		})
	}
}
