package systems

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/warrenhq/warren/components"
	"github.com/warrenhq/warren/ecs"
	"github.com/warrenhq/warren/internal/agenttree"
	"github.com/warrenhq/warren/internal/leases"
	"github.com/warrenhq/warren/models"
	"github.com/warrenhq/warren/resources"
	"github.com/warrenhq/warren/subagents"
	"github.com/warrenhq/warren/trace"
)

// listLimit bounds how many agents one list_agents result names.
const listLimit = 100

// Subagents settles the sub-agent tool calls tool_dispatch and interact handed over this tick
// (spawn_agent, check_agent, wait_for_agent, send_to_agent, kill_agent, list_agents, fan_out),
// in canonical order (agent id, call index), after first telling the world about the sub-agents
// reap removed since it last ran: their waiting callers get their final record, fan-outs
// count their workers and start the next ones, and a parent nobody waited for finds the end
// in its inbox.
//
// Children are spawned here, in the Entering phase, so they run from the next tick. A call
// that waits (wait_for_agent, spawn_agent with wait, fan_out) parks its agent as data: the
// agent holds no lane capacity while its children run, so waiting parents can never starve
// the children they wait for.
type Subagents struct {
	toolTurn
	sp       ecs.Spawner6[components.Identity, components.Status, components.Cursor, components.Counters, components.RNG, components.Entering]
	spawning *resources.Spawning
	leases   *leases.Leases
	killer   killer
	awaiting ecs.Map[components.AwaitingTools]
	ended    ecs.Map[components.Terminal]
	list     []subagents.AgentStatus
}

var _ ecs.System = (*Subagents)(nil)

func init() {
	Register(Info{ID: IDPrefix + "subagents", Order: 80, New: func() ecs.System { return &Subagents{} }})
}

// Name implements ecs.System.
func (*Subagents) Name() string { return "subagents" }

// Initialize implements ecs.System.
func (s *Subagents) Initialize(w *ecs.World) (err error) {
	if err := s.resolveTurn(w); err != nil {
		return err
	}
	if s.spawning, err = resources.Get[resources.Spawning](w); err != nil {
		return err
	}
	if s.leases, err = resources.Get[leases.Leases](w); err != nil {
		return err
	}
	s.maps = newAgentMaps(w)
	s.sp = ecs.NewSpawner6[components.Identity, components.Status, components.Cursor, components.Counters, components.RNG, components.Entering](w)
	s.killer = newKiller(w, s.store, s.tree, s.hub)
	s.awaiting = ecs.NewMap[components.AwaitingTools](w)
	s.ended = ecs.NewMap[components.Terminal](w)
	s.ready = newMover[components.AwaitingTools, components.ReadyToInfer](w)
	s.terminal = newMover[components.AwaitingTools, components.Terminal](w)
	return nil
}

// Update implements ecs.System.
func (s *Subagents) Update(w *ecs.World) {
	t := s.tree
	if len(t.Ended) == 0 && len(t.Requests) == 0 {
		return
	}
	tick := w.Tick()
	s.settleEnded(w, tick)
	t.SortRequests()
	for i := range t.Requests {
		s.handle(w, tick, t.Requests[i])
	}
	t.ResetRequests()
	w.Touch(s.ready.applyIf(s.awaiting.Has) + s.terminal.applyIf(s.awaiting.Has))
}

// Finalize implements ecs.System.
func (*Subagents) Finalize(*ecs.World) {}

// caller is the agent a request or a settled wait belongs to, looked up once.
type caller struct {
	e    ecs.Entity
	id   *components.Identity
	d    *components.AgentData
	p    *components.Profile
	node *subagents.Node
}

// callerOf returns the agent at e if it still waits on its tool calls (a killed agent does not).
func (s *Subagents) callerOf(w *ecs.World, e ecs.Entity) (caller, bool) {
	if !w.Alive(e) || !s.awaiting.Has(e) {
		return caller{}, false
	}
	id := s.maps.identity.Get(e)
	c := caller{e: e, id: id, d: s.agents.Get(id.Slot), p: s.profiles.Get(id.Profile)}
	c.node = s.nodeOf(e, id, c.d, c.p)
	return c, true
}

