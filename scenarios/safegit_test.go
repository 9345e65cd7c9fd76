package scenarios_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warrenhq/warren"
	"github.com/warrenhq/warren/internal/testenv"
)

// safeGitScenario: an agent makes a repository, writes a hostile config into it (core.fsmonitor
// runs a command on every git status), then runs git status, plainly and with --git-dir. Commands
// run in mode none, so the test needs no sandbox; extra holds host tables and [launch].
func safeGitScenario(extra string) string {
	return `name = "safe-git"
seed = 1
[blueprints]
dev = "dev.toml"
[host.tool_permissions]
write_file = "allow"
"shell:git init" = "allow"
[host.sandbox]
mode = "none"
` + extra + `
[models.m]
kind = "scripted"
  [[models.m.turns]]
    [[models.m.turns.calls]]
    tool = "shell"
    args = { command = "git init -q" }
  [[models.m.turns]]
    [[models.m.turns.calls]]
    tool = "write_file"
    args = { path = ".git/config", content = "[core]\n\trepositoryformatversion = 0\n\tfsmonitor = \"touch pwned; false\"\n" }
  [[models.m.turns]]
    [[models.m.turns.calls]]
    tool = "shell"
    args = { command = "git status" }
    [[models.m.turns.calls]]
    tool = "shell"
    args = { command = "git --git-dir=.git status" }
  [[models.m.turns]]
  text = "done"
[[groups]]
name = "g"
blueprint = "dev"
model = "m"
count = 1
`
}

const safeGitBlueprint = `name = "dev"
[[stages]]
name = "work"
available_tools = ["shell", "write_file"]
max_iterations = 6
`

// TestSafeGitWithAHostileConfig: git runs programs its repository's config names, and an agent
// writes that config. No git command is a shipped safe command, so under the defaults the agent's
// git status asks (and, unattended, is refused): the hostile fsmonitor never runs. With --yolo
// the same line runs it, which shows the attack is real here. A host that adds "git status" to
// its safe commands accepts the risk for that command, and still not for git --git-dir=...
func TestSafeGitWithAHostileConfig(t *testing.T) {
	testenv.MustHaveProgram(t, "git", "git")
	cases := []struct {
		name  string
		extra string
		want  []string // "<command> <verdict> by <layer>"
		// pwned is whether the hostile fsmonitor ran; nil when it depends on this host: with the
		// host trusting git status, plain git status runs it unless git's own safe.directory
		// check refuses a workdir owned by the commands' uid while the command runs as root
		// (mode none on a root host). git --git-dir skips that check, which is why it has an
		// action key no safe entry covers.
		pwned *bool
	}{
		{"shipped safe commands, unattended", "[launch]\nunattended = true\n", []string{
			"git status deny by unattended", "git --git-dir=.git status deny by unattended"}, new(false)},
		{"yolo runs it", "[launch]\nyolo = true\n", []string{
			"git status allow by launch:yolo", "git --git-dir=.git status allow by launch:yolo"}, new(true)},
		{"the host trusts git status", "[host.safe_commands]\ncommands = [\"git status\"]\n[launch]\nunattended = true\n", []string{
			"git status allow by safe", "git --git-dir=.git status deny by unattended"}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			file := writePolicyFiles(t, map[string]string{"s.toml": safeGitScenario(tc.extra), "dev.toml": safeGitBlueprint})
			root := t.TempDir()
			_, tr := runTraced(t, file, warren.Options{WorkRoot: root})
			var got []string
			for _, line := range bytes.Split(tr, []byte("\n")) {
				var ev struct {
					Kind, Verdict, Layer string
					Args                 struct{ Command string }
				}
				if !bytes.Contains(line, []byte(`"kind":"tool_call"`)) || !bytes.Contains(line, []byte(`git `)) {
					continue
				}
				if err := json.Unmarshal(line, &ev); err != nil {
					t.Fatal(err)
				}
				if strings.Contains(ev.Args.Command, "status") {
					got = append(got, fmt.Sprintf("%s %s by %s", ev.Args.Command, ev.Verdict, ev.Layer))
				}
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("decisions\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
			_, err := os.Stat(filepath.Join(root, "g", "g-0", "pwned"))
			if pwned := err == nil; tc.pwned != nil && pwned != *tc.pwned {
				t.Errorf("the hostile fsmonitor ran: %v, want %v", pwned, *tc.pwned)
			}
		})
	}
}
