package scenarios_test

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warrenhq/warren"
	"github.com/warrenhq/warren/components"
	"github.com/warrenhq/warren/internal/testenv"
	"github.com/warrenhq/warren/sandbox"
)

// requireMode skips t when this machine cannot run commands in mode (saying why), and fails it
// instead when WARREN_REQUIRE_SANDBOX=1 says the machine must (internal/testenv's rule).
func requireMode(t testing.TB, mode string) {
	t.Helper()
	m, err := sandbox.ParseMode(mode)
	if err != nil {
		t.Fatal(err)
	}
	testenv.MustHave(t, sandbox.Probe().Unavailable(m))
}

// hostPathsBlueprint lets its agents write files, run commands and spawn children of their own
// blueprint.
const hostPathsBlueprint = `name = "planter"
[subagents]
spawnable = ["planter"]
[[stages]]
name = "work"
available_tools = ["shell", "write_file", "read_file", "spawn_agent", "wait_for_agent"]
max_iterations = 6
`

// hostPathsScenario is one agent of hostPathsBlueprint in mode, with a write budget of 100 bytes
// per call; models holds the [models.*] tables: the group's model "m" and its children's "child".
func hostPathsScenario(mode, models string) string {
	return `name = "host-paths"
seed = 9
[blueprints]
planter = "planter.toml"
[spawn.planter]
model = "child"
[host.tool_permissions]
shell = "allow"
write_file = "allow"
spawn_agent = "allow"
[host.sandbox]
mode = "` + mode + `"
[host.write_budget]
per_call = 100
` + models + `
[[groups]]
name = "g"
blueprint = "planter"
model = "m"
count = 1
`
}

// victim is a host folder outside every workdir holding one precious file; check fails t
// unless the file is still there with its content and size.
type victim struct {
	dir, file string
	content   []byte
}

func newVictim(t *testing.T) victim {
	t.Helper()
	v := victim{dir: t.TempDir(), content: []byte("precious host data, outside every workdir: it must survive the run\n")}
	v.file = filepath.Join(v.dir, "precious")
	if err := os.WriteFile(v.file, v.content, 0o644); err != nil {
		t.Fatal(err)
	}
	return v
}

func (v victim) check(t *testing.T) {
	t.Helper()
	info, err := os.Lstat(v.file)
	if err != nil {
		t.Fatalf("the host file outside the workdir is gone: %v", err)
	}
	got, err := os.ReadFile(v.file)
	if err != nil {
		t.Fatal(err)
	}
	if !info.Mode().IsRegular() || info.Size() != int64(len(v.content)) || !bytes.Equal(got, v.content) {
		t.Fatalf("the host file outside the workdir changed: mode %v, %d bytes %q; want %d bytes %q",
			info.Mode(), info.Size(), got, len(v.content), v.content)
	}
}

// runPlanted runs hostPathsScenario(mode, models) with the blueprint planter and returns the
// run's trace, having checked that the top agent ended done.
func runPlanted(t *testing.T, planter, mode, models string) []byte {
	t.Helper()
	file := writePolicyFiles(t, map[string]string{
		"s.toml":       hostPathsScenario(mode, models),
		"planter.toml": planter,
	})
	sum, tr := runTraced(t, file, warren.Options{WorkRoot: t.TempDir()})
	for _, r := range sum.Records {
		if r.Depth == 0 && r.Status != components.Done {
			t.Fatalf("the agent ended %s (%s); records %+v", r.Status, r.Reason, sum.Records)
		}
	}
	return tr
}

// overBudget fails t unless the trace shows a shell call refused for its redirects: the host's
// cut-back ran, so a victim that survived was not merely never at risk.
func overBudget(t *testing.T, tr []byte) {
	t.Helper()
	if !bytes.Contains(tr, []byte("over the write budget (the files were cut back)")) {
		t.Fatalf("no shell call went over the write budget; the trace:\n%s", tr)
	}
}

// noChild is the model of children in runs that spawn none.
const noChild = "[models.child]\nkind = \"scripted\"\nwhen_exhausted = \"finish\"\n"

// shellTurn is a scripted turn making one shell call.
func shellTurn(model, command string) string {
	return fmt.Sprintf("  [[models.%s.turns]]\n    [[models.%s.turns.calls]]\n    tool = \"shell\"\n    args = { command = %q }\n", model, model, command)
}

