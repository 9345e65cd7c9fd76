package ecs

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"time"
)

// System is one step of the tick pipeline. Systems run serially on the world's goroutine in the
// order the Scheduler lists them.
type System interface {
	// Name identifies the system in errors and profiles ("tool_dispatch").
	Name() string
	// Initialize resolves views, maps, swaps and resources once, before the first tick.
	Initialize(w *World) error
	// Update does one tick's work, calling w.Touch for what it changed.
	Update(w *World)
	// Finalize releases what the system holds, after the last tick.
	Finalize(w *World)
}

// Stop says why a run ended.
type Stop uint8

const (
	// FixedPoint: a tick changed nothing and no lane owes any work; nothing can happen any more.
	FixedPoint Stop = iota + 1
	// MaxTicks: the tick limit was reached first.
	MaxTicks
	// Cancelled: the context was cancelled.
	Cancelled
)

// String names the stop reason.
func (s Stop) String() string {
	switch s {
	case FixedPoint:
		return "fixed_point"
	case MaxTicks:
		return "max_ticks"
	case Cancelled:
		return "cancelled"
	}
	return "unknown"
}

// ErrSystemPanic wraps a panic that escaped a system: a bug in the host, not an agent failure
// (agent work recovers its own panics). The run stops with it instead of crashing the process.
var ErrSystemPanic = errors.New("system panicked")

// Waiter is work outside the systems that a world waits for: lanes, and anything else that
// holds agents parked until a known tick (open prompts). The scheduler never stops at a fixed
// point while a waiter is pending, and in virtual time jumps to the earliest due tick.
type Waiter interface {
	// Pending reports whether the waiter still owes the world something.
	Pending() bool
	// NextDue is the earliest virtual tick at which it has something to hand over.
	NextDue() (uint64, bool)
}

// OutsideWaiter is a Waiter whose pending work may wait on input from outside the world, with no
// due tick: a prompt waiting for a person. A virtual-clock world with nothing else left to do
// waits for Scheduler.Wake rather than moving its clock.
type OutsideWaiter interface {
	Waiter
	// WaitsOutside reports whether some of the pending work waits on outside input.
	WaitsOutside() bool
}

// Scheduler runs an ordered list of systems over a world.
type Scheduler struct {
	world       *World
	systems     []System
	initialized bool
	finalized   bool
	wake        chan struct{}
	// last is the last tick Step ran, valid when stepped is set.
	last    uint64
	stepped bool
	// journal records a wall-clock run's passes; plan replays them (see plan.go).
	journal Journal
	plan    *Plan
	// boundary is called between virtual ticks (SetBoundary).
	boundary func(*World)
}

// NewScheduler prepares a scheduler; call Initialize before the first tick.
func NewScheduler(w *World, systems ...System) *Scheduler {
	return &Scheduler{world: w, systems: systems, wake: make(chan struct{}, 1)}
}

// World returns the scheduler's world.
func (s *Scheduler) World() *World { return s.world }

// AddLane creates a lane whose wall-time completions wake this scheduler.
func (s *Scheduler) AddLane(cfg LaneConfig) *Lane {
	l := NewLane(cfg, s.world.clock.mode, s.wake)
	s.world.lanes = append(s.world.lanes, l)
	return l
}

// Initialize runs every system's Initialize in order, stopping at the first error.
func (s *Scheduler) Initialize() error {
	if s.initialized {
		return nil
	}
	for _, sys := range s.systems {
		if err := sys.Initialize(s.world); err != nil {
			return fmt.Errorf("initialize %s: %w", sys.Name(), err)
		}
	}
	s.initialized = true
	return nil
}

// Step runs one tick: lanes hand over what is due, every system updates in order, and in virtual
// time the lanes' barrier closes the tick. It returns how many changes the systems recorded.
func (s *Scheduler) Step() (touched int, err error) {
	w := s.world
	w.touched = 0
	now := w.clock.tick
	s.last, s.stepped = now, true
	for _, l := range w.lanes {
		l.Advance(now)
	}
	for _, sys := range s.systems {
		if err := s.update(sys); err != nil {
			return w.touched, err
		}
	}
	for _, l := range w.lanes {
		l.Barrier()
	}
	return w.touched, nil
}

func (s *Scheduler) update(sys System) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: %s at tick %d: %v\n%s", ErrSystemPanic, sys.Name(), s.world.clock.tick, r, debug.Stack())
		}
	}()
	sys.Update(s.world)
	return nil
}

// LastStep returns the last tick Step ran, and false when it never ran. A run stopped by its
// context has its clock already advanced past that tick (Run checks the context before each
// tick), so the clock alone would count one tick too many; this is the tick a summary names.
func (s *Scheduler) LastStep() (uint64, bool) { return s.last, s.stepped }

// LastStepImage is what a scheduler knows between ticks that its world does not, for a snapshot
// of the world: the last tick it stepped, if any.
type LastStepImage struct {
	Last    uint64
	Stepped bool
}

// Image returns the scheduler's state as data.
func (s *Scheduler) Image() LastStepImage { return LastStepImage{Last: s.last, Stepped: s.stepped} }

// Restore gives a scheduler that never stepped the state img holds.
func (s *Scheduler) Restore(img LastStepImage) { s.last, s.stepped = img.Last, img.Stepped }

// pending reports whether any lane or waiter still owes work.
func (s *Scheduler) pending() bool {
	for _, l := range s.world.lanes {
		if l.Pending() > 0 {
			return true
		}
	}
	for _, w := range s.world.waiters {
		if w.Pending() {
			return true
		}
	}
	return false
}

