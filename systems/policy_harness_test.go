package systems_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/warrenhq/warren/blueprint"
	"github.com/warrenhq/warren/components"
	"github.com/warrenhq/warren/gate"
	"github.com/warrenhq/warren/models"
	"github.com/warrenhq/warren/policy"
	"github.com/warrenhq/warren/tools"
)

// testTimeout is the prompt timeout of the policies the tests build unless one sets another; it
// is the host config's default.
const testTimeout = 100

// shellSchema is the argument schema of the fake shell tool: the shell tool's own, one command
// line.
var shellSchema = json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"}},"required":["command"],"additionalProperties":false}`)

// fakeShell is a tool named "shell" that takes {"command": string} like the real shell tool, so
// the gate derives its keys from the shell parser; it runs nothing and echoes the line, inline.
type fakeShell struct{ runs *atomic.Int64 }

var (
	_ tools.Tool   = fakeShell{}
	_ tools.Inline = fakeShell{}
)

func (fakeShell) Spec() tools.Spec {
	return tools.Spec{Name: policy.ShellTool, Description: "pretends to run a command line", Parameters: shellSchema}
}

func (fakeShell) Inline() bool { return true }

func (t fakeShell) Execute(_ *tools.ExecContext, args json.RawMessage) (tools.Result, error) {
	t.runs.Add(1)
	var a struct {
		Command string `json:"command"`
	}
	if err := json.Unmarshal(args, &a); err != nil {
		return tools.Result{}, fmt.Errorf("%w: %w", tools.ErrInvalidArguments, err)
	}
	return tools.TextResult("ran: " + a.Command), nil
}

// policySpec is what a test says about a group's tool policy; the rest comes from the blueprint.
type policySpec struct {
	host       policy.HostLayer
	launch     policy.Launch
	unattended bool
	timeout    uint64 // 0: testTimeout
	perCall    int64
	perRun     int64
	mode       tools.SafetyMode
	planFile   string
	classifier tools.AutoClassifier
}

// toolPolicy builds the shared tool policy of a group of bp the way the scenario runner does:
// the blueprint's agent and stage permissions under the host ceiling and the launch overrides,
// with the shipped safe commands.
func toolPolicy(tb testing.TB, bp *blueprint.Blueprint, spec policySpec) *gate.Policy {
	tb.Helper()
	layer := bp.PolicyLayer()
	r, err := policy.NewResolver(spec.host, layer, spec.launch)
	if err != nil {
		tb.Fatalf("resolver: %v", err)
	}
	safe, err := policy.NewSafeKeys(policy.ShippedSafeCommands)
	if err != nil {
		tb.Fatalf("safe keys: %v", err)
	}
	timeout := spec.timeout
	if timeout == 0 {
		timeout = testTimeout
	}
	return &gate.Policy{
		Resolver: r, Safe: safe, Unattended: spec.unattended, TimeoutTicks: timeout,
		WritePerCall: spec.perCall, WritePerRun: spec.perRun,
		SafetyMode: spec.mode, PlanFile: spec.planFile, Classifier: spec.classifier,
	}
}

// gatedProfile is h.profile with a tool policy built from spec.
func (h *harness) gatedProfile(group string, bp *blueprint.Blueprint, model models.Model, spec policySpec) *components.Profile {
	h.tb.Helper()
	p := h.profile(group, bp, model, "")
	p.Policy = toolPolicy(h.tb, bp, spec)
	return p
}

// scenarioProfile builds a group's profile exactly as scenarios/run.go profile() does: in an
// unattended run a stage that does not require an interaction tool does not advertise it, and
// its registry pushes a scope in which a stand-in answers it at once.
func (h *harness) scenarioProfile(group string, bp *blueprint.Blueprint, model models.Model, pol *gate.Policy) *components.Profile {
	h.tb.Helper()
	stageTools := make([][]models.ToolInfo, len(bp.Stages))
	registries := make([]*tools.ScopedToolRegistry, len(bp.Stages))
	for i := range bp.Stages {
		st := &bp.Stages[i]
		registries[i] = h.scoped
		var standIns *tools.ScopedToolRegistry
		var scope tools.ScopeID
		for _, name := range st.AvailableTools {
			t, ok := h.scoped.Get(name)
			if !ok {
				continue
			}
			if pol.Unattended && tools.IsInteraction(name) && !slices.Contains(st.RequiredTools, name) {
				if standIns == nil {
					standIns = tools.NewScoped(h.scoped.Base())
					scope = standIns.PushScope()
				}
				if _, err := standIns.RegisterInScope(scope, tools.UnattendedStandIn(t)); err != nil {
					h.tb.Fatal(err)
				}
				continue
			}
			spec := t.Spec()
			stageTools[i] = append(stageTools[i], models.ToolInfo{Name: spec.Name, Description: spec.Description, Parameters: spec.Parameters})
		}
		if standIns != nil {
			registries[i] = standIns
		}
	}
	p := h.profile(group, bp, model, "")
	p.StageTools, p.StageRegistries, p.Policy = stageTools, registries, pol
	return p
}

