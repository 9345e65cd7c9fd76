package systems

import (
	"cmp"
	"slices"

	"github.com/warrenhq/warren/components"
	"github.com/warrenhq/warren/ecs"
	"github.com/warrenhq/warren/gate"
	"github.com/warrenhq/warren/internal/agenttree"
	"github.com/warrenhq/warren/internal/leases"
	"github.com/warrenhq/warren/internal/sandboxwire"
	"github.com/warrenhq/warren/resources"
	"github.com/warrenhq/warren/tools"
	"github.com/warrenhq/warren/trace"
)

// Reap ends every Terminal agent: it writes the final record (status, reason, stage, output,
// counters) and the reap event, then releases what the agent held in the documented teardown
// order (children, sandbox, MCP leases, script runtimes, open prompts, checklist), frees its
// slot in the agent store and removes its entity so its memory returns. Killing orphans makes
// more agents terminal; they are reaped in the same update, so a parent's end takes its whole
// subtree with it within one tick. Records stay queryable for check_agent, the summary and
// expectations.
type Reap struct {
	store
	tree     *agenttree.State
	hub      *gate.Hub
	tasks    *tools.TaskBroker
	leases   *leases.Leases
	records  *components.Records
	teardown *resources.Teardown
	maps     agentMaps
	view     *ecs.View1[components.Identity]
	killer   killer
	orphans  []orphan
	// steps are the built-in teardown steps and the registered ones, in order; tick and status
	// are what the built-in steps need to know about the agent being torn down.
	steps  []resources.TeardownStep
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

func init() {
	Register(Info{ID: IDPrefix + "reap", Order: 100, New: func() ecs.System { return &Reap{} }})
}

// Name implements ecs.System.
func (*Reap) Name() string { return "reap" }

// Initialize implements ecs.System.
func (s *Reap) Initialize(w *ecs.World) (err error) {
	if s.store, err = resolveStore(w); err != nil {
		return err
	}
	if s.tree, err = resources.Get[agenttree.State](w); err != nil {
		return err
	}
	if s.hub, err = resources.Get[gate.Hub](w); err != nil {
		return err
	}
	if s.tasks, err = resources.Get[tools.TaskBroker](w); err != nil {
		return err
	}
	if s.leases, err = resources.Get[leases.Leases](w); err != nil {
		return err
	}
	if s.teardown, err = resources.Get[resources.Teardown](w); err != nil {
		return err
	}
	s.records = ecs.Resource[components.Records](w) // optional: nil keeps no records
	s.maps = newAgentMaps(w)
	s.view = ecs.NewView1[components.Identity](w, []ecs.Comp{ecs.T[components.Terminal]()}, nil)
	s.killer = newKiller(w, s.store, s.tree, s.hub)
	s.steps = append([]resources.TeardownStep{
		{Order: resources.TeardownChildren, Name: "children", Release: s.leaveTree},
		{Order: resources.TeardownSandbox, Name: "sandbox", Release: sandboxwire.Close},
		{Order: resources.TeardownMCP, Name: "mcp", Release: s.releaseServers},
		{Order: resources.TeardownScripts, Name: "scripts", Release: releaseScripts},
		{Order: resources.TeardownPrompts, Name: "prompts", Release: s.closePrompts},
		{Order: resources.TeardownTasks, Name: "tasks", Release: s.releaseTasks},
	}, s.teardown.Steps...)
	slices.SortStableFunc(s.steps, func(a, b resources.TeardownStep) int { return cmp.Compare(a.Order, b.Order) })
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
			if node, ok := s.tree.Tree.Get(o.child); ok {
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
	count := 0
	q := s.view.Query()
	for q.Next() {
		count++
		id := q.Get()
		d := s.agents.Get(id.Slot)
		rec := record(s.profiles, &s.maps, q.Entity(), id, d, tick)
		s.records.Add(rec)
		s.run.Trace.Reap(tick, ref(id, d), rec.Status.String(), int(rec.Counters.ModelTurns), int(rec.Counters.ToolCalls), int(rec.Counters.ToolErrors),
			&trace.Spent{Tokens: rec.Spend.Tokens.Total(), Cost: rec.Spend.Cost})
		s.status, s.rec = rec.Status, rec
		for _, step := range s.steps {
			step.Release(id, d)
		}
		s.agents.Free(id.Slot)
	}
	s.rec = components.FinalRecord{}
	return count
}

// leaveTree takes an ended agent out of the tree: its live, attached children are noted for
// killing, and a sub-agent's end is queued for the sub-agent system (waiters, fan-outs, the
// parent's inbox).
func (s *Reap) leaveTree(id *components.Identity, d *components.AgentData) {
	t := s.tree
	n, nd, ok := t.Node(id.ID)
	if !ok {
		return // it neither spawned nor was spawned: not part of any tree
	}
	rec := s.rec
	nd.Record = &rec // kept with the node, for as long as someone can address the agent
	reason := "parent " + d.Name + " ended (" + s.status.String() + ")"
	for _, child := range t.Tree.End(n) {
		s.orphans = append(s.orphans, orphan{child: child, parent: ref(id, d), reason: reason})
	}
	if d.Parent != 0 {
		t.Ended = append(t.Ended, nd)
	}
}

// closePrompts closes prompts a terminal agent still has open (a kill closes them already; an
// agent failed by a tool's panic may leave some), in the stage it ended in.
func (s *Reap) closePrompts(id *components.Identity, d *components.AgentData) {
	closePrompts(s.run.Trace, s.hub, s.tick, id, d, s.rec.Stage)
}

// releaseServers is the MCP teardown step: a terminal agent gives its leases back.
func (s *Reap) releaseServers(id *components.Identity, _ *components.AgentData) {
	s.leases.Release(s.profiles.Get(id.Profile).MCPServers)
}

// releaseScripts is the scripts teardown step: the agent's dynamic tools (their compiled scripts
// and registry) go with it. Script tools share the run's engine, whose runtimes belong to no
// agent, so nothing else is held.
func releaseScripts(_ *components.Identity, d *components.AgentData) {
	d.Dynamic = nil
}

// releaseTasks drops the agent's checklist.
func (s *Reap) releaseTasks(id *components.Identity, _ *components.AgentData) {
	s.tasks.Release(id.ID)
}

// Finalize implements ecs.System.
func (*Reap) Finalize(*ecs.World) {}

// record builds the final record of the agent at e.
func record(profiles *components.Profiles, maps *agentMaps, e ecs.Entity, id *components.Identity, d *components.AgentData, tick uint64) components.FinalRecord {
	p := profiles.Get(id.Profile)
	cur := maps.cursor.Get(e)
	var results []components.ResultSeen
	if d.Seen != nil {
		results = d.Seen.List
	}
	return components.FinalRecord{
		ID: id.ID, Name: d.Name, Group: p.Group, Index: id.Index,
		Status: maps.status.Get(e).Kind, Reason: d.Reason,
		Stage:    p.Blueprint.Stages[cur.Stage].Name,
		Output:   d.Conversation.LastAssistantText(),
		Tick:     tick,
		Counters: *maps.counters.Get(e),
		ByTool:   d.ByTool,
		Results:  results,
		Parent:   d.Parent,
		Depth:    d.Depth,
		Spend:    d.Spend,
		Memory:   d.Memory.Image(),
	}
}

// Unfinished returns final records for the agents still in the world, for a run that ends (at
// its tick limit, or at a fixed point with agents left waiting) before they did. Their status is
// what it was, with reason as the reason; they are listed in id order.
func Unfinished(w *ecs.World, reason string) []components.FinalRecord {
	st, err := resolveStore(w)
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
		rec := record(st.profiles, &maps, q.Entity(), id, st.agents.Get(id.Slot), w.Tick())
		rec.Reason = reason
		out = append(out, rec)
	}
	slices.SortFunc(out, func(a, b components.FinalRecord) int { return cmp.Compare(a.ID, b.ID) })
	return out
}

// PhaseNames names the phases PhaseCounts counts, in its order: an agent's phase marker, in the
// trace's terms.
var PhaseNames = [...]string{"entering", "ready_to_infer", "awaiting_inference", "ready_for_tools", "awaiting_tools",
	"resolve_transition", "terminal"}

// phaseMarkers are the markers of PhaseNames, in the same order.
var phaseMarkers = [len(PhaseNames)]ecs.Comp{ecs.T[components.Entering](), ecs.T[components.ReadyToInfer](),
	ecs.T[components.AwaitingInference](), ecs.T[components.ReadyForTools](), ecs.T[components.AwaitingTools](),
	ecs.T[components.ResolveTransition](), ecs.T[components.Terminal]()}

// PhaseCounts counts the live agents by phase, in PhaseNames order: a count per marker
// (arche counts an archetype's entities without visiting them), cheap enough for every tick.
func PhaseCounts(w *ecs.World) [len(PhaseNames)]int {
	var out [len(PhaseNames)]int
	for i, c := range phaseMarkers {
		out[i] = w.Count(c)
	}
	return out
}

// Phases counts the live agents by phase, under the phases' names in the trace's terms, leaving
// out the phases no agent is in.
func Phases(w *ecs.World) map[string]int {
	out := map[string]int{}
	for i, n := range PhaseCounts(w) {
		if n > 0 {
			out[PhaseNames[i]] = n
		}
	}
	return out
}
