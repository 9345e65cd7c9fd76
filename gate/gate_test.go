package gate_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warrenhq/warren/blueprint"
	"github.com/warrenhq/warren/gate"
	"github.com/warrenhq/warren/hostconfig"
	"github.com/warrenhq/warren/policy"
	"github.com/warrenhq/warren/subagents"
	"github.com/warrenhq/warren/tools"
)

// declared is a tool that declares the given effects: an MCP or script tool as the gate sees it
// (undeclaredTool is one that declares none).
type declared struct {
	name    string
	effects tools.Effects
}

func (d declared) Spec() tools.Spec {
	return tools.Spec{Name: d.name, Description: "a test tool", Parameters: json.RawMessage(`{"type":"object"}`)}
}

func (d declared) Execute(*tools.ExecContext, json.RawMessage) (tools.Result, error) {
	return tools.TextResult("ran"), nil
}

// undeclaredTool does not implement tools.Declarer.
type undeclaredTool struct{ declared }

// withEffects implements tools.Declarer.
type withEffects struct{ declared }

func (w withEffects) Effects() tools.Effects { return w.effects }

var (
	_ tools.Tool     = undeclaredTool{}
	_ tools.Declarer = withEffects{}
)

// registry holds the built-ins, the sub-agent tools and three test tools: "mystery" (declares
// nothing), "lookup" (reads and reaches the network: an MCP tool annotated readOnlyHint) and
// "deploy" (writes).
func registry(t *testing.T) *tools.Registry {
	t.Helper()
	reg := tools.NewRegistry()
	if err := tools.RegisterBuiltins(reg); err != nil {
		t.Fatal(err)
	}
	if err := subagents.Register(reg); err != nil {
		t.Fatal(err)
	}
	for _, tool := range []tools.Tool{
		undeclaredTool{declared{name: "mystery"}},
		withEffects{declared{name: "lookup", effects: tools.EffectsDeclared | tools.EffectReads | tools.EffectNetwork}},
		withEffects{declared{name: "deploy", effects: tools.EffectsDeclared | tools.EffectWrites}},
	} {
		if err := reg.Register(tool); err != nil {
			t.Fatal(err)
		}
	}
	return reg
}

// agentBlueprint is the agent the tests decide for: stage "work" offers every tool the tests
// call; stage "plan" denies shell:rm.
const agentBlueprint = `
name = "worker"
[[stages]]
name = "work"
available_tools = ["read_file", "write_file", "edit_file", "list_dir", "shell", "todo_add", "mystery", "lookup", "deploy", "spawn_agent"]
  [[stages.transitions]]
  on = "done"
  to = "plan"
[[stages]]
name = "plan"
available_tools = ["read_file", "write_file", "shell", "spawn_agent"]
  [stages.tool_permissions]
  "shell:rm" = "deny"
`

func loadBlueprint(t *testing.T, src string, reg *tools.Registry) *blueprint.Blueprint {
	t.Helper()
	bp, err := blueprint.Parse("worker.toml", []byte(src), reg.Names())
	if err != nil {
		t.Fatal(err)
	}
	return bp
}

