package systems

import (
	"github.com/warrenhq/warren/components"
	"github.com/warrenhq/warren/ecs"
	"github.com/warrenhq/warren/internal/leases"
	"github.com/warrenhq/warren/models"
	"github.com/warrenhq/warren/resources"
)

// Spawner creates agents in the Entering phase of their blueprint's entry stage.
type Spawner struct {
	store
	leases *leases.Leases
	sp     ecs.Spawner6[components.Identity, components.Status, components.Cursor, components.Counters,
		components.RNG, components.Entering]
}

// NewSpawner resolves a Spawner for w; the world must already hold its resources
// (resources.Set.Install).
func NewSpawner(w *ecs.World) (*Spawner, error) {
	st, err := resolveStore(w)
	if err != nil {
		return nil, err
	}
	l, err := resources.Get[leases.Leases](w)
	if err != nil {
		return nil, err
	}
	return &Spawner{store: st, leases: l, sp: ecs.NewSpawner6[components.Identity, components.Status, components.Cursor, components.Counters,
		components.RNG, components.Entering](w)}, nil
}

// SpawnGroup creates count agents from p in one batch, named by name(index), with ids allocated
// in index order, and records a spawn event for each. The per-stage visit counters of the whole
// group share one allocation.
func (s *Spawner) SpawnGroup(w *ecs.World, p *components.Profile, count int, name func(index int) string) {
	if count <= 0 {
		return
	}
	profile := s.profiles.Add(p)
	bp := p.Blueprint
	stages := len(bp.Stages)
	visits := make([]uint32, count*stages)
	tick := w.Tick()
	q := s.sp.NewBatchQ(count)
	index := 0
	for q.Next() {
		id, status, cur, _, rng, _ := q.Get()
		slot := s.agents.Alloc()
		d := s.agents.Get(slot)
		*id = components.Identity{ID: w.IDs().Next(), Slot: slot, Index: int32(index), Profile: profile}
		*status = components.Status{Kind: components.Active}
		*cur = components.Cursor{Stage: int32(bp.Entry)}
		rng.Source = ecs.AgentRNG(w.Seed(), id.ID)
		d.Name = name(index)
		d.Root = id.ID
		d.Visits = visits[index*stages : (index+1)*stages : (index+1)*stages]
		d.Conversation.Max = int32(bp.MaxMessages)
		d.Tools.Stage = -1 // no stage's policy applies until sync_stage enters one
		task := ""
		if p.Task != nil {
			if task = p.Task(d.Name, index); task != "" {
				d.Conversation.Append(models.Message{Role: models.RoleUser, Content: task})
			}
		}
		if p.Item != nil {
			if item := p.Item(index); item != nil {
				// The item was checked at load (JSON, within a value's bound), and the memory is
				// empty: it cannot be refused.
				_ = d.Memory.SetJSON(p.ItemKey, item)
			}
		}
		s.run.Trace.Spawn(tick, ref(id, d), p.Group, index, bp.Name, p.ModelID, task)
		index++
	}
	s.leases.Lease(p.MCPServers, count)
	w.Touch(count)
}