// reply is one scripted answer of the answerer stub.
type reply struct {
	answer string
	delay  uint64
}

// answerer is an Answerer stub: it records every prompt put to it and answers the n-th with
// replies[n] (the last reply repeats); with no replies it has no answer at all.
type answerer struct {
	replies []reply
	asked   []gate.PromptRequest
}

var _ gate.Answerer = (*answerer)(nil)

func answers(replies ...reply) *answerer { return &answerer{replies: replies} }

func (a *answerer) Answer(req *gate.PromptRequest) (string, uint64, bool) {
	r := *req
	r.Keys = slices.Clone(req.Keys)
	a.asked = append(a.asked, r)
	if len(a.replies) == 0 {
		return "", 0, false
	}
	next := a.replies[min(len(a.asked), len(a.replies))-1]
	return next.answer, next.delay, true
}

// classifierStub settles auto mode's asks by tool name and records what it was asked.
type classifierStub struct {
	verdicts map[string]tools.ClassifierVerdict
	err      error
	asked    []tools.ClassifyRequest
}

var _ tools.AutoClassifier = (*classifierStub)(nil)

func (c *classifierStub) Classify(_ context.Context, req tools.ClassifyRequest) (tools.ClassifierVerdict, error) {
	req.Keys = slices.Clone(req.Keys)
	c.asked = append(c.asked, req)
	if c.err != nil {
		return tools.ClassifierVerdict{}, c.err
	}
	return c.verdicts[req.Tool], nil
}

// writeCall is a scripted write_file call.
func writeCall(path, content string) models.ScriptedCall {
	return models.ScriptedCall{Tool: tools.NameWriteFile, Args: map[string]any{"path": path, "content": content}}
}

// readCall is a scripted read_file call.
func readCall(path string) models.ScriptedCall {
	return models.ScriptedCall{Tool: tools.NameReadFile, Args: map[string]any{"path": path}}
}

// shellCall is a scripted call of the fake shell.
func shellCall(line string) models.ScriptedCall {
	return models.ScriptedCall{Tool: policy.ShellTool, Args: map[string]any{"command": line}}
}

// askText is a scripted ask_user_text call.
func askText(question string) models.ScriptedCall {
	return models.ScriptedCall{Tool: tools.NameAskUserText, Args: map[string]any{"question": question}}
}

// askChoice is a scripted ask_user_choice call.
func askChoice(question string, choices ...string) models.ScriptedCall {
	list := make([]any, len(choices))
	for i, c := range choices {
		list[i] = c
	}
	return models.ScriptedCall{Tool: tools.NameAskUserChoice, Args: map[string]any{"question": question, "choices": list}}
}

// putFile writes a file into an agent's workdir before the run reads it.
func (h *harness) putFile(group, agent, rel, content string) {
	h.tb.Helper()
	path := filepath.Join(h.root, group, agent, rel)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		h.tb.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		h.tb.Fatal(err)
	}
}

// fileIn reports the content of a file in an agent's workdir and whether it exists.
func (h *harness) fileIn(group, agent, rel string) (string, bool) {
	b, err := os.ReadFile(filepath.Join(h.root, group, agent, rel))
	return string(b), err == nil
}

// results lists the tool_result events of agent name as "ok|content" or "error|content".
func (h *harness) results(name string) []string {
	h.tb.Helper()
	var out []string
	for _, ev := range h.events("tool_result", name) {
		state := "error"
		if ev.OK {
			state = "ok"
		}
		out = append(out, state+"|"+ev.Content)
	}
	return out
}

// describe renders events for failure messages, one per line.
func describe(evs []event) string {
	var sb strings.Builder
	for _, ev := range evs {
		fmt.Fprintf(&sb, "\n  tick %d %s %s tool=%s keys=%v verdict=%s layer=%s reason=%q prompt=%s deadline=%d answer=%q by=%s content=%q",
			ev.Tick, ev.Kind, ev.Name, ev.Tool, ev.Keys, ev.Verdict, ev.Layer, ev.Reason, ev.Prompt, ev.Deadline, ev.Answer, ev.By, ev.Content)
	}
	return sb.String()
}