func hostWith(t *testing.T, src string) *hostconfig.Config {
	t.Helper()
	if src == "" {
		return hostconfig.Default()
	}
	path := filepath.Join(t.TempDir(), "host.toml")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := hostconfig.Load(path, registry(t).Names())
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// classifierFunc adapts a function to tools.AutoClassifier.
type classifierFunc func(tools.ClassifyRequest) (tools.ClassifierVerdict, error)

func (f classifierFunc) Classify(_ context.Context, r tools.ClassifyRequest) (tools.ClassifierVerdict, error) {
	return f(r)
}

// request builds the request of a call in stage st of bp.
func request(t *testing.T, reg *tools.Registry, bp *blueprint.Blueprint, st int, tool, args string, grants *policy.Grants) *gate.Request {
	t.Helper()
	h, _ := reg.Lookup(tool)
	stage := &bp.Stages[st]
	return &gate.Request{Agent: tools.AgentRef{ID: 1, Name: "worker-0"}, Stage: st, StageName: stage.Name,
		Visible: stage.Advertises(tool), Available: stage.AvailableTools, Handle: h, Tool: tool,
		Args: json.RawMessage(args), Grants: grants}
}

func TestDecide(t *testing.T) {
	reg := registry(t)
	bp := loadBlueprint(t, agentBlueprint, reg)
	denyRm := `[tool_permissions]
shell = "allow"
"shell:rm" = "deny"
write_file = "allow"
`
	escalate := classifierFunc(func(tools.ClassifyRequest) (tools.ClassifierVerdict, error) {
		return tools.ClassifierVerdict{Decision: tools.ClassifyAsk, Reason: "unsure"}, nil
	})
	byKey := classifierFunc(func(r tools.ClassifyRequest) (tools.ClassifierVerdict, error) {
		switch {
		case strings.Contains(strings.Join(r.Keys, " "), "curl"):
			return tools.ClassifierVerdict{Decision: tools.ClassifyDeny, Reason: "no downloads"}, nil
		case r.Tool == "write_file":
			return tools.ClassifierVerdict{Decision: tools.ClassifyAllow, Reason: "notes are fine"}, nil
		}
		return tools.ClassifierVerdict{}, errors.New("classifier down")
	})
	cases := []struct {
		name       string
		host       string
		modes      gate.Modes
		launch     policy.Launch
		stage      int
		tool, args string
		grants     []string // keys granted for the run
		verdict    policy.Verdict
		layer      string
		reason     string // substring
		keys       []string
	}{
		{name: "not offered by the stage", stage: 1, tool: "lookup", args: `{}`, verdict: policy.Deny,
			layer: gate.LayerVisibility, reason: `tool "lookup" is not available in stage "plan" (available: read_file, shell, spawn_agent, write_file)`, keys: []string{"lookup"}},
		{name: "not registered", tool: "ghost", args: `{}`, verdict: policy.Deny, layer: gate.LayerVisibility,
			reason: `tool "ghost" is not available`},
		{name: "invalid arguments", tool: "read_file", args: `{"path":5}`, verdict: policy.Deny, layer: gate.LayerSchema,
			reason: `invalid arguments for tool "read_file"`},
		{name: "arguments that are not JSON", tool: "read_file", args: `{path`, verdict: policy.Deny, layer: gate.LayerSchema},
		{name: "built-in default allows a read", tool: "read_file", args: `{"path":"a"}`, verdict: policy.Allow,
			layer: policy.LayerDefault, keys: []string{"read_file"}},
		{name: "a write asks by default", tool: "write_file", args: `{"path":"a","content":"b"}`, verdict: policy.Ask, layer: policy.LayerDefault},
		{name: "a grant covers the ask", tool: "write_file", args: `{"path":"a","content":"b"}`, grants: []string{"write_file"},
			verdict: policy.Allow, layer: policy.LayerGrantRun},
		{name: "safe shell line", tool: "shell", args: `{"command":"ls && cat notes"}`, verdict: policy.Allow,
			layer: policy.LayerSafe, keys: []string{"shell:cat", "shell:ls"}},
		{name: "host denies rm, wrapped", host: denyRm, tool: "shell", args: `{"command":"setpriv --reuid=1 rm -rf /"}`,
			verdict: policy.Deny, layer: policy.LayerHost, keys: []string{"shell:rm", "shell:setpriv"}},
		{name: "an opaque key under a shell deny", host: denyRm, tool: "shell", args: `{"command":"python3 -c 'import os'"}`,
			verdict: policy.Deny, layer: policy.LayerOpaque, reason: "python3 runs code in its own language"},
		{name: "an opaque key the host names", host: denyRm + `"shell:python3" = "allow"` + "\n", tool: "shell",
			args: `{"command":"python3 -c 'import os'"}`, verdict: policy.Allow, layer: policy.LayerHost},
		{name: "an opaque key without any deny", tool: "shell", args: `{"command":"make test"}`, verdict: policy.Ask, layer: policy.LayerDefault},
		{name: "stage deny", stage: 1, tool: "shell", args: `{"command":"rm -f x"}`, verdict: policy.Deny, layer: policy.LayerBlueprintStage},
		{name: "unparsed line under a deny", stage: 1, tool: "shell", args: `{"command":"$cmd x"}`, verdict: policy.Deny, layer: policy.LayerUnparsed},
		{name: "read-only: a read passes", modes: gate.Modes{SafetyMode: tools.SafetyReadOnly}, tool: "list_dir", args: `{}`,
			verdict: policy.Allow, layer: policy.LayerDefault},
		{name: "read-only: a write is refused", modes: gate.Modes{SafetyMode: tools.SafetyReadOnly}, tool: "write_file",
			args: `{"path":"a","content":"b"}`, verdict: policy.Deny, layer: gate.LayerReadOnly, reason: "write_file writes a"},
		{name: "read-only: a tool declaring nothing is refused", modes: gate.Modes{SafetyMode: tools.SafetyReadOnly}, host: "[tool_permissions]\nmystery = \"allow\"\n",
			tool: "mystery", args: `{}`, verdict: policy.Deny, layer: gate.LayerReadOnly, reason: "mystery does not declare what it does"},
		{name: "read-only: a tool declaring a write is refused although allowed", modes: gate.Modes{SafetyMode: tools.SafetyReadOnly},
			host: "[tool_permissions]\ndeploy = \"allow\"\n", tool: "deploy", args: `{}`, verdict: policy.Deny, layer: gate.LayerReadOnly,
			reason: "deploy declares that it writes"},
		{name: "read-only: a tool declaring reads passes to the layers", modes: gate.Modes{SafetyMode: tools.SafetyReadOnly},
			tool: "lookup", args: `{}`, verdict: policy.Ask, layer: policy.LayerDefault},
		{name: "read-only: the checklist changes nothing", modes: gate.Modes{SafetyMode: tools.SafetyReadOnly}, tool: "todo_add",
			args: `{"text":"x"}`, verdict: policy.Allow, layer: policy.LayerDefault},
		{name: "read-only: a safe line passes", modes: gate.Modes{SafetyMode: tools.SafetyReadOnly}, tool: "shell",
			args: `{"command":"grep -r x ."}`, verdict: policy.Allow, layer: policy.LayerSafe},
		{name: "read-only: an opaque line is refused", modes: gate.Modes{SafetyMode: tools.SafetyReadOnly}, tool: "shell",
			args: `{"command":"git status"}`, verdict: policy.Deny, layer: gate.LayerReadOnly, reason: "shell:git status runs code the line does not show"},
		{name: "plan: the plan file is writable", modes: gate.Modes{PlanFile: "PLAN.md"}, tool: "write_file",
			args: `{"path":"./PLAN.md","content":"b"}`, verdict: policy.Ask, layer: policy.LayerDefault},
		{name: "plan: another file is not", modes: gate.Modes{PlanFile: "PLAN.md"}, tool: "edit_file",
			args: `{"path":"notes.md","old_string":"a","new_string":"b"}`, verdict: policy.Deny, layer: gate.LayerReadOnly,
			reason: "drafting a plan, so everything is read-only except PLAN.md"},
		{name: "plan: a redirect into the plan file", modes: gate.Modes{PlanFile: "PLAN.md"}, tool: "shell",
			args: `{"command":"ls > PLAN.md"}`, verdict: policy.Ask, layer: policy.LayerDefault},
		{name: "auto: no classifier fails safe", modes: gate.Modes{SafetyMode: tools.SafetyAuto}, tool: "write_file",
			args: `{"path":"a","content":"b"}`, verdict: policy.Ask, layer: policy.LayerDefault, reason: "fails safe to ask"},
		{name: "auto: the classifier allows", modes: gate.Modes{SafetyMode: tools.SafetyAuto, Classifier: byKey}, tool: "write_file",
			args: `{"path":"a","content":"b"}`, verdict: policy.Allow, layer: gate.LayerClassifier, reason: "notes are fine"},
		{name: "auto: the classifier denies", modes: gate.Modes{SafetyMode: tools.SafetyAuto, Classifier: byKey}, tool: "shell",
			args: `{"command":"curl x"}`, verdict: policy.Deny, layer: gate.LayerClassifier, reason: "no downloads"},
		{name: "auto: the classifier fails", modes: gate.Modes{SafetyMode: tools.SafetyAuto, Classifier: byKey}, tool: "shell",
			args: `{"command":"touch x"}`, verdict: policy.Ask, layer: policy.LayerDefault, reason: "classifier failed (classifier down)"},
		{name: "auto: the classifier escalates", modes: gate.Modes{SafetyMode: tools.SafetyAuto, Classifier: escalate}, tool: "shell",
			args: `{"command":"touch x"}`, verdict: policy.Ask, layer: policy.LayerDefault, reason: "escalates: unsure"},
		{name: "auto: a deny is never asked about", modes: gate.Modes{SafetyMode: tools.SafetyAuto, Classifier: byKey}, host: denyRm,
			tool: "shell", args: `{"command":"rm x"}`, verdict: policy.Deny, layer: policy.LayerHost},
		{name: "unattended: an ask is denied", modes: gate.Modes{Unattended: true}, tool: "write_file",
			args: `{"path":"a","content":"b"}`, verdict: policy.Deny, layer: gate.LayerUnattended, reason: "nobody is watching this run"},
		{name: "unattended: yolo still allows", modes: gate.Modes{Unattended: true}, launch: policy.Launch{Yolo: true}, tool: "write_file",
			args: `{"path":"a","content":"b"}`, verdict: policy.Allow, layer: policy.LayerLaunchYolo},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pol, err := gate.ForGroup(bp, hostWith(t, tc.host), tc.launch, tc.modes)
			if err != nil {
				t.Fatal(err)
			}
			grants := &policy.Grants{}
			grants.Grant(tc.grants, policy.ScopeRun, tc.stage)
			req := request(t, reg, bp, tc.stage, tc.tool, tc.args, grants)
			d := gate.Decide(pol, req)
			if d.Verdict != tc.verdict || d.Layer != tc.layer || !strings.Contains(d.Reason, tc.reason) {
				t.Errorf("Decide = %v by %s (%s), want %v by %s containing %q", d.Verdict, d.Layer, d.Reason, tc.verdict, tc.layer, tc.reason)
			}
			if tc.keys != nil && strings.Join(d.Keys, " ") != strings.Join(tc.keys, " ") {
				t.Errorf("keys %q, want %q", d.Keys, tc.keys)
			}
			// Explain is the same function: it must reach the same decision.
			if x := gate.Explain(pol, req); x.Decision.Verdict != d.Verdict || x.Decision.Layer != d.Layer || x.Decision.Reason != d.Reason {
				t.Errorf("Explain decided %+v, Decide %+v", x.Decision, d)
			}
		})
	}
}