// nodeOf returns the agent's node in the tree, making a top-level agent a root on first use.
func (s *Subagents) nodeOf(e ecs.Entity, id *components.Identity, d *components.AgentData, p *components.Profile) *subagents.Node {
	t := s.tree
	if n, ok := t.Tree.Get(id.ID); ok {
		return n
	}
	n := t.Tree.Root(id.ID, d.Name, p.Blueprint.Subagents.MaxChildDepth)
	n.Data = &agenttree.Node{Entity: e}
	return n
}

// handle settles one request, or parks it when it waits.
func (s *Subagents) handle(w *ecs.World, tick uint64, r agenttree.Request) {
	c, ok := s.callerOf(w, r.Entity)
	if !ok {
		return // the agent was killed before its request came up
	}
	call := c.d.Work.Calls[r.Index]
	var res components.ToolResult
	switch r.Op {
	case subagents.OpSpawn:
		res = s.spawn(w, tick, c, r.Index, call)
	case subagents.OpCheck:
		res = s.check(c, call)
	case subagents.OpWait:
		res = s.wait(tick, c, r.Index, call)
	case subagents.OpSend:
		res = s.send(tick, c, call)
	case subagents.OpKill:
		res = s.kill(w, tick, c, call)
	case subagents.OpList:
		res = s.listAgents(c)
	case subagents.OpFanOut:
		res = s.fanOut(w, tick, c, r.Index, call)
	default:
		res = errResult(fmt.Errorf("%s is not a sub-agent operation this host knows", call.Name))
	}
	if isParked(res) {
		return
	}
	s.settle(tick, c, r.Index, res)
}

// listOrNone joins names for a message.
func listOrNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// parked is the result of a call that waits; it is never given to an agent.
var parked = components.ToolResult{Panic: "parked"}

// isParked reports whether res says the call waits.
func isParked(res components.ToolResult) bool { return res.Panic == parked.Panic && res.Content == "" }

func errResult(err error) components.ToolResult {
	return components.ToolResult{Content: err.Error(), IsError: true}
}

// settle files the result of call index and finishes the agent's turn when it was the last.
func (s *Subagents) settle(tick uint64, c caller, index int, res components.ToolResult) {
	c.d.Work.Results[index] = res
	if c.d.Work.Outstanding--; c.d.Work.Outstanding > 0 {
		return
	}
	cur := s.maps.cursor.Get(c.e)
	s.finish(tick, c.e, c.id, c.d, &c.p.Blueprint.Stages[cur.Stage])
}

// spawn handles spawn_agent.
func (s *Subagents) spawn(w *ecs.World, tick uint64, c caller, index int, call models.ToolCall) components.ToolResult {
	args, err := subagents.ParseValidatedSpawn(call.Args) // the gate's schema check came first
	if err != nil {
		return errResult(err)
	}
	child, err := s.spawnChild(w, tick, c, args.Blueprint, args.Task, args.SeedContext, args.MaxChildDepth, -1, call.ID, false)
	if err != nil {
		return errResult(fmt.Errorf("spawn_agent: %w", err))
	}
	if args.Wait {
		s.park(tick, c, index, call.ID, child)
		return parked
	}
	return components.ToolResult{Content: s.liveStatus(child).JSON()}
}