// TestSettleNeverFollowsPlantedLinks is issue 12's attack end to end, with a real sandboxed
// shell in namespace mode and in none mode: a command goes over the write budget after planting
// a symlink to a host folder (or replacing an earlier write_file output with a link to a host
// file) and redirecting through it; cutting the command's redirects back must never reach the
// host file the links lead to.
func TestSettleNeverFollowsPlantedLinks(t *testing.T) {
	for _, mode := range []string{"namespace", "none"} {
		t.Run(mode, func(t *testing.T) {
			requireMode(t, mode)
			t.Run("a folder replaced by a link", func(t *testing.T) {
				v := newVictim(t)
				// ": >>" appends nothing, so in mode none the command itself leaves the host file
				// as it was; only the host's cut-back could change it.
				models := "[models.m]\nkind = \"scripted\"\nwhen_exhausted = \"finish\"\n" +
					shellTurn("m", fmt.Sprintf("ln -s %s d; : >> d/precious; head -c 500 /dev/zero > big.txt", v.dir)) + noChild
				tr := runPlanted(t, hostPathsBlueprint, mode, models)
				overBudget(t, tr)
				v.check(t)
			})
			t.Run("an earlier write_file output replaced by a link", func(t *testing.T) {
				v := newVictim(t)
				models := "[models.m]\nkind = \"scripted\"\nwhen_exhausted = \"finish\"\n" +
					"  [[models.m.turns]]\n    [[models.m.turns.calls]]\n    tool = \"write_file\"\n    args = { path = \"out.txt\", content = \"0123456789\" }\n" +
					shellTurn("m", fmt.Sprintf("ln -sf %s out.txt; : >> out.txt; head -c 500 /dev/zero > big.txt", v.file)) + noChild
				tr := runPlanted(t, hostPathsBlueprint, mode, models)
				overBudget(t, tr)
				v.check(t)
			})
		})
	}
}

// TestChildWorkdirReplacedByLink: a parent's command replaces the folder its next child will
// work in with a link to a host folder; the child's file tools must refuse to work there rather
// than write the host folder as the host's user.
func TestChildWorkdirReplacedByLink(t *testing.T) {
	for _, mode := range []string{"namespace", "none"} {
		t.Run(mode, func(t *testing.T) {
			requireMode(t, mode)
			v := newVictim(t)
			models := "[models.m]\nkind = \"scripted\"\nwhen_exhausted = \"finish\"\n" +
				shellTurn("m", fmt.Sprintf("mkdir -p agents && ln -s %s agents/1", v.dir)) +
				"  [[models.m.turns]]\n    [[models.m.turns.calls]]\n    tool = \"spawn_agent\"\n    args = { blueprint = \"planter\", task = \"write\" }\n" +
				"  [[models.m.turns]]\n    [[models.m.turns.calls]]\n    tool = \"wait_for_agent\"\n    args = { id = \"g-0/1\" }\n" +
				"[models.child]\nkind = \"scripted\"\nwhen_exhausted = \"finish\"\n" +
				"  [[models.child.turns]]\n    [[models.child.turns.calls]]\n    tool = \"write_file\"\n    args = { path = \"precious\", content = \"overwritten by a child\" }\n" +
				"  [[models.child.turns]]\n    [[models.child.turns.calls]]\n    tool = \"write_file\"\n    args = { path = \"new.txt\", content = \"a new host file\" }\n"
			tr := runPlanted(t, hostPathsBlueprint, mode, models)
			v.check(t)
			if _, err := os.Lstat(filepath.Join(v.dir, "new.txt")); err == nil {
				t.Fatal("the child's write_file created a file in the host folder its workdir was linked to")
			}
			if !strings.Contains(string(tr), "symbolic link") {
				t.Fatalf("the child's write_file was not refused for the link on its workdir's path; the trace:\n%s", tr)
			}
		})
	}
}

// TestRunRootRemovalFollowsNoLink: the temporary root of a run is removed when it ends, with the
// links, FIFOs and hard links its agents planted in it, and the host files they lead to are left
// as they were.
func TestRunRootRemovalFollowsNoLink(t *testing.T) {
	for _, mode := range []string{"namespace", "none"} {
		t.Run(mode, func(t *testing.T) {
			requireMode(t, mode)
			v := newVictim(t)
			// The hard link fails in namespace mode (the host file is on another mount, if it is
			// visible at all); in mode none it is made.
			models := "[models.m]\nkind = \"scripted\"\nwhen_exhausted = \"finish\"\n" +
				shellTurn("m", fmt.Sprintf("ln -s %[1]s d; ln -s %[2]s f; mkfifo p; ln %[2]s h 2>/dev/null; mkdir -p sub/deeper; ln -s / sub/deeper/root; pwd", v.dir, v.file)) +
				noChild
			file := writePolicyFiles(t, map[string]string{
				"s.toml":       hostPathsScenario(mode, models),
				"planter.toml": hostPathsBlueprint,
			})
			_, tr := runTraced(t, file, warren.Options{})
			workdir := ""
			for _, e := range decodeEvents(t, tr) {
				if e.Kind == "tool_result" && e.Tool == "shell" {
					workdir, _, _ = strings.Cut(e.Content, "\n")
				}
			}
			if !filepath.IsAbs(workdir) || !strings.Contains(workdir, "warren-run-") {
				t.Fatalf("the command printed %q as its workdir", workdir)
			}
			if _, err := os.Lstat(filepath.Dir(filepath.Dir(workdir))); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("the run's root is still there: %v", err)
			}
			v.check(t)
			if entries, err := os.ReadDir(v.dir); err != nil || len(entries) != 1 {
				t.Fatalf("the host folder now holds %v (%v)", entries, err)
			}
		})
	}
}

