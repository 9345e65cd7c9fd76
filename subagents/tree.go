package subagents

import (
	"fmt"
	"strconv"
	"strings"
)

// Node is one agent of the tree. The tree owns its nodes; callers read them and must change them
// only through Tree methods, which keep the counters and indexes consistent.
type Node struct {
	// ID is the agent's id, allocated by the caller; never 0, which Parent uses for "none".
	ID uint64
	// Parent is the parent's id, 0 for a root (a top-level agent).
	Parent uint64
	// Name is the agent's address: a root's own name, a child's "<parent name>/<k>".
	Name string
	// Depth is 0 for roots and one more than the parent's for every child.
	Depth uint8
	// Budget is how many more levels its subtree may grow below it (0: it may not spawn).
	Budget uint8
	// Detached says the node survives its parent's end instead of being killed with it.
	Detached bool
	// Live is true until End.
	Live bool
	// Spawned counts the children ever spawned; the next child is number Spawned+1.
	Spawned uint32
	// LiveChildren counts the children that have not ended.
	LiveChildren int32
	// Children holds the id of every child ever spawned, in spawn order, so Children[k-1] is the
	// child named "<Name>/<k>" (Lookup relies on it). Ids of forgotten children stay: 8 bytes per
	// child for as long as the node is held.
	Children []uint64
	// Data is the host's own data about the agent (the world keeps its final record here once
	// it has ended). The tree only holds it, so it lives exactly as long as the node: until
	// nobody can address the agent any more.
	Data any
}

// Tree is the agent tree of one world: who spawned whom, the names tools address agents by, and
// the counters the spawn limits read. It is a pure data structure with no world access; the
// world goroutine owns it, so it takes no locks. The zero value is not usable; call NewTree.
type Tree struct {
	// byID holds every node the tree remembers.
	byID map[uint64]*Node
	// anchors indexes by name the nodes whose parent the tree does not hold: the roots, and the
	// live nodes whose ancestors were forgotten (detached survivors, orphans awaiting their
	// kill). Every other node is found from its nearest anchor by its name's child numbers, so
	// spawning a child costs one index entry, not two.
	anchors map[string]*Node
	// liveNonRoot counts live nodes that are not roots: the host's live sub-agents.
	liveNonRoot int
	// highWater is the most nodes byID has held since it was last built. Go maps never give
	// memory back, so when the tree shrinks well below it the maps are rebuilt (see shrink).
	highWater int
	// stack is scratch space for the subtree walks, kept between calls to save allocations.
	stack []*Node
}

// NewTree returns an empty tree.
func NewTree() *Tree {
	return &Tree{byID: make(map[uint64]*Node), anchors: make(map[string]*Node)}
}

// Root returns the node of a top-level agent, creating it (live, depth 0) on first use, so the
// sub-agent system can call it whenever a top-level agent first touches a sub-agent tool. A second
// call with the same id returns the existing node unchanged. budget is clamped to 0..255. The
// name must contain no '/' and be unique among top-level agents (the host guarantees both), which
// is what keeps every child name unique; a root whose name is taken keeps its id but is not found
// by name.
func (t *Tree) Root(id uint64, name string, budget int) *Node {
	if n, ok := t.byID[id]; ok {
		return n
	}
	n := &Node{ID: id, Name: name, Budget: clampBudget(budget), Live: true}
	t.insert(n)
	if _, taken := t.anchors[name]; !taken {
		t.anchors[name] = n
	}
	return n
}

// clampBudget fits a depth budget into a Node's uint8.
func clampBudget(b int) uint8 {
	return uint8(min(max(b, 0), 255))
}

// insert indexes n by id.
func (t *Tree) insert(n *Node) {
	t.byID[n.ID] = n
	t.highWater = max(t.highWater, len(t.byID))
}

// Get returns the node with that id, if the tree still holds it.
func (t *Tree) Get(id uint64) (*Node, bool) {
	n, ok := t.byID[id]
	return n, ok
}

