package agenttree

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/warrenhq/warren/components"
	"github.com/warrenhq/warren/ecs"
	"github.com/warrenhq/warren/subagents"
)

// StateImage is the world's side of the agent tree as data, for a snapshot of the world, taken
// between ticks (when no request is parked). The world's data about the tree's nodes is in
// Nodes, one per tree node in the tree image's order; the agents reaped since the sub-agent system
// last ran are in Ended (each either a tree node's data, by id, or data of its own when the tree
// already let the node go); fan-outs are kept once and referred to by index, since a fan-out's
// workers share it.
type StateImage struct {
	Tree       subagents.TreeImage
	Nodes      []NodeImage
	Ended      []EndedImage
	FanOuts    []FanOutImage
	Profiles   []ProfileIndex
	Blueprints []Blueprint
}

// NodeImage is a Node as data. Present is false for a tree node the world never attached data
// to; Fan is the index of its fan-out in StateImage.FanOuts, or -1.
type NodeImage struct {
	Present    bool
	Entity     ecs.EntityRef
	Record     *components.FinalRecord
	Waiters    []WaiterImage
	Fan        int
	Item, Slot int
}

// EndedImage is one reaped agent the sub-agent system has not heard of yet: the data of the tree
// node with id InTree, or (InTree 0) data the tree no longer holds.
type EndedImage struct {
	InTree uint64
	Node   NodeImage
}

// WaiterImage is a Waiter as data.
type WaiterImage struct {
	Entity ecs.EntityRef
	Agent  uint64
	Index  int
	CallID string
}

// FanOutImage is a FanOut as data; Err is its error's text ("" for none).
type FanOutImage struct {
	Parent     ecs.EntityRef
	Index      int
	CallID     string
	Key        string
	Items      []string
	Next       int
	Running    []uint64
	MaxWorkers int
	FailAll    bool
	Stopped    bool
	Budget     int
	Results    []subagents.WorkerResult
	Done       int
	Failed     int
	Killed     int
	Err        string
}

// ProfileIndex is one child profile's place in the world's profile store and how it was made,
// from which a restore makes it again (profiles are shared pointers, not data).
type ProfileIndex struct {
	Index  uint32
	Origin components.ProfileOrigin
}

// Blueprint is the blueprint one group of spawned agents was made from.
type Blueprint struct{ Group, Blueprint string }

// ErrStateImage is wrapped by the errors Image and Restore return.
var ErrStateImage = errors.New("agent tree state image")

// Image returns the state as data, sharing nothing with it. It refuses while requests are parked:
// they live within a tick.
func (t *State) Image() (StateImage, error) {
	if len(t.Requests) > 0 {
		return StateImage{}, fmt.Errorf("%w: %d sub-agent requests are parked inside a tick", ErrStateImage, len(t.Requests))
	}
	img := StateImage{}
	fans := map[*FanOut]int{}
	nodeImage := func(nd *Node) NodeImage {
		if nd == nil {
			return NodeImage{Fan: -1}
		}
		ni := NodeImage{Present: true, Entity: ecs.RefOf(nd.Entity), Fan: -1, Item: nd.Item, Slot: nd.Slot}
		if nd.Record != nil {
			r := *nd.Record
			r.ByTool, r.Results = slices.Clone(r.ByTool), slices.Clone(r.Results)
			ni.Record = &r
		}
		for _, w := range nd.Waiters {
			ni.Waiters = append(ni.Waiters, WaiterImage{Entity: ecs.RefOf(w.Entity), Agent: w.Agent, Index: w.Index, CallID: w.CallID})
		}
		if f := nd.Fan; f != nil {
			i, ok := fans[f]
			if !ok {
				i = len(img.FanOuts)
				fans[f] = i
				fi := FanOutImage{Parent: ecs.RefOf(f.Parent), Index: f.Index, CallID: f.CallID, Key: f.Key,
					Items: slices.Clone(f.Items), Next: f.Next, Running: slices.Clone(f.Running), MaxWorkers: f.MaxWorkers,
					FailAll: f.FailAll, Stopped: f.Stopped, Budget: f.Budget, Results: slices.Clone(f.Results),
					Done: f.Done, Failed: f.Failed, Killed: f.Killed}
				if f.Err != nil {
					fi.Err = f.Err.Error()
				}
				img.FanOuts = append(img.FanOuts, fi)
			}
			ni.Fan = i
		}
		return ni
	}
	inTree := map[*Node]uint64{}
	img.Tree = t.Tree.Image(func(n *subagents.Node) {
		nd, _ := n.Data.(*Node)
		if nd != nil {
			inTree[nd] = n.ID
		}
		img.Nodes = append(img.Nodes, nodeImage(nd))
	})
	for _, nd := range t.Ended {
		if id, ok := inTree[nd]; ok {
			img.Ended = append(img.Ended, EndedImage{InTree: id})
		} else {
			img.Ended = append(img.Ended, EndedImage{Node: nodeImage(nd)})
		}
	}
	for p, i := range t.Profiles {
		img.Profiles = append(img.Profiles, ProfileIndex{Index: i, Origin: p.Origin})
	}
	slices.SortFunc(img.Profiles, func(a, b ProfileIndex) int { return cmp.Compare(a.Index, b.Index) })
	for _, g := range slices.Sorted(maps.Keys(t.Blueprints)) {
		img.Blueprints = append(img.Blueprints, Blueprint{Group: g, Blueprint: t.Blueprints[g]})
	}
	return img, nil
}

