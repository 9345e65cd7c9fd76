package agenttree

import (
	"slices"
	"testing"

	"github.com/warrenhq/warren/components"
	"github.com/warrenhq/warren/subagents"
)

func TestNew(t *testing.T) {
	s := New()
	if s.Tree == nil || s.Tree.Len() != 0 {
		t.Fatalf("New: tree %v, want an empty tree", s.Tree)
	}
	if s.Profiles == nil || s.Blueprints == nil {
		t.Fatalf("New: Profiles %v, Blueprints %v; want maps ready to write", s.Profiles, s.Blueprints)
	}
	// The maps are written by the spawner without a nil check: writing must not panic.
	s.Profiles[&components.Profile{}] = 1
	s.Blueprints["workers"] = "worker"
	if len(s.Requests) != 0 || len(s.Ended) != 0 {
		t.Fatalf("New: %d requests, %d ended; want none", len(s.Requests), len(s.Ended))
	}
	if other := New(); len(other.Profiles) != 0 || len(other.Blueprints) != 0 {
		t.Fatal("two states share their maps")
	}
}

func TestDataOf(t *testing.T) {
	for _, tc := range []struct {
		name string
		data any
	}{
		{name: "no data yet", data: nil},
		{name: "data of another type is replaced", data: "not a node"},
		{name: "a typed nil node is replaced", data: (*Node)(nil)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := &subagents.Node{ID: 1, Data: tc.data}
			first := DataOf(n)
			if first == nil {
				t.Fatal("DataOf returned nil")
			}
			if n.Data != any(first) {
				t.Fatalf("node holds %v, want the attached data", n.Data)
			}
			first.Item = 7
			if second := DataOf(n); second != first {
				t.Fatalf("second DataOf = %p, want the first %p", second, first)
			}
		})
	}
	t.Run("existing data is kept", func(t *testing.T) {
		nd := &Node{Slot: 3}
		if got := DataOf(&subagents.Node{Data: nd}); got != nd {
			t.Fatalf("DataOf = %p, want the node's own %p", got, nd)
		}
	})
}

func TestStateNode(t *testing.T) {
	s := New()
	root := s.Tree.Root(1, "planner-0", 2)
	child := s.Tree.AddChild(root, 5, 1, false)
	grand := s.Tree.AddChild(child, 9, 0, false)
	for _, tc := range []struct {
		name     string
		id       uint64
		ok       bool
		want     *subagents.Node
		wantName string
	}{
		{name: "root", id: 1, ok: true, want: root, wantName: "planner-0"},
		{name: "child", id: 5, ok: true, want: child, wantName: "planner-0/1"},
		{name: "grandchild", id: 9, ok: true, want: grand, wantName: "planner-0/1/1"},
		{name: "unknown id", id: 2, ok: false},
		{name: "id 0 (no agent)", id: 0, ok: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n, nd, ok := s.Node(tc.id)
			if ok != tc.ok {
				t.Fatalf("Node(%d) ok = %v, want %v", tc.id, ok, tc.ok)
			}
			if !ok {
				if n != nil || nd != nil {
					t.Fatalf("Node(%d) of an unknown id = %v, %v; want nils", tc.id, n, nd)
				}
				return
			}
			if n != tc.want || n.Name != tc.wantName {
				t.Fatalf("Node(%d) = %s (%p), want %s (%p)", tc.id, n.Name, n, tc.wantName, tc.want)
			}
			if nd == nil || nd != DataOf(n) {
				t.Fatalf("Node(%d) data %p, want the node's attached data", tc.id, nd)
			}
			if _, again, _ := s.Node(tc.id); again != nd {
				t.Fatalf("second Node(%d) gave other data", tc.id)
			}
		})
	}
	// Data attached through one node stays with it, not with another.
	_, rootData, _ := s.Node(1)
	_, childData, _ := s.Node(5)
	if rootData == childData {
		t.Fatal("two nodes share their data")
	}
}

func TestSortRequests(t *testing.T) {
	s := New()
	s.Requests = []Request{
		{Agent: 3, Index: 0, Op: subagents.OpSpawn},
		{Agent: 1, Index: 2, Op: subagents.OpWait},
		{Agent: 2, Index: 1, Op: subagents.OpKill},
		{Agent: 1, Index: 0, Op: subagents.OpCheck},
		{Agent: 2, Index: 0, Op: subagents.OpSend},
	}
	s.SortRequests()
	type place struct {
		agent uint64
		index int
		op    subagents.Op
	}
	got := make([]place, len(s.Requests))
	for i, r := range s.Requests {
		got[i] = place{r.Agent, r.Index, r.Op}
	}
	want := []place{
		{1, 0, subagents.OpCheck}, {1, 2, subagents.OpWait}, {2, 0, subagents.OpSend}, {2, 1, subagents.OpKill}, {3, 0, subagents.OpSpawn},
	}
	if !slices.Equal(got, want) {
		t.Fatalf("sorted requests = %v, want %v", got, want)
	}
}

func TestResetRequests(t *testing.T) {
	for _, tc := range []struct {
		name string
		cap  int
		keep bool
	}{
		{name: "small queue keeps its array", cap: 8, keep: true},
		{name: "at the bound keeps its array", cap: maxIdleRequests, keep: true},
		{name: "past the bound is released", cap: maxIdleRequests + 1, keep: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := New()
			s.Requests = make([]Request, 3, tc.cap)
			for i := range s.Requests {
				s.Requests[i] = Request{Agent: uint64(i + 1), Op: subagents.OpSpawn}
			}
			backing := s.Requests[:1]
			s.ResetRequests()
			if len(s.Requests) != 0 {
				t.Fatalf("after reset %d requests, want none", len(s.Requests))
			}
			if !tc.keep {
				if s.Requests != nil || cap(s.Requests) != 0 {
					t.Fatalf("cap %d after reset, want the array released", cap(s.Requests))
				}
				return
			}
			if cap(s.Requests) != tc.cap || &s.Requests[:1][0] != &backing[0] {
				t.Fatalf("cap %d after reset, want the same array of cap %d", cap(s.Requests), tc.cap)
			}
			// The kept array holds no stale request for the next tick to see.
			for i, r := range s.Requests[:3] {
				if r != (Request{}) {
					t.Fatalf("kept slot %d still holds %+v", i, r)
				}
			}
			s.Requests = append(s.Requests, Request{Agent: 9})
			if &s.Requests[0] != &backing[0] {
				t.Fatal("appending after reset reallocated")
			}
		})
	}
}