// TestInherit: a child is never looser than its ancestors, captured in their spawn-time stages;
// it inherits the read-only floor and auto mode, never grants or --allow.
func TestInherit(t *testing.T) {
	reg := registry(t)
	bp := loadBlueprint(t, agentBlueprint, reg)
	host := hostWith(t, "[tool_permissions]\nshell = \"allow\"\n[security]\nallow_blueprint_permissions = true\n")
	launch := policy.Launch{Allow: []string{"write_file"}}
	top, err := gate.ForGroup(bp, host, launch, gate.Modes{})
	if err != nil {
		t.Fatal(err)
	}
	child := func(t *testing.T, parent *gate.Policy, stage int) *gate.Policy {
		t.Helper()
		pol, err := gate.Inherit(gate.Parent{Policy: parent, Stage: stage, StageName: bp.Stages[stage].Name, Who: "of group worker"}, bp, host, launch, false)
		if err != nil {
			t.Fatal(err)
		}
		return pol
	}
	rm := `{"command":"rm -f x"}`
	t.Run("an ancestor's stage deny reaches the child in any stage", func(t *testing.T) {
		c := child(t, top, 1)
		d := gate.Decide(c, request(t, reg, bp, 0, "shell", rm, nil))
		if d.Verdict != policy.Deny || d.Layer != policy.LayerParent || !strings.Contains(d.Reason, `agent of group worker (stage "plan" when it spawned this agent's line)`) {
			t.Errorf("child: %+v, want deny by parent", d)
		}
		grand := child(t, c, 0)
		if d := gate.Decide(grand, request(t, reg, bp, 0, "shell", rm, nil)); d.Verdict != policy.Deny || d.Layer != policy.LayerParent {
			t.Errorf("grandchild: %+v, want the grandparent's deny", d)
		}
	})
	t.Run("a spawn from another stage does not carry it", func(t *testing.T) {
		if d := gate.Decide(child(t, top, 0), request(t, reg, bp, 0, "shell", rm, nil)); d.Verdict != policy.Allow {
			t.Errorf("child spawned from work: %+v, want allow", d)
		}
	})
	t.Run("--allow is not inherited", func(t *testing.T) {
		write := `{"path":"a","content":"b"}`
		if d := gate.Decide(top, request(t, reg, bp, 0, "write_file", write, nil)); d.Verdict != policy.Allow || d.Layer != policy.LayerLaunchAllow {
			t.Errorf("top: %+v, want allow by --allow", d)
		}
		if d := gate.Decide(child(t, top, 0), request(t, reg, bp, 0, "write_file", write, nil)); d.Verdict != policy.Ask {
			t.Errorf("child: %+v, want ask", d)
		}
	})
	t.Run("plan mode makes children read-only", func(t *testing.T) {
		planner, err := gate.ForGroup(bp, host, policy.Launch{}, gate.Modes{PlanFile: "PLAN.md"})
		if err != nil {
			t.Fatal(err)
		}
		c := child(t, planner, 0)
		if !c.ReadOnly() || c.PlanFile != "" {
			t.Fatalf("child of a planner: read-only %v plan %q", c.ReadOnly(), c.PlanFile)
		}
		if d := gate.Decide(c, request(t, reg, bp, 0, "write_file", `{"path":"PLAN.md","content":"b"}`, nil)); d.Layer != gate.LayerReadOnly {
			t.Errorf("child writing the plan file: %+v, want the read-only floor (the plan is its parent's)", d)
		}
	})
	t.Run("auto mode and its classifier are inherited", func(t *testing.T) {
		allow := classifierFunc(func(tools.ClassifyRequest) (tools.ClassifierVerdict, error) {
			return tools.ClassifierVerdict{Decision: tools.ClassifyAllow, Reason: "ok"}, nil
		})
		auto, err := gate.ForGroup(bp, hostconfig.Default(), policy.Launch{}, gate.Modes{SafetyMode: tools.SafetyAuto, Classifier: allow})
		if err != nil {
			t.Fatal(err)
		}
		pol, err := gate.Inherit(gate.Parent{Policy: auto, Who: "of group worker"}, bp, hostconfig.Default(), policy.Launch{}, false)
		if err != nil {
			t.Fatal(err)
		}
		if d := gate.Decide(pol, request(t, reg, bp, 0, "write_file", `{"path":"a","content":"b"}`, nil)); d.Layer != gate.LayerClassifier {
			t.Errorf("child in auto mode: %+v, want the classifier's", d)
		}
	})
	t.Run("a parent without a policy is an error", func(t *testing.T) {
		if _, err := gate.Inherit(gate.Parent{Who: "of group x"}, bp, host, launch, false); err == nil {
			t.Error("Inherit without a parent policy succeeded")
		}
	})
}

