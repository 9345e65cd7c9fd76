package agenttree

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/warrenhq/warren/components"
	"github.com/warrenhq/warren/internal/gobtest"
	"github.com/warrenhq/warren/subagents"
)

// busy is a state in the middle of things: a fan-out whose two workers share it, a parked
// waiter, an ended agent still in the tree and one the tree already let go.
func busy(t *testing.T) (*State, []*components.Profile) {
	t.Helper()
	s := New()
	profiles := []*components.Profile{{Group: "lead"}, {Group: "lead/worker", Origin: components.ProfileOrigin{Child: true, Parent: 0, Stage: 1, Key: "worker"}}}
	s.Profiles[profiles[1]] = 1
	s.Blueprints["lead/worker"] = "worker"
	root := s.Tree.Root(1, "lead", 3)
	fan := &FanOut{Index: 2, CallID: "c2", Key: "worker", Items: []string{"x", "y", "z"}, Next: 2, Running: []uint64{2, 3},
		MaxWorkers: 2, Budget: 1, Results: make([]subagents.WorkerResult, 3), Err: errors.New("no room")}
	for i, id := range []uint64{2, 3} {
		n := s.Tree.AddChild(root, id, 1, false)
		nd := DataOf(n)
		nd.Fan, nd.Item, nd.Slot = fan, i, i
	}
	c := s.Tree.AddChild(root, 4, 1, false)
	DataOf(c).Waiters = []Waiter{{Agent: 1, Index: 0, CallID: "w1"}}
	done := s.Tree.AddChild(root, 5, 1, false)
	nd := DataOf(done)
	nd.Record = &components.FinalRecord{ID: 5, Name: "lead/4", Status: components.Done, ByTool: components.ToolCounts{{Tool: "shell", N: 1}}}
	s.Tree.End(done)
	s.Ended = append(s.Ended, nd, &Node{Record: &components.FinalRecord{ID: 9, Name: "gone"}, Fan: fan})
	return s, profiles
}

func TestStateImageRestoresSharingAndOrder(t *testing.T) {
	s, profiles := busy(t)
	img, err := s.Image()
	if err != nil {
		t.Fatal(err)
	}
	if len(img.FanOuts) != 1 {
		t.Fatalf("image holds %d fan-outs, want the shared one once", len(img.FanOuts))
	}
	back, err := Restore(ptr(gobtest.RoundTrip(t, img)), func(pi ProfileIndex) (*components.Profile, error) {
		if pi.Origin != profiles[pi.Index].Origin {
			t.Errorf("profile %d comes back made from %+v, want %+v", pi.Index, pi.Origin, profiles[pi.Index].Origin)
		}
		return profiles[pi.Index], nil
	})
	if err != nil {
		t.Fatal(err)
	}
	again, err := back.Image()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(again, gobtest.RoundTrip(t, img)) {
		t.Fatalf("restored state images as\n%+v\nthe original\n%+v", again, img)
	}
	_, w2, _ := back.Node(2)
	_, w3, _ := back.Node(3)
	if w2.Fan == nil || w2.Fan != w3.Fan || back.Ended[1].Fan != w2.Fan || w2.Fan.Err.Error() != "no room" {
		t.Fatal("the fan-out's workers no longer share it")
	}
	_, d5, ok := back.Node(5)
	if ok && back.Ended[0] != d5 {
		t.Fatal("an ended agent still in the tree is a copy of its node's data")
	}
	if back.Ended[0].Record == nil || back.Ended[0].Record.ID != 5 || back.Ended[1].Record.Name != "gone" {
		t.Fatalf("ended agents restored as %+v", back.Ended)
	}
	if back.Profiles[profiles[1]] != 1 || back.Blueprints["lead/worker"] != "worker" {
		t.Fatalf("profiles %v, blueprints %v", back.Profiles, back.Blueprints)
	}
	s.Requests = append(s.Requests, Request{Agent: 1})
	if _, err := s.Image(); !errors.Is(err, ErrStateImage) {
		t.Fatalf("Image with parked requests = %v", err)
	}
	if _, err := Restore(&img, func(ProfileIndex) (*components.Profile, error) { return nil, fmt.Errorf("no profile") }); !errors.Is(err, ErrStateImage) {
		t.Fatalf("Restore without the profiles = %v", err)
	}
}

func ptr[T any](v T) *T { return &v }

// TestStateImageCoversEveryField fails when State, Node, Waiter or FanOut gains a field.
func TestStateImageCoversEveryField(t *testing.T) {
	for _, tc := range []struct {
		typ, img reflect.Type
		made     []string // fields the image does not hold: rebuilt or within a tick
	}{
		{reflect.TypeFor[Node](), reflect.TypeFor[NodeImage](), nil},
		{reflect.TypeFor[Waiter](), reflect.TypeFor[WaiterImage](), nil},
		{reflect.TypeFor[FanOut](), reflect.TypeFor[FanOutImage](), nil},
		{reflect.TypeFor[State](), reflect.TypeFor[StateImage](), []string{"Requests"}},
	} {
		for i := range tc.typ.NumField() {
			name := tc.typ.Field(i).Name
			if _, ok := tc.img.FieldByName(name); !ok && !slices.Contains(tc.made, name) {
				t.Errorf("%s.%s is not in %s", tc.typ, name, tc.img)
			}
		}
	}
}

// TestImagesMirrorEveryField fails when a node, a waiter or a fan-out gains a field its image
// does not keep.
func TestImagesMirrorEveryField(t *testing.T) {
	gobtest.Mirrors[Node, NodeImage](t)
	gobtest.Mirrors[Waiter, WaiterImage](t)
	gobtest.Mirrors[FanOut, FanOutImage](t)
}
