package systems

import (
	"github.com/warrenhq/warren/components"
	"github.com/warrenhq/warren/ecs"
	"github.com/warrenhq/warren/gate"
	"github.com/warrenhq/warren/internal/agenttree"
	"github.com/warrenhq/warren/policy"
	"github.com/warrenhq/warren/subagents"
	"github.com/warrenhq/warren/trace"
)

// phaseExit moves an agent out of whatever phase it is in; the kill path needs it because a
// killed agent may be anywhere in its cycle.
type phaseExit struct {
	has func(ecs.Entity) bool
	ex  *ecs.Exchange
}

func exitFrom[From any](w *ecs.World) phaseExit {
	m := ecs.NewMap[From](w)
	return phaseExit{has: m.Has, ex: swap[From, components.Terminal](w)}
}

// killer ends agents from outside their own cycle: kill_agent, fail_all fan-outs, and the
// orphans of an agent that ended. It must run with no query open.
type killer struct {
	store
	tree     *agenttree.State
	hub      *gate.Hub
	maps     agentMaps
	terminal ecs.Map[components.Terminal]
	exits    []phaseExit
	names    []string
	ids      []uint64
}

func newKiller(w *ecs.World, st store, tree *agenttree.State, hub *gate.Hub) killer {
	return killer{
		store:    st,
		tree:     tree,
		hub:      hub,
		maps:     newAgentMaps(w),
		terminal: ecs.NewMap[components.Terminal](w),
		exits: []phaseExit{
			exitFrom[components.Entering](w), exitFrom[components.ReadyToInfer](w),
			exitFrom[components.AwaitingInference](w), exitFrom[components.ReadyForTools](w),
			exitFrom[components.AwaitingTools](w), exitFrom[components.ResolveTransition](w),
		},
	}
}

// cascade kills the live subtree of n (n first, then its descendants in pre-order): one kill
// event listing them, then each one's end. It returns how many it ended; agents already
// terminal are skipped. The names stay in k.names until the next call.
func (k *killer) cascade(w *ecs.World, tick uint64, n *subagents.Node, by trace.AgentRef, reason string) int {
	t := k.tree
	k.ids = t.Tree.LiveSubtree(n, k.ids[:0])
	k.names = k.names[:0]
	kept := k.ids[:0]
	for _, id := range k.ids {
		_, nd, ok := t.Node(id)
		if !ok || !w.Alive(nd.Entity) || k.terminal.Has(nd.Entity) {
			continue
		}
		e := nd.Entity
		kept = append(kept, id)
		k.names = append(k.names, k.agents.Get(k.maps.identity.Get(e).Slot).Name)
	}
	if len(kept) == 0 {
		return 0
	}
	k.run.Trace.Kill(tick, trace.AgentRef{ID: kept[0], Name: k.names[0]}, by, reason, k.names)
	for _, id := range kept {
		_, nd, _ := t.Node(id)
		e := nd.Entity
		ident := k.maps.identity.Get(e)
		k.kill(w, tick, e, ident, k.agents.Get(ident.Slot), reason)
	}
	return len(kept)
}

// kill ends one agent as killed: its status and terminal event, its in-flight lane calls
// cancelled through their context, its open prompts closed, and its phase set to Terminal so
// reap tears it down this tick.
func (k *killer) kill(w *ecs.World, tick uint64, e ecs.Entity, id *components.Identity, d *components.AgentData, reason string) {
	p := k.profiles.Get(id.Profile)
	cur := k.maps.cursor.Get(e)
	stage := p.Blueprint.Stages[cur.Stage].Name
	terminate(k.run.Trace, tick, id, d, k.maps.status.Get(e), stage, components.Killed, reason)
	if d.Work.Cancel != nil {
		d.Work.Cancel()
	}
	closePrompts(k.run.Trace, k.hub, tick, id, d, stage)
	d.Tools.Waits = 0
	for _, x := range k.exits {
		if x.has(e) {
			x.ex.Exchange(e)
			break
		}
	}
	w.Touch(1)
}

// closePrompts closes every prompt the agent still has open, each answered "cancelled" in the
// trace: the agent was killed, or ended some other way with prompts open, in stage (where its
// open calls were made: an agent with open prompts has not left the stage of their turn).
func closePrompts(tw *trace.Writer, hub *gate.Hub, tick uint64, id *components.Identity, d *components.AgentData, stage string) {
	if d.Tools.Prompts == 0 {
		return
	}
	for _, pr := range hub.Cancel(id.ID) {
		call := d.Work.Calls[pr.Index]
		tw.Answer(tick, ref(id, d), stage, call.ID, call.Name, "", gate.ByCancelled, policy.Deny.String())
	}
	d.Tools.Prompts = 0
}