// Lookup returns the node with that name, if the tree still holds it. It walks the name: the
// root (or the nearest anchor, when ancestors were forgotten) by name, then each "/k" as the
// node's k-th child, so a lookup costs one name lookup and one id lookup per level.
func (t *Tree) Lookup(name string) (*Node, bool) {
	end := strings.IndexByte(name, '/')
	if end < 0 {
		n, ok := t.anchors[name]
		return n, ok
	}
	return t.walk(t.anchors[name[:end]], name, end, true)
}

// walk follows name down from n, the node named name[:end] (nil if that one is not held), one
// "/k" component at a time, and returns the node named name. With viaAnchors levels the tree no
// longer holds are bridged by the anchor index; without, the walk follows child links only, so
// whatever it finds is a descendant of n.
func (t *Tree) walk(n *Node, name string, end int, viaAnchors bool) (*Node, bool) {
	for end < len(name) {
		start := end + 1
		end = len(name)
		if i := strings.IndexByte(name[start:], '/'); i >= 0 {
			end = start + i
		}
		var next *Node
		if n != nil {
			if k, ok := childNumber(name[start:end]); ok && k <= len(n.Children) {
				next = t.byID[n.Children[k-1]]
			}
		}
		if next == nil {
			if !viaAnchors {
				return nil, false
			}
			// This level is not held through its parent: it is an anchor, or it was
			// forgotten and a deeper level may still be an anchor.
			next = t.anchors[name[:end]]
		}
		n = next
	}
	return n, n != nil
}

// childNumber parses the k of a "/k" name component: a decimal number from 1, without a sign or
// leading zeros, so "x/01" never finds "x/1".
func childNumber(s string) (int, bool) {
	if s == "" || len(s) > 10 || s[0] == '0' {
		return 0, false
	}
	k := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		k = k*10 + int(c-'0')
	}
	return k, true
}

// Len returns the number of nodes the tree holds, live or remembered.
func (t *Tree) Len() int { return len(t.byID) }

// LiveNonRoot returns the number of live sub-agents (live nodes that are not roots), the count
// the host-wide cap Limits.MaxLive applies to.
func (t *Tree) LiveNonRoot() int { return t.liveNonRoot }

// Limits are the host's caps on the tree. A value <= 0 means no cap.
type Limits struct {
	// MaxDepth caps the absolute depth of any node (roots are at 0).
	MaxDepth int
	// MaxChildren caps the live children of any one parent.
	MaxChildren int
	// MaxLive caps the live non-root nodes of the whole tree.
	MaxLive int
}

// CheckSpawn says whether parent may spawn one more child and, if so, the child's depth budget:
// min(parent.Budget-1, own, arg), where own is the child blueprint's max_child_depth and arg the
// call's max_child_depth; either counts only when >= 0. parentMaxChildren is the parent
// blueprint's cap on live children (counted only when > 0), applied together with
// lim.MaxChildren. Errors wrap ErrDepth (the parent's budget is spent, or the child would be
// deeper than lim.MaxDepth), ErrTooManyChildren or ErrTooManyAgents, checked in that order, and
// say the numbers and what the caller can do instead.
func (t *Tree) CheckSpawn(parent *Node, own, arg, parentMaxChildren int, lim Limits) (uint8, error) {
	if parent == nil {
		return 0, fmt.Errorf("%w: the spawning agent is not in the tree", ErrUnknownAgent)
	}
	if parent.Budget == 0 {
		return 0, fmt.Errorf("%w: %s (depth %d) may not spawn sub-agents: its depth budget is spent; do the work yourself",
			ErrDepth, parent.Name, parent.Depth)
	}
	if lim.MaxDepth > 0 && int(parent.Depth)+1 > lim.MaxDepth {
		return 0, fmt.Errorf("%w: a child of %s would be at depth %d and the host allows at most %d; do the work yourself",
			ErrDepth, parent.Name, int(parent.Depth)+1, lim.MaxDepth)
	}
	if limit := childCap(lim.MaxChildren, parentMaxChildren); limit > 0 && int(parent.LiveChildren) >= limit {
		return 0, fmt.Errorf("%w: %s already has %d live children (limit %d); wait for one to end (wait_for_agent) or kill one (kill_agent) first",
			ErrTooManyChildren, parent.Name, parent.LiveChildren, limit)
	}
	if lim.MaxLive > 0 && t.liveNonRoot >= lim.MaxLive {
		return 0, fmt.Errorf("%w: %d are running (limit %d); wait for one of yours to end or do the work yourself",
			ErrTooManyAgents, t.liveNonRoot, lim.MaxLive)
	}
	budget := int(parent.Budget) - 1
	if own >= 0 {
		budget = min(budget, own)
	}
	if arg >= 0 {
		budget = min(budget, arg)
	}
	return uint8(budget), nil
}

