package subagents

import (
	"errors"
	"slices"
	"testing"
)

// kill ends n and its whole live subtree the way kill_agent does, returning the ended ids.
func kill(tr *Tree, n *Node) []uint64 {
	ids := tr.LiveSubtree(n, nil)
	for _, id := range ids {
		if m, ok := tr.Get(id); ok {
			tr.End(m)
		}
	}
	return ids
}

// endAgent ends n the way the host ends an agent whose run finished: End, then kill each orphan.
func endAgent(tr *Tree, n *Node) {
	for _, id := range tr.End(n) {
		if m, ok := tr.Get(id); ok {
			kill(tr, m)
		}
	}
}

// spawn adds a child after CheckSpawn with no limits, failing the test if it is refused.
func spawn(t testing.TB, tr *Tree, parent *Node, id uint64, detached bool) *Node {
	t.Helper()
	budget, err := tr.CheckSpawn(parent, -1, -1, 0, Limits{})
	if err != nil {
		t.Fatalf("CheckSpawn(%s): %v", parent.Name, err)
	}
	return tr.AddChild(parent, id, budget, detached)
}

func TestRoot(t *testing.T) {
	cases := []struct {
		name       string
		budget     int
		wantBudget uint8
	}{
		{"negative budget clamps to 0", -5, 0},
		{"ordinary budget", 3, 3},
		{"huge budget clamps to 255", 300, 255},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tr := NewTree()
			id := uint64(i + 1)
			n := tr.Root(id, "planner-0", tc.budget)
			if n.Budget != tc.wantBudget || n.Depth != 0 || n.Parent != 0 || !n.Live || n.Name != "planner-0" {
				t.Fatalf("Root = %+v", n)
			}
			if again := tr.Root(id, "other", 1); again != n || again.Name != "planner-0" || again.Budget != tc.wantBudget {
				t.Errorf("second Root returned %+v, want the first node unchanged", again)
			}
			if got, ok := tr.Lookup("planner-0"); !ok || got != n {
				t.Errorf("Lookup = %v, %v", got, ok)
			}
			if got, ok := tr.Get(id); !ok || got != n {
				t.Errorf("Get = %v, %v", got, ok)
			}
			if tr.Len() != 1 || tr.LiveNonRoot() != 0 {
				t.Errorf("Len = %d, LiveNonRoot = %d; want 1, 0", tr.Len(), tr.LiveNonRoot())
			}
		})
	}
}

func TestAddChildNaming(t *testing.T) {
	tr := NewTree()
	root := tr.Root(1, "planner-0", 3)
	c1 := spawn(t, tr, root, 10, false)
	c2 := spawn(t, tr, root, 11, true)
	g := spawn(t, tr, c1, 12, false)
	tr.End(c2)
	c3 := spawn(t, tr, root, 13, false)
	cases := []struct {
		name                      string
		node                      *Node
		wantName                  string
		wantDepth, wantBudget     uint8
		wantParent                uint64
		wantDetached              bool
		wantSpawned, wantLiveKids int
	}{
		{"first child", c1, "planner-0/1", 1, 2, 1, false, 1, 1},
		{"second child, detached", c2, "planner-0/2", 1, 2, 1, true, 0, 0},
		{"grandchild", g, "planner-0/1/1", 2, 1, 10, false, 0, 0},
		{"numbers keep counting after an end", c3, "planner-0/3", 1, 2, 1, false, 0, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			n := tc.node
			if n.Name != tc.wantName || n.Depth != tc.wantDepth || n.Budget != tc.wantBudget || n.Parent != tc.wantParent ||
				n.Detached != tc.wantDetached || int(n.Spawned) != tc.wantSpawned || int(n.LiveChildren) != tc.wantLiveKids {
				t.Errorf("node = %+v", *n)
			}
			if got, ok := tr.Lookup(tc.wantName); !ok || got != n {
				t.Errorf("Lookup(%q) = %v, %v", tc.wantName, got, ok)
			}
		})
	}
	if root.Spawned != 3 || root.LiveChildren != 2 || !slices.Equal(root.Children, []uint64{10, 11, 13}) {
		t.Errorf("root = %+v, want 3 spawned, 2 live, children [10 11 13]", *root)
	}
	if tr.LiveNonRoot() != 3 {
		t.Errorf("LiveNonRoot = %d, want 3", tr.LiveNonRoot())
	}
}