// TestWorkRootThroughALink: a --workdir given through a symbolic link (the operator's own) is
// resolved once, so its agents' workdirs are real folders and their file tools work.
func TestWorkRootThroughALink(t *testing.T) {
	realDir := t.TempDir()
	link := filepath.Join(t.TempDir(), "runs")
	if err := os.Symlink(realDir, link); err != nil {
		t.Fatal(err)
	}
	models := "[models.m]\nkind = \"scripted\"\nwhen_exhausted = \"finish\"\n" +
		"  [[models.m.turns]]\n    [[models.m.turns.calls]]\n    tool = \"write_file\"\n    args = { path = \"notes.txt\", content = \"kept\" }\n" + noChild
	file := writePolicyFiles(t, map[string]string{
		"s.toml":       hostPathsScenario("none", models),
		"planter.toml": hostPathsBlueprint,
	})
	if _, tr := runTraced(t, file, warren.Options{WorkRoot: link}); !bytes.Contains(tr, []byte(`Wrote 4 bytes to \"notes.txt\" (new file)`)) {
		t.Fatalf("write_file did not write; the trace:\n%s", tr)
	}
	if got, err := os.ReadFile(filepath.Join(realDir, "g", "g-0", "notes.txt")); err != nil || string(got) != "kept" {
		t.Fatalf("notes.txt = %q, %v", got, err)
	}
}