// spawnChild creates one child of c from blueprint key with task as its first message. item is
// a fan-out worker's work item, which is also its index and is recorded in its spawn event (-1:
// not a fan-out worker; its index is then its position among c's children); forceAttached makes
// it die with its parent whatever its blueprint says (fan-out workers).
func (s *Subagents) spawnChild(w *ecs.World, tick uint64, c caller, key, task string, seedContext bool, argDepth, item int, callID string, forceAttached bool) (*subagents.Node, error) {
	if s.spawning.Offspring == nil {
		return nil, fmt.Errorf("%w %q: this host spawns no sub-agents", subagents.ErrUnknownBlueprint, key)
	}
	if sub := &c.p.Blueprint.Subagents; !sub.MaySpawn(key) {
		return nil, fmt.Errorf("%w: blueprint %s may spawn %s, not %q", subagents.ErrNotSpawnable, c.p.Blueprint.Name, listOrNone(sub.Spawnable), key)
	}
	cp, err := s.spawning.Offspring.Profile(c.p, c.d.Tools.Stage, key)
	if err != nil {
		return nil, err
	}
	bp := cp.Blueprint
	budget, err := s.tree.Tree.CheckSpawn(c.node, bp.Subagents.MaxChildDepth, argDepth, c.p.Blueprint.Subagents.MaxChildren, s.spawning.Limits)
	if err != nil {
		return nil, err
	}
	cid := w.IDs().Next()
	detached := bp.Subagents.Detached && !forceAttached
	n := s.tree.Tree.AddChild(c.node, cid, budget, detached)
	index := item
	if index < 0 {
		index = int(c.node.Spawned) - 1
	}
	e := s.sp.New()
	ident, status, cur, _, rng, _ := s.sp.Get(e)
	slot := s.agents.Alloc()
	d := s.agents.Get(slot)
	*ident = components.Identity{ID: cid, Slot: slot, Index: int32(index), Profile: s.profileIndex(cp, components.ProfileOrigin{Child: true, Parent: c.id.Profile, Stage: c.d.Tools.Stage, Key: key})}
	*status = components.Status{Kind: components.Active}
	*cur = components.Cursor{Stage: int32(bp.Entry)}
	rng.Source = ecs.AgentRNG(w.Seed(), cid)
	d.Name = n.Name
	d.Visits = make([]uint32, len(bp.Stages))
	d.Conversation.Max = int32(bp.MaxMessages)
	d.Tools.Stage = -1
	d.Parent, d.Depth, d.Root = c.id.ID, n.Depth, c.d.Root
	s.leases.Lease(cp.MCPServers, 1)
	if seedContext {
		// The parent's conversation up to the turn that spawns: that turn's own calls are
		// unfinished, so they stay behind.
		msgs := c.d.Conversation.Messages
		for _, m := range msgs[:max(len(msgs)-1, 0)] {
			d.Conversation.Append(m)
		}
	}
	if task != "" {
		d.Conversation.Append(models.Message{Role: models.RoleUser, Content: task})
	}
	if c.d.Workdir == "" && c.p.Workdir != nil {
		c.d.Workdir = c.p.Workdir(c.d.Name, int(c.id.Index))
	}
	if c.d.Workdir != "" {
		d.Workdir = filepath.Join(c.d.Workdir, "agents", strconv.FormatUint(uint64(c.node.Spawned), 10))
	}
	n.Data = &agenttree.Node{Entity: e}
	s.run.Trace.SpawnChild(tick, ref(ident, d), cp.Group, index, bp.Name, cp.ModelID, task, ref(c.id, c.d), callID, int(n.Depth), detached, item)
	w.Touch(1)
	return n, nil
}

// profileIndex returns the index of p in the world's profiles, adding it on first use.
func (s *Subagents) profileIndex(p *components.Profile, origin components.ProfileOrigin) uint32 {
	t := s.tree
	if i, ok := t.Profiles[p]; ok {
		return i
	}
	p.Origin = origin
	i := s.profiles.Add(p)
	t.Profiles[p] = i
	t.Blueprints[p.Group] = p.Blueprint.Name
	return i
}

// park holds call index of c until target ends.
func (s *Subagents) park(tick uint64, c caller, index int, callID string, target *subagents.Node) {
	nd := agenttree.DataOf(target)
	nd.Waiters = append(nd.Waiters, agenttree.Waiter{Entity: c.e, Agent: c.id.ID, Index: index, CallID: callID})
	c.d.Tools.Waits++
	s.maps.status.Get(c.e).Kind = components.Waiting
	s.run.Trace.WaitStart(tick, ref(c.id, c.d), callID, trace.AgentRef{ID: target.ID, Name: target.Name})
}

// check handles check_agent.
func (s *Subagents) check(c caller, call models.ToolCall) components.ToolResult {
	target, err := s.resolve(c, call)
	if err != nil {
		return errResult(err)
	}
	return components.ToolResult{Content: s.statusOf(target).JSON()}
}

// resolve finds the agent a call names, within the caller's subtree.
func (s *Subagents) resolve(c caller, call models.ToolCall) (*subagents.Node, error) {
	name, err := subagents.ParseTarget(call.Args)
	if err != nil {
		return nil, err
	}
	n, err := s.tree.Tree.Resolve(c.node, name)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", call.Name, err)
	}
	return n, nil
}

