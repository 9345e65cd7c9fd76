package subagents

import (
	"errors"
	"reflect"
	"testing"

	"github.com/warrenhq/warren/internal/gobtest"
)

// grown is a tree that has been through spawns, a detached child outliving its parent and ends
// that dropped nodes: roots a and b, a's children with grandchildren.
func grown() *Tree {
	t := NewTree()
	a := t.Root(1, "a", 3)
	b := t.Root(2, "b", 2)
	c1 := t.AddChild(a, 3, 2, false)
	c2 := t.AddChild(a, 4, 2, true)
	t.AddChild(c1, 5, 1, false)
	t.AddChild(c2, 6, 1, false)
	t.AddChild(b, 7, 1, false)
	t.End(c1)
	t.End(a) // c2 is detached: it lives on, anchored by its name
	return t
}

func TestTreeImageGoesOnAlike(t *testing.T) {
	orig := grown()
	var visited []uint64
	img := orig.Image(func(n *Node) { visited = append(visited, n.ID) })
	if len(visited) != orig.Len() || len(img.Anchors) < 2 {
		t.Fatalf("image visited %v of %d nodes, anchors %+v", visited, orig.Len(), img.Anchors)
	}
	stored := gobtest.RoundTrip(t, img)
	back, err := RestoreTree(&stored)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.Image(nil), img) {
		t.Fatalf("restored tree images as\n%+v\nthe original\n%+v", back.Image(nil), img)
	}
	for _, name := range []string{"a", "b", "a/1", "a/2", "a/1/1", "a/2/1", "b/1", "a/3"} {
		x, okx := orig.Lookup(name)
		y, oky := back.Lookup(name)
		if okx != oky || okx && x.ID != y.ID {
			t.Errorf("Lookup(%q): restored %v %v, the original %v %v", name, y, oky, x, okx)
		}
	}
	// Both go on alike.
	for _, tr := range []*Tree{orig, back} {
		b, _ := tr.Lookup("b")
		tr.AddChild(b, 8, 1, false)
		c2, _ := tr.Lookup("a/2")
		tr.End(c2)
	}
	if !reflect.DeepEqual(back.Image(nil), orig.Image(nil)) || back.LiveNonRoot() != orig.LiveNonRoot() {
		t.Fatalf("after more spawns and ends the restored tree is\n%+v\nthe original\n%+v", back.Image(nil), orig.Image(nil))
	}
}

func TestRestoreTreeRefusesADanglingAnchor(t *testing.T) {
	img := grown().Image(nil)
	img.Anchors = append(img.Anchors, Anchor{Name: "ghost", ID: 99})
	if _, err := RestoreTree(&img); !errors.Is(err, ErrTreeImage) {
		t.Fatalf("RestoreTree = %v, want ErrTreeImage", err)
	}
}

// TestTreeImageCoversEveryField fails when Tree gains a field: add it to the image. (Nodes are
// imaged as copies of themselves, so a new Node field is in the image by construction.)
func TestTreeImageCoversEveryField(t *testing.T) {
	want := []string{"byID", "anchors", "liveNonRoot", "highWater", "stack"} // stack is scratch
	tree := reflect.TypeFor[Tree]()
	if tree.NumField() != len(want) {
		t.Fatalf("Tree has %d fields, the image covers %q", tree.NumField(), want)
	}
	for i, name := range want {
		if tree.Field(i).Name != name {
			t.Errorf("Tree field %d is %s, the image covers %s", i, tree.Field(i).Name, name)
		}
	}
}
