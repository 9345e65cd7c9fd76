package systems

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/warrenhq/warren/blueprint"
	"github.com/warrenhq/warren/components"
	"github.com/warrenhq/warren/ecs"
	"github.com/warrenhq/warren/models"
	"github.com/warrenhq/warren/policy"
	"github.com/warrenhq/warren/tools"
)

// Layers named in tool_call events for decisions made before the permission gate.
const (
	layerVisibility = "visibility"
	layerSchema     = "schema"
)

// ToolDispatch runs the tool calls of every agent in ReadyForTools through the checks of the
// gate, in order: visibility (the stage advertises the tool and the registry resolves it), the
// argument schema, then the permission Gate. A call that fails a check gets an error result the
// model reads back; a call that passes runs inline if the tool is Inline, else on the tool lane.
// An agent whose calls all finished inline moves straight back to ReadyToInfer.
type ToolDispatch struct {
	toolTurn
	view    *ecs.View2[components.Identity, components.Cursor]
	await   *mover
	scratch tools.ExecContext
}

var _ ecs.System = (*ToolDispatch)(nil)

// Name implements ecs.System.
func (*ToolDispatch) Name() string { return "tool_dispatch" }

// Initialize implements ecs.System.
func (s *ToolDispatch) Initialize(w *ecs.World) (err error) {
	if s.host, err = hostOf(w); err != nil {
		return err
	}
	if s.host.Gate == nil {
		s.host.Gate = OpenGate{}
	}
	s.maps = newAgentMaps(w)
	s.view = ecs.NewView2[components.Identity, components.Cursor](w, []ecs.Comp{ecs.T[components.ReadyForTools]()}, nil)
	s.await = newMover[components.ReadyForTools, components.AwaitingTools](w)
	s.ready = newMover[components.ReadyForTools, components.ReadyToInfer](w)
	s.terminal = newMover[components.ReadyForTools, components.Terminal](w)
	return nil
}

// Update implements ecs.System.
func (s *ToolDispatch) Update(w *ecs.World) {
	tick := w.Tick()
	q := s.view.Query()
	for q.Next() {
		id, cur := q.Get()
		e := q.Entity()
		p := s.host.Profiles.Get(id.Profile)
		d := s.host.Agents.Get(id.Slot)
		stage := &p.Blueprint.Stages[cur.Stage]
		work := &d.Work
		if cap(work.Results) >= len(work.Calls) {
			work.Results = work.Results[:len(work.Calls)]
		} else {
			work.Results = make([]components.ToolResult, len(work.Calls))
		}
		msgIndex := len(d.Conversation.Messages)
		for i := range work.Calls {
			s.dispatch(tick, e, id, p, d, cur, stage, i, msgIndex)
		}
		if work.Outstanding > 0 {
			s.await.add(e)
			continue
		}
		s.finish(tick, e, id, d, stage)
	}
	w.Touch(s.await.apply() + s.ready.apply() + s.terminal.apply())
}

// dispatch checks call i and runs it inline, submits it to the tool lane, or records the error
// result of the check that refused it.
func (s *ToolDispatch) dispatch(tick uint64, e ecs.Entity, id *components.Identity, p *components.Profile, d *components.AgentData, cur *components.Cursor, stage *blueprint.Stage, i, msgIndex int) {
	work := &d.Work
	call := work.Calls[i]
	h, dec := s.check(id, p, d, stage, call)
	s.host.Trace.ToolCall(tick, ref(id, d), call.ID, call.Name, call.Args, dec.Verdict.String(), dec.Layer, dec.Reason)
	if dec.Verdict != policy.Allow {
		work.Results[i] = components.ToolResult{Content: refusal(call.Name, dec), IsError: true}
		return
	}
	if d.Workdir == "" {
		d.Workdir = p.Workdir(d.Name, int(id.Index))
	}
	if h.Inline() {
		// Inline tools finish before this call returns and never keep their context, so one
		// scratch context serves them all.
		s.fillContext(&s.scratch, id, d, p, cur, call.ID, msgIndex)
		work.Results[i] = runTool(h, &s.scratch, call.Args)
		s.scratch = tools.ExecContext{}
		return
	}
	ec := &tools.ExecContext{}
	s.fillContext(ec, id, d, p, cur, call.ID, msgIndex)
	work.Outstanding++
	args := call.Args
	s.host.ToolLane.Submit(tick, ecs.Job{
		Agent: id.ID, Entity: e, Index: i, Latency: s.host.Latency.ForTool(call.Name),
		Run: func() any { return runTool(h, ec, args) },
	})
}

