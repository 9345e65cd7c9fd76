package sandboxwire

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/warrenhq/warren/blueprint"
	"github.com/warrenhq/warren/components"
	"github.com/warrenhq/warren/internal/testenv"
	"github.com/warrenhq/warren/sandbox"
	"github.com/warrenhq/warren/scripting"
	"github.com/warrenhq/warren/tools"
)

func TestWarnDegradedOncePerWarning(t *testing.T) {
	var buf bytes.Buffer
	log := zerolog.New(&buf)
	h := New(nil, &log)
	notes := []tools.Note{
		{Fn: "sandbox", Text: "namespace ...", OK: true},
		{Fn: "sandbox", Text: "degraded", Err: "landlock: not in this kernel"},
		{Fn: "sandbox", Text: "degraded", Err: "landlock: not in this kernel"},
		{Fn: "read_file", Text: "x", Err: "refused"},
		{Fn: "sandbox", Text: "degraded", Err: "bwrap: not installed; running namespace"},
	}
	for _, n := range notes {
		h.WarnDegraded(n)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], "landlock: not in this kernel") || !strings.Contains(lines[1], "bwrap: not installed") {
		t.Errorf("log lines %q, want each distinct degradation once", lines)
	}
	New(nil, nil).WarnDegraded(notes[1]) // no logger: nothing to do, no panic
}

func TestStageBoundary(t *testing.T) {
	tight := sandbox.Ceiling(sandbox.Spec{})
	tight.Limits.Timeout /= 2
	p := &components.Profile{Sandbox: []sandbox.Boundary{sandbox.Ceiling(sandbox.Spec{}), tight}}
	if got := StageBoundary(p, 1); got.Limits.Timeout != tight.Limits.Timeout {
		t.Errorf("stage 1: %v, want the profile's", got)
	}
	if got := StageBoundary(&components.Profile{}, 0); got.String() != defaultBoundary.String() {
		t.Errorf("a profile without boundaries: %v, want the default ceiling", got)
	}
}

// commandTool stands in for a script tool: it runs commands (through host.shell) without being
// the shell tool.
type commandTool struct{ name string }

func (c commandTool) Spec() tools.Spec {
	return tools.Spec{Name: c.name, Description: "runs commands", Parameters: []byte(`{"type":"object"}`)}
}
func (commandTool) Execute(*tools.ExecContext, json.RawMessage) (tools.Result, error) {
	return tools.Result{}, nil
}
func (commandTool) UsesCommands() bool { return true }

// TestRunsCommands: an agent may run commands when a stage advertises a tool that runs them,
// whatever its name, or when its blueprint sets dynamic_tools; file and other tools do not count.
func TestRunsCommands(t *testing.T) {
	reg := tools.NewRegistry()
	if err := tools.RegisterBuiltins(reg); err != nil {
		t.Fatal(err)
	}
	if err := reg.Register(commandTool{"build"}); err != nil {
		t.Fatal(err)
	}
	scoped := tools.NewScoped(reg)
	tests := []struct {
		name, src string
		want      bool
	}{
		{"file tools only", `name = "a"
[[stages]]
name = "s"
available_tools = ["read_file", "write_file"]`, false},
		{"the shell tool", `name = "a"
[[stages]]
name = "s"
available_tools = ["read_file"]
[[stages]]
name = "t"
available_tools = ["shell"]`, true},
		{"a script tool that runs commands", `name = "a"
[[stages]]
name = "s"
available_tools = ["build", "write_file"]`, true},
		{"dynamic tools", `name = "a"
dynamic_tools = true
[[stages]]
name = "s"
available_tools = ["write_file"]`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bp, err := blueprint.Parse("a.toml", []byte(tt.src), reg.Names())
			if err != nil {
				t.Fatal(err)
			}
			if got := RunsCommands(&components.Profile{Blueprint: bp, Tools: scoped}); got != tt.want {
				t.Errorf("runsCommands = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestCommandsTellTheWorkRoot: the manager Runner makes for an agent is told its profile's work
// root, so its contained commands see only the agent's own workdir of it.
func TestCommandsTellTheWorkRoot(t *testing.T) {
	testenv.MustHave(t, sandbox.Probe().Unavailable(sandbox.ModeNamespace)) // the default boundary's mode
	root, err := os.MkdirTemp("/var/tmp", "warren-systems-root-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(root) })
	if err := os.Chmod(root, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, other := range []string{"g/b", "h"} {
		if err := os.MkdirAll(filepath.Join(root, other), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	h := New(nil, nil)
	p := &components.Profile{WorkRoot: root, Sandbox: []sandbox.Boundary{sandbox.Ceiling(sandbox.Spec{})}}
	d := &components.AgentData{Workdir: filepath.Join(root, "g", "a")}
	if h.Runner(d, p) == nil || d.Sandbox == nil {
		t.Fatal("no manager for an agent with a workdir")
	}
	mgr := d.Sandbox
	t.Cleanup(func() { _ = mgr.Close() })
	o, err := mgr.Run(context.Background(), "ls -A "+root+"; ls -A "+filepath.Join(root, "g"))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Fields(string(o.Output)); !slices.Equal(got, []string{"g", "a"}) {
		t.Errorf("the work root as the agent sees it: %q, want only g/a", o.Output)
	}
}

// TestCommandsNeedAWorkdir: an agent without a workdir (a workdir template that left the run's
// root gives none) gets no command runner, so the shell tool and host.shell refuse its calls; a
// manager made for it would have run them in the host's current directory.
func TestCommandsNeedAWorkdir(t *testing.T) {
	h := New(nil, nil)
	p := &components.Profile{Sandbox: []sandbox.Boundary{sandbox.Ceiling(sandbox.Spec{})}}
	d := &components.AgentData{}
	if runner := h.Runner(d, p); runner != nil || d.Sandbox != nil {
		t.Fatalf("commands for an agent without a workdir: %v (manager %v), want none", runner, d.Sandbox)
	}
	ec := tools.NewExecContext(context.Background(), "c1", 1, tools.AgentRef{ID: 1, Name: "a"}, d.Workdir)
	ec.Commands = h.Runner(d, p)
	if _, err := (tools.Shell{}).Execute(ec, []byte(`{"command":"echo ran > escaped"}`)); !errors.Is(err, tools.ErrNoSandbox) {
		t.Errorf("the shell tool: %v, want tools.ErrNoSandbox", err)
	}
	script, err := scripting.Compile("run.js", []byte(`defineTool({name: "run", description: "runs", parameters: {type: "object"},
  run: function (args, host) { try { return host.shell("echo ran > escaped"); } catch (e) { return "refused: " + e.message; } }});`))
	if err != nil {
		t.Fatal(err)
	}
	ec.ScriptPermit = func(string) error { return nil }
	res, err := (&scripting.Tool{Script: script, Engine: scripting.NewEngine(scripting.Limits{})}).Execute(ec, []byte(`{}`))
	if err != nil || res.Content != "refused: "+scripting.ErrNoSandbox.Error() {
		t.Errorf("host.shell: %q, %v; want it refused for want of a sandbox", res.Content, err)
	}
}
