package scenarios_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warrenhq/warren/scenarios"
)

// planBlueprints are the blueprints the plan tests' scenarios use: two model stages, a blueprint
// with dynamic tools, and one whose only stage fans out.
var planBlueprints = map[string]string{
	"writer.toml": `name = "writer"
[[stages]]
name = "draft"
available_tools = ["write_file"]
  [[stages.transitions]]
  on = "done"
  to = "review"
[[stages]]
name = "review"
available_tools = ["read_file"]
`,
	"reviewer.toml": `name = "reviewer"
[[stages]]
name = "review"
available_tools = ["read_file", "edit_file"]
`,
	"maker.toml": `name = "maker"
dynamic_tools = true
[[stages]]
name = "make"
available_tools = ["write_file"]
`,
	"splitter.toml": `name = "splitter"
[[stages]]
name = "split"
available_tools = ["fan_out"]
  [stages.fan_out]
  blueprint = "reviewer"
  items_file = "items.txt"
`,
}

// planScenario is a scenario of one group of blueprint GROUP_BP run by model m, whose turns are
// TURNS; SPAWN and EXPECT add [spawn] entries and expectations.
const planScenario = `name = "plans"

[blueprints]
writer = "writer.toml"
reviewer = "reviewer.toml"
maker = "maker.toml"
splitter = "splitter.toml"

SPAWN

[models.m]
kind = "scripted"
TURNS

[models.w]
kind = "scripted"
  [[models.w.turns]]
  text = "done"

# Used by no group and no [spawn] entry: not checked.
[models.unused]
kind = "scripted"
  [[models.unused.turns]]
  stage = "nowhere"

[[groups]]
name = "g"
blueprint = "GROUP_BP"
model = "m"
count = 1

EXPECT
`

// TestPlanChecks: the loader checks each scripted turn's stage and calls against the blueprints
// its model drives, accepting what can happen in a run and refusing what never can, at the
// turn's key.
func TestPlanChecks(t *testing.T) {
	tests := []struct {
		name      string
		blueprint string
		turns     string
		spawn     string
		expect    string
		// want is a fragment of the error ("": the scenario loads).
		want string
	}{
		{name: "a turn in each stage, each calling what it offers", blueprint: "writer",
			turns: turns(`stage = "draft"`, "write_file", `stage = "review"`, "read_file")},
		{name: "a turn without a stage may call what any stage offers", blueprint: "writer",
			turns: turns("", "read_file", "", "write_file")},
		{name: "a failing turn asserts its stage too", blueprint: "writer",
			turns: "  [[models.m.turns]]\n  stage = \"revue\"\n  error = \"overloaded\"\n",
			want:  `models.m.turns[0].stage: unknown stage "revue"`},
		{name: "a stage of a spawned blueprint the model also drives", blueprint: "writer",
			spawn: "[spawn.reviewer]\nmodel = \"m\"", turns: turns(`stage = "review"`, "edit_file")},
		{name: "a model shared by two blueprints: the tool must be offered by one that has the stage", blueprint: "writer",
			spawn: "[spawn.reviewer]\nmodel = \"m\"", turns: turns(`stage = "draft"`, "edit_file"),
			want: `models.m.turns[0].calls[0].tool: tool "edit_file" is not offered by stage "draft"`},
		{name: "an unknown tool in a blueprint with dynamic tools may be one an agent writes", blueprint: "maker",
			turns: turns(`stage = "make"`, "word_count")},
		{name: "dynamic tools count only in the blueprint that has them", blueprint: "writer",
			spawn: "[spawn.maker]\nmodel = \"m\"\n[spawn.reviewer]\nmodel = \"w\"", turns: turns(`stage = "draft"`, "word_count"),
			want: `models.m.turns[0].calls[0].tool: unknown tool "word_count"`},
		{name: "a model driving a blueprint with dynamic tools, in its stage", blueprint: "writer",
			spawn: "[spawn.maker]\nmodel = \"m\"\n[spawn.reviewer]\nmodel = \"w\"", turns: turns(`stage = "make"`, "word_count")},
		{name: "a known tool the stage does not offer is refused even with dynamic tools", blueprint: "maker",
			turns: turns(`stage = "make"`, "read_file"), want: `tool "read_file" is not offered by stage "make"`},
		{name: "a call counted in an expectation is deliberate", blueprint: "writer",
			turns: turns(`stage = "draft"`, "no_such_tool"), expect: "[[expect]]\ngroup = \"g\"\ntool_calls = { no_such_tool = 1 }"},
		{name: "an uncounted call of an unknown tool", blueprint: "writer",
			turns: turns(`stage = "draft"`, "no_such_tool"), want: `unknown tool "no_such_tool": the host has no such tool`},
		{name: "a blueprint whose only stage fans out never asks its model", blueprint: "splitter",
			turns: turns("", "read_file")},
		{name: "a turn asserting the fan-out stage", blueprint: "splitter",
			turns: turns(`stage = "split"`, ""), want: `stage "split" of blueprint "splitter" is a fan-out stage`},
		{name: "an unknown stage lists the stages there are", blueprint: "writer",
			turns: turns(`stage = "drafts"`, ""), want: `the stages whose model is asked: blueprint "writer": draft, review`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, src := range planBlueprints {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			src := strings.NewReplacer("GROUP_BP", tt.blueprint, "TURNS", tt.turns, "EXPECT", tt.expect).Replace(planScenario)
			spawn := tt.spawn
			if spawn == "" {
				spawn = "[spawn.reviewer]\nmodel = \"w\"" // the splitter's workers
			}
			src = strings.Replace(src, "SPAWN", spawn, 1)
			path := filepath.Join(dir, "plans.toml")
			if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := scenarios.Load(path, scenarios.KnownTools())
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("Load: %v", err)
			case tt.want != "" && err == nil:
				t.Fatalf("Load accepted the scenario, want %q", tt.want)
			case tt.want != "" && !strings.Contains(err.Error(), tt.want):
				t.Fatalf("error does not contain %q:\n%v", tt.want, err)
			case err != nil && strings.Count(err.Error(), "\n") > 0:
				t.Errorf("more than one problem:\n%v", err)
			}
		})
	}
}

// turns writes scripted turns as [[models.m.turns]] tables from pairs of a stage line ("" for
// none) and a tool ("" for no call).
func turns(pairs ...string) string {
	var b strings.Builder
	for i := 0; i+1 < len(pairs); i += 2 {
		b.WriteString("  [[models.m.turns]]\n")
		if pairs[i] != "" {
			b.WriteString("  " + pairs[i] + "\n")
		}
		if pairs[i+1] != "" {
			b.WriteString("    [[models.m.turns.calls]]\n    tool = \"" + pairs[i+1] + "\"\n")
		} else {
			b.WriteString("  text = \"done\"\n")
		}
	}
	return b.String()
}
