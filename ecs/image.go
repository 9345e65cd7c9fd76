package ecs

import (
	"bytes"
	"encoding/gob"
	"errors"
	"fmt"
	"reflect"
	"strconv"

	arche "github.com/mlange-42/arche/ecs"
	"github.com/mlange-42/arche/generic"
)

// EntityRef is an entity handle as data: its id and generation, the two numbers arche keeps
// private. A snapshot stores every entity a resource points at as one, so that a restored world
// resolves it to the same entity, or to none if it was removed since.
type EntityRef struct {
	ID, Gen uint32
}

// RefOf returns e as data.
func RefOf(e Entity) EntityRef { return EntityRef{ID: e.ID(), Gen: e.Generation()} }

// Entity returns the handle r stands for. arche builds handles only itself, and decodes them
// from its JSON form, so that is the way back; a restore resolves each stored handle once.
func (r EntityRef) Entity() Entity {
	var e Entity
	b := make([]byte, 0, 24)
	b = append(b, '[')
	b = strconv.AppendUint(b, uint64(r.ID), 10)
	b = append(b, ',')
	b = strconv.AppendUint(b, uint64(r.Gen), 10)
	b = append(b, ']')
	if err := e.UnmarshalJSON(b); err != nil {
		panic("ecs: arche refused its own entity form: " + err.Error()) // cannot happen: b is two numbers
	}
	return e
}

// WorldImage is a world's state as data, at a tick boundary: arche's entity pool (so every
// handle keeps its id and generation), the component values of every live entity, the clock and
// the id allocator. Resources are not part of it: each owner exports its own.
type WorldImage struct {
	Tick   uint64
	LastID uint64
	// Entities is arche's entity pool, Alive the live entities' ids in query order, Next and
	// Available the pool's free list (arche's EntityDump).
	Entities  []EntityRef
	Alive     []uint32
	Next      uint32
	Available uint32
	// Columns hold one component type each, in the order the codecs were given.
	Columns []Column
}

// Column is one component type's values: the entities (by id) that carry it, in query order,
// and their values, gob-encoded as one slice (empty for a marker type, which has no value).
type Column struct {
	Name     string
	Entities []uint32
	Values   []byte
	// copied holds the values as World.Image copied them, until Encode encodes them into Values.
	copied any
}

// Encode encodes the columns' copied values into Values (gob): call it before the image itself
// is encoded. It is separate from World.Image so that the world waits only for the copy, not for
// the encoding, which may run on another goroutine.
func (img *WorldImage) Encode() error {
	for i := range img.Columns {
		c := &img.Columns[i]
		if c.copied == nil {
			continue
		}
		var buf bytes.Buffer
		if err := gob.NewEncoder(&buf).Encode(c.copied); err != nil {
			return fmt.Errorf("component %s: %w", c.Name, err)
		}
		c.Values, c.copied = buf.Bytes(), nil
	}
	return nil
}

// ComponentCodec saves and restores one component type. Build one with Codec.
type ComponentCodec interface {
	name() string
	comp(w *World) arche.ID
	save(w *World, alive []Entity) (Column, error)
	load(w *World, col Column, byID []Entity) error
}

// Codec returns the codec of component type A under name, the key its column is stored by. A
// type of size zero is a marker: its column lists entities only.
func Codec[A any](name string) ComponentCodec { return codec[A]{key: name} }

type codec[A any] struct{ key string }

func (c codec[A]) name() string { return c.key }

func (c codec[A]) comp(w *World) arche.ID { return arche.TypeID(&w.arche, generic.T[A]()) }

func isMarker[A any]() bool { return reflect.TypeFor[A]().Size() == 0 }

func (c codec[A]) save(w *World, alive []Entity) (Column, error) {
	m := generic.NewMap[A](&w.arche)
	col := Column{Name: c.key}
	marker := isMarker[A]()
	var values []A
	if !marker {
		values = make([]A, 0, len(alive))
	}
	for _, e := range alive {
		if !m.Has(e) {
			continue
		}
		col.Entities = append(col.Entities, e.ID())
		if !marker {
			values = append(values, *m.Get(e))
		}
	}
	if !marker {
		col.copied = values
	}
	return col, nil
}

