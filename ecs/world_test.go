package ecs

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

type marker struct{}
type payload struct{ N int }

func TestViewsAndSwapsOnlyVisitTheirPhase(t *testing.T) {
	w := NewWorld(Config{})
	spawn := NewSwap(w, []Comp{T[payload](), T[marker]()}, nil)
	plain := NewSwap(w, []Comp{T[payload]()}, nil)
	for i := range 10 {
		var e Entity
		if i%2 == 0 {
			e = spawn.NewEntity()
		} else {
			e = plain.NewEntity()
		}
		m := NewMap[payload](w)
		m.Get(e).N = i
	}
	view := NewView1[payload](w, []Comp{T[marker]()}, nil)
	q := view.Query()
	sum := 0
	for q.Next() {
		sum += q.Get().N
	}
	if sum != 0+2+4+6+8 {
		t.Fatalf("sum over marked = %d", sum)
	}
	unmark := NewSwap(w, nil, []Comp{T[marker]()})
	if n := view.SwapAll(unmark); n != 5 {
		t.Fatalf("SwapAll moved %d", n)
	}
	q = view.Query()
	if q.Count() != 0 {
		t.Fatalf("view still sees %d", q.Count())
	}
	q.Close()
	if w.Entities() != 10 {
		t.Fatalf("entities = %d", w.Entities())
	}
}

func TestResources(t *testing.T) {
	type counter struct{ N int }
	w := NewWorld(Config{})
	if Resource[counter](w) != nil {
		t.Fatal("resource present before AddResource")
	}
	AddResource(w, &counter{N: 3})
	if Resource[counter](w).N != 3 {
		t.Fatal("resource lost")
	}
}

func TestAgentRNGIsPerAgentAndReproducible(t *testing.T) {
	draw := func(seed, id uint64) [4]uint64 {
		src := AgentRNG(seed, id)
		r := rand.New(&src)
		return [4]uint64{r.Uint64(), r.Uint64(), r.Uint64(), r.Uint64()}
	}
	if first, second := draw(7, 1), draw(7, 1); first != second {
		t.Fatal("same seed and id gave different streams")
	}
	seen := map[[4]uint64]bool{}
	for _, c := range [][2]uint64{{7, 1}, {7, 2}, {8, 1}, {0, 0}, {1, 0}, {0, 1}} {
		d := draw(c[0], c[1])
		if seen[d] {
			t.Fatalf("stream for %v collides", c)
		}
		seen[d] = true
	}
}

func TestIDAllocatorAndClock(t *testing.T) {
	var ids IDAllocator
	if ids.Next() != 1 || ids.Next() != 2 || ids.Last() != 2 {
		t.Fatal("ids are not 1, 2, ...")
	}
	c := NewClock(ClockConfig{TickLength: 2 * time.Second})
	c.advance(5)
	c.advance(3)
	if c.Tick() != 5 || !c.Now().Equal(VirtualEpoch.Add(10*time.Second)) {
		t.Fatalf("tick %d now %v", c.Tick(), c.Now())
	}
	if _, err := ParseClockMode("sundial"); err == nil {
		t.Fatal("bad clock mode accepted")
	}
}

func TestDueQueueRemove(t *testing.T) {
	var q DueQueue[int]
	for i, tick := range []uint64{5, 3, 5, 9, 3} {
		q.Push(tick, i)
	}
	removed := q.Remove(func(i int) bool { return i%2 == 0 }, nil)
	if want := []int{4, 0, 2}; !slices.Equal(removed, want) {
		t.Fatalf("removed %v, want %v (due order, push order within a tick)", removed, want)
	}
	if q.Len() != 2 {
		t.Fatalf("Len = %d after removing 3 of 5, want 2", q.Len())
	}
	if next, ok := q.Next(); !ok || next != 3 {
		t.Fatalf("Next = %d,%v, want 3 (item 1 is still due at 3)", next, ok)
	}
	if got := q.PopDue(9, nil); !slices.Equal(got, []int{1, 3}) {
		t.Fatalf("PopDue = %v, want [1 3]", got)
	}
	if q.Len() != 0 {
		t.Fatalf("Len = %d, want 0", q.Len())
	}
}
