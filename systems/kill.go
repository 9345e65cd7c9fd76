package systems

import (
	"github.com/warrenhq/warren/components"
	"github.com/warrenhq/warren/ecs"
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
	host     *Host
	maps     agentMaps
	terminal ecs.Map[components.Terminal]
	exits    []phaseExit
	names    []string
	ids      []uint64
}

func newKiller(w *ecs.World, h *Host) killer {
	return killer{
		host:     h,
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
	t := k.host.tree
	k.ids = t.tree.LiveSubtree(n, k.ids[:0])
	k.names = k.names[:0]
	kept := k.ids[:0]
	for _, id := range k.ids {
		_, nd, ok := t.node(id)
		if !ok || !w.Alive(nd.entity) || k.terminal.Has(nd.entity) {
			continue
		}
		e := nd.entity
		kept = append(kept, id)
		k.names = append(k.names, k.host.Agents.Get(k.maps.identity.Get(e).Slot).Name)
	}
	if len(kept) == 0 {
		return 0
	}
	k.host.Trace.Kill(tick, trace.AgentRef{ID: kept[0], Name: k.names[0]}, by, reason, k.names)
	for _, id := range kept {
		_, nd, _ := t.node(id)
		e := nd.entity
		ident := k.maps.identity.Get(e)
		k.kill(w, tick, e, ident, k.host.Agents.Get(ident.Slot), reason)
	}
	return len(kept)
}

// kill ends one agent as killed: its status and terminal event, its in-flight lane calls
// cancelled through their context, its open prompts closed, and its phase set to Terminal so
// reap tears it down this tick.
func (k *killer) kill(w *ecs.World, tick uint64, e ecs.Entity, id *components.Identity, d *components.AgentData, reason string) {
	p := k.host.Profiles.Get(id.Profile)
	cur := k.maps.cursor.Get(e)
	terminate(k.host, tick, id, d, k.maps.status.Get(e), p.Blueprint.Stages[cur.Stage].Name, components.Killed, reason)
	if d.Work.Cancel != nil {
		d.Work.Cancel()
	}
	closePrompts(k.host, tick, id, d)
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
// trace: the agent was killed, or ended some other way with prompts open.
func closePrompts(h *Host, tick uint64, id *components.Identity, d *components.AgentData) {
	if d.Tools.Prompts == 0 {
		return
	}
	for _, pr := range h.Hub.cancel(id.ID) {
		call := d.Work.Calls[pr.index]
		h.Trace.Answer(tick, ref(id, d), call.ID, call.Name, "", byCancelled, policy.Deny.String())
	}
	d.Tools.Prompts = 0
}
