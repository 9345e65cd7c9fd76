package ecs

// IDAllocator hands out stable agent ids 1, 2, 3, ... in the order agents are spawned. Because
// spawning is deterministic, so are the ids, and so is everything keyed by them (random streams,
// canonical result order, the trace). Zero is never allocated, so it can mean "no agent".
type IDAllocator struct{ last uint64 }

// Next returns the next id.
func (a *IDAllocator) Next() uint64 {
	a.last++
	return a.last
}

// Last returns the most recently allocated id (0 before the first).
func (a *IDAllocator) Last() uint64 { return a.last }