func TestPermits(t *testing.T) {
	reg := registry(t)
	bp := loadBlueprint(t, agentBlueprint, reg)
	pol, err := gate.ForGroup(bp, hostWith(t, "[tool_permissions]\nread_file = \"deny\"\n"), policy.Launch{}, gate.Modes{})
	if err != nil {
		t.Fatal(err)
	}
	if gate.Permits(pol, 0, "read_file", nil) {
		t.Error("read_file permitted under a host deny")
	}
	if !gate.Permits(pol, 0, "list_dir", nil) {
		t.Error("list_dir (default allow) not permitted")
	}
	grants := &policy.Grants{}
	grants.Grant([]string{"write_file"}, policy.ScopeRun, 0)
	if gate.Permits(pol, 0, "write_file", nil) || !gate.Permits(pol, 0, "write_file", grants) {
		t.Error("write_file: an ask is permitted only once granted")
	}
	if !gate.Permits(nil, 0, "read_file", nil) {
		t.Error("a nil policy is the built-in defaults")
	}
}

func TestExplanationString(t *testing.T) {
	reg := registry(t)
	bp := loadBlueprint(t, agentBlueprint, reg)
	pol, err := gate.ForGroup(bp, hostWith(t, "[tool_permissions]\nshell = \"allow\"\n\"shell:rm\" = \"deny\"\n"), policy.Launch{}, gate.Modes{Unattended: true})
	if err != nil {
		t.Fatal(err)
	}
	x := gate.Explain(pol, request(t, reg, bp, 0, "shell", `{"command":"ls > out.txt && python3 x.py"}`, nil))
	s := x.String()
	for _, want := range []string{
		"deny (opaque, key shell:python3): python3 runs code",
		"keys: shell:>out.txt, shell:ls, shell:python3 (opaque: python3 runs code",
		"  visibility        shell  pass  stage \"work\" offers it\n",
		"  permission: deny (opaque, key shell:python3)",
		"shell:python3  deny   denies: python3 runs code",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("explanation lacks %q:\n%s", want, s)
		}
	}
	x = gate.Explain(pol, request(t, reg, bp, 0, "write_file", `{"path":"a","content":"b"}`, nil))
	if s := x.String(); !strings.HasPrefix(s, "deny (unattended): ") || !strings.HasSuffix(s, "  unattended  write_file  deny  nobody is watching this run\n") {
		t.Errorf("unattended explanation:\n%s", s)
	}
}

