package subagents

import (
	"errors"
	"math/rand/v2"
	"strconv"
	"testing"
)

// fuzzLimits are small so random sequences hit every refusal.
var fuzzLimits = Limits{MaxDepth: 5, MaxChildren: 4, MaxLive: 16}

// Bounds on one program, so that the quadratic invariant check keeps every input fast.
const (
	maxFuzzOps   = 200
	maxFuzzRoots = 6
)

// treeDriver applies a byte program to a tree: each op reads a few bytes (running out of bytes
// ends the program). It tracks every id it created so it can pick nodes by index.
type treeDriver struct {
	tr     *Tree
	known  []uint64
	nextID uint64
	roots  int
}

// pick returns a live node chosen by b among the known ids the tree still holds, pruning the rest.
func (d *treeDriver) pick(b byte, nonRoot bool) *Node {
	var live []*Node
	kept := d.known[:0]
	for _, id := range d.known {
		n, ok := d.tr.Get(id)
		if !ok {
			continue
		}
		kept = append(kept, id)
		if n.Live && (!nonRoot || n.Parent != 0) {
			live = append(live, n)
		}
	}
	d.known = kept
	if len(live) == 0 {
		return nil
	}
	return live[int(b)%len(live)]
}

// run executes the program (its first maxFuzzOps ops), checking the invariants after every op.
func (d *treeDriver) run(t *testing.T, program []byte) {
	program = program[:min(len(program), 3*maxFuzzOps)]
	for len(program) >= 3 {
		op, x, y := program[0], program[1], program[2]
		program = program[3:]
		switch op % 8 { // spawns are the most common op, so trees grow deep and wide
		case 0: // a new top-level agent
			if d.roots == maxFuzzRoots {
				continue
			}
			d.nextID++
			d.roots++
			d.tr.Root(d.nextID, "root"+strconv.Itoa(d.roots), int(x%7))
			d.known = append(d.known, d.nextID)
		case 1, 2, 3, 4, 5: // spawn
			parent := d.pick(x, false)
			if parent == nil {
				continue
			}
			budget, err := d.tr.CheckSpawn(parent, int(y%6)-1, int(y/6%6)-1, int(y/36%4), fuzzLimits)
			if err != nil {
				continue
			}
			d.nextID++
			d.tr.AddChild(parent, d.nextID, budget, y&128 != 0)
			d.known = append(d.known, d.nextID)
		case 6: // an agent ends on its own; its orphans are killed
			if n := d.pick(x, false); n != nil {
				endAgent(d.tr, n)
			}
		case 7: // kill_agent
			if n := d.pick(x, true); n != nil {
				kill(d.tr, n)
			}
		}
		checkInvariants(t, d.tr)
	}
}

// checkInvariants verifies the tree's structural rules against its raw indexes.
func checkInvariants(t *testing.T, tr *Tree) {
	t.Helper()
	for name, a := range tr.anchors {
		if held, ok := tr.byID[a.ID]; !ok || held != a || a.Name != name {
			t.Fatalf("anchor %q is not a held node of that name", name)
		}
	}
	liveNonRoot := 0
	for id, n := range tr.byID {
		if found, ok := tr.Lookup(n.Name); n.ID != id || !ok || found != n {
			t.Fatalf("node %d (%s) is not found by its name", id, n.Name)
		}
		parent, hasParent := tr.byID[n.Parent]
		if isAnchor := tr.anchors[n.Name] == n; isAnchor != (n.Parent == 0 || !hasParent) {
			t.Fatalf("%s: anchor %v, but root %v, parent held %v", n.Name, isAnchor, n.Parent == 0, hasParent)
		}
		if n.Parent != 0 && !hasParent && !n.Live {
			t.Fatalf("%s has ended and lost its parent but is still held", n.Name)
		}
		if int(n.Spawned) != len(n.Children) {
			t.Fatalf("%s spawned %d children but lists %d", n.Name, n.Spawned, len(n.Children))
		}
		if n.Live && n.Parent != 0 {
			liveNonRoot++
			if !n.Detached && (!hasParent || !parent.Live) {
				t.Fatalf("%s is live and not detached but its parent is gone or ended", n.Name)
			}
		}
		if !n.Live && !tr.hasLiveAncestor(n) {
			t.Fatalf("%s is ended with no live ancestor but is still held", n.Name)
		}
		if hasParent && (n.Depth != parent.Depth+1 || n.Budget >= parent.Budget) {
			t.Fatalf("%s: depth %d budget %d under parent depth %d budget %d", n.Name, n.Depth, n.Budget, parent.Depth, parent.Budget)
		}
		if int(n.Depth) > fuzzLimits.MaxDepth {
			t.Fatalf("%s is at depth %d, past the cap", n.Name, n.Depth)
		}
		liveKids := 0
		for _, cid := range n.Children {
			c, ok := tr.byID[cid]
			if !ok {
				continue
			}
			if c.Parent != n.ID {
				t.Fatalf("%s lists %s as a child but its parent is %d", n.Name, c.Name, c.Parent)
			}
			if c.Live {
				liveKids++
			}
		}
		if liveKids != int(n.LiveChildren) {
			t.Fatalf("%s has %d live children but LiveChildren = %d", n.Name, liveKids, n.LiveChildren)
		}
		if n.Live && n.Parent == 0 && int(n.Depth) != 0 {
			t.Fatalf("root %s at depth %d", n.Name, n.Depth)
		}
	}
	if liveNonRoot != tr.LiveNonRoot() {
		t.Fatalf("%d live non-root nodes but LiveNonRoot = %d", liveNonRoot, tr.LiveNonRoot())
	}
	for _, a := range tr.byID {
		missing := a.Name + "/" + strconv.Itoa(len(a.Children)+1)
		if _, err := tr.Resolve(a, missing); !errors.Is(err, ErrUnknownAgent) {
			t.Fatalf("Resolve(%s, %s) = %v, want ErrUnknownAgent", a.Name, missing, err)
		}
	}
	if fuzzLimits.MaxLive > 0 && liveNonRoot > fuzzLimits.MaxLive {
		t.Fatalf("%d live sub-agents, past the cap of %d", liveNonRoot, fuzzLimits.MaxLive)
	}
	for _, a := range tr.byID {
		for _, b := range tr.byID {
			want := isAncestorOrSelf(tr, a, b)
			if got := tr.Within(a, b); got != want {
				t.Fatalf("Within(%s, %s) = %v, want %v", a.Name, b.Name, got, want)
			}
			got, err := tr.Resolve(a, b.Name)
			if want && (err != nil || got != b) || !want && !errors.Is(err, ErrOutsideSubtree) {
				t.Fatalf("Resolve(%s, %s) = %v, %v; within: %v", a.Name, b.Name, got, err, want)
			}
		}
	}
}