// childCap combines the host's and the parent blueprint's live-children caps: the smaller of the
// ones that are set, 0 when neither is.
func childCap(host, blueprint int) int {
	switch {
	case host <= 0:
		return max(blueprint, 0)
	case blueprint <= 0:
		return host
	}
	return min(host, blueprint)
}

// AddChild records a new live child of parent with the caller-allocated id and the budget
// CheckSpawn returned, names it parent.Name+"/"+(parent.Spawned+1) and updates the counters. The
// caller must have passed CheckSpawn (which guarantees the depth fits) and must not reuse an id
// the tree holds.
func (t *Tree) AddChild(parent *Node, id uint64, budget uint8, detached bool) *Node {
	parent.Spawned++
	n := &Node{
		ID:       id,
		Parent:   parent.ID,
		Name:     parent.Name + "/" + strconv.FormatUint(uint64(parent.Spawned), 10),
		Depth:    parent.Depth + 1,
		Budget:   budget,
		Detached: detached,
		Live:     true,
	}
	parent.Children = append(parent.Children, id)
	parent.LiveChildren++
	t.liveNonRoot++
	t.insert(n)
	return n
}

// Within reports whether target is caller or one of caller's descendants, by walking target's
// parent chain. A chain broken by a forgotten ancestor ends the walk: nothing above a forgotten
// node is live, so no live caller can be up there.
func (t *Tree) Within(caller, target *Node) bool {
	if caller == nil || target == nil {
		return false
	}
	for n := target; ; {
		if n.ID == caller.ID {
			return true
		}
		if n.Depth <= caller.Depth || n.Parent == 0 {
			return false
		}
		p, ok := t.byID[n.Parent]
		if !ok {
			return false
		}
		n = p
	}
}

// Resolve finds the agent a tool call names, from caller's point of view. A descendant's name
// always extends the caller's with "/", so a name that does not is outside the caller's subtree
// whether or not such an agent exists (ErrOutsideSubtree; the caller learns nothing about agents
// it may not address), and one that does is found by walking down child links alone, with no
// name index and no ancestry check (ErrUnknownAgent when no such descendant was ever spawned or
// the tree has forgotten it). Both errors quote the name.
func (t *Tree) Resolve(caller *Node, name string) (*Node, error) {
	if caller == nil || !strings.HasPrefix(name, caller.Name) ||
		(len(name) > len(caller.Name) && name[len(caller.Name)] != '/') {
		return nil, fmt.Errorf("%w: %q (you may address only yourself and your descendants)", ErrOutsideSubtree, name)
	}
	if len(name) == len(caller.Name) {
		return caller, nil
	}
	if n, ok := t.walk(caller, name, len(caller.Name), false); ok {
		return n, nil
	}
	return nil, fmt.Errorf("%w: %q (list_agents shows the ids you may use)", ErrUnknownAgent, name)
}