// wait handles wait_for_agent: an agent that has ended answers at once; a live one parks the
// call until it does.
func (s *Subagents) wait(tick uint64, c caller, index int, call models.ToolCall) components.ToolResult {
	target, err := s.resolve(c, call)
	if err != nil {
		return errResult(err)
	}
	if target == c.node {
		return errResult(fmt.Errorf("wait_for_agent: %w: %s would wait for its own end", subagents.ErrSelf, c.d.Name))
	}
	if !s.live(target) {
		return components.ToolResult{Content: s.statusOf(target).JSON()}
	}
	s.park(tick, c, index, call.ID, target)
	return parked
}

// send handles send_to_agent: the message waits in the target's inbox for its next model turn
// in a stage that accepts messages.
func (s *Subagents) send(tick uint64, c caller, call models.ToolCall) components.ToolResult {
	args, err := subagents.ParseSend(call.Args)
	if err != nil {
		return errResult(err)
	}
	target, err := s.tree.Tree.Resolve(c.node, args.ID)
	if err != nil {
		return errResult(fmt.Errorf("send_to_agent: %w", err))
	}
	if !s.live(target) {
		return errResult(fmt.Errorf("send_to_agent: %w: %s is %s", subagents.ErrAlreadyEnded, target.Name, s.statusOf(target).Status))
	}
	td := s.dataOf(target)
	limit := s.spawning.InboxCap // resources.Set.Install gave it its default
	if len(td.Inbox) >= limit {
		return errResult(fmt.Errorf("send_to_agent: %w: %s has %d unread messages (the host allows %d); wait for it to read them", subagents.ErrInboxFull, target.Name, len(td.Inbox), limit))
	}
	td.Inbox = append(td.Inbox, models.Message{Role: models.RoleUser, Content: "[message from " + c.d.Name + "] " + args.Message})
	s.run.Trace.Message(tick, trace.AgentRef{ID: target.ID, Name: target.Name}, ref(c.id, c.d), "send", args.Message)
	return components.ToolResult{Content: subagents.SentJSON(target.Name, len(td.Inbox))}
}

// kill handles kill_agent: the target and its whole live subtree end as killed.
func (s *Subagents) kill(w *ecs.World, tick uint64, c caller, call models.ToolCall) components.ToolResult {
	target, err := s.resolve(c, call)
	if err != nil {
		return errResult(err)
	}
	if target == c.node {
		return errResult(fmt.Errorf("kill_agent: %w: an agent ends its own run by finishing its stage", subagents.ErrSelf))
	}
	if !s.live(target) {
		return errResult(fmt.Errorf("kill_agent: %w: %s is %s", subagents.ErrAlreadyEnded, target.Name, s.statusOf(target).Status))
	}
	s.killer.cascade(w, tick, target, ref(c.id, c.d), "killed by "+c.d.Name+" (kill_agent)")
	return components.ToolResult{Content: subagents.KillJSON(s.killer.names)}
}

// listAgents handles list_agents: the caller, then its descendants in pre-order (ended ones
// included while someone above them lives).
func (s *Subagents) listAgents(c caller) components.ToolResult {
	s.list = s.list[:0]
	total := 1 // the caller
	var walk func(n *subagents.Node)
	walk = func(n *subagents.Node) {
		for _, cid := range n.Children {
			child, ok := s.tree.Tree.Get(cid)
			if !ok {
				continue // forgotten: ended, and nobody above it is live any more
			}
			total++
			if len(s.list) < listLimit {
				s.list = append(s.list, s.statusOf(child)) // the rest are only counted
			}
			walk(child)
		}
	}
	s.list = append(s.list, s.statusOf(c.node))
	walk(c.node)
	out := subagents.ListJSON(s.list, total)
	clear(s.list)
	return components.ToolResult{Content: out}
}

// live reports whether the agent of n is still running (not ended, not killed this tick).
func (s *Subagents) live(n *subagents.Node) bool {
	if !n.Live {
		return false
	}
	e := agenttree.DataOf(n).Entity
	return !s.ended.Has(e) && !s.maps.status.Get(e).Kind.Terminal()
}

// dataOf returns the agent data of a live node.
func (s *Subagents) dataOf(n *subagents.Node) *components.AgentData {
	return s.agents.Get(s.maps.identity.Get(agenttree.DataOf(n).Entity).Slot)
}