func TestCheckSpawn(t *testing.T) {
	cases := []struct {
		name                   string
		parentBudget           int
		parentDepth            int // the parent is created this many levels below a root
		liveChildren           int
		own, arg, parentMaxKid int
		lim                    Limits
		want                   uint8
		wantErr                error
		wantText               string
	}{
		{name: "budget minus one", parentBudget: 3, own: -1, arg: -1, want: 2},
		{name: "blueprint lowers", parentBudget: 3, own: 1, arg: -1, want: 1},
		{name: "blueprint cannot raise", parentBudget: 3, own: 9, arg: -1, want: 2},
		{name: "argument lowers", parentBudget: 3, own: 5, arg: 0, want: 0},
		{name: "argument cannot raise", parentBudget: 2, own: -1, arg: 40, want: 1},
		{name: "budget spent", parentBudget: 0, own: -1, arg: -1, wantErr: ErrDepth,
			wantText: "sub-agent depth limit reached: planner-0 (depth 0) may not spawn sub-agents: its depth budget is spent; do the work yourself"},
		{name: "host depth cap", parentBudget: 9, parentDepth: 2, own: -1, arg: -1, lim: Limits{MaxDepth: 2}, wantErr: ErrDepth,
			wantText: "sub-agent depth limit reached: a child of planner-0/1/1 would be at depth 3 and the host allows at most 2; do the work yourself"},
		{name: "host depth cap allows its own depth", parentBudget: 9, parentDepth: 1, own: -1, arg: -1, lim: Limits{MaxDepth: 2}, want: 8},
		{name: "host children cap", parentBudget: 3, liveChildren: 2, own: -1, arg: -1, lim: Limits{MaxChildren: 2}, wantErr: ErrTooManyChildren,
			wantText: "too many live children: planner-0 already has 2 live children (limit 2); wait for one to end (wait_for_agent) or kill one (kill_agent) first"},
		{name: "blueprint children cap", parentBudget: 3, liveChildren: 1, own: -1, arg: -1, parentMaxKid: 1, lim: Limits{MaxChildren: 5}, wantErr: ErrTooManyChildren},
		{name: "smaller children cap wins", parentBudget: 3, liveChildren: 2, own: -1, arg: -1, parentMaxKid: 5, lim: Limits{MaxChildren: 2}, wantErr: ErrTooManyChildren},
		{name: "under both children caps", parentBudget: 3, liveChildren: 1, own: -1, arg: -1, parentMaxKid: 2, lim: Limits{MaxChildren: 2}, want: 2},
		{name: "host live cap", parentBudget: 3, liveChildren: 3, own: -1, arg: -1, lim: Limits{MaxLive: 3}, wantErr: ErrTooManyAgents,
			wantText: "too many live sub-agents in this host: 3 are running (limit 3); wait for one of yours to end or do the work yourself"},
		{name: "depth is checked before children", parentBudget: 0, liveChildren: 2, own: -1, arg: -1, lim: Limits{MaxChildren: 1, MaxLive: 1}, wantErr: ErrDepth},
		{name: "children are checked before the host", parentBudget: 3, liveChildren: 2, own: -1, arg: -1, lim: Limits{MaxChildren: 1, MaxLive: 1}, wantErr: ErrTooManyChildren},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tr := NewTree()
			parent := tr.Root(1, "planner-0", tc.parentBudget+tc.parentDepth)
			id := uint64(100)
			for range tc.parentDepth {
				id++
				parent = tr.AddChild(parent, id, parent.Budget-1, false)
			}
			for range tc.liveChildren {
				id++
				tr.AddChild(parent, id, 0, false)
			}
			got, err := tr.CheckSpawn(parent, tc.own, tc.arg, tc.parentMaxKid, tc.lim)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("CheckSpawn = %d, %v; want %v", got, err, tc.wantErr)
				}
				if tc.wantText != "" && err.Error() != tc.wantText {
					t.Errorf("error text = %q, want %q", err.Error(), tc.wantText)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("CheckSpawn = %d, %v; want %d", got, err, tc.want)
			}
		})
	}
}

