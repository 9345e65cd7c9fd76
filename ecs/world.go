package ecs

import (
	arche "github.com/mlange-42/arche/ecs"
	"github.com/mlange-42/arche/generic"
)

// Entity is a handle to one entity of the world. It is arche's entity, aliased so that callers
// never import arche.
type Entity = arche.Entity

// Comp names a component type, for filters and exchanges. Build one with T.
type Comp = generic.Comp

// T returns the Comp for component type A.
func T[A any]() Comp { return generic.T[A]() }

// Config describes a world before it is built.
type Config struct {
	// Seed is the scenario seed every per-agent random stream derives from.
	Seed uint64
	// Clock chooses virtual or wall time and the length of a virtual tick.
	Clock ClockConfig
	// InitialCapacity pre-sizes arche's storage (0 lets arche choose, 128). arche gives every
	// archetype this capacity, and every phase is an archetype, so a large value costs memory
	// in each phase: leave it 0 unless every phase will hold that many entities.
	InitialCapacity int
}

// World owns the entity store and the shared resources of one simulation. It belongs to one
// goroutine: systems run serially on it, and only lanes run work elsewhere.
type World struct {
	arche   arche.World
	clock   *Clock
	ids     IDAllocator
	seed    uint64
	lanes   []*Lane
	waiters []Waiter
	touched int
}

// NewWorld builds an empty world from cfg.
func NewWorld(cfg Config) *World {
	var a arche.World
	if cfg.InitialCapacity > 0 {
		a = arche.NewWorld(cfg.InitialCapacity)
	} else {
		a = arche.NewWorld()
	}
	return &World{arche: a, clock: NewClock(cfg.Clock), seed: cfg.Seed}
}

// Clock returns the world's clock.
func (w *World) Clock() *Clock { return w.clock }

// Tick is shorthand for w.Clock().Tick().
func (w *World) Tick() uint64 { return w.clock.Tick() }

// Seed returns the scenario seed the world was built with.
func (w *World) Seed() uint64 { return w.seed }

// IDs returns the world's deterministic id allocator.
func (w *World) IDs() *IDAllocator { return &w.ids }

// Touch records that a system changed n entities this tick. A tick in which nothing is touched
// and no lane or waiter owes work is a fixed point, so a system that changed something must say
// so, or the run may stop early.
func (w *World) Touch(n int) { w.touched += n }

// AddWaiter registers work the scheduler must wait for besides the lanes (for example the
// interaction hub's open prompts). The system that consumes it registers it in Initialize.
func (w *World) AddWaiter(x Waiter) { w.waiters = append(w.waiters, x) }

// Touched reports how many changes systems recorded in the current tick.
func (w *World) Touched() int { return w.touched }

// Alive reports whether e still exists (it has not been removed).
func (w *World) Alive(e Entity) bool { return w.arche.Alive(e) }

// RemoveEntity removes e and frees its component storage. It must not be called while a query
// is open.
func (w *World) RemoveEntity(e Entity) { w.arche.RemoveEntity(e) }

// Has reports whether e carries component type A.
func Has[A any](w *World, e Entity) bool {
	m := generic.NewMap[A](&w.arche)
	return m.Has(e)
}

// Entities reports how many entities are alive.
func (w *World) Entities() int { return w.arche.Stats().Entities.Used }

// AddResource stores res as the world's single resource of type T, so systems can share it
// without globals. Adding a second resource of one type panics in arche; callers add each once
// while assembling the world.
func AddResource[T any](w *World, res *T) {
	r := generic.NewResource[T](&w.arche)
	r.Add(res)
}

// Resource returns the world's resource of type T, or nil when none was added.
func Resource[T any](w *World) *T {
	r := generic.NewResource[T](&w.arche)
	if !r.Has() {
		return nil
	}
	return r.Get()
}

// Count counts the live entities that have every one of comps: how many agents are in a phase,
// for a state directory's account of a run.
func (w *World) Count(comps ...Comp) int {
	ids := make([]arche.ID, len(comps))
	for i, c := range comps {
		ids[i] = arche.TypeID(&w.arche, c)
	}
	q := w.arche.Query(arche.All(ids...))
	n := q.Count()
	q.Close()
	return n
}