// isAncestorOrSelf is Within's definition, walked without Within's depth shortcut.
func isAncestorOrSelf(tr *Tree, a, b *Node) bool {
	for n, ok := b, true; ok; n, ok = tr.byID[n.Parent] {
		if n == a {
			return true
		}
	}
	return false
}

// FuzzTree drives random sequences of new roots, spawns, ends and kills and checks the tree's
// invariants after every step. `go test` runs the seed corpus; `go test -fuzz FuzzTree` explores.
func FuzzTree(f *testing.F) {
	// Each op is three bytes: op%8 (0 root, 1-5 spawn, 6 end, 7 kill), a node pick, a detail.
	f.Add([]byte{0, 3, 0, 1, 0, 0, 1, 0, 128, 1, 1, 0, 6, 0, 0})                                   // a root ends with a detached child
	f.Add([]byte{0, 6, 0, 1, 0, 0, 1, 1, 0, 1, 2, 0, 1, 3, 0, 7, 1, 0, 6, 0, 0})                   // a chain, killed from the middle
	f.Add([]byte{0, 5, 0, 0, 5, 0, 1, 0, 128, 1, 1, 128, 1, 2, 0, 6, 0, 0, 6, 0, 0, 1, 0, 0})      // two roots, detached survivors
	f.Add([]byte{0, 2, 0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 6, 1, 0, 7, 0, 0}) // children cap and depth budget
	f.Fuzz(func(t *testing.T, program []byte) {
		d := &treeDriver{tr: NewTree()}
		d.run(t, program)
		// End every remaining agent: nothing may be left behind.
		for {
			n := d.pick(0, false)
			if n == nil {
				break
			}
			endAgent(d.tr, n)
			checkInvariants(t, d.tr)
		}
		if d.tr.Len() != 0 || d.tr.LiveNonRoot() != 0 {
			t.Fatalf("after every agent ended: Len %d, LiveNonRoot %d", d.tr.Len(), d.tr.LiveNonRoot())
		}
	})
}

// TestTreeRandomPrograms runs FuzzTree's checks over many pseudo-random programs from a fixed
// seed, so the property is exercised on every `go test`, beyond the seed corpus.
func TestTreeRandomPrograms(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 2026))
	for i := range 200 {
		program := make([]byte, 3*(20+rng.IntN(120)))
		for j := range program {
			program[j] = byte(rng.UintN(256))
		}
		t.Run(strconv.Itoa(i), func(t *testing.T) {
			d := &treeDriver{tr: NewTree()}
			d.run(t, program)
			for n := d.pick(0, false); n != nil; n = d.pick(0, false) {
				endAgent(d.tr, n)
			}
			checkInvariants(t, d.tr)
			if d.tr.Len() != 0 {
				t.Fatalf("Len %d after every agent ended", d.tr.Len())
			}
		})
	}
}
