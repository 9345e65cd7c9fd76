package systems

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/warrenhq/warren/blueprint"
	"github.com/warrenhq/warren/components"
	"github.com/warrenhq/warren/ecs"
	"github.com/warrenhq/warren/faults"
	"github.com/warrenhq/warren/gate"
	"github.com/warrenhq/warren/hostconfig"
	"github.com/warrenhq/warren/internal/agenttree"
	"github.com/warrenhq/warren/internal/leases"
	"github.com/warrenhq/warren/internal/sandboxwire"
	"github.com/warrenhq/warren/internal/scripthost"
	"github.com/warrenhq/warren/models"
	"github.com/warrenhq/warren/policy"
	"github.com/warrenhq/warren/recording"
	"github.com/warrenhq/warren/resources"
	"github.com/warrenhq/warren/subagents"
	"github.com/warrenhq/warren/tools"
)

// ToolDispatch runs the tool calls of every agent in ReadyForTools through the gate (gate.Decide:
// visibility, the argument schema, the read-only floor, the permission layers with safe keys and
// grants, the auto classifier, the unattended rule). A refused call gets an error result the model
// reads back. An ask the gate leaves standing opens a prompt on the hub; an ask_user_* question
// opens a question prompt. An allowed call runs inline if its tool is Inline, else on the tool lane. An
// agent whose calls all finished inline moves straight back to ReadyToInfer; one waiting on a
// lane or a prompt parks in AwaitingTools.
type ToolDispatch struct {
	toolTurn
	view  *ecs.View2[components.Identity, components.Cursor]
	await *mover
	req   gate.Request // reused for every call: the gate must not keep it
}

var _ ecs.System = (*ToolDispatch)(nil)

func init() {
	Register(Info{ID: IDPrefix + "tool_dispatch", Order: 50, New: func() ecs.System { return &ToolDispatch{} }})
}

// Name implements ecs.System.
func (*ToolDispatch) Name() string { return "tool_dispatch" }