// ExampleDecide decides three command lines under a host that allows the shell but denies rm:
// a wrapper does not hide rm, and an interpreter, which could run rm unseen, is denied too.
func ExampleDecide() {
	reg := tools.NewRegistry()
	if err := tools.RegisterBuiltins(reg); err != nil {
		panic(err)
	}
	bp, err := blueprint.Parse("worker.toml", []byte("name = \"worker\"\n[[stages]]\nname = \"work\"\navailable_tools = [\"shell\"]\n"), reg.Names())
	if err != nil {
		panic(err)
	}
	host := hostconfig.Default()
	host.ToolPermissions = map[string]policy.Verdict{"shell": policy.Allow, "shell:rm": policy.Deny}
	pol, err := gate.ForGroup(bp, host, policy.Launch{}, gate.Modes{})
	if err != nil {
		panic(err)
	}
	shell, _ := reg.Lookup("shell")
	for _, line := range []string{"ls -la", "timeout 5 rm -rf build", "perl -e 'unlink q(x)'"} {
		args, _ := json.Marshal(map[string]string{"command": line})
		d := gate.Decide(pol, &gate.Request{StageName: "work", Visible: true, Handle: shell, Tool: "shell", Args: args})
		fmt.Printf("%-24s %s by %s\n", line, d.Verdict, d.Layer)
	}
	// Output:
	// ls -la                   allow by host
	// timeout 5 rm -rf build   deny by host
	// perl -e 'unlink q(x)'    deny by opaque
}
