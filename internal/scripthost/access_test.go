package scripthost

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/warrenhq/warren/blueprint"
	"github.com/warrenhq/warren/components"
	"github.com/warrenhq/warren/gate"
	"github.com/warrenhq/warren/hostconfig"
	"github.com/warrenhq/warren/policy"
	"github.com/warrenhq/warren/subagents"
	"github.com/warrenhq/warren/tools"
)

// ran is one run of a fakeTool: the context it got.
type ran struct {
	tool, callID string
	seed         uint64
	hasHost      bool // ScriptPermit and CallTool were set
	agent        tools.AgentRef
	workdir      string
	intent       string
	ctxValue     any
}

// ctxKey marks the context a CallTool was given, to see that the called tool runs under it.
type ctxKey struct{}

// fakeTool records its runs into log; host makes it a host user (a script tool), and call, when
// set, runs inside it with the context it got.
type fakeTool struct {
	name string
	host bool
	log  *[]ran
	call func(ec *tools.ExecContext) (tools.Result, error)
}

func (f fakeTool) Spec() tools.Spec {
	return tools.Spec{Name: f.name, Description: "a test tool",
		Parameters: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"additionalProperties":false}`)}
}

func (f fakeTool) Execute(ec *tools.ExecContext, _ json.RawMessage) (tools.Result, error) {
	*f.log = append(*f.log, ran{tool: f.name, callID: ec.CallID, seed: ec.Seed, hasHost: ec.ScriptPermit != nil && ec.CallTool != nil,
		agent: ec.Agent, workdir: ec.Workdir, intent: ec.Intent, ctxValue: ec.Context().Value(ctxKey{})})
	if f.call != nil {
		return f.call(ec)
	}
	return tools.TextResult(f.name + " ran"), nil
}

func (f fakeTool) UsesHost() bool { return f.host }

// accessBlueprint offers every tool the tests call but shell, and denies list_dir in its stage.
const accessBlueprint = `
name = "worker"
[[stages]]
name = "work"
available_tools = ["read_file", "write_file", "list_dir", "spawn_agent", "ask_user_text", "echo", "probe", "recurse"]
  [stages.tool_permissions]
  list_dir = "deny"
`

// fixture is one agent of accessBlueprint: "echo" and "recurse" are allowed by the host, "probe"
// (like every tool nothing names) asks.
type fixture struct {
	bp   *blueprint.Blueprint
	host *hostconfig.Config
	reg  *tools.Registry
	log  *[]ran
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{reg: tools.NewRegistry(), log: new([]ran)}
	if err := tools.RegisterBuiltins(f.reg); err != nil {
		t.Fatal(err)
	}
	if err := subagents.Register(f.reg); err != nil {
		t.Fatal(err)
	}
	recurse := fakeTool{name: "recurse", host: true, log: f.log, call: func(ec *tools.ExecContext) (tools.Result, error) {
		res, err := ec.CallTool(ec.Context(), "recurse", json.RawMessage(`{}`))
		if err != nil {
			return tools.Result{}, fmt.Errorf("nested: %w", err)
		}
		return res, nil
	}}
	for _, tool := range []tools.Tool{fakeTool{name: "echo", log: f.log}, fakeTool{name: "probe", log: f.log}, recurse} {
		if err := f.reg.Register(tool); err != nil {
			t.Fatal(err)
		}
	}
	bp, err := blueprint.Parse("worker.toml", []byte(accessBlueprint), f.reg.Names())
	if err != nil {
		t.Fatal(err)
	}
	f.bp = bp
	f.host = hostconfig.Default()
	f.host.ToolPermissions = map[string]policy.Verdict{"echo": policy.Allow, "recurse": policy.Allow, "write_file": policy.Allow}
	return f
}

func (f *fixture) policy(t *testing.T, m gate.Modes) *gate.Policy {
	t.Helper()
	pol, err := gate.ForGroup(f.bp, f.host, policy.Launch{}, m)
	if err != nil {
		t.Fatal(err)
	}
	return pol
}

// bind binds a call "call-1" of agent 7 (worker-0) under pol with the agent's grants and
// returns its context.
func (f *fixture) bind(pol *gate.Policy, dec gate.Decider, seed uint64, grants *policy.Grants) *tools.ExecContext {
	ec := tools.NewExecContext(context.Background(), "call-1", 3, tools.AgentRef{ID: 7, Name: "worker-0"}, "/work/worker-0")
	ec.Intent = "write the notes"
	d := &components.AgentData{Name: "worker-0", Tools: components.AgentToolState{Stage: 0, Grants: grants}}
	p := &components.Profile{Group: "workers", Blueprint: f.bp, Tools: tools.NewScoped(f.reg), Policy: pol}
	Bind(ec, dec, seed, &components.Identity{ID: 7}, d, p, 0)
	return ec
}

func TestBindSetsTheCallbacksAndSeed(t *testing.T) {
	f := newFixture(t)
	pol := f.policy(t, gate.Modes{})
	seedOf := func(seed, agent uint64, call string) uint64 {
		ec := tools.NewExecContext(nil, call, 1, tools.AgentRef{ID: agent}, "")
		d := &components.AgentData{}
		p := &components.Profile{Blueprint: f.bp, Tools: tools.NewScoped(f.reg), Policy: pol}
		Bind(ec, gate.Standard{}, seed, &components.Identity{ID: agent}, d, p, 0)
		if ec.ScriptPermit == nil || ec.CallTool == nil {
			t.Fatal("Bind left ScriptPermit or CallTool unset")
		}
		return ec.Seed
	}
	base := seedOf(1, 7, "call-1")
	if again := seedOf(1, 7, "call-1"); again != base {
		t.Fatalf("same run seed, agent and call: seeds %d and %d", base, again)
	}
	for _, tc := range []struct {
		name  string
		seed  uint64
		agent uint64
		call  string
	}{
		{name: "another run seed", seed: 2, agent: 7, call: "call-1"},
		{name: "another agent", seed: 1, agent: 8, call: "call-1"},
		{name: "another call", seed: 1, agent: 7, call: "call-2"},
		{name: "a call id that is a prefix", seed: 1, agent: 7, call: "call-"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := seedOf(tc.seed, tc.agent, tc.call); got == base {
				t.Fatalf("seed %d equals the base call's", got)
			}
		})
	}
}

func TestCallToolRefuses(t *testing.T) {
	f := newFixture(t)
	cases := []struct {
		name, tool, args string
		modes            gate.Modes
		want             string // substring of the error
	}{
		{name: "unknown tool", tool: "ghost", args: `{}`, want: `tool "ghost" is not available in stage "work"`},
		{name: "a tool the stage does not offer", tool: "shell", args: `{"command":"ls"}`, want: `tool "shell" is not available in stage "work"`},
		{name: "a sub-agent tool", tool: "spawn_agent", args: `{"blueprint":"worker","task":"t"}`,
			want: "spawn_agent changes the agent tree, which only the agent's own turn may do"},
		{name: "an interactive tool", tool: "ask_user_text", args: `{"question":"which file?"}`,
			want: "ask_user_text asks a person, which a tool running on a worker cannot wait for"},
		{name: "a tool the permissions make ask", tool: "probe", args: `{}`,
			want: "probe asks (default: "},
		{name: "invalid arguments", tool: "echo", args: `{"text":5}`, want: `invalid arguments for tool "echo"`},
		{name: "arguments that are not JSON", tool: "echo", args: `{text`, want: `invalid arguments for tool "echo"`},
		{name: "a stage deny", tool: "list_dir", args: `{}`, want: "permission denied for list_dir by " + policy.LayerBlueprintStage},
		{name: "the read-only floor", tool: "write_file", args: `{"path":"a","content":"b"}`, modes: gate.Modes{SafetyMode: tools.SafetyReadOnly},
			want: "permission denied for write_file by " + gate.LayerReadOnly},
		{name: "an ask nobody watches", tool: "probe", args: `{}`, modes: gate.Modes{Unattended: true},
			want: "permission denied for probe by " + gate.LayerUnattended},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			*f.log = nil
			ec := f.bind(f.policy(t, tc.modes), gate.Standard{}, 1, nil)
			_, err := ec.CallTool(context.Background(), tc.tool, json.RawMessage(tc.args))
			if !errors.Is(err, ErrCallRefused) {
				t.Fatalf("CallTool(%s) = %v, want an error wrapping ErrCallRefused", tc.tool, err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("CallTool(%s) = %q, want it to contain %q", tc.tool, err, tc.want)
			}
			if len(*f.log) != 0 {
				t.Fatalf("a refused call ran: %+v", *f.log)
			}
		})
	}
}

func TestCallToolRuns(t *testing.T) {
	f := newFixture(t)
	ec := f.bind(f.policy(t, gate.Modes{}), gate.Standard{}, 1, nil)
	ctx := context.WithValue(context.Background(), ctxKey{}, "the script's budget")
	res, err := ec.CallTool(ctx, "echo", json.RawMessage(`{"text":"hi"}`))
	if err != nil || res.Content != "echo ran" {
		t.Fatalf("CallTool(echo) = %+v, %v; want it to run", res, err)
	}
	if len(*f.log) != 1 {
		t.Fatalf("runs %+v, want one", *f.log)
	}
	got := (*f.log)[0]
	if got.callID != "call-1/echo-1" {
		t.Errorf("called tool's CallID %q, want call-1/echo-1", got.callID)
	}
	if got.ctxValue != "the script's budget" {
		t.Errorf("called tool ran under %v, want the context CallTool was given", got.ctxValue)
	}
	if got.agent != (tools.AgentRef{ID: 7, Name: "worker-0"}) || got.workdir != "/work/worker-0" || got.intent != "write the notes" {
		t.Errorf("called tool ran as %+v in %q with intent %q, want the caller's", got.agent, got.workdir, got.intent)
	}
	if got.hasHost {
		t.Error("a tool that does not use the host got the host callbacks")
	}
}

// recordingDecider is the standard gate, recording what it was asked.
type recordingDecider struct{ reqs []gate.Request }

func (r *recordingDecider) Decide(pol *gate.Policy, req *gate.Request) gate.Decision {
	r.reqs = append(r.reqs, *req)
	return gate.Decide(pol, req)
}

// TestCallToolDecidesThroughTheGivenGateFromASnapshot: CallTool asks the decider Bind was given,
// with the agent, the stage and the turn's intent, and with the grants the agent held at Bind: a
// grant given later does not reach a call already bound.
func TestCallToolDecidesThroughTheGivenGateFromASnapshot(t *testing.T) {
	f := newFixture(t)
	pol := f.policy(t, gate.Modes{})
	granted := &policy.Grants{}
	granted.Grant([]string{"probe"}, policy.ScopeRun, 0)
	dec := &recordingDecider{}
	ec := f.bind(pol, dec, 1, granted)
	if _, err := ec.CallTool(context.Background(), "probe", json.RawMessage(`{}`)); err != nil {
		t.Fatalf("probe under a run grant: %v", err)
	}
	if len(dec.reqs) != 1 {
		t.Fatalf("decider asked %d times, want once", len(dec.reqs))
	}
	req := dec.reqs[0]
	if req.Tool != "probe" || !req.Visible || req.StageName != "work" || req.Agent.ID != 7 || req.Intent != "write the notes" || req.Handle == nil {
		t.Errorf("decider saw %+v", req)
	}
	if req.Grants == granted {
		t.Error("the decider saw the agent's live grants, not a copy taken at Bind")
	}

	later := &policy.Grants{}
	ec = f.bind(pol, gate.Standard{}, 1, later)
	later.Grant([]string{"probe"}, policy.ScopeRun, 0)
	if _, err := ec.CallTool(context.Background(), "probe", json.RawMessage(`{}`)); !errors.Is(err, ErrCallRefused) {
		t.Fatalf("probe granted after Bind: %v, want refused (the call decides from the grants at Bind)", err)
	}
}

// TestCallToolDepth: a script tool calling itself runs maxCallDepth deep, each level with its own
// call id, seed and callbacks, and the call one deeper is refused.
func TestCallToolDepth(t *testing.T) {
	f := newFixture(t)
	ec := f.bind(f.policy(t, gate.Modes{}), gate.Standard{}, 1, nil)
	_, err := ec.CallTool(context.Background(), "recurse", json.RawMessage(`{}`))
	if !errors.Is(err, ErrCallRefused) || !strings.Contains(err.Error(), fmt.Sprintf("tools may call tools only %d deep", maxCallDepth)) {
		t.Fatalf("recursion ended with %v, want the depth refusal", err)
	}
	runs := *f.log
	if len(runs) != maxCallDepth {
		t.Fatalf("recurse ran %d times, want %d", len(runs), maxCallDepth)
	}
	seeds := map[uint64]bool{ec.Seed: true}
	id := "call-1"
	for i, r := range runs {
		id += fmt.Sprintf("/recurse-%d", i+1)
		if r.callID != id {
			t.Errorf("level %d: CallID %q, want %q", i+1, r.callID, id)
		}
		if !r.hasHost {
			t.Errorf("level %d: a host-using tool got no callbacks", i+1)
		}
		if seeds[r.seed] {
			t.Errorf("level %d: seed %d repeats an outer call's", i+1, r.seed)
		}
		seeds[r.seed] = true
	}
}

func TestScriptPermit(t *testing.T) {
	f := newFixture(t)
	cases := []struct {
		name  string
		modes gate.Modes
		fn    string
		want  string // "" allowed, else a substring of the refusal
	}{
		{name: "a write the host allows", fn: policy.FnWriteFile},
		{name: "a read", fn: policy.FnReadFile},
		{name: "env (allowed by default)", fn: policy.FnEnv},
		{name: "list_dir follows the stage deny", fn: policy.FnListDir, want: "list_dir is not allowed for scripts by " + policy.LayerScriptDefault},
		{name: "the shell asks, so scripts may not", fn: policy.FnShell, want: "shell is not allowed for scripts"},
		{name: "http_get (denied by default)", fn: policy.FnHTTPGet, want: "http_get is not allowed for scripts"},
		{name: "read-only: write_file", modes: gate.Modes{SafetyMode: tools.SafetyReadOnly}, fn: policy.FnWriteFile,
			want: `write_file is not allowed for scripts while the agent is read-only (stage "work")`},
		{name: "read-only: shell", modes: gate.Modes{SafetyMode: tools.SafetyReadOnly}, fn: policy.FnShell, want: "while the agent is read-only"},
		{name: "read-only: http_post", modes: gate.Modes{SafetyMode: tools.SafetyReadOnly}, fn: policy.FnHTTPPost, want: "while the agent is read-only"},
		{name: "read-only: a read still runs", modes: gate.Modes{SafetyMode: tools.SafetyReadOnly}, fn: policy.FnReadFile},
		{name: "drafting a plan: write_file", modes: gate.Modes{PlanFile: "PLAN.md"}, fn: policy.FnWriteFile, want: "while the agent is read-only"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ec := f.bind(f.policy(t, tc.modes), gate.Standard{}, 1, nil)
			err := ec.ScriptPermit(tc.fn)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("ScriptPermit(%s) = %v, want allowed", tc.fn, err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("ScriptPermit(%s) = %v, want a refusal containing %q", tc.fn, err, tc.want)
			}
		})
	}
}