// waitsOutside reports whether the world waits on outside input alone: some waiter waits on it
// and no lane owes work.
func (s *Scheduler) waitsOutside() bool {
	for _, l := range s.world.lanes {
		if l.Pending() > 0 {
			return false
		}
	}
	for _, w := range s.world.waiters {
		if o, ok := w.(OutsideWaiter); ok && o.WaitsOutside() {
			return true
		}
	}
	return false
}

// nextDue is the earliest tick at which a lane hands over a result.
func (s *Scheduler) nextDue() (uint64, bool) {
	var best uint64
	found := false
	for _, l := range s.world.lanes {
		if t, ok := l.NextDue(); ok && (!found || t < best) {
			best, found = t, true
		}
	}
	for _, w := range s.world.waiters {
		if t, ok := w.NextDue(); ok && (!found || t < best) {
			best, found = t, true
		}
	}
	return best, found
}

// Run ticks until a fixed point, the tick limit (maxTicks > 0) or cancellation. A tick
// that changes nothing while lanes still owe work is not a fixed point: in virtual time the clock
// jumps to the next due tick (idle ticks cost nothing and change nothing), in wall time the
// scheduler sleeps until a lane wakes it (or a tick length passes, so the limit is still seen).
func (s *Scheduler) Run(ctx context.Context, maxTicks uint64) (Stop, error) {
	if err := s.Initialize(); err != nil {
		return 0, err
	}
	w := s.world
	if w.clock.mode == Wall {
		w.clock.startWall()
	}
	if p := s.plan; p != nil {
		stop, err := s.runPlan(ctx, p)
		if err != nil || !p.Live || stop == Cancelled {
			return stop, err
		}
		s.goLive()
		w.clock.advance(w.clock.wallTick())
	}
	for {
		if ctx.Err() != nil {
			return Cancelled, nil
		}
		if w.clock.mode == Wall {
			w.clock.fixed = time.Now() // Now reads one time through the pass
			if s.journal != nil {
				s.journal.Step(w.clock.tick, w.clock.fixed)
			}
		}
		touched, err := s.Step()
		if err != nil {
			return 0, err
		}
		idle := touched == 0
		if idle && !s.pending() {
			return FixedPoint, nil
		}
		if w.clock.mode == Wall {
			if idle && !s.readyNow() {
				select {
				case <-s.wake:
				case <-ctx.Done():
					return Cancelled, nil
				case <-time.After(w.clock.length):
				}
			}
			w.clock.advance(w.clock.wallTick())
			if maxTicks > 0 && w.clock.tick >= maxTicks {
				return MaxTicks, nil
			}
			continue
		}
		next := w.clock.tick + 1
		if idle {
			due, ok := s.nextDue()
			if !ok && s.waitsOutside() {
				// Pending work with no due tick is outside input (a prompt waiting for a person):
				// the clock holds still until Wake, so how long the person takes moves no tick.
				select {
				case <-s.wake:
				case <-ctx.Done():
					return Cancelled, nil
				}
			}
			if ok && due > next {
				next = due
			}
		}
		if maxTicks > 0 && next >= maxTicks {
			return MaxTicks, nil
		}
		w.clock.advance(next)
		if s.boundary != nil {
			s.boundary(w)
		}
	}
}

// Wake wakes a run that waits for outside input: a virtual-clock world idle with only work that
// has no due tick (a prompt waiting for a person), or a wall-clock one between passes. Safe from
// any goroutine; a wake with nothing to wait for is dropped or ends one idle pass early.
func (s *Scheduler) Wake() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// SetBoundary has fn called at every tick boundary of a virtual-clock run: after a tick's barrier
// and the clock's advance to the next tick, before that tick starts. Nothing runs then and every
// lane holds its jobs as data (Lane.Image), so that is where a snapshot of the world is taken.
func (s *Scheduler) SetBoundary(fn func(*World)) { s.boundary = fn }

// runPlan replays a recorded wall-clock run (SetPlan): every recorded pass runs at its tick with
// its time, then the run ends as the recorded one did. Cancellation still stops it.
func (s *Scheduler) runPlan(ctx context.Context, p *Plan) (Stop, error) {
	w := s.world
	for i, tick := range p.Ticks {
		if ctx.Err() != nil {
			return Cancelled, nil
		}
		w.clock.advance(tick)
		if i < len(p.Nows) {
			w.clock.fixed = p.Nows[i]
			if s.journal != nil {
				s.journal.Step(tick, p.Nows[i])
			}
		}
		if _, err := s.Step(); err != nil {
			return 0, err
		}
	}
	return p.Stop, nil
}

// readyNow reports whether a wall-time lane has results or free work to hand over already.
func (s *Scheduler) readyNow() bool {
	for _, l := range s.world.lanes {
		l.mu.Lock()
		n := len(l.finished)
		l.mu.Unlock()
		if n > 0 || len(l.ready) > 0 {
			return true
		}
	}
	return false
}

// Finalize runs every system's Finalize in reverse order and closes the lanes. It is safe to call
// more than once.
func (s *Scheduler) Finalize() {
	if s.finalized {
		return
	}
	s.finalized = true
	for i := len(s.systems) - 1; i >= 0; i-- {
		s.systems[i].Finalize(s.world)
	}
	for _, l := range s.world.lanes {
		l.Close()
	}
}
