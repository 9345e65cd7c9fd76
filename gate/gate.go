package gate

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/warrenhq/warren/policy"
	"github.com/warrenhq/warren/tools"
)

// Layers the gate itself decides at, besides the policy package's (see policy.Layer*). Like
// those, they are stable: traces carry them.
const (
	LayerVisibility = "visibility"       // the stage does not offer the tool, or no such tool is registered
	LayerSchema     = "schema"           // the arguments do not match the tool's schema
	LayerReadOnly   = "safety:read-only" // the read-only floor (read-only mode, a plan being drafted)
	LayerClassifier = "classifier"       // auto mode's classifier settled an ask
	LayerUnattended = "unattended"       // an ask nobody can answer
)

// Request is one tool call as the gate sees it. The caller resolves what depends on where the
// call is made (the stage's offer, the agent's dynamic tools, its registry and its grants); the
// gate decides everything else.
type Request struct {
	// Ctx bounds the auto-mode classifier.
	Ctx context.Context
	// Agent is who calls, for the classifier.
	Agent tools.AgentRef
	// Stage is the agent's current stage index, StageName its name.
	Stage     int
	StageName string
	// Visible reports that the stage offers the tool (its available_tools, or the agent's dynamic
	// tools); Available lists what the stage offers, for the refusal.
	Visible   bool
	Available []string
	// Handle is the registered tool the call resolves to (nil: no tool of that name).
	Handle *tools.Handle
	// Tool is the name called, Args its arguments.
	Tool string
	Args json.RawMessage
	// Grants are the agent's own grants (nil: none).
	Grants *policy.Grants
	// Intent is the turn's stated intent (the agent's latest user message), for the classifier.
	Intent string
}

// Decision is the gate's verdict, the layer that made it and why, and the keys it judged: the
// tool's name, a shell line's keys, or none when the line could not be analysed.
type Decision struct {
	Verdict policy.Verdict
	Layer   string
	Reason  string
	Keys    []string
}

// Decide takes a call through the gate, in order: visibility (the stage offers the tool and a
// tool of that name is registered), the argument schema, the read-only floor (from what the tool
// declares it does), the permission layers under the ancestors' ceilings with safe keys and
// grants, auto mode's classifier, and the unattended rule (an ask nobody can answer is denied).
// It is total: every request gets a verdict, a layer and a reason, and a nil pol means the
// built-in defaults alone. Dispatch, a script's call_tool and host explain all decide with it.
func Decide(pol *Policy, req *Request) Decision { return decide(pol, req, nil) }

// Decider decides tool calls. Standard, the gate every run uses, is Decide; the interface is
// the seam for tests and embedders, and must be total, cheap and not keep the request.
type Decider interface {
	Decide(pol *Policy, req *Request) Decision
}

// Standard is the Decider of every run: Decide.
type Standard struct{}

var _ Decider = Standard{}

// Decide implements Decider.
func (Standard) Decide(pol *Policy, req *Request) Decision { return Decide(pol, req) }

// Explanation is a decision with every layer's contribution to it, for host explain.
type Explanation struct {
	Decision Decision
	// Keys says what the call's keys are ("shell:ls, shell:>out.txt"), or why a shell line has
	// none.
	Keys string
	// Steps hold the gate's own layers and, once the call reaches them, the permission layers'
	// steps (policy.Step), in the order they were taken.
	Steps []policy.Step
	// Permission is the permission layers' explanation, when the call reached them.
	Permission *policy.Explanation
}

// Explain is Decide, recording each layer it takes: the same function decides both ways, so an
// explanation never disagrees with a run.
func Explain(pol *Policy, req *Request) Explanation {
	var x Explanation
	x.Decision = decide(pol, req, &x)
	return x
}

func (x *Explanation) step(layer, key, value, effect string) {
	if x != nil {
		x.Steps = append(x.Steps, policy.Step{Layer: layer, Key: key, Value: value, Effect: effect})
	}
}

// decide is Decide, filling x (when not nil) as it goes.
func decide(pol *Policy, req *Request, x *Explanation) Decision {
	if pol == nil || pol.Resolver == nil {
		pol = defaultPolicy
	}
	if !req.Visible {
		x.step(LayerVisibility, req.Tool, "deny", "the stage does not offer it")
		return Decision{Verdict: policy.Deny, Layer: LayerVisibility, Keys: []string{req.Tool},
			Reason: fmt.Sprintf("tool %q is not available in stage %q (available: %s)", req.Tool, req.StageName, strings.Join(req.Available, ", "))}
	}
	if req.Handle == nil {
		x.step(LayerVisibility, req.Tool, "deny", "no tool of that name is registered")
		return Decision{Verdict: policy.Deny, Layer: LayerVisibility, Keys: []string{req.Tool},
			Reason: fmt.Sprintf("tool %q is not registered with this host", req.Tool)}
	}
	keys := toolKeys(req.Tool) // a registered name: the cache is bounded by the registry
	if x != nil {
		x.step(LayerVisibility, req.Tool, "pass", fmt.Sprintf("stage %q offers it", req.StageName))
	}
	if err := req.Handle.Validate(req.Args); err != nil {
		x.step(LayerSchema, req.Tool, "deny", err.Error())
		return Decision{Verdict: policy.Deny, Layer: LayerSchema, Reason: err.Error(), Keys: keys}
	}
	x.step(LayerSchema, req.Tool, "pass", "the arguments match the tool's schema")
	call := policy.Call{Stage: req.Stage, Tool: req.Tool, Parsed: true}
	if req.Tool == policy.ShellTool {
		line := policy.AnalyzeShell(commandOf(req.Args))
		call = policy.ShellCall(req.Stage, line)
		keys = line.Keys
		if x != nil {
			x.Keys = describeKeys(line)
		}
	} else if x != nil {
		x.Keys = req.Tool
	}
	if d, refused := readOnlyFloor(pol, req, call, keys, x); refused {
		return d
	}
	var pd policy.Decision
	if x != nil {
		px := pol.Resolver.ExplainUnder(call, pol.Safe, req.Grants, pol.Ceilings)
		x.Permission = &px
		x.Steps = append(x.Steps, px.Steps...)
		pd = px.Decision
	} else if len(pol.Ceilings) == 0 {
		pd = pol.Resolver.Cover(call, pol.Resolver.Decide(call), pol.Safe, req.Grants)
	} else {
		pd = pol.Resolver.CoverUnder(call, pol.Resolver.DecideUnder(call, pol.Ceilings), pol.Safe, req.Grants, pol.Ceilings)
	}
	d := Decision{Verdict: pd.Verdict, Layer: pd.Layer, Reason: pd.Reason, Keys: keys}
	if d.Verdict == policy.Ask && pol.SafetyMode == tools.SafetyAuto {
		d = classify(pol, req, d, x)
	}
	if d.Verdict == policy.Ask && pol.Unattended {
		x.step(LayerUnattended, req.Tool, "deny", "nobody is watching this run")
		d = Decision{Verdict: policy.Deny, Layer: LayerUnattended, Keys: d.Keys,
			Reason: "nobody is watching this run, and no grant or --yolo covers the ask (" + d.Layer + ": " + d.Reason + ")"}
	}
	return d
}

