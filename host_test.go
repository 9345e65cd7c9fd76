package warren_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warrenhq/warren"
)

// writeFile writes content to name under dir and returns its path.
func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestCheckLaunch: known tools and shell keys pass; a misspelt name, an empty one and a name
// given two verdicts do not, each named by its flag.
func TestCheckLaunch(t *testing.T) {
	for _, l := range []warren.Launch{{}, {Yolo: true}, {Allow: []string{"write_file", "shell:ls"}, Ask: []string{"read_file"}, Deny: []string{"shell:rm"}}} {
		if err := warren.CheckLaunch(l); err != nil {
			t.Errorf("%+v: %v", l, err)
		}
	}
	tests := []struct {
		launch warren.Launch
		want   string
	}{
		{warren.Launch{Allow: []string{"wirte_file"}}, "--allow: "},
		{warren.Launch{Ask: []string{"shell:"}}, "--ask: "},
		{warren.Launch{Deny: []string{""}}, "--deny needs a tool or key name"},
		{warren.Launch{Allow: []string{"write_file"}, Deny: []string{"write_file"}}, `"write_file" is given to both --allow and --deny`},
	}
	for _, tt := range tests {
		if err := warren.CheckLaunch(tt.launch); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: %v, want it to contain %q", tt.launch, err, tt.want)
		}
	}
	// A run refuses what CheckLaunch refuses, as ErrLaunch.
	sc, err := warren.Load(filepath.Join("scenarios", "examples", "on_error.toml"))
	if err != nil {
		t.Fatal(err)
	}
	conflict := warren.Launch{Allow: []string{"write_file"}, Deny: []string{"write_file"}}
	if _, err := warren.New(sc, warren.Options{Launch: conflict}); !errors.Is(err, warren.ErrLaunch) {
		t.Errorf("New with %+v: %v, want ErrLaunch", conflict, err)
	}
}

// TestDefaultHostConfig: each call is a fresh value, so one caller's change never reaches the
// next run.
func TestDefaultHostConfig(t *testing.T) {
	a, b := warren.DefaultHostConfig(), warren.DefaultHostConfig()
	if a == b {
		t.Fatal("the same value twice")
	}
	a.Unattended = true
	if b.Unattended || warren.DefaultHostConfig().Unattended {
		t.Error("a change to one default config reached another")
	}
}

// TestStatusNames: Summary.ByStatus is indexed by Status, and a report names each by String.
func TestStatusNames(t *testing.T) {
	var names []string
	for k := range len(warren.Summary{}.ByStatus) {
		names = append(names, warren.Status(k).String())
	}
	if got := strings.Join(names, " "); got != "active waiting done failed killed" {
		t.Errorf("statuses %q", got)
	}
}
