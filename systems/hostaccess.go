package systems

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"strconv"

	"github.com/warrenhq/warren/components"
	"github.com/warrenhq/warren/policy"
	"github.com/warrenhq/warren/subagents"
	"github.com/warrenhq/warren/tools"
)

// ErrCallRefused wraps every refusal of a tool called from inside another tool (a script's
// call_tool): unknown, not callable from a tool, invalid arguments, or not allowed.
var ErrCallRefused = errors.New("call refused")

// maxCallDepth bounds tools calling tools calling tools (a script calling a script ...).
const maxCallDepth = 4

// usesHost reports whether the tool of h needs the host callbacks.
func usesHost(h *tools.Handle) bool {
	hu, ok := h.Tool().(tools.HostUser)
	return ok && hu.UsesHost()
}

// hostAccess fills what a host-using tool (a script tool) gets beyond the usual context: Layer 3
// (ScriptPermit), call_tool (CallTool) and the call's random seed. Both callbacks run on the
// lane's goroutine, so they read only what cannot change under them: the group's tool policy
// (immutable), the stage the call was made in, the stage's registry, and a copy of the agent's
// grants taken now.
func (t *toolTurn) hostAccess(ec *tools.ExecContext, id *components.Identity, d *components.AgentData, p *components.Profile, stage int32) {
	ec.Seed = callSeed(t.host.seed, id.ID, ec.CallID)
	a := &hostAccess{pol: p.Policy, stage: stage, stageName: p.Blueprint.Stages[stage].Name,
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
	pol       *components.ToolPolicy
	stage     int32
	stageName string
	grants    *policy.Grants
	registry  *tools.ScopedToolRegistry
	base      tools.ExecContext
	depth     int
}

// decide is the policy gate's decision for a call by this agent, from the snapshot.
func (a *hostAccess) decide(tool string, args json.RawMessage, keys []string, parsed bool) Decision {
	return decide(a.pol, gateCall{ctx: a.base.Context(), agent: a.base.Agent, stage: int(a.stage), grants: a.grants,
		tool: tool, args: args, keys: keys, parsed: parsed})
}

// permit is Layer 3: whether host function fn may run now. inherit asks the gate whether the
// built-in tool of the same name would be allowed for this agent in this stage, at each call.
func (a *hostAccess) permit(fn string) error {
	scripts := defaultScriptPermissions
	if a.pol != nil && a.pol.Scripts != nil {
		scripts = a.pol.Scripts
	}
	allowed, layer, reason := scripts.Decide(fn, func(tool string) bool {
		return a.decide(tool, nil, []string{tool}, true).Verdict == policy.Allow
	})
	if allowed {
		return nil
	}
	return fmt.Errorf("%s is not allowed for scripts by %s (stage %q): %s", fn, layer, a.stageName, reason)
}

// callTool runs another tool for the agent through the full gate, on the caller's goroutine,
// under ctx.
func (a *hostAccess) callTool(ctx context.Context, name string, args json.RawMessage) (tools.Result, error) {
	if a.depth >= maxCallDepth {
		return tools.Result{}, fmt.Errorf("%w: %s: tools may call tools only %d deep", ErrCallRefused, name, maxCallDepth)
	}
	h, ok := a.registry.Lookup(name)
	if !ok {
		return tools.Result{}, fmt.Errorf("%w: no tool %q is registered with this host", ErrCallRefused, name)
	}
	switch h.Tool().(type) {
	case subagents.WorldTool:
		return tools.Result{}, fmt.Errorf("%w: %s changes the agent tree, which only the agent's own turn may do", ErrCallRefused, name)
	case tools.Interactive:
		return tools.Result{}, fmt.Errorf("%w: %s asks a person, which a tool running on a worker cannot wait for", ErrCallRefused, name)
	}
	if err := h.Validate(args); err != nil {
		return tools.Result{}, fmt.Errorf("%w: %w", ErrCallRefused, err)
	}
	keys, parsed := callKeys(name, args)
	switch dec := a.decide(name, args, keys, parsed); dec.Verdict {
	case policy.Allow:
	case policy.Ask:
		return tools.Result{}, fmt.Errorf("%w: %s asks (%s: %s), and a tool called from a script cannot open a prompt; "+
			"grant it to the agent or allow it in the host config", ErrCallRefused, name, dec.Layer, dec.Reason)
	default:
		return tools.Result{}, fmt.Errorf("%w: permission denied for %s by %s: %s", ErrCallRefused, name, dec.Layer, dec.Reason)
	}
	ec := a.base
	ec.Ctx = ctx
	ec.CallID = a.base.CallID + "/" + name + "-" + strconv.Itoa(a.depth+1)
	if usesHost(h) {
		nested := *a
		nested.depth++
		nested.base = ec
		ec.Seed = callSeed(ec.Seed, 0, ec.CallID)
		ec.ScriptPermit, ec.CallTool = nested.permit, nested.callTool
	}
	return h.Run(&ec, args)
}

// defaultScriptPermissions is Layer 3 of an agent whose policy names none: the defaults.
var defaultScriptPermissions = func() *policy.ScriptPermissions {
	p, err := policy.NewScriptPermissions(nil, nil)
	if err != nil {
		panic(err) // the defaults cannot be invalid
	}
	return p
}()