// LiveSubtree appends the live nodes of n's subtree to out (n first if it is live) in pre-order,
// children in spawn order, and returns it. Ended nodes are passed through, not skipped, so the
// live descendants of an ended child are found too. This is kill's order: the named agent first,
// then everything below it.
func (t *Tree) LiveSubtree(n *Node, out []uint64) []uint64 {
	if n == nil {
		return out
	}
	stack := append(t.stack[:0], n)
	for len(stack) > 0 {
		cur := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if cur.Live {
			out = append(out, cur.ID)
		}
		for i := len(cur.Children) - 1; i >= 0; i-- {
			if c, ok := t.byID[cur.Children[i]]; ok {
				stack = append(stack, c)
			}
		}
	}
	t.stack = clearStack(stack)
	return out
}

// End marks n ended and returns its live children that are not detached, in spawn order: the
// caller kills each of them (LiveSubtree and End, as for kill_agent). Ending an ended node does
// nothing and returns nil.
//
// End then forgets what nobody can address any more. Only live agents call tools, and an agent
// addresses only itself and its descendants, so a node is unreachable once it has ended and none
// of its ancestors is live. If that holds for n, n is dropped together with its ended
// descendants; live descendants (detached ones, and the orphans until the caller kills them) stay
// and remain findable by id and name.
func (t *Tree) End(n *Node) []uint64 {
	if n == nil || !n.Live {
		return nil
	}
	n.Live = false
	if n.Parent != 0 {
		t.liveNonRoot--
		if p, ok := t.byID[n.Parent]; ok {
			p.LiveChildren--
		}
	}
	var orphans []uint64
	for _, id := range n.Children {
		if c, ok := t.byID[id]; ok && c.Live && !c.Detached {
			orphans = append(orphans, id)
		}
	}
	if !t.hasLiveAncestor(n) {
		t.drop(n)
	}
	return orphans
}

// hasLiveAncestor reports whether any ancestor of n the tree still holds is live.
func (t *Tree) hasLiveAncestor(n *Node) bool {
	for id := n.Parent; id != 0; {
		p, ok := t.byID[id]
		if !ok {
			return false
		}
		if p.Live {
			return true
		}
		id = p.Parent
	}
	return false
}

// drop removes the ended node n and, recursively, its ended descendants from the indexes; live
// descendants and everything below them stay, the topmost ones becoming anchors. It walks with an explicit stack, so deep trees
// cannot overflow the goroutine stack.
func (t *Tree) drop(n *Node) {
	stack := append(t.stack[:0], n)
	for len(stack) > 0 {
		cur := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		delete(t.byID, cur.ID)
		if t.anchors[cur.Name] == cur {
			delete(t.anchors, cur.Name)
		}
		for _, id := range cur.Children {
			c, ok := t.byID[id]
			switch {
			case !ok:
			case c.Live:
				t.anchors[c.Name] = c // its parent is gone: it stays findable as an anchor
			default:
				stack = append(stack, c)
			}
		}
	}
	t.stack = clearStack(stack)
	t.shrink()
}

// clearStack empties a scratch stack, dropping its pointers so it does not keep forgotten nodes
// alive, and releases it entirely if it grew large.
func clearStack(s []*Node) []*Node {
	if cap(s) > 4096 {
		return nil
	}
	clear(s[:cap(s)])
	return s[:0]
}

// minShrink is the smallest high-water mark worth rebuilding the maps for.
const minShrink = 1024

// shrink rebuilds the indexes when they hold under a quarter of their high-water mark, because
// Go maps keep their buckets after deletes: without it a world that once ran 10^5 sub-agents
// would hold their buckets forever. Each rebuild copies at most a quarter of the deletes since
// the last one, so the cost is amortised O(1) per dropped node.
func (t *Tree) shrink() {
	if t.highWater < minShrink || len(t.byID)*4 > t.highWater {
		return
	}
	byID := make(map[uint64]*Node, len(t.byID))
	for id, n := range t.byID {
		byID[id] = n
	}
	anchors := make(map[string]*Node, len(t.anchors))
	for name, n := range t.anchors {
		anchors[name] = n
	}
	t.byID, t.anchors, t.highWater = byID, anchors, len(byID)
}
