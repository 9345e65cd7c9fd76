package scenarios_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/warrenhq/warren/blueprint"
	"github.com/warrenhq/warren/internal/golden"
	"github.com/warrenhq/warren/internal/tomlfile"
	"github.com/warrenhq/warren/policy"
	"github.com/warrenhq/warren/scenarios"
)

// TestPermissionsBadCorpus loads every scenario under testdata/permissions/bad, each wrong in the
// permission keys in a known way ([host], [launch], [[interactions]], [[classifier]], a group's
// safety_mode and plan_file, a blueprint's required_tools), and compares the complete error text
// with its .err golden file (go test -update rewrites them).
func TestPermissionsBadCorpus(t *testing.T) {
	checkBadCorpus(t, golden.Corpus(t, filepath.Join("permissions", "bad"), "*.toml"), 10, true)
}

// TestPermissionsBadSentinels checks that the problems of the permission bad corpus keep their
// cause visible to errors.Is, as the rest of scenarios.Load's problems do, so a caller can tell a
// misspelled verdict from conflicting launch overrides without parsing messages.
func TestPermissionsBadSentinels(t *testing.T) {
	checkSentinels(t, permFile("bad"), []sentinelCase{
		{"misspelled_verdict.toml", policy.ErrBadVerdict},
		{"host_unknown_key.toml", tomlfile.ErrUnknownKey},
		{"required_not_available.toml", blueprint.ErrNotAvailable},
		{"launch_conflict.toml", policy.ErrConflictingFlags},
		{"bad_approve.toml", policy.ErrBadScope},
	})
}

// TestPermissionsLaunchNames checks the names a scenario's [launch] gives to allow, ask and deny.
// docs/scenarios.md promises that a reference to something that does not exist is a load error;
// a misspelled tool in deny would otherwise deny nothing, silently, in a run the user believes
// is protected.
func TestPermissionsLaunchNames(t *testing.T) {
	tests := []struct {
		name, launch string
		// wantErr is what the load error must name; "" means the scenario is valid.
		wantErr string
	}{
		{"known tools", `allow = ["write_file"]` + "\n" + `deny = ["edit_file"]`, ""},
		{"shell keys", `deny = ["shell:rm", "shell:git push"]`, ""},
		{"misspelled tool in deny", `deny = ["wirte_file"]`, "wirte_file"},
		{"misspelled tool in allow", `allow = ["raed_file"]`, "raed_file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeScenario(t, t.TempDir(), `name = "launch-names"

[launch]
`+tt.launch+`

[blueprints]
worker = "blueprints/worker.toml"

[models.m]
kind = "scripted"
  [[models.m.turns]]
  text = "done"

[[groups]]
name = "g"
blueprint = "worker"
model = "m"
count = 1
`)
			_, err := scenarios.Load(path, scenarios.KnownTools())
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("scenarios.Load rejected valid launch names: %v", err)
			case tt.wantErr != "" && err == nil:
				t.Fatalf("scenarios.Load accepted [launch] %s, which names no tool the host knows", tt.launch)
			case tt.wantErr != "" && !strings.Contains(err.Error(), tt.wantErr):
				t.Errorf("the load error does not name %q:\n%v", tt.wantErr, err)
			}
		})
	}
}