func TestCheckSpawnCountsOnlyLiveChildren(t *testing.T) {
	tr := NewTree()
	root := tr.Root(1, "r", 3)
	lim := Limits{MaxChildren: 1, MaxLive: 1}
	c := spawn(t, tr, root, 2, false)
	if _, err := tr.CheckSpawn(root, -1, -1, 0, lim); !errors.Is(err, ErrTooManyChildren) {
		t.Fatalf("with one live child: %v, want ErrTooManyChildren", err)
	}
	tr.End(c)
	if _, err := tr.CheckSpawn(root, -1, -1, 0, lim); err != nil {
		t.Fatalf("after the child ended: %v, want nil", err)
	}
	if _, err := tr.CheckSpawn(nil, -1, -1, 0, lim); !errors.Is(err, ErrUnknownAgent) {
		t.Errorf("nil parent: %v, want ErrUnknownAgent", err)
	}
}

// family builds planner-0 -> {/1 -> {/1/1}, /2} and a second root "planner-01" with one child,
// so prefix-sharing names are around to trip a string-based check.
func family(t *testing.T) *Tree {
	tr := NewTree()
	root := tr.Root(1, "planner-0", 5)
	c1 := spawn(t, tr, root, 2, false)
	spawn(t, tr, c1, 3, false)
	spawn(t, tr, root, 4, false)
	other := tr.Root(5, "planner-01", 5)
	spawn(t, tr, other, 6, false)
	return tr
}

func TestResolve(t *testing.T) {
	tr := family(t)
	cases := []struct {
		name, caller, target string
		wantErr              error
		wantText             string
	}{
		{name: "itself", caller: "planner-0", target: "planner-0"},
		{name: "child", caller: "planner-0", target: "planner-0/1"},
		{name: "grandchild", caller: "planner-0", target: "planner-0/1/1"},
		{name: "child addresses itself", caller: "planner-0/1", target: "planner-0/1"},
		{name: "parent", caller: "planner-0/1", target: "planner-0", wantErr: ErrOutsideSubtree,
			wantText: `not in your subtree: "planner-0" (you may address only yourself and your descendants)`},
		{name: "sibling", caller: "planner-0/1", target: "planner-0/2", wantErr: ErrOutsideSubtree},
		{name: "sibling's descendant", caller: "planner-0/2", target: "planner-0/1/1", wantErr: ErrOutsideSubtree},
		{name: "other root", caller: "planner-0", target: "planner-01", wantErr: ErrOutsideSubtree},
		{name: "other root's child", caller: "planner-0", target: "planner-01/1", wantErr: ErrOutsideSubtree},
		{name: "unknown", caller: "planner-0", target: "planner-0/9", wantErr: ErrUnknownAgent,
			wantText: `no such agent: "planner-0/9" (list_agents shows the ids you may use)`},
		{name: "empty name", caller: "planner-0", target: "", wantErr: ErrOutsideSubtree},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			caller, ok := tr.Lookup(tc.caller)
			if !ok {
				t.Fatalf("no caller %q", tc.caller)
			}
			got, err := tr.Resolve(caller, tc.target)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) || got != nil {
					t.Fatalf("Resolve = %v, %v; want %v", got, err, tc.wantErr)
				}
				if tc.wantText != "" && err.Error() != tc.wantText {
					t.Errorf("error text = %q, want %q", err.Error(), tc.wantText)
				}
				return
			}
			if err != nil || got == nil || got.Name != tc.target {
				t.Fatalf("Resolve = %v, %v; want %q", got, err, tc.target)
			}
		})
	}
	if tr.Within(nil, nil) {
		t.Error("Within(nil, nil) = true")
	}
}

func TestLiveSubtree(t *testing.T) {
	tr := family(t)
	c1, _ := tr.Lookup("planner-0/1")
	cases := []struct {
		name  string
		setup func()
		from  string
		want  []uint64
	}{
		{"whole tree in pre-order", func() {}, "planner-0", []uint64{1, 2, 3, 4}},
		{"a subtree", func() {}, "planner-0/1", []uint64{2, 3}},
		{"a leaf", func() {}, "planner-0/2", []uint64{4}},
		// Ending /1 directly (not through kill) leaves /1/1 live under an ended node.
		{"passes through ended nodes", func() { tr.End(c1) }, "planner-0", []uint64{1, 3, 4}},
		{"ended start node", func() {}, "planner-0/1", []uint64{3}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.setup()
			n, ok := tr.Lookup(tc.from)
			if !ok {
				t.Fatalf("no node %q", tc.from)
			}
			prefix := []uint64{99}
			got := tr.LiveSubtree(n, prefix)
			if !slices.Equal(got, append([]uint64{99}, tc.want...)) {
				t.Errorf("LiveSubtree(%s) = %v, want [99] + %v", tc.from, got, tc.want)
			}
		})
	}
	if got := tr.LiveSubtree(nil, nil); got != nil {
		t.Errorf("LiveSubtree(nil) = %v", got)
	}
}

