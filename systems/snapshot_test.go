package systems_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/warrenhq/warren/ecs"
	"github.com/warrenhq/warren/internal/gobtest"
	"github.com/warrenhq/warren/resources"
	"github.com/warrenhq/warren/systems"
)

// imageAt runs h to its end, calling at at the first tick boundary at or past tick with the
// lanes' image then, and its error.
func imageAt(h *harness, tick uint64, at func(systems.LanesImage, error)) {
	done := false
	h.sched.SetBoundary(func(w *ecs.World) {
		if !done && w.Tick() >= tick {
			done = true
			at(systems.ImageLanes(w))
		}
	})
	h.run(200)
	if !done {
		h.tb.Fatalf("the run never reached tick %d", tick)
	}
}

// TestImageLanesHoldsDueResultsAndWaitingRecipes: at a boundary where the tool lane's one slot
// holds a call due later and two calls wait for it, the lanes' image holds the due result and a
// recipe for each waiting call, all of which gob encodes (a snapshot's encoding); imaging changes
// nothing, so the run goes on to the end it has without one.
func TestImageLanesHoldsDueResultsAndWaitingRecipes(t *testing.T) {
	run := func(image bool) []byte {
		h := newHarness(t, options{toolCapacity: 1, latency: resources.Latency{Model: 1, Tool: 3}})
		model := scripted(t, "scripted:lane", turn("", call("echo", "from {{.Name}}")), turn("done"))
		h.spawn(h.profile("g", h.blueprint(oneStageBlueprint), model, ""), 3)
		if !image {
			h.run(200)
			return h.traceBytes()
		}
		imageAt(h, 2, func(img systems.LanesImage, err error) {
			if err != nil {
				t.Fatal(err)
			}
			if len(img.Tool.Due) != 1 || len(img.Tool.Waiting) != 2 {
				t.Fatalf("the tool lane's image holds %d due and %d waiting, want 1 and 2", len(img.Tool.Due), len(img.Tool.Waiting))
			}
			for _, h := range append(img.Tool.Due, img.Tool.Waiting...) {
				if h.Value == nil {
					t.Fatalf("agent %d's job is imaged without its result or recipe", h.Agent)
				}
			}
			back := gobtest.RoundTrip(t, img)
			if len(back.Tool.Waiting) != 2 || back.Tool.Waiting[1].Value == nil {
				t.Fatalf("the image does not survive gob: %+v", back.Tool)
			}
		})
		return h.traceBytes()
	}
	if with, without := run(true), run(false); string(with) != string(without) {
		t.Fatal("a run imaged at a boundary writes another trace than the same run never imaged")
	}
}

// TestImageLanesRefusesWhatHasNoImage: a result that left background work running, and a call
// waiting for a slot whose agent is gone (its work would still run), make ImageLanes fail with
// ErrNotImageable: the snapshot waits for a later boundary.
func TestImageLanesRefusesWhatHasNoImage(t *testing.T) {
	t.Run("background work", func(t *testing.T) {
		h := newHarness(t, options{latency: resources.Latency{Model: 1, Tool: 3}})
		model := scripted(t, "scripted:bg", turn("", call("detach", "job")), turn("done"))
		h.spawn(h.profile("g", h.blueprint(detachBlueprint), model, ""), 1)
		imageAt(h, 2, func(_ systems.LanesImage, err error) {
			if !errors.Is(err, systems.ErrNotImageable) {
				t.Fatalf("ImageLanes with a detaching result due = %v, want ErrNotImageable", err)
			}
		})
	})
	t.Run("waiting call of a gone agent", func(t *testing.T) {
		h := newHarness(t, options{toolCapacity: 1, latency: resources.Latency{Model: 1, Tool: 3}})
		model := scripted(t, "scripted:lane", turn("", call("echo", "x")), turn("done"))
		agents := h.spawn(h.profile("g", h.blueprint(oneStageBlueprint), model, ""), 2)
		done := false
		h.sched.SetBoundary(func(w *ecs.World) {
			if done || w.Tick() < 2 {
				return
			}
			done = true
			w.RemoveEntity(agents[1]) // the second agent's call waits for the slot
			if _, err := systems.ImageLanes(w); !errors.Is(err, systems.ErrNotImageable) || !strings.Contains(err.Error(), "gone") {
				t.Fatalf("ImageLanes with a gone agent's call waiting = %v, want ErrNotImageable", err)
			}
		})
		h.run(200)
		if !done {
			t.Fatal("the run never reached tick 2")
		}
	})
}