// statusOf describes the agent of n: from its components while it lives, from its final record
// once reaped.
func (s *Subagents) statusOf(n *subagents.Node) subagents.AgentStatus {
	nd := agenttree.DataOf(n)
	if n.Live {
		e := nd.Entity
		id := s.maps.identity.Get(e)
		d := s.agents.Get(id.Slot)
		p := s.profiles.Get(id.Profile)
		cur := s.maps.cursor.Get(e)
		cnt := s.maps.counters.Get(e)
		st := subagents.AgentStatus{ID: n.Name, Blueprint: p.Blueprint.Name, Depth: int(n.Depth),
			Status: s.maps.status.Get(e).Kind.String(), Stage: p.Blueprint.Stages[cur.Stage].Name,
			ModelTurns: int(cnt.ModelTurns), ToolCalls: int(cnt.ToolCalls), LiveChildren: int(n.LiveChildren), Inbox: len(d.Inbox)}
		if st.Status != components.Active.String() && st.Status != components.Waiting.String() {
			st.Reason = d.Reason
		}
		return st
	}
	return s.recordStatus(nd.Record, n.Name, int(n.Depth))
}

// liveStatus describes a child just spawned.
func (s *Subagents) liveStatus(n *subagents.Node) subagents.AgentStatus {
	return s.statusOf(n)
}

// recordStatus describes a reaped agent from its final record.
func (s *Subagents) recordStatus(rec *components.FinalRecord, name string, depth int) subagents.AgentStatus {
	if rec == nil {
		return subagents.AgentStatus{ID: name, Depth: depth, Status: "unknown"}
	}
	return subagents.AgentStatus{ID: rec.Name, Blueprint: s.tree.Blueprints[rec.Group], Depth: int(rec.Depth), Status: rec.Status.String(),
		Stage: rec.Stage, Reason: rec.Reason, Output: rec.Output,
		ModelTurns: int(rec.Counters.ModelTurns), ToolCalls: int(rec.Counters.ToolCalls)}
}

// settleEnded tells waiters, fan-outs and parents about the sub-agents reap removed.
func (s *Subagents) settleEnded(w *ecs.World, tick uint64) {
	t := s.tree
	for _, nd := range t.Ended {
		rec := nd.Record
		consumed := false
		for _, wt := range nd.Waiters {
			consumed = s.endWait(w, tick, wt, rec) || consumed
		}
		nd.Waiters = nil
		if nd.Fan != nil {
			s.workerEnded(w, tick, nd, rec)
			continue
		}
		if !consumed {
			s.notify(w, tick, rec)
		}
	}
	t.Ended = resetScratch(t.Ended)
}

// endWait gives a parked wait its target's final record; false when the waiter is gone.
func (s *Subagents) endWait(w *ecs.World, tick uint64, wt agenttree.Waiter, rec *components.FinalRecord) bool {
	c, ok := s.callerOf(w, wt.Entity)
	if !ok || wt.Index >= len(c.d.Work.Calls) || c.d.Work.Calls[wt.Index].ID != wt.CallID {
		return false
	}
	if c.d.Tools.Waits--; c.d.Tools.Waits == 0 && c.d.Tools.Prompts == 0 {
		s.maps.status.Get(c.e).Kind = components.Active
	}
	s.run.Trace.WaitEnd(tick, ref(c.id, c.d), wt.CallID, trace.AgentRef{ID: rec.ID, Name: rec.Name}, rec.Status.String())
	s.settle(tick, c, wt.Index, components.ToolResult{Content: s.recordStatus(rec, rec.Name, int(rec.Depth)).JSON()})
	return true
}

// notify puts a child's end into its parent's inbox: the notify path of work nobody waited for.
func (s *Subagents) notify(w *ecs.World, tick uint64, rec *components.FinalRecord) {
	pn, pd, ok := s.tree.Node(rec.Parent)
	if !ok || !pn.Live {
		return
	}
	e := pd.Entity
	if !w.Alive(e) || s.ended.Has(e) {
		return
	}
	id := s.maps.identity.Get(e)
	d := s.agents.Get(id.Slot)
	text := "[sub-agent " + rec.Name + " ended: " + rec.Status.String() + "] "
	if rec.Status == components.Done {
		text += rec.Output
	} else {
		text += rec.Reason
	}
	d.Inbox = append(d.Inbox, models.Message{Role: models.RoleUser, Content: text})
	s.run.Trace.Message(tick, ref(id, d), trace.AgentRef{ID: rec.ID, Name: rec.Name}, "notify", text)
	w.Touch(1)
}
