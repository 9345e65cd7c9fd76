package scenarios_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/warrenhq/warren/scenarios"
)

// FuzzLoad feeds arbitrary bytes to the scenario loader next to a valid blueprint: whatever the
// input, scenarios.Load returns a scenario or an error, never panics, and never both.
func FuzzLoad(f *testing.F) {
	for _, seed := range []string{
		minimalScenario,
		"",
		"name = \"x\"\n[[groups]]\ncount = -1\n",
		"[host.tool_permissions]\n\"shell:\" = \"deny\"\n",
		"[[interactions]]\napprove = \"stage\"\nkey = \"[\"\n",
		"[launch]\nallow = [\"write_file\"]\ndeny = [\"write_file\"]\n",
	} {
		f.Add(seed)
	}
	for _, file := range []string{"quickstart.toml", "gated.toml", "on_error.toml"} {
		if data, err := os.ReadFile(filepath.Join("examples", file)); err == nil {
			f.Add(string(data))
		}
	}
	dir := f.TempDir()
	path := writeScenario(f, dir, minimalScenario)
	f.Fuzz(func(t *testing.T, src string) {
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		sc, err := scenarios.Load(path, scenarios.KnownTools())
		if (sc == nil) == (err == nil) {
			t.Fatalf("scenarios.Load returned scenario %v and error %v", sc != nil, err)
		}
	})
}
