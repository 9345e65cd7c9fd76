package systems

import (
	"cmp"
	"slices"

	"github.com/warrenhq/warren/components"
	"github.com/warrenhq/warren/ecs"
)

// Reap writes the final record of every Terminal agent (status, reason, stage, output,
// counters), records the reap event, releases what the agent held (its checklist and its slot in
// the agent store), and removes the entity so its memory is freed. Records stay queryable for
// the summary and expectations.
type Reap struct {
	host *Host
	maps agentMaps
	view *ecs.View1[components.Identity]
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
	return nil
}

// Update implements ecs.System.
func (s *Reap) Update(w *ecs.World) {
	tick := w.Tick()
	reaped := 0
	q := s.view.Query()
	for q.Next() {
		reaped++
		id := q.Get()
		e := q.Entity()
		d := s.host.Agents.Get(id.Slot)
		rec := record(s.host, &s.maps, e, id, d, tick)
		s.host.Records.Add(rec)
		s.host.Trace.Reap(tick, ref(id, d), rec.Status.String(), int(rec.Counters.ModelTurns), int(rec.Counters.ToolCalls), int(rec.Counters.ToolErrors))
		if s.host.Tasks != nil {
			s.host.Tasks.Release(id.ID)
		}
		s.host.Agents.Free(id.Slot)
	}
	if reaped > 0 {
		w.Touch(s.view.RemoveAll())
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
