package subagents

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"slices"
)

// TreeImage is a Tree as data: its nodes by id (copies, with no Data: that is the caller's to
// save), the names that anchor lookups (each with the id of its node) and the counters the spawn
// limits and the map shrinking read.
type TreeImage struct {
	Nodes       []Node
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
		c := *n
		c.Children, c.Data = slices.Clone(n.Children), nil
		img.Nodes = append(img.Nodes, c)
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
		if _, dup := t.byID[ni.ID]; dup || ni.ID == 0 || ni.Data != nil {
			return nil, fmt.Errorf("%w: node %d twice, zero or with data", ErrTreeImage, ni.ID)
		}
		n := ni
		t.byID[ni.ID] = &n
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
