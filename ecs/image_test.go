package ecs

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	arche "github.com/mlange-42/arche/ecs"
	"github.com/mlange-42/arche/generic"

	"github.com/warrenhq/warren/internal/gobtest"
)

type label struct{ Name string }

var imageCodecs = []ComponentCodec{Codec[payload]("payload"), Codec[label]("label"), Codec[marker]("marker")}

// churned builds a world whose entity pool has been through removals and reuse, with entities in
// three archetypes, at tick 7 with 5 ids allocated.
func churned(t *testing.T) *World {
	t.Helper()
	w := NewWorld(Config{})
	pl := generic.NewMap2[payload, label](&w.arche)
	pm := generic.NewMap2[payload, marker](&w.arche)
	lone := generic.NewMap1[label](&w.arche)
	var made []Entity
	for i := range 12 {
		switch i % 3 {
		case 0:
			made = append(made, pl.NewWith(&payload{N: i}, &label{Name: "pl" + string(rune('a'+i))}))
		case 1:
			made = append(made, pm.NewWith(&payload{N: i}, &marker{}))
		default:
			made = append(made, lone.NewWith(&label{Name: "lone" + string(rune('a'+i))}))
		}
	}
	for _, i := range []int{1, 4, 5, 9} {
		w.RemoveEntity(made[i])
	}
	// Reuse two ids, so their generations move on, and leave two free.
	pl.NewWith(&payload{N: 100}, &label{Name: "reused"})
	pm.NewWith(&payload{N: 101}, &marker{})
	w.clock.tick = 7
	for range 5 {
		w.ids.Next()
	}
	return w
}

// order lists the live entities in query order with what they carry.
func order(w *World) []string {
	var out []string
	q := w.arche.Query(arche.All())
	pm := generic.NewMap[payload](&w.arche)
	lm := generic.NewMap[label](&w.arche)
	mm := generic.NewMap[marker](&w.arche)
	for q.Next() {
		e := q.Entity()
		s := fmt.Sprintf("%d/%d", e.ID(), e.Generation())
		if pm.Has(e) {
			s += fmt.Sprintf(" payload=%d", pm.Get(e).N)
		}
		if lm.Has(e) {
			s += " label=" + lm.Get(e).Name
		}
		if mm.Has(e) {
			s += " marker"
		}
		out = append(out, s)
	}
	return out
}

func TestImageRestoresEntitiesComponentsAndOrder(t *testing.T) {
	w := churned(t)
	img, err := w.Image(imageCodecs...)
	if err != nil {
		t.Fatal(err)
	}
	if err := img.Encode(); err != nil {
		t.Fatal(err)
	}
	back := NewWorld(Config{})
	if err := back.Restore(gobtest.RoundTrip(t, img), imageCodecs...); err != nil {
		t.Fatal(err)
	}
	if len(order(w)) != 10 || !slices.Contains(order(w), "6/1 payload=101 marker") {
		t.Fatalf("the churned world is not what the test means: %q", order(w))
	}
	if got, want := order(back), order(w); !slices.Equal(got, want) {
		t.Fatalf("restored world iterates\n%q\nthe original\n%q", got, want)
	}
	if back.Tick() != 7 || back.IDs().Last() != 5 {
		t.Fatalf("restored clock %d and ids %d, want 7 and 5", back.Tick(), back.IDs().Last())
	}
	// Both worlds go on alike: the next entities made get the same handles, a stale handle is
	// dead in both, and a live one resolves through its ref.
	for range 3 {
		ma, mb := generic.NewMap1[label](&w.arche), generic.NewMap1[label](&back.arche)
		a := ma.NewWith(&label{Name: "next"})
		b := mb.NewWith(&label{Name: "next"})
		if a != b {
			t.Fatalf("next entity %v in the original, %v restored", a, b)
		}
	}
	if got, want := order(back), order(w); !slices.Equal(got, want) {
		t.Fatalf("after more entities the restored world iterates\n%q\nthe original\n%q", got, want)
	}
	for _, r := range img.Entities[1:] {
		if w.Alive(r.Entity()) != back.Alive(r.Entity()) {
			t.Fatalf("entity %+v alive %v in the original, %v restored", r, w.Alive(r.Entity()), back.Alive(r.Entity()))
		}
	}
	if stale := (EntityRef{ID: 2, Gen: 0}).Entity(); back.Alive(stale) {
		t.Fatal("a handle of a removed entity's old generation is alive after the restore")
	}
}

func TestEntityRefRoundTrips(t *testing.T) {
	w := churned(t)
	q := w.arche.Query(arche.All())
	for q.Next() {
		e := q.Entity()
		if got := RefOf(e).Entity(); got != e {
			t.Fatalf("ref of %v gives back %v", e, got)
		}
	}
}

func TestRestoreRefusesWhatDoesNotFit(t *testing.T) {
	img, err := churned(t).Image(imageCodecs...)
	if err != nil {
		t.Fatal(err)
	}
	if err := img.Encode(); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		world  func() *World
		image  func() *WorldImage
		codecs []ComponentCodec
	}{
		{"used world", func() *World { return churned(t) }, func() *WorldImage { return img }, imageCodecs},
		{"fewer codecs", func() *World { return NewWorld(Config{}) }, func() *WorldImage { return img }, imageCodecs[:2]},
		{"codecs reordered", func() *World { return NewWorld(Config{}) }, func() *WorldImage { return img },
			[]ComponentCodec{imageCodecs[1], imageCodecs[0], imageCodecs[2]}},
		{"dead entity with a component", func() *World { return NewWorld(Config{}) }, func() *WorldImage {
			c := *gobtest.RoundTrip(t, img)
			c.Columns[1].Entities = append(c.Columns[1].Entities, 2)
			return &c
		}, imageCodecs},
		{"live entity twice", func() *World { return NewWorld(Config{}) }, func() *WorldImage {
			c := *gobtest.RoundTrip(t, img)
			c.Alive = append(c.Alive, c.Alive[0])
			return &c
		}, imageCodecs},
		{"damaged values", func() *World { return NewWorld(Config{}) }, func() *WorldImage {
			c := *gobtest.RoundTrip(t, img)
			c.Columns[0].Values = c.Columns[0].Values[:len(c.Columns[0].Values)/2]
			return &c
		}, imageCodecs},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.world().Restore(tc.image(), tc.codecs...)
			if !errors.Is(err, ErrImage) {
				t.Fatalf("Restore = %v, want an error wrapping ErrImage", err)
			}
		})
	}
}