// fillContext sets up the ExecContext of one call.
func (s *ToolDispatch) fillContext(ec *tools.ExecContext, id *components.Identity, d *components.AgentData, p *components.Profile, cur *components.Cursor, callID string, msgIndex int) {
	*ec = tools.ExecContext{
		Ctx:            s.host.Context,
		CallID:         callID,
		TurnID:         uint64(cur.Turn - 1), // the turn that asked for the call (it has been counted)
		Agent:          tools.AgentRef{ID: id.ID, Name: d.Name},
		Workdir:        d.Workdir,
		Config:         s.host.Settings,
		ModelID:        p.ModelID,
		MessageIndex:   msgIndex,
		ContextPercent: -1,
		Tasks:          s.host.Tasks,
	}
}

// check applies visibility, schema and the gate, in that order, and says which layer decided.
func (s *ToolDispatch) check(id *components.Identity, p *components.Profile, d *components.AgentData, stage *blueprint.Stage, call models.ToolCall) (*tools.Handle, Decision) {
	if !stage.Advertises(call.Name) {
		return nil, Decision{Verdict: policy.Deny, Layer: layerVisibility,
			Reason: fmt.Sprintf("tool %q is not available in stage %q (available: %s)", call.Name, stage.Name, strings.Join(stage.AvailableTools, ", "))}
	}
	h, ok := p.Tools.Lookup(call.Name)
	if !ok {
		return nil, Decision{Verdict: policy.Deny, Layer: layerVisibility,
			Reason: fmt.Sprintf("tool %q is not registered with this host", call.Name)}
	}
	if err := h.Validate(call.Args); err != nil {
		return nil, Decision{Verdict: policy.Deny, Layer: layerSchema, Reason: err.Error()}
	}
	dec := s.host.Gate.Decide(&GateRequest{Agent: id, Name: d.Name, Stage: stage, Tool: call.Name, Args: call.Args})
	if dec.Verdict == policy.Ask {
		// Nothing can answer a prompt yet: fail safe.
		dec = Decision{Verdict: policy.Deny, Layer: dec.Layer, Reason: dec.Reason + " (ask, and no interaction hub is attached)"}
	}
	return h, dec
}

// refusal is the error result text the model reads for a call a check refused.
func refusal(tool string, d Decision) string {
	switch d.Layer {
	case layerVisibility, layerSchema:
		return d.Reason
	}
	return "permission denied for " + tool + " by " + d.Layer + ": " + d.Reason
}

// runTool executes a validated call, turning an error into an error result and a panic into a
// failure of this agent alone.
func runTool(h *tools.Handle, ec *tools.ExecContext, args json.RawMessage) (res components.ToolResult) {
	defer func() {
		if r := recover(); r != nil {
			res = components.ToolResult{Content: "tool panicked", IsError: true, Panic: fmt.Sprint(r)}
		}
	}()
	out, err := h.Run(ec, args)
	if err != nil {
		return components.ToolResult{Content: err.Error(), IsError: true}
	}
	return components.ToolResult{Content: out.Content, IsError: out.IsError}
}

// Finalize implements ecs.System.
func (*ToolDispatch) Finalize(*ecs.World) {}

// toolTurn finishes an agent's tool turn: shared by tool_dispatch (all calls inline) and
// tool_collect (the last lane result arrived).
type toolTurn struct {
	host     *Host
	maps     agentMaps
	ready    *mover
	terminal *mover
}

// finish appends the results in call order, records them, and moves the agent on: back to
// ReadyToInfer, or to Terminal if a tool panicked.
func (t *toolTurn) finish(tick uint64, e ecs.Entity, id *components.Identity, d *components.AgentData, stage *blueprint.Stage) {
	counters := t.maps.counters.Get(e)
	work := &d.Work
	panicked := ""
	for i, call := range work.Calls {
		r := work.Results[i]
		d.Conversation.Append(models.Message{Role: models.RoleTool, Content: r.Content, CallID: call.ID, IsError: r.IsError})
		counters.ToolCalls++
		if r.IsError {
			counters.ToolErrors++
		}
		d.ByTool.Add(call.Name)
		t.host.Trace.ToolResult(tick, ref(id, d), call.ID, call.Name, !r.IsError, r.Content)
		if r.Panic != "" && panicked == "" {
			panicked = "panic in tool " + call.Name + ": " + r.Panic
		}
	}
	work.Reset()
	if panicked != "" {
		terminate(t.host, tick, id, d, t.maps.status.Get(e), stage.Name, components.Failed, panicked)
		t.terminal.add(e)
		return
	}
	t.ready.add(e)
}