// TestDynamicToolsThroughAPlantedLink: an agent with dynamic_tools replaces its tools/ folder with
// a link to a host folder holding a secret (as a script, it would fail to compile with an error
// quoting it) and a valid tool; the host, scanning before the agent's next turn, reads neither.
func TestDynamicToolsThroughAPlantedLink(t *testing.T) {
	const token = "SECRET_TOKEN_7hQ2"
	for _, mode := range []string{"namespace", "none"} {
		t.Run(mode, func(t *testing.T) {
			requireMode(t, mode)
			host := t.TempDir()
			for name, content := range map[string]string{
				"leak.js": token + "\n",
				"host.js": `defineTool({ name: "host_tool", description: "d", parameters: { type: "object" }, run: function () { return "ran"; } });`,
			} {
				if err := os.WriteFile(filepath.Join(host, name), []byte(content), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			models := "[models.m]\nkind = \"scripted\"\nwhen_exhausted = \"finish\"\n" +
				shellTurn("m", "ln -s "+host+" tools") +
				"  [[models.m.turns]]\n    [[models.m.turns.calls]]\n    tool = \"host_tool\"\n    args = {}\n" + noChild
			dynamic := strings.Replace(hostPathsBlueprint, "[subagents]", "dynamic_tools = true\n[subagents]", 1)
			tr := runPlanted(t, dynamic, mode, models)
			if bytes.Contains(tr, []byte(token)) {
				t.Fatalf("the host file's secret reached the trace:\n%s", tr)
			}
			if !bytes.Contains(tr, []byte(`tool \"host_tool\" is not available`)) {
				t.Fatalf("the host folder's tool was not refused; the trace:\n%s", tr)
			}
		})
	}
}

// TestReapTouchesNoPlantedPath: reaping an agent whose workdir holds links to host paths and a
// FIFO, with a background command still running, kills the command and releases the sandbox
// without touching the workdir: the shapes are still there in the kept root, the host file they
// lead to is as it was, and no mount is left under the root.
func TestReapTouchesNoPlantedPath(t *testing.T) {
	for _, mode := range []string{"namespace", "none"} {
		t.Run(mode, func(t *testing.T) {
			requireMode(t, mode)
			v := newVictim(t)
			marker := fmt.Sprintf("warren-reap-paths-%s-%d", mode, os.Getpid())
			models := "[models.m]\nkind = \"scripted\"\nwhen_exhausted = \"finish\"\n" +
				shellTurn("m", fmt.Sprintf("ln -s %s d; ln -s %s f; mkfifo p", v.dir, v.file)) +
				"  [[models.m.turns]]\n    [[models.m.turns.calls]]\n    tool = \"shell\"\n" +
				fmt.Sprintf("    args = { command = \"sh -c 'sleep 30; :' %s\", background = true }\n", marker) + noChild
			file := writePolicyFiles(t, map[string]string{
				"s.toml":       hostPathsScenario(mode, models),
				"planter.toml": hostPathsBlueprint,
			})
			root := t.TempDir()
			sum, tr := runTraced(t, file, warren.Options{WorkRoot: root})
			if len(sum.Records) != 1 || sum.Records[0].Status != components.Done {
				t.Fatalf("records %+v", sum.Records)
			}
			if !bytes.Contains(tr, []byte("Started in the background")) {
				t.Fatalf("the background command did not start; the trace:\n%s", tr)
			}
			waitGone(t, marker, "after the agent was reaped")
			v.check(t)
			workdir := filepath.Join(root, "g", "g-0")
			for name, want := range map[string]fs.FileMode{"d": fs.ModeSymlink, "f": fs.ModeSymlink, "p": fs.ModeNamedPipe} {
				if info, err := os.Lstat(filepath.Join(workdir, name)); err != nil || info.Mode().Type() != want {
					t.Errorf("%s after reap: %v, %v; want it left as the command made it", name, info, err)
				}
			}
			mounts, err := os.ReadFile("/proc/self/mountinfo")
			if err != nil {
				t.Fatal(err)
			}
			if bytes.Contains(mounts, []byte(root)) {
				t.Fatalf("a mount is left under the run's root:\n%s", mounts)
			}
		})
	}
}

// grabScript is a script tool reading a file and writing another through the host functions,
// which run the built-in file tools for the calling agent.
const grabScript = `defineTool({
  name: "grab",
  description: "Reads precious and writes new.txt through the host.",
  parameters: { type: "object", properties: {} },
  run: function (args, host) {
    let out = "";
    try { out += "read: " + host.readFile("precious"); } catch (e) { out += "read refused: " + e.message; }
    try { out += "; write: " + host.writeFile("new.txt", "from a script"); } catch (e) { out += "; write refused: " + e.message; }
    return out;
  }
});
`

// TestScriptHostFunctionsRefuseALinkedWorkdir: a script's host functions are the built-in file
// tools run for the calling agent, so a child whose workdir its parent replaced with a link to a
// host folder can neither read nor write that folder through a script either.
func TestScriptHostFunctionsRefuseALinkedWorkdir(t *testing.T) {
	for _, mode := range []string{"namespace", "none"} {
		t.Run(mode, func(t *testing.T) {
			requireMode(t, mode)
			v := newVictim(t)
			models := "[host.tool_script_permissions]\nread_file = \"allow\"\nwrite_file = \"allow\"\n" +
				"[models.m]\nkind = \"scripted\"\nwhen_exhausted = \"finish\"\n" +
				shellTurn("m", fmt.Sprintf("mkdir -p agents && ln -s %s agents/1", v.dir)) +
				"  [[models.m.turns]]\n    [[models.m.turns.calls]]\n    tool = \"spawn_agent\"\n    args = { blueprint = \"planter\", task = \"grab\" }\n" +
				"  [[models.m.turns]]\n    [[models.m.turns.calls]]\n    tool = \"wait_for_agent\"\n    args = { id = \"g-0/1\" }\n" +
				"[models.child]\nkind = \"scripted\"\nwhen_exhausted = \"finish\"\n" +
				"  [[models.child.turns]]\n    [[models.child.turns.calls]]\n    tool = \"grab\"\n    args = {}\n"
			scenario := strings.Replace(hostPathsScenario(mode, models), "spawn_agent = \"allow\"\n", "spawn_agent = \"allow\"\ngrab = \"allow\"\n", 1)
			file := writePolicyFiles(t, map[string]string{
				"s.toml":        scenario,
				"planter.toml":  strings.Replace(hostPathsBlueprint, `"wait_for_agent"]`, `"wait_for_agent", "grab"]`, 1),
				"tools/grab.js": grabScript,
			})
			_, tr := runTraced(t, file, warren.Options{WorkRoot: t.TempDir()})
			v.check(t)
			if bytes.Contains(tr, []byte("precious host data")) {
				t.Fatalf("the script read the host file; the trace:\n%s", tr)
			}
			if _, err := os.Lstat(filepath.Join(v.dir, "new.txt")); err == nil {
				t.Fatal("the script wrote into the host folder")
			}
			if !bytes.Contains(tr, []byte("read refused: no usable workdir: the workdir's path goes through a symbolic link")) {
				t.Fatalf("the script's read was not refused for the link; the trace:\n%s", tr)
			}
		})
	}
}
