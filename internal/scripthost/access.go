package scripthost

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"

	"github.com/warrenhq/warren/blueprint"
	"github.com/warrenhq/warren/components"
	"github.com/warrenhq/warren/gate"
	"github.com/warrenhq/warren/policy"
	"github.com/warrenhq/warren/subagents"
	"github.com/warrenhq/warren/tools"
)

// ErrCallRefused wraps every refusal of a tool called from inside another tool (a script's
// call_tool): unknown, not callable from a tool, invalid arguments, or not allowed.
var ErrCallRefused = errors.New("call refused")

// maxCallDepth bounds tools calling tools calling tools (a script calling a script ...).
const maxCallDepth = 4

// UsesHost reports whether the tool of h needs the host callbacks.
func UsesHost(h *tools.Handle) bool {
	hu, ok := h.Tool().(tools.HostUser)
	return ok && hu.UsesHost()
}

// Bind fills what a host-using tool (a script tool) gets beyond the usual context: Layer 3
// (ScriptPermit), call_tool (CallTool) through dec, and the call's random seed, derived from the
// run's seed. Both callbacks run on the
// lane's goroutine, so they read only what cannot change under them: the group's tool policy
// (immutable), the stage the call was made in (the compiled blueprint's, shared read-only), the
// stage's registry, and a copy of the agent's grants taken now.
func Bind(ec *tools.ExecContext, dec gate.Decider, seed uint64, id *components.Identity, d *components.AgentData, p *components.Profile, stage int32) {
	ec.Seed = callSeed(seed, id.ID, ec.CallID)
	a := &hostAccess{pol: p.Policy, gate: dec, stage: &p.Blueprint.Stages[stage], policyStage: int(d.Tools.Stage),
		grants: d.Tools.Grants.Clone(), registry: p.Registry(stage), base: *ec}
	ec.ScriptPermit = a.permit
	ec.CallTool = a.callTool
}

// callSeed derives a call's random seed from the run's seed, the agent and the call id: the same
// in every replay, whichever worker runs the call.
func callSeed(seed, agent uint64, callID string) uint64 {
	h := fnv.New64a()
	var b [16]byte
	binary.LittleEndian.PutUint64(b[:8], seed)
	binary.LittleEndian.PutUint64(b[8:], agent)
	h.Write(b[:])
	h.Write([]byte(callID))
	return h.Sum64()
}

// hostAccess is the snapshot one host-using call decides from.
type hostAccess struct {
	pol         *gate.Policy
	gate        gate.Decider
	stage       *blueprint.Stage
	policyStage int // the stage index whose policy is in force
	grants      *policy.Grants
	registry    *tools.ScopedToolRegistry
	base        tools.ExecContext
	depth       int
}

// writingFuncs are the host functions that change something: none may run while the agent is
// read-only (read-only mode, or a plan being drafted), whatever Layer 3 says.
var writingFuncs = []string{policy.FnWriteFile, policy.FnShell, policy.FnHTTPPost}

// permit is Layer 3: whether host function fn may run now. inherit asks the gate whether the
// built-in tool of the same name resolves to allow for this agent in this stage, at each call.
func (a *hostAccess) permit(fn string) error {
	if a.pol != nil && a.pol.ReadOnly() && slices.Contains(writingFuncs, fn) {
		return fmt.Errorf("%s is not allowed for scripts while the agent is read-only (stage %q): it writes or runs commands", fn, a.stage.Name)
	}
	scripts := defaultScriptPermissions
	if a.pol != nil && a.pol.Scripts != nil {
		scripts = a.pol.Scripts
	}
	allowed, layer, reason := scripts.Decide(fn, func(tool string) bool {
		return gate.Permits(a.pol, a.policyStage, tool, a.grants)
	})
	if allowed {
		return nil
	}
	return fmt.Errorf("%s is not allowed for scripts by %s (stage %q): %s", fn, layer, a.stage.Name, reason)
}

// callTool runs another tool for the agent through the full gate, on the caller's goroutine,
// under ctx: only a tool the stage offers, with valid arguments, allowed without a prompt.
func (a *hostAccess) callTool(ctx context.Context, name string, args json.RawMessage) (tools.Result, error) {
	if a.depth >= maxCallDepth {
		return tools.Result{}, fmt.Errorf("%w: %s: tools may call tools only %d deep", ErrCallRefused, name, maxCallDepth)
	}
	h, _ := a.registry.Lookup(name)
	if h != nil {
		switch h.Tool().(type) {
		case subagents.WorldTool:
			return tools.Result{}, fmt.Errorf("%w: %s changes the agent tree, which only the agent's own turn may do", ErrCallRefused, name)
		case tools.Interactive:
			return tools.Result{}, fmt.Errorf("%w: %s asks a person, which a tool running on a worker cannot wait for", ErrCallRefused, name)
		}
	}
	req := gate.Request{Ctx: ctx, Agent: a.base.Agent, Stage: a.policyStage, StageName: a.stage.Name,
		Visible: a.stage.Advertises(name), Available: a.stage.AvailableTools, Handle: h,
		Tool: name, Args: args, Grants: a.grants, Intent: a.base.Intent}
	switch dec := a.gate.Decide(a.pol, &req); {
	case dec.Verdict == policy.Allow:
	case dec.Verdict == policy.Ask:
		return tools.Result{}, fmt.Errorf("%w: %s asks (%s: %s), and a tool called from a script cannot open a prompt; "+
			"grant it to the agent or allow it in the host config", ErrCallRefused, name, dec.Layer, dec.Reason)
	case dec.Layer == gate.LayerVisibility || dec.Layer == gate.LayerSchema:
		return tools.Result{}, fmt.Errorf("%w: %s", ErrCallRefused, dec.Reason)
	default:
		return tools.Result{}, fmt.Errorf("%w: permission denied for %s by %s: %s", ErrCallRefused, name, dec.Layer, dec.Reason)
	}
	ec := a.base
	ec.Ctx = ctx
	ec.CallID = a.base.CallID + "/" + name + "-" + strconv.Itoa(a.depth+1)
	if UsesHost(h) {
		nested := *a
		nested.depth++
		nested.base = ec
		ec.Seed = callSeed(ec.Seed, 0, ec.CallID)
		ec.ScriptPermit, ec.CallTool = nested.permit, nested.callTool
		return h.Run(&ec, args) // a script runs again in a replay; its own requests go through ec.Outside
	}
	if ec.Outside == nil || h.Inline() {
		return h.Run(&ec, args) // the checklist stays inside the world: it runs in a replay too
	}
	var out calledResult
	err := ec.Outside.Do("tool:"+name, string(args), &out, func() error {
		res, err := h.Run(&ec, args)
		out = calledResult{Content: res.Content, IsError: res.IsError, Notes: res.Notes}
		return err
	})
	return tools.Result{Content: out.Content, IsError: out.IsError, Notes: out.Notes}, err
}

// calledResult is what a recording keeps of a tool a script called that leaves the world (a file
// tool, the shell, an MCP tool): a replay answers the call with it.
type calledResult struct {
	Content string       `json:"content"`
	IsError bool         `json:"is_error,omitempty"`
	Notes   []tools.Note `json:"notes,omitempty"`
}

// defaultScriptPermissions is Layer 3 of an agent whose policy names none: the defaults.
var defaultScriptPermissions = func() *policy.ScriptPermissions {
	p, err := policy.NewScriptPermissions(nil, nil)
	if err != nil {
		panic(err) // the defaults cannot be invalid
	}
	return p
}()
