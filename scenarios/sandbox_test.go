package scenarios_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/warrenhq/warren"
	"github.com/warrenhq/warren/components"
	"github.com/warrenhq/warren/scenarios"
)

// sandboxBlueprint is a one-stage blueprint running shell commands, with tables added by the test.
const sandboxBlueprint = `name = "boxed"
%s
[[stages]]
name = "work"
available_tools = ["shell", "spawn_agent", "kill_agent"]
max_iterations = 6
%s
`

// sandboxScenario runs one agent of sandboxBlueprint under the host tables hostTables, with the
// scripted turns turns.
func sandboxScenario(hostTables, turns string) string {
	return `name = "boxed"
seed = 5
[blueprints]
boxed = "boxed.toml"
[host.tool_permissions]
shell = "allow"
spawn_agent = "allow"
kill_agent = "allow"
` + hostTables + `
[models.m]
kind = "scripted"
when_exhausted = "finish"
` + turns + `
[[groups]]
name = "g"
blueprint = "boxed"
model = "m"
count = 1
`
}

func TestSandboxLoadErrors(t *testing.T) {
	tests := []struct {
		name, host, blueprintTable, stageTable string
		want                                   []string
	}{
		{"a blueprint turning the host's sandbox off", "", "[sandbox]\nmode = \"none\"", "", []string{
			`blueprint "boxed" under this scenario's host config`, `sandbox.mode: blueprint [sandbox] loosens the host's sandbox: mode "none" under a host sandbox of mode "namespace"`}},
		{"a stage turning the network on", "", "", "[stages.sandbox]\nnetwork = true", []string{
			`stages[0].sandbox.network: stage "work" [stages.sandbox] loosens the host's sandbox: network = true where the outer layer has the network off`}},
		{"a writable path the host does not allow", "[host.sandbox]\nwritable = [\"/srv/a\"]", "[sandbox]\nwritable = [\"/etc\"]", "", []string{
			"writable path /etc, which the outer layer does not allow (allowed: [/srv/a])"}},
		{"an unknown mode", "[host.sandbox]\nmode = \"docker\"", "", "", []string{
			`host.sandbox.mode: unknown sandbox mode "docker"; valid modes: none, namespace, bwrap`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := writePolicyFiles(t, map[string]string{
				"s.toml":     sandboxScenario(tt.host, ""),
				"boxed.toml": fmt.Sprintf(sandboxBlueprint, tt.blueprintTable, tt.stageTable),
			})
			_, err := scenarios.Load(file, scenarios.KnownTools())
			if err == nil {
				t.Fatal("the scenario loads")
			}
			for _, want := range tt.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error:\n%v\nwant it to contain %q", err, want)
				}
			}
		})
	}
}

// processesWith lists the host processes whose command line contains marker.
func processesWith(t *testing.T, marker string) []string {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	for _, e := range entries {
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && bytes.Contains(cmdline, []byte(marker)) && !bytes.Contains(cmdline, []byte("go test")) {
			found = append(found, e.Name()+": "+strings.ReplaceAll(string(cmdline), "\x00", " "))
		}
	}
	return found
}