// classify lets auto mode's classifier settle an ask: allow, deny, or escalate (the ask stands).
// Without a classifier, or when it fails, the gate fails safe: the ask stands.
func classify(pol *Policy, req *Request, d Decision, x *Explanation) Decision {
	if pol.Classifier == nil {
		x.step(LayerClassifier, req.Tool, "ask", "auto mode has no classifier bound: fails safe to ask")
		d.Reason += "; auto mode has no classifier bound, so it fails safe to ask"
		return d
	}
	ctx := req.Ctx
	if ctx == nil {
		ctx = context.Background()
	}
	v, err := pol.Classifier.Classify(ctx, tools.ClassifyRequest{Agent: req.Agent, Tool: req.Tool, Args: req.Args, Keys: d.Keys, Intent: req.Intent})
	switch {
	case err != nil:
		x.step(LayerClassifier, req.Tool, "ask", "the classifier failed ("+err.Error()+"): fails safe to ask")
		d.Reason += "; the classifier failed (" + err.Error() + "), so it fails safe to ask"
		return d
	case v.Decision == tools.ClassifyAllow:
		x.step(LayerClassifier, req.Tool, "allow", v.Reason)
		return Decision{Verdict: policy.Allow, Layer: LayerClassifier, Reason: "auto mode: the classifier allows it: " + v.Reason, Keys: d.Keys}
	case v.Decision == tools.ClassifyDeny:
		x.step(LayerClassifier, req.Tool, "deny", v.Reason)
		return Decision{Verdict: policy.Deny, Layer: LayerClassifier, Reason: "auto mode: the classifier denies it: " + v.Reason, Keys: d.Keys}
	}
	x.step(LayerClassifier, req.Tool, "ask", "escalates: "+v.Reason)
	d.Reason += "; the classifier escalates: " + v.Reason
	return d
}

// commandOf is a shell call's command line ("" when the arguments hold none; the schema check
// has run before).
func commandOf(args json.RawMessage) string {
	var a struct {
		Command string `json:"command"`
	}
	_ = json.Unmarshal(args, &a)
	return a.Command
}

// describeKeys says what a shell line's keys are, with the opaque ones marked.
func describeKeys(line policy.ShellLine) string {
	if line.Why != "" {
		return "none: " + line.Why
	}
	if len(line.Keys) == 0 {
		return "none (the line runs nothing)"
	}
	parts := make([]string, len(line.Keys))
	for i, k := range line.Keys {
		parts[i] = k
		for _, o := range line.Opaque {
			if o.Key == k {
				parts[i] += " (opaque: " + o.Reason() + ")"
			}
		}
	}
	return strings.Join(parts, ", ")
}

// keyCache holds the one-key list of every registered tool, shared by every call, so that a
// decision on the allow path allocates nothing.
var keyCache sync.Map

// toolKeys is the key list of a call of tool before its arguments are read: the tool's name.
func toolKeys(tool string) []string {
	if k, ok := keyCache.Load(tool); ok {
		return k.([]string)
	}
	k, _ := keyCache.LoadOrStore(tool, []string{tool})
	return k.([]string)
}

// Permits reports whether the tool named tool resolves to allow for an agent under pol in stage
// with grants: the permission layers under the ancestors' ceilings, safe keys and grants, auto
// mode's classifier not consulted (nobody asked it about a call). It is what Layer 3's inherit
// asks of the built-in tool a host function follows, so it takes no visibility, schema or
// read-only floor: Layer 3 applies its own read-only rule first.
func Permits(pol *Policy, stage int, tool string, grants *policy.Grants) bool {
	if pol == nil || pol.Resolver == nil {
		pol = defaultPolicy
	}
	call := policy.Call{Stage: stage, Tool: tool, Parsed: true}
	d := pol.Resolver.CoverUnder(call, pol.Resolver.DecideUnder(call, pol.Ceilings), pol.Safe, grants, pol.Ceilings)
	return d.Verdict == policy.Allow
}
