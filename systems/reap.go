package systems

import (
	"cmp"
	"slices"

	"github.com/warrenhq/warren/components"
	"github.com/warrenhq/warren/ecs"
	"github.com/warrenhq/warren/trace"
)

// TeardownOrder places a teardown step among the things reap releases for a terminal agent.
// Steps run in ascending order; the built-in steps hold the documented places, and later
// subsystems (the sandbox, MCP leases, script runtimes) register theirs between them.
type TeardownOrder uint8

// The documented teardown order. A terminal agent's final record and reap event come first;
// then, in this order:
const (
	// TeardownChildren: live children that are not detached are killed (their subtrees with
	// them), and the agent leaves the tree.
	TeardownChildren TeardownOrder = 10
	// TeardownSandbox: the agent's sandbox (processes, private folders, mounts).
	TeardownSandbox TeardownOrder = 20
	// TeardownMCP: the agent's leases on MCP server sessions.
	TeardownMCP TeardownOrder = 30
	// TeardownScripts: the agent's script runtimes.
	TeardownScripts TeardownOrder = 40
	// TeardownPrompts: prompts still open (closed as cancelled).
	TeardownPrompts TeardownOrder = 50
	// TeardownTasks: the agent's checklist.
	TeardownTasks TeardownOrder = 60
)

// TeardownStep releases one thing a terminal agent held. Release gets the agent's identity and
// data before its slot is freed; it must not block (hand slow work to a goroutine it owns).
type TeardownStep struct {
	Order   TeardownOrder
	Name    string
	Release func(id *components.Identity, d *components.AgentData)
}

// AddTeardown registers a teardown step; call it before the scheduler initializes (reap reads
// the steps once). Steps of equal order run in registration order, after a built-in step of
// that order.
func (h *Host) AddTeardown(step TeardownStep) {
	h.teardown = append(h.teardown, step)
	slices.SortStableFunc(h.teardown, func(a, b TeardownStep) int { return cmp.Compare(a.Order, b.Order) })
}

// Reap ends every Terminal agent: it writes the final record (status, reason, stage, output,
// counters) and the reap event, then releases what the agent held in the documented teardown
// order (children, sandbox, MCP leases, script runtimes, open prompts, checklist), frees its
// slot in the agent store and removes its entity so its memory returns. Killing orphans makes
// more agents terminal; they are reaped in the same update, so a parent's end takes its whole
// subtree with it within one tick. Records stay queryable for check_agent, the summary and
// expectations.
type Reap struct {
	host    *Host
	maps    agentMaps
	view    *ecs.View1[components.Identity]
	killer  killer
	orphans []orphan
	// steps are the built-in teardown steps and the registered ones, in order; tick and status
	// are what the built-in steps need to know about the agent being torn down.
	steps  []TeardownStep
	tick   uint64
	status components.StatusKind
	rec    components.FinalRecord
}

// orphan is a live child of an agent that ended, killed once the batch is removed.
type orphan struct {
	child  uint64
	parent trace.AgentRef
	reason string
}

var _ ecs.System = (*Reap)(nil)

// Name implements ecs.System.
func (*Reap) Name() string { return "reap" }

// Initialize implements ecs.System.
func (s *Reap) Initialize(w *ecs.World) (err error) {
	if s.host, err = hostOf(w); err != nil {
		return err
	}
	s.maps = newAgentMaps(w)
	s.view = ecs.NewView1[components.Identity](w, []ecs.Comp{ecs.T[components.Terminal]()}, nil)
	s.killer = newKiller(w, s.host)
	s.steps = append([]TeardownStep{
		{Order: TeardownChildren, Name: "children", Release: s.leaveTree},
		{Order: TeardownSandbox, Name: "sandbox", Release: closeSandbox},
		{Order: TeardownMCP, Name: "mcp", Release: s.host.releaseServers},
		{Order: TeardownPrompts, Name: "prompts", Release: s.closePrompts},
		{Order: TeardownTasks, Name: "tasks", Release: s.releaseTasks},
	}, s.host.teardown...)
	slices.SortStableFunc(s.steps, func(a, b TeardownStep) int { return cmp.Compare(a.Order, b.Order) })
	return nil
}

// Steps lists the teardown steps in the order reap runs them, by name.
func (s *Reap) Steps() []string {
	names := make([]string, len(s.steps))
	for i, st := range s.steps {
		names[i] = st.Name
	}
	return names
}

