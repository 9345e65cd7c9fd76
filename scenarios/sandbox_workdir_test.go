package scenarios_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/warrenhq/warren"
)

// runScript is a script tool running its command through host.shell, which goes to the agent's
// sandbox manager directly (the shell tool opens the workdir itself first and refuses a linked
// one before the manager is asked): what the manager does with a planted workdir path is all
// that stands between the command and where the link leads.
const runScript = `defineTool({
  name: "run",
  description: "Runs a command in the agent's sandbox through host.shell.",
  parameters: { type: "object", properties: { command: { type: "string" } }, required: ["command"] },
  run: function (args, host) {
    try { return "ran: " + host.shell(args.command); } catch (e) { return "refused: " + e.message; }
  }
});
`

// plantedWorkdirScenario is a group "g" of one planter running model "m", whose children run
// "child", and a group "s" of one planter running "sib" (a sibling agent with a workdir of its
// own), in mode.
func plantedWorkdirScenario(mode, models string) string {
	return `name = "planted-workdir"
seed = 11
[blueprints]
planter = "planter.toml"
[spawn.planter]
model = "child"
[host.tool_permissions]
shell = "allow"
write_file = "allow"
spawn_agent = "allow"
run = "allow"
[host.sandbox]
mode = "` + mode + `"
` + models + `
[[groups]]
name = "g"
blueprint = "planter"
model = "m"
count = 1

[[groups]]
name = "s"
blueprint = "planter"
model = "sib"
count = 1
`
}

// TestParentPlantsALinkBeforeItsChildsFirstCommand is the attack on the sandbox manager end to
// end, with real sandboxed commands: a parent's shell command replaces the folder its child's
// workdir will be made in (agents) with a link to a host folder, or the child's workdir itself
// (agents/1) with a link to a sibling agent's workdir (which belongs, like every workdir, to the
// uid commands run as), then spawns the child; the child's first command, through a script's
// host.shell, would write the host folder or read and write the sibling's files. It fails with
// the sandbox's setup error naming the link, and the host folder and the sibling's workdir are
// left as they were: nothing made, handed over or written there.
func TestParentPlantsALinkBeforeItsChildsFirstCommand(t *testing.T) {
	for _, mode := range []string{"namespace", "bwrap", "none"} {
		t.Run(mode, func(t *testing.T) {
			requireMode(t, mode)
			for _, tc := range []struct {
				name  string
				plant string // the parent's command ({V}: the host folder)
				link  string // the planted link, relative to the parent's workdir
			}{
				{"the folder holding the workdir, to a host folder", "ln -s {V} agents", "agents"},
				{"the workdir, to a sibling's", `mkdir -p agents && ln -s "$(dirname "$(dirname "$PWD")")/s/s-0" agents/1`, "agents/1"},
			} {
				t.Run(strings.ReplaceAll(tc.name, " ", "-"), func(t *testing.T) {
					v := newVictim(t)
					root := t.TempDir()
					models := "[models.m]\nkind = \"scripted\"\nwhen_exhausted = \"finish\"\n" +
						shellTurn("m", strings.ReplaceAll(tc.plant, "{V}", v.dir)) +
						"  [[models.m.turns]]\n    [[models.m.turns.calls]]\n    tool = \"spawn_agent\"\n    args = { blueprint = \"planter\", task = \"escape\" }\n" +
						"  [[models.m.turns]]\n    [[models.m.turns.calls]]\n    tool = \"wait_for_agent\"\n    args = { id = \"g-0/1\" }\n" +
						"[models.sib]\nkind = \"scripted\"\nwhen_exhausted = \"finish\"\n" +
						"  [[models.sib.turns]]\n    [[models.sib.turns.calls]]\n    tool = \"write_file\"\n    args = { path = \"secret.txt\", content = \"the sibling's secret\" }\n" +
						"[models.child]\nkind = \"scripted\"\nwhen_exhausted = \"finish\"\n" +
						"  [[models.child.turns]]\n    [[models.child.turns.calls]]\n    tool = \"run\"\n" +
						"    args = { command = \"cat secret.txt; echo escaped > secret.txt; echo escaped > ../precious; echo made > new\" }\n"
					file := writePolicyFiles(t, map[string]string{
						"s.toml":       plantedWorkdirScenario(mode, models),
						"planter.toml": strings.Replace(hostPathsBlueprint, `"wait_for_agent"]`, `"wait_for_agent", "run"]`, 1),
						"tools/run.js": runScript,
					})
					_, tr := runTraced(t, file, warren.Options{WorkRoot: root})
					var got []string
					for _, e := range decodeEvents(t, tr) {
						if e.Kind == "tool_result" && e.Tool == "run" {
							got = append(got, e.Content)
						}
					}
					link := filepath.Join(root, "g", "g-0", tc.link)
					if len(got) != 1 || !strings.HasPrefix(got[0], "refused: sandbox setup failed: ") ||
						!strings.Contains(got[0], link+": a symbolic link, which the host does not follow") {
						t.Errorf("the child's command: %q, want it refused by the sandbox's setup, naming %s; the trace:\n%s", got, link, tr)
					}
					v.check(t)
					if entries, err := os.ReadDir(v.dir); err != nil || len(entries) != 1 {
						t.Errorf("the host folder now holds %v (%v)", entries, err)
					}
					sibling := filepath.Join(root, "s", "s-0")
					entries, err := os.ReadDir(sibling)
					names := []string{}
					for _, e := range entries {
						names = append(names, e.Name())
					}
					if err != nil || !slices.Equal(names, []string{"secret.txt"}) {
						t.Errorf("the sibling's workdir now holds %q (%v)", names, err)
					}
					if data, err := os.ReadFile(filepath.Join(sibling, "secret.txt")); err != nil || string(data) != "the sibling's secret" {
						t.Errorf("the sibling's secret now reads %q (%v)", data, err)
					}
				})
			}
		})
	}
}
