package ecs

import (
	"container/heap"
	"maps"
	"slices"
)

// DueQueue holds items until the tick they are due. Lanes keep finished jobs in one until their
// virtual completion tick; the interaction hub keeps open prompts in one until their answer or
// deadline. Popping costs O(due items), never O(items held), so thousands of parked items cost
// nothing per tick. Items due at the same tick come out in the order they were pushed.
type DueQueue[T any] struct {
	buckets map[uint64][]T
	ticks   tickHeap
	n       int
}

// Push holds item until tick.
func (q *DueQueue[T]) Push(tick uint64, item T) {
	if q.buckets == nil {
		q.buckets = map[uint64][]T{}
	}
	if _, ok := q.buckets[tick]; !ok {
		heap.Push(&q.ticks, tick)
	}
	q.buckets[tick] = append(q.buckets[tick], item)
	q.n++
}

// PopDue appends to out every item due at or before now, earliest tick first, and returns it.
func (q *DueQueue[T]) PopDue(now uint64, out []T) []T {
	for q.ticks.Len() > 0 && q.ticks[0] <= now {
		tick := heap.Pop(&q.ticks).(uint64)
		out = append(out, q.buckets[tick]...)
		q.n -= len(q.buckets[tick])
		delete(q.buckets, tick)
	}
	return out
}

// Next returns the earliest tick at which an item is due.
func (q *DueQueue[T]) Next() (uint64, bool) {
	if q.ticks.Len() == 0 {
		return 0, false
	}
	return q.ticks[0], true
}

// Remove drops every held item for which drop returns true, appending them to out in due order,
// and returns out. It walks every held item, so it is for rare events (an agent killed with
// prompts open), never for a tick's work.
func (q *DueQueue[T]) Remove(drop func(T) bool, out []T) []T {
	slices.Sort(q.ticks) // a sorted slice is a valid heap, and gives the due order
	kept := q.ticks[:0]
	for _, tick := range q.ticks {
		items := q.buckets[tick]
		n := 0
		for _, it := range items {
			if drop(it) {
				out = append(out, it)
				continue
			}
			items[n] = it
			n++
		}
		clear(items[n:])
		q.n -= len(items) - n
		if n == 0 {
			delete(q.buckets, tick)
			continue
		}
		q.buckets[tick] = items[:n]
		kept = append(kept, tick)
	}
	q.ticks = kept
	return out
}

// Len reports how many items are held.
func (q *DueQueue[T]) Len() int { return q.n }

// tickHeap is a min-heap of due ticks.
type tickHeap []uint64

func (h tickHeap) Len() int           { return len(h) }
func (h tickHeap) Less(i, j int) bool { return h[i] < h[j] }
func (h tickHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *tickHeap) Push(x any)        { *h = append(*h, x.(uint64)) }
func (h *tickHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// Held is one item of a DueQueue with the tick it is due at.
type Held[T any] struct {
	Tick uint64
	Item T
}

// Held appends every item the queue holds to out, earliest tick first and in push order within
// a tick, without taking them: pushing them back in that order into an empty queue makes the
// same queue (a snapshot's way to save one).
func (q *DueQueue[T]) Held(out []Held[T]) []Held[T] {
	ticks := slices.Sorted(maps.Keys(q.buckets))
	for _, tick := range ticks {
		for _, it := range q.buckets[tick] {
			out = append(out, Held[T]{Tick: tick, Item: it})
		}
	}
	return out
}