// Initialize implements ecs.System.
func (s *ToolDispatch) Initialize(w *ecs.World) (err error) {
	if err := s.resolveTurn(w); err != nil {
		return err
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
		p := s.profiles.Get(id.Profile)
		d := s.agents.Get(id.Slot)
		stage := &p.Blueprint.Stages[cur.Stage]
		work := &d.Work
		n := len(work.Calls)
		if cap(work.Results) >= n {
			work.Results = work.Results[:n]
		} else {
			work.Results = make([]components.ToolResult, n)
		}
		if cap(work.Keys) >= n {
			work.Keys = work.Keys[:n]
		} else {
			work.Keys = make([][]string, n)
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

// dispatch takes call i through the gate and runs it, parks it on a prompt, or records the
// error result of the check that refused it.
func (s *ToolDispatch) dispatch(tick uint64, e ecs.Entity, id *components.Identity, p *components.Profile, d *components.AgentData, cur *components.Cursor, stage *blueprint.Stage, i, msgIndex int) {
	work := &d.Work
	call := work.Calls[i]
	h, dec := s.check(id, p, d, stage, call)
	work.Keys[i] = dec.Keys
	s.run.Trace.ToolCall(tick, ref(id, d), stage.Name, call.ID, call.Name, call.Args, dec.Keys, dec.Verdict.String(), dec.Layer, dec.Reason)
	switch dec.Verdict {
	case policy.Allow:
	case policy.Ask:
		s.park(tick, e, id, p, d, stage.Name, i, &gate.Prompt{Kind: gate.PromptApproval})
		return
	default: // deny, or anything that is not a verdict: fail safe
		work.Results[i] = components.ToolResult{Content: refusal(call.Name, dec), IsError: true}
		return
	}
	if it, ok := h.Tool().(tools.Interactive); ok {
		q, err := it.Question(call.Args)
		if err != nil {
			work.Results[i] = components.ToolResult{Content: err.Error(), IsError: true}
			return
		}
		q.Agent, q.CallID = tools.AgentRef{ID: id.ID, Name: d.Name}, call.ID
		s.park(tick, e, id, p, d, stage.Name, i, &gate.Prompt{Kind: gate.PromptQuestion, Question: q})
		return
	}
	s.start(tick, e, id, p, d, uint64(cur.Turn-1), i, msgIndex, h)
}

// park opens a prompt for call i, made in stage, and parks the call until the hub settles it.
func (s *ToolDispatch) park(tick uint64, e ecs.Entity, id *components.Identity, p *components.Profile, d *components.AgentData, stage string, i int, pr *gate.Prompt) {
	call := d.Work.Calls[i]
	pr.Entity, pr.Agent, pr.Name, pr.Index, pr.CallID, pr.Tool, pr.Keys = e, id.ID, d.Name, i, call.ID, call.Name, d.Work.Keys[i]
	timeout := uint64(hostconfig.DefaultTimeoutTicks)
	if p.Policy != nil && p.Policy.TimeoutTicks > 0 {
		timeout = p.Policy.TimeoutTicks
	}
	s.hub.Add(tick, timeout, p.Group, pr)
	s.run.Trace.Prompt(tick, ref(id, d), stage, call.ID, call.Name, pr.Kind.String(), pr.Keys, pr.Question.Text, pr.Deadline)
	d.Work.Outstanding++
	d.Tools.Prompts++
	s.maps.status.Get(e).Kind = components.Waiting
}

// check takes the call through the gate, which says which layer decided; the handle is the tool
// the call resolves to (nil when it resolves to none).
func (s *ToolDispatch) check(id *components.Identity, p *components.Profile, d *components.AgentData, stage *blueprint.Stage, call models.ToolCall) (*tools.Handle, gate.Decision) {
	h, _ := scripthost.Lookup(d, p, int32(stage.Index), call.Name)
	s.req = gate.Request{Ctx: s.run.Context, Agent: tools.AgentRef{ID: id.ID, Name: d.Name},
		Stage: int(d.Tools.Stage), StageName: stage.Name, Available: stage.AvailableTools,
		Visible: stage.Advertises(call.Name) || d.Dynamic.Has(call.Name), Handle: h,
		Tool: call.Name, Args: call.Args, Grants: d.Tools.Grants}
	if p.Policy != nil && p.Policy.Classifier != nil {
		s.req.Intent = d.Conversation.LastUserText() // only the auto classifier reads it
	}
	dec := s.gate.Decide(p.Policy, &s.req)
	s.req = gate.Request{}
	return h, dec
}

// refusal is the error result text the model reads for a call the gate refused.
func refusal(tool string, d gate.Decision) string {
	switch d.Layer {
	case gate.LayerVisibility, gate.LayerSchema:
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
	return components.ToolResult{Content: out.Content, IsError: out.IsError, Notes: out.Notes, Detached: out.Detached}
}

// Finalize implements ecs.System.
func (*ToolDispatch) Finalize(*ecs.World) {}

// toolTurn runs allowed calls and finishes an agent's tool turn; shared by tool_dispatch,
// interact (a prompt was answered) and tool_collect (the last lane result arrived).
type toolTurn struct {
	store
	lanes      *resources.Lanes
	gate       gate.Decider
	hub        *gate.Hub
	tasks      *tools.TaskBroker
	tree       *agenttree.State
	sandbox    *sandboxwire.Wiring
	background *resources.Background
	rec        *resources.Recording
	faults     *faults.Injector
	mcp        *leases.Leases
	clock      *ecs.Clock
	seed       uint64
	maps       agentMaps
	ready      *mover
	terminal   *mover
	scratch    tools.ExecContext
}

// resolve resolves the resources a tool turn uses, once, in its system's Initialize.
func (t *toolTurn) resolveTurn(w *ecs.World) (err error) {
	if t.store, err = resolveStore(w); err != nil {
		return err
	}
	if t.lanes, err = resources.Get[resources.Lanes](w); err != nil {
		return err
	}
	g, err := resources.Get[resources.Gate](w)
	if err != nil {
		return err
	}
	t.gate = g.Decider
	if t.hub, err = resources.Get[gate.Hub](w); err != nil {
		return err
	}
	if t.tasks, err = resources.Get[tools.TaskBroker](w); err != nil {
		return err
	}
	if t.tree, err = resources.Get[agenttree.State](w); err != nil {
		return err
	}
	if t.sandbox, err = resources.Get[sandboxwire.Wiring](w); err != nil {
		return err
	}
	if t.background, err = resources.Get[resources.Background](w); err != nil {
		return err
	}
	if t.rec, err = resolveRecording(w); err != nil {
		return err
	}
	f, err := resources.Get[resources.Faults](w)
	if err != nil {
		return err
	}
	t.faults = f.Injector
	if t.mcp, err = resources.Get[leases.Leases](w); err != nil {
		return err
	}
	t.clock, t.seed = w.Clock(), w.Seed()
	return nil
}

// start runs call i of the agent's turn: inline now, or on the tool lane (Outstanding counts
// it until tool_collect files its result).
func (t *toolTurn) start(tick uint64, e ecs.Entity, id *components.Identity, p *components.Profile, d *components.AgentData, turn uint64, i, msgIndex int, h *tools.Handle) {
	work := &d.Work
	call := work.Calls[i]
	if d.Workdir == "" && p.Workdir != nil {
		d.Workdir = p.Workdir(d.Name, int(id.Index))
	}
	if wt, ok := h.Tool().(subagents.WorldTool); ok {
		// A sub-agent tool changes the world: the sub-agent system settles it later this tick.
		work.Outstanding++
		t.tree.Requests = append(t.tree.Requests, agenttree.Request{Entity: e, Agent: id.ID, Index: i, Op: wt.Op()})
		return
	}
	if h.Inline() {
		// Inline tools finish before this call returns and never keep their context, so one
		// scratch context serves them all.
		t.fillContext(&t.scratch, id, d, p, turn, call.ID, msgIndex)
		t.scratch.Memory = &d.Memory // the world's own order: see tools.ExecContext.Memory
		work.Results[i] = runTool(h, &t.scratch, call.Args)
		t.scratch = tools.ExecContext{}
		return
	}
	latency := t.lanes.Latency.ForTool(call.Name)
	server, isMCP := h.Tool().(leases.ServerTool)
	switch fault := t.faults.Tool(p.Group, call.Name, isMCP, id.ID, turn, i); fault {
	case faults.ToolError, faults.Timeout:
		t.injectFault(tick, e, id, d, i, call, fault)
		return
	case faults.MCPCrash:
		t.mcp.CrashNext(server.Server())
		t.injectFault(tick, e, id, d, i, call, fault)
		return
	case faults.Slow:
		latency += t.faults.SlowTicks()
	}
	usesHost := scripthost.UsesHost(h)
	replaying, again := t.rec.Tape != nil, false
	var entry *recording.ToolEntry // what a script tool's replay answers its requests from
	if replaying && t.rec.Tape.Resuming() && !t.rec.Tape.Has(d.Name, call.ID) {
		// A resumed run's committed recording has no result for this call: it was running when
		// the host stopped, or started after the last commit. The effect journal says which.
		action, journaled := t.resumed(tick, e, id, p, d, turn, i, call, h, usesHost, latency)
		switch action {
		case resources.ServeJournaled:
			if journaled == nil {
				return // filed from the journal
			}
			entry = journaled // a script tool runs again, its requests answered from the journal
		case resources.AnswerInterrupted:
			return
		case resources.RunAgain:
			again = true
		}
		replaying = entry != nil
	}
	if replaying && !usesHost {
		t.replay(tick, e, id, d, turn, i, call, latency)
		return
	}
	if replaying && entry == nil {
		var err error
		if entry, err = t.rec.Tape.Tool(tick, recordedCall(d, turn, i, call)); err != nil {
			t.rec.Fail(err)
			res := components.ToolResult{Content: err.Error(), IsError: true}
			work.Outstanding++
			t.lanes.Tool.Submit(tick, ecs.Job{Agent: id.ID, Entity: e, Index: i, Latency: latency, Run: func() any { return res }, Recipe: res})
			return
		}
	}
	if d.Tools.Writes == nil && p.Policy != nil {
		d.Tools.Writes = tools.NewWriteBudget(p.Policy.WritePerCall, p.Policy.WritePerRun)
	}
	lc := &laneCall{} // the call's context and its recipe in one allocation
	ec := &lc.ec
	t.fillContext(ec, id, d, p, turn, call.ID, msgIndex)
	if usesHost {
		scripthost.Bind(ec, t.gate, t.seed, id, d, p, d.Tools.Stage)
	}
	if cu, ok := h.Tool().(tools.CommandUser); ok && cu.UsesCommands() {
		ec.Commands = t.sandbox.Runner(d, p)
	}
	if work.Cancel == nil {
		// One cancellation per turn, shared by its lane calls, so kill_agent can stop them.
		work.Ctx, work.Cancel = context.WithCancel(t.run.Context)
	}
	ec.Ctx = work.Ctx
	work.Outstanding++
	run := t.laneRun(tick, id.ID, d, turn, i, call, h, ec, usesHost, entry)
	if again {
		run = ranAgain(run)
	}
	lc.recipe = toolRecipe{Tick: tick, Turn: turn, Call: i, MsgIndex: msgIndex, Now: ec.Now, UsesHost: usesHost, Again: again, Entry: entry}
	if usesHost {
		lc.recipe.Grants = d.Tools.Grants.Image()
	}
	t.lanes.Tool.Submit(tick, ecs.Job{Agent: id.ID, Entity: e, Index: i, Latency: latency, Run: run, Recipe: &lc.recipe})
}

// laneCall is what a lane call's work holds: its context, and the recipe a snapshot keeps of it
// while it waits for a slot.
type laneCall struct {
	ec     tools.ExecContext
	recipe toolRecipe
}

// injectFault files an injected tool error, timeout or MCP crash as call i's result, through the tool lane:
// the call does not run. A timeout comes back after the fault's TimeoutTicks, an error at the
// call's usual latency; a "fault" note says which fault it was.
func (t *toolTurn) injectFault(tick uint64, e ecs.Entity, id *components.Identity, d *components.AgentData, i int, call models.ToolCall, fault faults.Kind) {
	err, latency := faults.ErrTool, t.lanes.Latency.ForTool(call.Name)
	switch fault {
	case faults.Timeout:
		err, latency = faults.ErrTimeout, t.faults.TimeoutTicks()
	case faults.MCPCrash:
		err = faults.ErrCrash
	}
	res := components.ToolResult{Content: err.Error(), IsError: true, Notes: []tools.Note{{Fn: faults.NoteFn, Text: fault.String()}}}
	d.Work.Outstanding++
	t.lanes.Tool.Submit(tick, ecs.Job{Agent: id.ID, Entity: e, Index: i, Latency: latency, Run: func() any { return res }, Recipe: res})
}

// fillContext sets up the ExecContext of one call: every field the reference's ExecContext has
// that Warren keeps (docs/decisions.md, "ExecContext: every field real") gets its live value.
func (t *toolTurn) fillContext(ec *tools.ExecContext, id *components.Identity, d *components.AgentData, p *components.Profile, turn uint64, callID string, msgIndex int) {
	model, modelID, _ := p.ModelOf(d.Tools.Stage)
	*ec = tools.ExecContext{
		Ctx:            t.run.Context,
		CallID:         callID,
		TurnID:         turn,
		Agent:          tools.AgentRef{ID: id.ID, Name: d.Name},
		Workdir:        d.Workdir,
		ModelID:        modelID,
		SessionID:      d.Name,
		MessageIndex:   msgIndex,
		ContextPercent: contextPercent(model, d),
		Intent:         d.Conversation.LastUserText(),
		Tasks:          t.tasks,
		Writes:         d.Tools.Writes,
		Now:            t.clock.Now(),
	}
	if p.Policy != nil {
		ec.SafetyMode, ec.PlanFile, ec.Classifier = p.Policy.SafetyMode, p.Policy.PlanFile, p.Policy.Classifier
	}
	if p.Blueprint != nil {
		ec.FileOwner = t.sandbox.FileOwner(p)
	}
}

// finish appends the results in call order, records them (and shows them to the profile's
// result watches, when it has any), and moves the agent on: back to ReadyToInfer, or to
// Terminal if a tool panicked.
func (t *toolTurn) finish(tick uint64, e ecs.Entity, id *components.Identity, d *components.AgentData, stage *blueprint.Stage) {
	counters := t.maps.counters.Get(e)
	p := t.profiles.Get(id.Profile)
	watches := p.Watches
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
		if len(watches) > 0 {
			d.WatchResult(watches, call.Name, r.Content, r.IsError)
		}
		if p.Blueprint != nil && p.Blueprint.Reads.Any() {
			reads := &p.Blueprint.Reads
			if d.Output == nil {
				d.Output = &components.StageOutput{}
			}
			d.Output.FileResult(reads, call.Name, r.Content, r.IsError)
		}
		for _, n := range r.Notes {
			t.run.Trace.ToolNote(tick, ref(id, d), stage.Name, call.ID, call.Name, n.Fn, n.Text, n.OK, n.Err)
			t.sandbox.WarnDegraded(n)
			if n.Fn == tools.NoteRealTime {
				t.run.RealTimeLimits++
			}
		}
		if r.Detached != nil {
			t.background.Add(resources.BackgroundJob{Due: tick + 1, Entity: e, Agent: id.ID, CallID: call.ID, Work: r.Detached})
		}
		t.run.Trace.ToolResult(tick, ref(id, d), stage.Name, call.ID, call.Name, !r.IsError, r.Content)
		if r.Panic != "" && panicked == "" {
			panicked = "panic in tool " + call.Name + ": " + r.Panic
		}
	}
	work.Reset()
	if panicked != "" {
		terminate(t.run.Trace, tick, id, d, t.maps.status.Get(e), stage.Name, components.Failed, panicked)
		t.terminal.add(e)
		return
	}
	t.ready.add(e)
}

// contextPercent is how full the agent's context window is (0-100): the tokens its last live
// turn's provider counted, over the model's context_tokens; -1 for a model with no context window
// known (scripted, js, a live model without context_tokens) or before its first answer.
func contextPercent(m models.Model, d *components.AgentData) int {
	lm, ok := m.(models.Live)
	if !ok || d.ContextTokens == 0 {
		return -1
	}
	window := lm.Spec().ContextTokens
	if window <= 0 {
		return -1
	}
	return int(min(d.ContextTokens*100/window, 100))
}
