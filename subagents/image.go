package subagents

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"slices"
)

// NodeImage is a Node as data, for a snapshot of the world; its Data is the caller's to save.
type NodeImage struct {
	ID           uint64
	Parent       uint64
	Name         string
	Depth        uint8
	Budget       uint8
	Detached     bool
	Live         bool
	Spawned      uint32
	LiveChildren int32
	Children     []uint64
}

// TreeImage is a Tree as data: its nodes by id, the names that anchor lookups (each with the id
// of its node) and the counters the spawn limits and the map shrinking read.
type TreeImage struct {
	Nodes       []NodeImage
	Anchors     []Anchor
	LiveNonRoot int
	HighWater   int
}

// Anchor is one name a lookup starts from, and the node it names.
type Anchor struct {
	Name string
	ID   uint64
}

// Image returns the tree as data, nodes in id order, sharing nothing with it. data is called
// for every node with its Data, so the caller can save what it hangs off the tree in the same
// order (nil: none).
func (t *Tree) Image(data func(n *Node)) TreeImage {
	img := TreeImage{LiveNonRoot: t.liveNonRoot, HighWater: t.highWater}
	for _, id := range slices.Sorted(maps.Keys(t.byID)) {
		n := t.byID[id]
		img.Nodes = append(img.Nodes, NodeImage{ID: n.ID, Parent: n.Parent, Name: n.Name, Depth: n.Depth, Budget: n.Budget,
			Detached: n.Detached, Live: n.Live, Spawned: n.Spawned, LiveChildren: n.LiveChildren, Children: slices.Clone(n.Children)})
		if data != nil {
			data(n)
		}
	}
	for name, n := range t.anchors {
		img.Anchors = append(img.Anchors, Anchor{Name: name, ID: n.ID})
	}
	slices.SortFunc(img.Anchors, func(a, b Anchor) int { return cmp.Compare(a.Name, b.Name) })
	return img
}

// ErrTreeImage is wrapped by the error RestoreTree returns for an image that does not fit.
var ErrTreeImage = errors.New("agent tree image does not fit")

// RestoreTree returns the tree img holds. Nodes' Data is left nil for the caller to attach.
func RestoreTree(img *TreeImage) (*Tree, error) {
	t := &Tree{byID: make(map[uint64]*Node, len(img.Nodes)), anchors: make(map[string]*Node, len(img.Anchors)),
		liveNonRoot: img.LiveNonRoot, highWater: img.HighWater}
	for _, ni := range img.Nodes {
		if _, dup := t.byID[ni.ID]; dup || ni.ID == 0 {
			return nil, fmt.Errorf("%w: node %d twice or zero", ErrTreeImage, ni.ID)
		}
		t.byID[ni.ID] = &Node{ID: ni.ID, Parent: ni.Parent, Name: ni.Name, Depth: ni.Depth, Budget: ni.Budget,
			Detached: ni.Detached, Live: ni.Live, Spawned: ni.Spawned, LiveChildren: ni.LiveChildren, Children: ni.Children}
	}
	for _, a := range img.Anchors {
		n, ok := t.byID[a.ID]
		if !ok {
			return nil, fmt.Errorf("%w: anchor %q names node %d, which the tree does not hold", ErrTreeImage, a.Name, a.ID)
		}
		t.anchors[a.Name] = n
	}
	return t, nil
}