func TestEnd(t *testing.T) {
	tr := NewTree()
	root := tr.Root(1, "r", 5)
	a := spawn(t, tr, root, 2, false)
	d := spawn(t, tr, root, 3, true)
	b := spawn(t, tr, root, 4, false)
	gone := spawn(t, tr, root, 5, false)
	da := spawn(t, tr, d, 6, false)
	aa := spawn(t, tr, a, 7, true)
	tr.End(gone)

	if tr.LiveNonRoot() != 5 || root.LiveChildren != 3 {
		t.Fatalf("before: LiveNonRoot %d, root.LiveChildren %d; want 5, 3", tr.LiveNonRoot(), root.LiveChildren)
	}
	orphans := tr.End(root)
	if !slices.Equal(orphans, []uint64{a.ID, b.ID}) {
		t.Fatalf("End(root) orphans = %v, want [2 4] (live, not detached, spawn order)", orphans)
	}
	if again := tr.End(root); again != nil {
		t.Errorf("second End = %v, want nil", again)
	}
	for _, id := range orphans {
		o, _ := tr.Get(id)
		kill(tr, o)
	}
	cases := []struct {
		name     string
		node     *Node
		live     bool
		findable bool
	}{
		{"root is forgotten", root, false, false},
		{"killed orphan is forgotten", a, false, false},
		{"other killed orphan is forgotten", b, false, false},
		{"child ended before is forgotten", gone, false, false},
		{"detached child survives", d, true, true},
		{"detached child's child lives on", da, true, true},
		{"detached grandchild of a killed orphan is killed too", aa, false, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.node.Live != tc.live {
				t.Errorf("%s Live = %v, want %v", tc.node.Name, tc.node.Live, tc.live)
			}
			if _, ok := tr.Lookup(tc.node.Name); ok != tc.findable {
				t.Errorf("Lookup(%s) found = %v, want %v", tc.node.Name, ok, tc.findable)
			}
		})
	}
	if tr.LiveNonRoot() != 2 || tr.Len() != 2 {
		t.Errorf("after: LiveNonRoot %d, Len %d; want 2, 2", tr.LiveNonRoot(), tr.Len())
	}
	if n, err := tr.Resolve(d, da.Name); err != nil || n != da {
		t.Errorf("the surviving detached agent cannot resolve its child: %v, %v", n, err)
	}
	endAgent(tr, d)
	if tr.Len() != 0 || tr.LiveNonRoot() != 0 {
		t.Errorf("after the detached agent ended: Len %d, LiveNonRoot %d; want 0, 0", tr.Len(), tr.LiveNonRoot())
	}
}