func (c codec[A]) load(w *World, col Column, byID []Entity) error {
	if isMarker[A]() {
		return nil
	}
	var values []A
	if err := gob.NewDecoder(bytes.NewReader(col.Values)).Decode(&values); err != nil {
		return fmt.Errorf("component %s: %w", c.key, err)
	}
	if len(values) != len(col.Entities) {
		return fmt.Errorf("component %s: %d values for %d entities", c.key, len(values), len(col.Entities))
	}
	m := generic.NewMap[A](&w.arche)
	for i, id := range col.Entities {
		*m.Get(byID[id]) = values[i]
	}
	return nil
}

// ErrImage is wrapped by every error Restore returns for an image that does not fit: one made by
// other codecs, damaged, or given a world that is not fresh.
var ErrImage = errors.New("world image does not fit")

// Image copies the world's state into a WorldImage, with the component types codecs name (every
// component type an entity of the world can carry: one left out is lost). Call it between ticks,
// on the world's goroutine; the image shares nothing with the world, and Encode readies it for
// gob anywhere after.
func (w *World) Image(codecs ...ComponentCodec) (*WorldImage, error) {
	dump := w.arche.DumpEntities()
	img := &WorldImage{
		Tick:      w.clock.tick,
		LastID:    w.ids.last,
		Entities:  make([]EntityRef, len(dump.Entities)),
		Alive:     dump.Alive,
		Next:      dump.Next,
		Available: dump.Available,
	}
	for i, e := range dump.Entities {
		img.Entities[i] = RefOf(e)
	}
	alive := make([]Entity, len(dump.Alive))
	for i, id := range dump.Alive {
		alive[i] = dump.Entities[id]
	}
	for _, c := range codecs {
		col, err := c.save(w, alive)
		if err != nil {
			return nil, err
		}
		img.Columns = append(img.Columns, col)
	}
	return img, nil
}

// Restore gives a fresh world (no entity ever made, tick 0) the state img holds: the same
// entities with the same handles, in the same query order, with their components, the clock at
// img's tick and the id allocator where it was. codecs must be the ones img was made with, in
// the same order.
func (w *World) Restore(img *WorldImage, codecs ...ComponentCodec) error {
	if len(w.arche.DumpEntities().Entities) > 1 || w.clock.tick != 0 || w.ids.last != 0 {
		return fmt.Errorf("%w: the world is not fresh", ErrImage)
	}
	if len(img.Columns) != len(codecs) {
		return fmt.Errorf("%w: %d component columns for %d codecs", ErrImage, len(img.Columns), len(codecs))
	}
	for i, c := range codecs {
		if img.Columns[i].Name != c.name() {
			return fmt.Errorf("%w: column %d is %q, the codec %q", ErrImage, i, img.Columns[i].Name, c.name())
		}
	}
	if len(img.Entities) == 0 {
		return fmt.Errorf("%w: no entity pool", ErrImage)
	}
	byID := make([]Entity, len(img.Entities))
	for i, r := range img.Entities {
		byID[i] = r.Entity() // a free slot's id links arche's free list; a live one's is its own
	}
	live := make(map[uint32]bool, len(img.Alive))
	for _, id := range img.Alive {
		if id == 0 || int(id) >= len(byID) || byID[id].ID() != id || live[id] {
			return fmt.Errorf("%w: live entity %d twice or outside the pool of %d", ErrImage, id, len(byID))
		}
		live[id] = true
	}
	// Every live entity carries the components its columns list; gather them per entity so each
	// moves into its archetype once. Adding in query order makes arche create the archetypes
	// in the order the original iterated them, so queries iterate alike.
	comps := make(map[uint32][]arche.ID, len(img.Alive))
	for i, c := range codecs {
		id := c.comp(w)
		for _, e := range img.Columns[i].Entities {
			if !live[e] {
				return fmt.Errorf("%w: component %s on entity %d, which is not alive", ErrImage, c.name(), e)
			}
			comps[e] = append(comps[e], id)
		}
	}
	dump := arche.EntityDump{Entities: byID, Alive: img.Alive, Next: img.Next, Available: img.Available}
	w.arche.LoadEntities(&dump)
	for _, id := range img.Alive {
		if ids := comps[id]; len(ids) > 0 {
			w.arche.Add(byID[id], ids...)
		}
	}
	for i, c := range codecs {
		if err := c.load(w, img.Columns[i], byID); err != nil {
			return fmt.Errorf("%w: %w", ErrImage, err)
		}
	}
	w.clock.tick = img.Tick
	w.ids.last = img.LastID
	return nil
}