// Update implements ecs.System.
func (s *Reap) Update(w *ecs.World) {
	tick := w.Tick()
	s.tick = tick
	for {
		n := s.reapBatch(w, tick)
		if n == 0 {
			return
		}
		w.Touch(s.view.RemoveAll())
		killed := 0
		for _, o := range s.orphans {
			if node, ok := s.host.tree.tree.Get(o.child); ok {
				killed += s.killer.cascade(w, tick, node, o.parent, o.reason)
			}
		}
		s.orphans = resetScratch(s.orphans)
		if killed == 0 {
			return
		}
	}
}

// reapBatch records and tears down every agent Terminal now, and reports how many there were.
func (s *Reap) reapBatch(w *ecs.World, tick uint64) int {
	h := s.host
	count := 0
	q := s.view.Query()
	for q.Next() {
		count++
		id := q.Get()
		d := h.Agents.Get(id.Slot)
		rec := record(h, &s.maps, q.Entity(), id, d, tick)
		h.Records.Add(rec)
		h.Trace.Reap(tick, ref(id, d), rec.Status.String(), int(rec.Counters.ModelTurns), int(rec.Counters.ToolCalls), int(rec.Counters.ToolErrors))
		s.status, s.rec = rec.Status, rec
		for _, step := range s.steps {
			step.Release(id, d)
		}
		h.Agents.Free(id.Slot)
	}
	s.rec = components.FinalRecord{}
	return count
}

// leaveTree takes an ended agent out of the tree: its live, attached children are noted for
// killing, and a sub-agent's end is queued for the sub-agent system (waiters, fan-outs, the
// parent's inbox).
func (s *Reap) leaveTree(id *components.Identity, d *components.AgentData) {
	t := s.host.tree
	n, nd, ok := t.node(id.ID)
	if !ok {
		return // it neither spawned nor was spawned: not part of any tree
	}
	rec := s.rec
	nd.record = &rec // kept with the node, for as long as someone can address the agent
	reason := "parent " + d.Name + " ended (" + s.status.String() + ")"
	for _, child := range t.tree.End(n) {
		s.orphans = append(s.orphans, orphan{child: child, parent: ref(id, d), reason: reason})
	}
	if d.Parent != 0 {
		t.ended = append(t.ended, nd)
	}
}

// closePrompts closes prompts a terminal agent still has open (a kill closes them already; an
// agent failed by a tool's panic may leave some).
func (s *Reap) closePrompts(id *components.Identity, d *components.AgentData) {
	closePrompts(s.host, s.tick, id, d)
}

// releaseTasks drops the agent's checklist.
func (s *Reap) releaseTasks(id *components.Identity, _ *components.AgentData) {
	if s.host.Tasks != nil {
		s.host.Tasks.Release(id.ID)
	}
}

// Finalize implements ecs.System.
func (*Reap) Finalize(*ecs.World) {}

// record builds the final record of the agent at e.
func record(h *Host, maps *agentMaps, e ecs.Entity, id *components.Identity, d *components.AgentData, tick uint64) components.FinalRecord {
	p := h.Profiles.Get(id.Profile)
	cur := maps.cursor.Get(e)
	return components.FinalRecord{
		ID: id.ID, Name: d.Name, Group: p.Group, Index: id.Index,
		Status: maps.status.Get(e).Kind, Reason: d.Reason,
		Stage:    p.Blueprint.Stages[cur.Stage].Name,
		Output:   d.Conversation.LastAssistantText(),
		Tick:     tick,
		Counters: *maps.counters.Get(e),
		ByTool:   d.ByTool,
		Parent:   d.Parent,
		Depth:    d.Depth,
	}
}

// Unfinished returns final records for the agents still in the world, for a run that ends (at
// its tick limit, or at a fixed point with agents left waiting) before they did. Their status is
// what it was, with reason as the reason; they are listed in id order.
func Unfinished(w *ecs.World, reason string) []components.FinalRecord {
	h, err := hostOf(w)
	if err != nil {
		return nil
	}
	maps := newAgentMaps(w)
	view := ecs.NewView1[components.Identity](w, nil, nil)
	defer view.Release()
	var out []components.FinalRecord
	q := view.Query()
	for q.Next() {
		id := q.Get()
		rec := record(h, &maps, q.Entity(), id, h.Agents.Get(id.Slot), w.Tick())
		rec.Reason = reason
		out = append(out, rec)
	}
	slices.SortFunc(out, func(a, b components.FinalRecord) int { return cmp.Compare(a.ID, b.ID) })
	return out
}
