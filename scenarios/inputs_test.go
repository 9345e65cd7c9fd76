package scenarios_test

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/warrenhq/warren/scenarios"
)

// TestInputs: a scenario lists every file its load read, once each, in a fixed order: the
// scenario, its blueprints, its script tools, its models' policy files, and a host config that
// came from a file of its own (a scenario's own [host] table is no file).
func TestInputs(t *testing.T) {
	load := func(file string) *scenarios.Scenario {
		t.Helper()
		sc, err := scenarios.Load(file, scenarios.KnownTools())
		if err != nil {
			t.Fatal(err)
		}
		return sc
	}
	ex := func(rel string) string { return filepath.Join("examples", rel) }
	tools := filepath.Join("examples", "scripted", "tools")
	tests := []struct {
		name string
		sc   *scenarios.Scenario
		want []scenarios.Input
	}{
		{"blueprints shared by groups and [spawn]", load(ex("planner.toml")), []scenarios.Input{
			{Path: ex("planner.toml"), What: "the scenario"},
			{Path: ex("blueprints/planner.toml"), What: `blueprint "planner"`},
			{Path: ex("blueprints/worker.toml"), What: `blueprint "worker"`},
		}},
		{"script tools", load(ex("scripts.toml")), []scenarios.Input{
			{Path: ex("scripts.toml"), What: "the scenario"},
			{Path: ex("scripted/analyst.toml"), What: `blueprint "analyst"`},
			{Path: filepath.Join(tools, "fetch_status.js"), What: `script tool "fetch_status"`},
			{Path: filepath.Join(tools, "note_todo.js"), What: `script tool "note_todo"`},
			{Path: filepath.Join(tools, "roll_dice.js"), What: `script tool "roll_dice"`},
			{Path: filepath.Join(tools, "word_count.js"), What: `script tool "word_count"`},
		}},
		{"a js model's policy", load(ex("gossip.toml")), []scenarios.Input{
			{Path: ex("gossip.toml"), What: "the scenario"},
			{Path: ex("gossip/voter.toml"), What: `blueprint "voter"`},
			{Path: ex("gossip/voter.js"), What: `the policy of model "voter"`},
		}},
	}
	hostDir := filepath.Join("..", "cmd", "host", "testdata", "run", "hosttools")
	host, err := scenarios.LoadHostConfig(filepath.Join(hostDir, "host", "host.toml"))
	if err != nil {
		t.Fatal(err)
	}
	underConfig, err := scenarios.LoadUnder(filepath.Join(hostDir, "shout.toml"), scenarios.KnownTools(), host)
	if err != nil {
		t.Fatal(err)
	}
	tests = append(tests, struct {
		name string
		sc   *scenarios.Scenario
		want []scenarios.Input
	}{"a host config file and its tools_dir", underConfig, []scenarios.Input{
		{Path: filepath.Join(hostDir, "shout.toml"), What: "the scenario"},
		{Path: filepath.Join(hostDir, "shouter.toml"), What: `blueprint "shouter"`},
		{Path: filepath.Join(hostDir, "host", "tools", "shout.js"), What: `script tool "shout"`},
		{Path: filepath.Join(hostDir, "host", "host.toml"), What: "the host config"},
	}})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			abs := func(in []scenarios.Input) []scenarios.Input {
				for i := range in {
					p, err := filepath.Abs(in[i].Path)
					if err != nil {
						t.Fatal(err)
					}
					in[i].Path = p
				}
				return in
			}
			got := abs(tt.sc.Inputs())
			if want := abs(tt.want); !slices.Equal(got, want) {
				t.Errorf("Inputs() =\n%q\nwant\n%q", got, want)
			}
		})
	}
}