// waitGone fails t unless every process whose command line holds marker is gone within a few
// seconds (a killed process tree takes a moment to be reaped).
func waitGone(t *testing.T, marker, when string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for left := processesWith(t, marker); len(left) > 0; left = processesWith(t, marker) {
		if time.Now().After(deadline) {
			t.Fatalf("processes left %s: %q", when, left)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestSandboxTeardown: whatever an agent started, a command still running in its turn or one sent
// to the background, is killed when the agent ends, in the contained modes and in none.
func TestSandboxTeardown(t *testing.T) {
	for _, mode := range []string{"namespace", "bwrap", "none"} {
		t.Run(mode, func(t *testing.T) {
			requireMode(t, mode)
			marker := fmt.Sprintf("warren-teardown-%s-%d", mode, time.Now().UnixNano())
			// The background command outlives its call; the agent then ends its stage at once,
			// and reap's sandbox teardown must end the command.
			turns := fmt.Sprintf(`  [[models.m.turns]]
    [[models.m.turns.calls]]
    tool = "shell"
    args = { command = "sh -c 'sleep 30; :' %s", background = true }
  [[models.m.turns]]
  text = "done"
`, marker)
			file := writePolicyFiles(t, map[string]string{
				"s.toml":     sandboxScenario("[host.sandbox]\nmode = \""+mode+"\"", turns),
				"boxed.toml": fmt.Sprintf(sandboxBlueprint, "", ""),
			})
			sum, _ := runTraced(t, file, warren.Options{WorkRoot: t.TempDir()})
			if len(sum.Records) != 1 || sum.Records[0].Status != components.Done {
				t.Fatalf("records %+v", sum.Records)
			}
			waitGone(t, marker, "after the agent was reaped")
		})
	}
}

// TestSandboxKillAgent: kill_agent ends a child whose shell command is running; the command's
// whole tree dies with it. The child's command starts in the tick after its spawn, the tick the
// parent's kill is settled in, while the tick still waits for the command.
func TestSandboxKillAgent(t *testing.T) {
	requireMode(t, "namespace")
	marker := fmt.Sprintf("warren-kill-%d", time.Now().UnixNano())
	file := writePolicyFiles(t, map[string]string{
		"s.toml": `name = "kill"
seed = 5
[blueprints]
boxed = "boxed.toml"
[spawn.boxed]
model = "child"
[host.tool_permissions]
shell = "allow"
spawn_agent = "allow"
kill_agent = "allow"
[models.parent]
kind = "scripted"
when_exhausted = "finish"
  [[models.parent.turns]]
    [[models.parent.turns.calls]]
    tool = "spawn_agent"
    args = { blueprint = "boxed", task = "run" }
  [[models.parent.turns]]
    [[models.parent.turns.calls]]
    tool = "kill_agent"
    args = { id = "g-0/1" }
[models.child]
kind = "scripted"
when_exhausted = "finish"
  [[models.child.turns]]
    [[models.child.turns.calls]]
    tool = "shell"
    args = { command = "sh -c '(setsid sleep 60 &); sleep 60; :' ` + marker + `" }
[[groups]]
name = "g"
blueprint = "boxed"
model = "parent"
count = 1
`,
		"boxed.toml": fmt.Sprintf(sandboxBlueprint, "[subagents]\nspawnable = [\"boxed\"]", ""),
	})
	sum, _ := runTraced(t, file, warren.Options{WorkRoot: t.TempDir()})
	var child components.FinalRecord
	for _, r := range sum.Records {
		if r.Name == "g-0/1" {
			child = r
		}
	}
	// Killed by the call, in the tick its command started, not by its parent's end later.
	if child.Status != components.Killed || child.Reason != "killed by g-0 (kill_agent)" || child.Tick != 1 {
		t.Fatalf("the child's record %+v, want killed by g-0's kill_agent at tick 1", child)
	}
	waitGone(t, marker, "after kill_agent")
}

// TestSandboxAgentsKeepToTheirWorkdirs runs a scenario whose work root is outside /tmp (as
// --workdir makes it): agent a writes a secret and spawns a child; agent b, a sibling, tries to
// read the secret by a relative and an absolute path; the child tries to read its parent's secret
// and writes a note, which the parent then reads. In the contained modes only the parent's read
// works; mode none contains nothing, and every read works there.
func TestSandboxAgentsKeepToTheirWorkdirs(t *testing.T) {
	for _, mode := range []string{"namespace", "bwrap", "none"} {
		t.Run(mode, func(t *testing.T) {
			requireMode(t, mode)
			root, err := os.MkdirTemp("/var/tmp", "warren-scenario-root-")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = os.RemoveAll(root) })
			if err := os.Chmod(root, 0o755); err != nil { // searchable by the uid commands run as
				t.Fatal(err)
			}
			secret := filepath.Join(root, "a", "a-0", "secret.txt")
			file := writePolicyFiles(t, map[string]string{
				"s.toml": `name = "apart"
seed = 5
[blueprints]
boxed = "boxed.toml"
[spawn.boxed]
model = "child"
[host.tool_permissions]
shell = "allow"
write_file = "allow"
spawn_agent = "allow"
kill_agent = "allow"
[host.sandbox]
mode = "` + mode + `"
[models.ma]
kind = "scripted"
when_exhausted = "finish"
  [[models.ma.turns]]
    [[models.ma.turns.calls]]
    tool = "shell"
    args = { command = "echo a-secret > secret.txt" }
  [[models.ma.turns]]
    [[models.ma.turns.calls]]
    tool = "spawn_agent"
    args = { blueprint = "boxed", task = "note" }
  [[models.ma.turns]]
    [[models.ma.turns.calls]]
    tool = "shell"
    args = { command = "true" }
  [[models.ma.turns]]
    [[models.ma.turns.calls]]
    tool = "shell"
    args = { command = "cat agents/1/note.txt" }
[models.mb]
kind = "scripted"
when_exhausted = "finish"
  [[models.mb.turns]]
    [[models.mb.turns.calls]]
    tool = "shell"
    args = { command = "true" }
  [[models.mb.turns]]
    [[models.mb.turns.calls]]
    tool = "shell"
    args = { command = "cat ../../a/a-0/secret.txt; cat ` + secret + `" }
[models.child]
kind = "scripted"
when_exhausted = "finish"
  [[models.child.turns]]
    [[models.child.turns.calls]]
    tool = "shell"
    args = { command = "echo child-note > note.txt; cat ../../secret.txt; cat ` + secret + `" }
[[groups]]
name = "a"
blueprint = "boxed"
model = "ma"
count = 1
[[groups]]
name = "b"
blueprint = "boxed"
model = "mb"
count = 1
`,
				"boxed.toml": fmt.Sprintf(sandboxBlueprint, "[subagents]\nspawnable = [\"boxed\"]", ""),
			})
			_, trace := runTraced(t, file, warren.Options{WorkRoot: root})
			results := shellResults(t, trace)
			readsSecret := func(call string) bool { return strings.Contains(results[call], "a-secret") }
			contained := mode != "none"
			for _, call := range []string{"b-0-t1-c0", "a-0/1-t0-c0"} {
				if _, ok := results[call]; !ok {
					t.Fatalf("no result for %s: %q", call, results)
				}
				if readsSecret(call) == contained {
					t.Errorf("mode %s: %s read a's secret: %v; result %q", mode, call, readsSecret(call), results[call])
				}
			}
			if data, err := os.ReadFile(secret); err != nil || string(data) != "a-secret\n" {
				t.Fatalf("a's secret on the host: %q, %v", data, err)
			}
			if !strings.Contains(results["a-0-t3-c0"], "child-note") {
				t.Errorf("the parent cannot read its child's note: %q", results["a-0-t3-c0"])
			}
		})
	}
}

// shellResults maps the call id of every tool_result in a trace to its content.
func shellResults(t *testing.T, trace []byte) map[string]string {
	t.Helper()
	out := map[string]string{}
	for line := range bytes.Lines(trace) {
		var ev struct {
			Kind    string `json:"kind"`
			CallID  string `json:"call_id"`
			Content string `json:"content"`
		}
		if err := json.Unmarshal(line, &ev); err != nil {
			t.Fatalf("trace line %q: %v", line, err)
		}
		if ev.Kind == "tool_result" {
			out[ev.CallID] = ev.Content
		}
	}
	return out
}