func TestForgetting(t *testing.T) {
	t.Run("ended nodes stay while an ancestor is live", func(t *testing.T) {
		tr := NewTree()
		root := tr.Root(1, "r", 5)
		c := spawn(t, tr, root, 2, false)
		g := spawn(t, tr, c, 3, false)
		tr.End(g)
		tr.End(c)
		if tr.Len() != 3 {
			t.Fatalf("Len = %d, want 3 (the live root can still check its ended descendants)", tr.Len())
		}
		if n, err := tr.Resolve(root, "r/1/1"); err != nil || n != g {
			t.Errorf("Resolve ended grandchild = %v, %v", n, err)
		}
		tr.End(root)
		if tr.Len() != 0 {
			t.Errorf("Len after the root ended = %d, want 0", tr.Len())
		}
	})
	t.Run("a finished tree of 10^5 nodes leaves nothing behind", func(t *testing.T) {
		tr := NewTree()
		root := tr.Root(1, "r", 3)
		id := uint64(1)
		var mids []*Node
		for range 1000 {
			id++
			mids = append(mids, spawn(t, tr, root, id, false))
		}
		for _, m := range mids {
			for range 99 {
				id++
				spawn(t, tr, m, id, false)
			}
		}
		if tr.Len() != 100001 || tr.LiveNonRoot() != 100000 {
			t.Fatalf("Len %d, LiveNonRoot %d; want 100001, 100000", tr.Len(), tr.LiveNonRoot())
		}
		endAgent(tr, root)
		if tr.Len() != 0 || tr.LiveNonRoot() != 0 || len(tr.anchors) != 0 {
			t.Fatalf("Len %d, anchors %d, LiveNonRoot %d after the tree ended; want 0", tr.Len(), len(tr.anchors), tr.LiveNonRoot())
		}
		if tr.highWater >= minShrink {
			t.Errorf("high-water mark %d: the maps were not rebuilt, so their memory is still held", tr.highWater)
		}
	})
	t.Run("ended descendants of a kept live node stay", func(t *testing.T) {
		tr := NewTree()
		root := tr.Root(1, "r", 5)
		d := spawn(t, tr, root, 2, true)
		dc := spawn(t, tr, d, 3, false)
		tr.End(dc)
		endAgent(tr, root)
		if _, ok := tr.Lookup("r/1/1"); !ok {
			t.Fatal("the ended child of a live detached agent was forgotten")
		}
		if tr.Len() != 2 {
			t.Errorf("Len = %d, want 2", tr.Len())
		}
	})
}

func TestWithinAgreesWithNames(t *testing.T) {
	tr := NewTree()
	root := tr.Root(1, "r", 8)
	nodes := []*Node{root}
	for i := range 40 {
		parent := nodes[(i*7)%len(nodes)]
		if parent.Budget == 0 {
			parent = root
		}
		nodes = append(nodes, spawn(t, tr, parent, uint64(i+2), false))
	}
	for _, a := range nodes {
		for _, b := range nodes {
			want := a == b || len(b.Name) > len(a.Name) && b.Name[:len(a.Name)+1] == a.Name+"/"
			if got := tr.Within(a, b); got != want {
				t.Errorf("Within(%s, %s) = %v, want %v", a.Name, b.Name, got, want)
			}
		}
	}
}

func TestLookup(t *testing.T) {
	tr := NewTree()
	root := tr.Root(1, "x", 9)
	var kids []*Node
	for i := range 12 {
		kids = append(kids, spawn(t, tr, root, uint64(10+i), i == 1))
	}
	deep := spawn(t, tr, spawn(t, tr, kids[1], 30, false), 31, false) // x/2/1/1, under a detached child
	type lookupCase struct {
		name string
		want *Node // nil: not found
	}
	check := func(t *testing.T, cases []lookupCase) {
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				got, ok := tr.Lookup(tc.name)
				if ok != (tc.want != nil) || got != tc.want {
					t.Errorf("Lookup(%q) = %v, %v; want %v", tc.name, got, ok, tc.want)
				}
			})
		}
	}
	bad := []lookupCase{
		{"x/13", nil}, {"x/0", nil}, {"x/01", nil}, {"x/+1", nil}, {"x/1/", nil}, {"x//1", nil},
		{"/1", nil}, {"", nil}, {"y/1", nil}, {"x/99999999999", nil},
	}
	t.Run("whole tree", func(t *testing.T) {
		check(t, append([]lookupCase{
			{"x", root}, {"x/1", kids[0]}, {"x/12", kids[11]}, {"x/2/1/1", deep},
		}, bad...))
	})
	// The root ends and its attached children are killed: only the detached x/2 and its subtree
	// stay, found through the anchor x/2 although x itself is forgotten.
	endAgent(tr, root)
	t.Run("after the root ended", func(t *testing.T) {
		check(t, append([]lookupCase{
			{"x", nil}, {"x/1", nil}, {"x/12", nil}, {"x/2", kids[1]}, {"x/2/1", mustGet(t, tr, deep.Parent)}, {"x/2/1/1", deep},
		}, bad...))
	})
}

// mustGet returns the held node with that id, failing the test if there is none.
func mustGet(t *testing.T, tr *Tree, id uint64) *Node {
	t.Helper()
	n, ok := tr.Get(id)
	if !ok {
		t.Fatalf("node %d is not held", id)
	}
	return n
}
