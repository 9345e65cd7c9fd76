package systems

import (
	"strconv"

	"github.com/warrenhq/warren/components"
	"github.com/warrenhq/warren/ecs"
	"github.com/warrenhq/warren/gate"
	"github.com/warrenhq/warren/internal/scripthost"
	"github.com/warrenhq/warren/policy"
	"github.com/warrenhq/warren/tools"
)

// Interact settles the prompts the hub has due this tick, in canonical order. An approval
// answered once, stage or run lets the call run (a stage or run answer is also recorded as a
// grant on the call's keys); deny, a timeout or no answer at all refuses it. A question's reply
// becomes the ask_user tool's result. When a parked agent's last open call is settled its turn
// finishes; an agent with no prompt left open is active again.
type Interact struct {
	toolTurn
	// awaiting tells whether a result's agent still waits for it.
	awaiting ecs.Map[components.AwaitingTools]
}

var _ ecs.System = (*Interact)(nil)

func init() {
	Register(Info{ID: IDPrefix + "interact", Order: 60, New: func() ecs.System { return &Interact{} }})
}

// Name implements ecs.System.
func (*Interact) Name() string { return "interact" }

// Initialize implements ecs.System.
func (s *Interact) Initialize(w *ecs.World) (err error) {
	if err := s.resolveTurn(w); err != nil {
		return err
	}
	s.maps = newAgentMaps(w)
	s.awaiting = ecs.NewMap[components.AwaitingTools](w)
	s.ready = newMover[components.AwaitingTools, components.ReadyToInfer](w)
	s.terminal = newMover[components.AwaitingTools, components.Terminal](w)
	return nil
}

// Update implements ecs.System.
func (s *Interact) Update(w *ecs.World) {
	tick := w.Tick()
	for _, pr := range s.hub.Due(tick) {
		if !w.Alive(pr.Entity) || !s.awaiting.Has(pr.Entity) {
			continue // the agent ended while it waited
		}
		id := s.maps.identity.Get(pr.Entity)
		cur := s.maps.cursor.Get(pr.Entity)
		p := s.profiles.Get(id.Profile)
		d := s.agents.Get(id.Slot)
		if d.Tools.Prompts--; d.Tools.Prompts == 0 && d.Tools.Waits == 0 {
			s.maps.status.Get(pr.Entity).Kind = components.Active
		}
		onLane := false
		if pr.Kind == gate.PromptQuestion {
			s.reply(tick, id, p, d, cur, pr)
		} else {
			onLane = s.approve(tick, pr.Entity, id, p, d, cur, pr)
		}
		// The prompt's share of Outstanding ends here; a call now on the lane holds its own.
		if d.Work.Outstanding--; onLane || d.Work.Outstanding > 0 {
			continue
		}
		s.finish(tick, pr.Entity, id, d, &p.Blueprint.Stages[cur.Stage])
	}
	w.Touch(s.ready.apply() + s.terminal.apply())
}

// approve applies an approval answer to call pr.Index: run it (granting its keys for the stage
// or the run when the answer says so) or refuse it. It reports whether the call went to the
// tool lane.
func (s *Interact) approve(tick uint64, e ecs.Entity, id *components.Identity, p *components.Profile, d *components.AgentData, cur *components.Cursor, pr *gate.Prompt) bool {
	call := d.Work.Calls[pr.Index]
	scope, err := policy.ParseScope(pr.Answer)
	allowed := pr.Answered() && err == nil
	verdict := policy.Deny
	if allowed {
		verdict = policy.Allow
	}
	answer := pr.Answer
	if !pr.Answered() {
		answer = "deny"
	}
	s.run.Trace.Answer(tick, ref(id, d), p.Blueprint.Stages[cur.Stage].Name, call.ID, call.Name, answer, pr.Settler(), verdict.String())
	if !allowed {
		why := "the prompt was answered " + strconv.Quote(pr.Answer)
		switch {
		case pr.By == gate.ByTimeout && pr.Deadline == 0:
			why = "nobody answered the prompt before the people's prompt timeout"
		case pr.By == gate.ByTimeout:
			why = "nobody answered the prompt before its deadline (tick " + strconv.FormatUint(pr.Deadline, 10) + ")"
		case pr.By == gate.ByUnanswered:
			why = "nothing can answer the prompt"
		}
		d.Work.Results[pr.Index] = components.ToolResult{Content: "permission denied for " + call.Name + ": " + why, IsError: true}
		return false
	}
	if scope != policy.ScopeOnce {
		if d.Tools.Grants == nil {
			d.Tools.Grants = &policy.Grants{}
		}
		d.Tools.Grants.Grant(pr.Keys, scope, int(d.Tools.Stage))
	}
	h, ok := scripthost.Lookup(d, p, cur.Stage, call.Name)
	if !ok {
		d.Work.Results[pr.Index] = components.ToolResult{Content: "tool " + strconv.Quote(call.Name) + " is no longer registered", IsError: true}
		return false
	}
	before := d.Work.Outstanding
	s.start(tick, e, id, p, d, uint64(cur.Turn-1), pr.Index, len(d.Conversation.Messages), h)
	return d.Work.Outstanding > before
}

// reply turns a question's answer into the ask_user tool's result.
func (s *Interact) reply(tick uint64, id *components.Identity, p *components.Profile, d *components.AgentData, cur *components.Cursor, pr *gate.Prompt) {
	call := d.Work.Calls[pr.Index]
	stage := p.Blueprint.Stages[cur.Stage].Name
	if !pr.Answered() {
		s.run.Trace.Answer(tick, ref(id, d), stage, call.ID, call.Name, "", pr.Settler(), policy.Deny.String())
		why := "nobody answered the question before its deadline"
		if pr.By == gate.ByUnanswered {
			why = "nobody can answer the question"
		}
		d.Work.Results[pr.Index] = components.ToolResult{Content: why, IsError: true}
		return
	}
	s.run.Trace.Answer(tick, ref(id, d), stage, call.ID, call.Name, pr.Answer, pr.Settler(), policy.Allow.String())
	h, ok := scripthost.Lookup(d, p, cur.Stage, call.Name)
	it, isInteractive := tools.Interactive(nil), false
	if ok {
		it, isInteractive = h.Tool().(tools.Interactive)
	}
	if !isInteractive {
		d.Work.Results[pr.Index] = components.ToolResult{Content: "tool " + strconv.Quote(call.Name) + " cannot take an answer", IsError: true}
		return
	}
	res, err := it.Answer(pr.Question, pr.Answer)
	if err != nil {
		d.Work.Results[pr.Index] = components.ToolResult{Content: err.Error(), IsError: true}
		return
	}
	d.Work.Results[pr.Index] = components.ToolResult{Content: res.Content, IsError: res.IsError}
}

// Finalize implements ecs.System.
func (*Interact) Finalize(*ecs.World) {}
