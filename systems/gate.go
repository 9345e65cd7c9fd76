package systems

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"

	"github.com/warrenhq/warren/components"
	"github.com/warrenhq/warren/policy"
	"github.com/warrenhq/warren/tools"
)

// Layers named in tool_call events for decisions the policy package does not make.
const (
	layerVisibility = "visibility"
	layerSchema     = "schema"
	layerReadOnly   = "safety:read-only"
	layerClassifier = "classifier"
	layerUnattended = "unattended"
)

// PolicyGate is the permission gate: the safety mode's read-only floor, then the resolver's
// layers (host ceiling, blueprint, defaults, launch overrides) under the ceilings a sub-agent
// inherits from its ancestors, then safe keys and grants, then in auto mode the classifier. An ask it leaves standing goes to the interaction hub (or, in an
// unattended run, is denied by the dispatch system).
type PolicyGate struct{}

var _ Gate = PolicyGate{}

// defaultPolicy is the policy of an agent whose profile names none: the built-in defaults
// alone, no ceiling, no launch overrides. The gate never runs without layers.
var defaultPolicy = func() *components.ToolPolicy {
	r, err := policy.NewResolver(policy.HostLayer{}, policy.BlueprintLayer{}, policy.Launch{})
	if err != nil {
		panic(err) // empty layers cannot be invalid
	}
	return &components.ToolPolicy{Resolver: r}
}()

// Decide implements Gate.
func (PolicyGate) Decide(req *GateRequest) Decision {
	return decide(req.Profile.Policy, gateCall{ctx: req.Ctx, agent: tools.AgentRef{ID: req.Agent.ID, Name: req.Data.Name},
		stage: int(req.Data.Tools.Stage), grants: req.Data.Tools.Grants,
		tool: req.Tool, args: req.Args, keys: req.Keys, parsed: req.Parsed})
}

// gateCall is what the policy gate reads of one call: nothing of the world but this, so the same
// decision can be made on a lane goroutine (a script's call_tool) from a snapshot.
type gateCall struct {
	ctx    context.Context
	agent  tools.AgentRef
	stage  int
	grants *policy.Grants
	tool   string
	args   json.RawMessage
	keys   []string
	parsed bool
}

// decide is the policy gate's decision for c under pol (the built-in defaults when nil).
func decide(pol *components.ToolPolicy, c gateCall) Decision {
	if pol == nil || pol.Resolver == nil {
		pol = defaultPolicy
	}
	if d, refused := readOnlyFloor(pol, c.tool, c.args, c.keys, c.parsed); refused {
		return d
	}
	call := policy.Call{Stage: c.stage, Tool: c.tool, Keys: c.keys, Parsed: c.parsed}
	var pd policy.Decision
	if len(pol.Ceilings) == 0 {
		pd = pol.Resolver.Decide(call)
		pd = pol.Resolver.Cover(call, pd, pol.Safe, c.grants)
	} else {
		pd = pol.Resolver.DecideUnder(call, pol.Ceilings)
		pd = pol.Resolver.CoverUnder(call, pd, pol.Safe, c.grants, pol.Ceilings)
	}
	d := Decision{Verdict: pd.Verdict, Layer: pd.Layer, Reason: pd.Reason, Keys: c.keys}
	if d.Verdict == policy.Ask && pol.SafetyMode == tools.SafetyAuto {
		d = classify(pol, c, d)
	}
	return d
}

// classify lets auto mode's classifier settle an ask: allow, deny, or escalate (the ask stands).
// Without a classifier, or when it fails, the gate fails safe: the ask stands.
func classify(pol *components.ToolPolicy, c gateCall, d Decision) Decision {
	if pol.Classifier == nil {
		d.Reason += "; auto mode has no classifier bound, so it fails safe to ask"
		return d
	}
	v, err := pol.Classifier.Classify(c.ctx, tools.ClassifyRequest{Agent: c.agent, Tool: c.tool, Args: c.args, Keys: c.keys})
	switch {
	case err != nil:
		d.Reason += "; the classifier failed (" + err.Error() + "), so it fails safe to ask"
		return d
	case v.Decision == tools.ClassifyAllow:
		return Decision{Verdict: policy.Allow, Layer: layerClassifier, Reason: "auto mode: the classifier allows it: " + v.Reason, Keys: c.keys}
	case v.Decision == tools.ClassifyDeny:
		return Decision{Verdict: policy.Deny, Layer: layerClassifier, Reason: "auto mode: the classifier denies it: " + v.Reason, Keys: c.keys}
	}
	d.Reason += "; the classifier escalates: " + v.Reason
	return d
}

// readOnlyFloor refuses writes in read-only mode and while a plan is drafted, when the plan
// file is the one writable path. Tools the built-in defaults allow are read-only (or, like the
// checklist, write only the agent's own notes) and pass; file writes pass only to the plan file;
// a shell line passes only if every command is a safe key and every redirect goes to the plan
// file.
func readOnlyFloor(pol *components.ToolPolicy, tool string, args json.RawMessage, keys []string, parsed bool) (Decision, bool) {
	if pol.SafetyMode != tools.SafetyReadOnly && pol.PlanFile == "" {
		return Decision{}, false
	}
	deny := func(what string) (Decision, bool) {
		why := "read-only mode: " + what
		if pol.PlanFile != "" {
			why = "the agent is drafting a plan, so everything is read-only except " + pol.PlanFile + ": " + what
		}
		return Decision{Verdict: policy.Deny, Layer: layerReadOnly, Reason: why, Keys: keys}, true
	}
	switch {
	case tool == tools.NameWriteFile || tool == tools.NameEditFile:
		if pol.PlanFile != "" && isPlanFile(pol.PlanFile, argPath(args)) {
			return Decision{}, false
		}
		return deny(tool + " writes " + argPath(args))
	case tool == policy.ShellTool:
		if !parsed {
			return deny("the shell line could not be analysed")
		}
		for _, k := range keys {
			switch {
			case policy.IsRedirectKey(k):
				if pol.PlanFile == "" || !isPlanFile(pol.PlanFile, strings.TrimPrefix(k, "shell:>")) {
					return deny("the line redirects output (" + k + ")")
				}
			case pol.Safe == nil || !pol.Safe.Covers(k):
				return deny(k + " is not a read-only command")
			}
		}
		return Decision{}, false
	case policy.DefaultVerdict(tool) == policy.Allow:
		return Decision{}, false
	}
	return deny(tool + " is not known to be read-only")
}

// argPath is the "path" argument of a file tool call ("" when absent).
func argPath(args json.RawMessage) string {
	var a struct {
		Path string `json:"path"`
	}
	_ = json.Unmarshal(args, &a)
	return a.Path
}

// isPlanFile reports whether path names the plan file (both relative to the workdir).
func isPlanFile(plan, path string) bool {
	return path != "" && filepath.Clean(path) == filepath.Clean(plan)
}

// callKeys returns the permission keys of a call: the shell line's keys for the shell tool, the
// tool's name for any other.
func callKeys(tool string, args json.RawMessage) (keys []string, parsed bool) {
	if tool != policy.ShellTool {
		return []string{tool}, true
	}
	var a struct {
		Command string `json:"command"`
	}
	if json.Unmarshal(args, &a) != nil {
		return nil, false
	}
	return policy.ShellKeys(a.Command)
}