// Restore returns the state img holds. profile gives the child profile at an index of the
// world's restored profile store, which it makes again from the index's origin; it is called in
// index order.
func Restore(img *StateImage, profile func(ProfileIndex) (*components.Profile, error)) (*State, error) {
	tree, err := subagents.RestoreTree(&img.Tree)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrStateImage, err)
	}
	if len(img.Nodes) != len(img.Tree.Nodes) {
		return nil, fmt.Errorf("%w: %d node data for %d tree nodes", ErrStateImage, len(img.Nodes), len(img.Tree.Nodes))
	}
	fans := make([]*FanOut, len(img.FanOuts))
	for i, fi := range img.FanOuts {
		f := &FanOut{Parent: fi.Parent.Entity(), Index: fi.Index, CallID: fi.CallID, Key: fi.Key, Items: fi.Items,
			Next: fi.Next, Running: fi.Running, MaxWorkers: fi.MaxWorkers, FailAll: fi.FailAll, Stopped: fi.Stopped,
			Budget: fi.Budget, Results: fi.Results, Done: fi.Done, Failed: fi.Failed, Killed: fi.Killed}
		if fi.Err != "" {
			f.Err = errors.New(fi.Err)
		}
		fans[i] = f
	}
	node := func(ni NodeImage) (*Node, error) {
		if !ni.Present {
			return nil, nil
		}
		nd := &Node{Entity: ni.Entity.Entity(), Record: ni.Record, Item: ni.Item, Slot: ni.Slot}
		for _, w := range ni.Waiters {
			nd.Waiters = append(nd.Waiters, Waiter{Entity: w.Entity.Entity(), Agent: w.Agent, Index: w.Index, CallID: w.CallID})
		}
		if ni.Fan >= 0 {
			if ni.Fan >= len(fans) {
				return nil, fmt.Errorf("%w: fan-out %d of %d", ErrStateImage, ni.Fan, len(fans))
			}
			nd.Fan = fans[ni.Fan]
		}
		return nd, nil
	}
	t := &State{Tree: tree, Profiles: map[*components.Profile]uint32{}, Blueprints: map[string]string{}}
	for i, ni := range img.Nodes {
		nd, err := node(ni)
		if err != nil {
			return nil, err
		}
		if nd != nil {
			n, _ := tree.Get(img.Tree.Nodes[i].ID)
			n.Data = nd
		}
	}
	for _, e := range img.Ended {
		if e.InTree != 0 {
			n, ok := tree.Get(e.InTree)
			if !ok || n.Data == nil {
				return nil, fmt.Errorf("%w: ended agent %d has no data in the tree", ErrStateImage, e.InTree)
			}
			t.Ended = append(t.Ended, n.Data.(*Node))
			continue
		}
		nd, err := node(e.Node)
		if err != nil {
			return nil, err
		}
		if nd == nil {
			return nil, fmt.Errorf("%w: an ended agent without data", ErrStateImage)
		}
		t.Ended = append(t.Ended, nd)
	}
	for _, p := range img.Profiles {
		prof, err := profile(p)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrStateImage, err)
		}
		t.Profiles[prof] = p.Index
	}
	for _, b := range img.Blueprints {
		t.Blueprints[b.Group] = b.Blueprint
	}
	return t, nil
}
