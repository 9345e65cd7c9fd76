package ecs

import "github.com/mlange-42/arche/generic"

// Query1 iterates entities of a View1; call Next until it returns false (or Close early).
type Query1[A any] = generic.Query1[A]

// Query2 iterates entities of a View2.
type Query2[A, B any] = generic.Query2[A, B]

// Map gives typed access to one component of any entity.
type Map[T any] = generic.Map[T]

// NewMap returns a Map over component T of w. Resolve maps in a system's Initialize.
func NewMap[T any](w *World) Map[T] { return generic.NewMap[T](&w.arche) }

// Exchange adds and removes a fixed set of components in one structural change; a phase swap
// (remove one marker, add the next) is an Exchange.
type Exchange = generic.Exchange

// NewSwap returns an Exchange that adds the components in add and removes those in remove.
// Resolve swaps in a system's Initialize; apply them only after the query that found the
// entities is closed (arche forbids structural changes while a query is open).
func NewSwap(w *World, add, remove []Comp) *Exchange {
	return generic.NewExchange(&w.arche).Adds(add...).Removes(remove...)
}

// Spawner6 creates entities with six components at once (an agent's full starting state), one
// at a time or in batches.
type Spawner6[A, B, C, D, E, F any] = generic.Map6[A, B, C, D, E, F]

// NewSpawner6 returns a Spawner6 for w.
func NewSpawner6[A, B, C, D, E, F any](w *World) Spawner6[A, B, C, D, E, F] {
	return generic.NewMap6[A, B, C, D, E, F](&w.arche)
}

// View1 is a cached filter over entities that carry A (and the With components, and none of the
// Without ones). Cached filters keep a query's cost proportional to the matching archetypes, so
// a system's tick costs O(entities it serves), not O(entities in the world).
type View1[A any] struct {
	w *World
	f *generic.Filter1[A]
}

// NewView1 resolves and caches a View1 on w.
func NewView1[A any](w *World, with, without []Comp) *View1[A] {
	f := generic.NewFilter1[A]().With(with...).Without(without...)
	f.Register(&w.arche)
	return &View1[A]{w: w, f: f}
}

// Query opens an iterator. Close it (or drain it) before any structural change.
func (v *View1[A]) Query() Query1[A] { return v.f.Query(&v.w.arche) }

// SwapAll applies ex to every entity of the view in one batch operation and returns how many
// moved. Use it when a whole phase moves on at once.
func (v *View1[A]) SwapAll(ex *Exchange) int { return ex.ExchangeBatch(v.f.Filter(&v.w.arche)) }

// Release unregisters the view's cached filter; use it for a view made for a one-off query.
func (v *View1[A]) Release() { v.f.Unregister(&v.w.arche) }

// RemoveAll removes every entity of the view in one batch operation and returns how many.
func (v *View1[A]) RemoveAll() int {
	return v.w.arche.Batch().RemoveEntities(v.f.Filter(&v.w.arche))
}

// View2 is a cached filter over entities that carry A and B.
type View2[A, B any] struct {
	w *World
	f *generic.Filter2[A, B]
}

// NewView2 resolves and caches a View2 on w.
func NewView2[A, B any](w *World, with, without []Comp) *View2[A, B] {
	f := generic.NewFilter2[A, B]().With(with...).Without(without...)
	f.Register(&w.arche)
	return &View2[A, B]{w: w, f: f}
}

// Query opens an iterator. Close it (or drain it) before any structural change.
func (v *View2[A, B]) Query() Query2[A, B] { return v.f.Query(&v.w.arche) }

// SwapAll applies ex to every entity of the view in one batch operation.
func (v *View2[A, B]) SwapAll(ex *Exchange) int { return ex.ExchangeBatch(v.f.Filter(&v.w.arche)) }
