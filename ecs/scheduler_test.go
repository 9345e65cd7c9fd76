package ecs

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// recorder is a system that logs its lifecycle calls into a shared journal.
type recorder struct {
	name    string
	journal *[]string
	work    func(w *World)
}

func (r *recorder) Name() string { return r.name }
func (r *recorder) Initialize(*World) error {
	*r.journal = append(*r.journal, "init "+r.name)
	return nil
}
func (r *recorder) Update(w *World) {
	*r.journal = append(*r.journal, "update "+r.name)
	if r.work != nil {
		r.work(w)
	}
}
func (r *recorder) Finalize(*World) { *r.journal = append(*r.journal, "final "+r.name) }

func TestSchedulerLifecycleOrderAndFixedPoint(t *testing.T) {
	var journal []string
	w := NewWorld(Config{Seed: 1})
	budget := 2
	a := &recorder{name: "a", journal: &journal, work: func(w *World) {
		if budget > 0 {
			budget--
			w.Touch(1)
		}
	}}
	b := &recorder{name: "b", journal: &journal}
	s := NewScheduler(w, a, b)
	stop, err := s.Run(context.Background(), 0)
	s.Finalize()
	if err != nil || stop != FixedPoint {
		t.Fatalf("stop=%v err=%v", stop, err)
	}
	want := []string{"init a", "init b",
		"update a", "update b", "update a", "update b", "update a", "update b",
		"final b", "final a"}
	if !slices.Equal(journal, want) {
		t.Fatalf("journal\n got %v\nwant %v", journal, want)
	}
	if w.Tick() != 2 {
		t.Errorf("tick = %d, want 2", w.Tick())
	}
}

func TestSchedulerJumpsToNextDueTickInVirtualTime(t *testing.T) {
	w := NewWorld(Config{})
	s := NewScheduler(w)
	lane := s.AddLane(LaneConfig{Name: "tool", Capacity: 1})
	var seenAt, ranAt []uint64
	sys := &recorder{name: "collect", journal: new([]string), work: func(w *World) {
		ranAt = append(ranAt, w.Tick())
		if w.Tick() == 0 {
			lane.Submit(0, Job{Agent: 1, Latency: 50, Run: func() any { return nil }})
			w.Touch(1)
		}
		for range lane.Collect() {
			seenAt = append(seenAt, w.Tick())
			w.Touch(1)
		}
	}}
	s.systems = []System{sys}
	var boundaries []string
	s.SetBoundary(func(w *World) {
		boundaries = append(boundaries, fmt.Sprintf("%d after %d, %d owed", w.Tick(), s.last, lane.Pending()))
	})
	stop, err := s.Run(context.Background(), 0)
	s.Finalize()
	if err != nil || stop != FixedPoint {
		t.Fatalf("stop=%v err=%v", stop, err)
	}
	// The boundary comes between ticks, after the clock's jump, and not after the last tick.
	if want := []string{"1 after 0, 1 owed", "50 after 1, 1 owed", "51 after 50, 0 owed"}; !slices.Equal(boundaries, want) {
		t.Errorf("boundaries %q, want %q", boundaries, want)
	}
	if !slices.Equal(seenAt, []uint64{50}) {
		t.Fatalf("result collected at %v, want [50]", seenAt)
	}
	// Tick 1 finds nothing to do while the lane still owes work, so the clock jumps to 50.
	if !slices.Equal(ranAt, []uint64{0, 1, 50, 51}) {
		t.Errorf("system ran at ticks %v, want [0 1 50 51]: idle ticks were not skipped", ranAt)
	}
}

func TestSchedulerMaxTicks(t *testing.T) {
	w := NewWorld(Config{})
	busy := &recorder{name: "busy", journal: new([]string), work: func(w *World) { w.Touch(1) }}
	s := NewScheduler(w, busy)
	stop, err := s.Run(context.Background(), 10)
	s.Finalize()
	if err != nil || stop != MaxTicks {
		t.Fatalf("stop=%v err=%v", stop, err)
	}
	if w.Tick() != 9 {
		t.Errorf("last tick = %d, want 9 (ticks 0..9)", w.Tick())
	}
}

func TestSchedulerTurnsSystemPanicIntoError(t *testing.T) {
	w := NewWorld(Config{})
	bad := &recorder{name: "bad", journal: new([]string), work: func(*World) { panic("bug") }}
	s := NewScheduler(w, bad)
	_, err := s.Run(context.Background(), 0)
	s.Finalize()
	if !errors.Is(err, ErrSystemPanic) || !strings.Contains(err.Error(), "bad at tick 0: bug") {
		t.Fatalf("err = %v", err)
	}
}

func TestSchedulerCancelled(t *testing.T) {
	w := NewWorld(Config{})
	ctx, cancel := context.WithCancel(context.Background())
	busy := &recorder{name: "busy", journal: new([]string), work: func(w *World) {
		w.Touch(1)
		if w.Tick() == 3 {
			cancel()
		}
	}}
	s := NewScheduler(w, busy)
	stop, err := s.Run(ctx, 0)
	s.Finalize()
	if err != nil || stop != Cancelled {
		t.Fatalf("stop=%v err=%v", stop, err)
	}
}

type failingInit struct{ recorder }

func (f *failingInit) Initialize(*World) error { return errors.New("no filter") }

func TestSchedulerInitializeError(t *testing.T) {
	w := NewWorld(Config{})
	s := NewScheduler(w, &failingInit{recorder{name: "f", journal: new([]string)}})
	if _, err := s.Run(context.Background(), 0); err == nil || !strings.Contains(err.Error(), "initialize f: no filter") {
		t.Fatalf("err = %v", err)
	}
}

func TestWallClockTicksCountElapsedTime(t *testing.T) {
	w := NewWorld(Config{Clock: ClockConfig{Mode: Wall, TickLength: 5 * time.Millisecond}})
	passes := 0
	busy := &recorder{name: "busy", journal: new([]string), work: func(w *World) { passes++; w.Touch(1) }}
	s := NewScheduler(w, busy)
	start := time.Now()
	stop, err := s.Run(context.Background(), 4)
	s.Finalize()
	if err != nil || stop != MaxTicks {
		t.Fatalf("stop=%v err=%v", stop, err)
	}
	if elapsed := time.Since(start); elapsed < 20*time.Millisecond {
		t.Fatalf("a 4-tick wall limit of 5ms ticks ended after %v", elapsed)
	}
	if passes <= 4 {
		t.Fatalf("only %d passes: wall ticks should not advance once per pass", passes)
	}
}

func TestWallClockSleepsUntilALaneWakesIt(t *testing.T) {
	w := NewWorld(Config{Clock: ClockConfig{Mode: Wall, TickLength: time.Hour}})
	s := NewScheduler(w)
	lane := s.AddLane(LaneConfig{Name: "tool", Capacity: 1})
	got := 0
	sys := &recorder{name: "collect", journal: new([]string), work: func(w *World) {
		if got == 0 && lane.Pending() == 0 {
			lane.Submit(w.Tick(), Job{Agent: 1, Run: func() any { time.Sleep(20 * time.Millisecond); return 7 }})
			w.Touch(1)
		}
		for _, d := range lane.Collect() {
			got = d.Value.(int)
			w.Touch(1)
		}
	}}
	s.systems = []System{sys}
	done := make(chan struct{})
	var stop Stop
	var err error
	go func() { stop, err = s.Run(context.Background(), 0); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the scheduler never woke up")
	}
	s.Finalize()
	if err != nil || stop != FixedPoint || got != 7 {
		t.Fatalf("stop=%v err=%v got=%d", stop, err, got)
	}
}

// dueAt is a waiter that owes the world one thing at a fixed tick.
type dueAt struct{ tick uint64 }

func (d *dueAt) Pending() bool { return d.tick > 0 }
func (d *dueAt) NextDue() (uint64, bool) {
	return d.tick, d.tick > 0
}

func TestSchedulerWaitsForWaitersAndJumpsToTheirDueTick(t *testing.T) {
	w := NewWorld(Config{})
	waiter := &dueAt{tick: 40}
	var ranAt []uint64
	sys := &recorder{name: "hub", journal: new([]string), work: func(w *World) {
		ranAt = append(ranAt, w.Tick())
		if waiter.tick != 0 && w.Tick() >= waiter.tick {
			waiter.tick = 0
			w.Touch(1)
		}
	}}
	s := NewScheduler(w, sys)
	w.AddWaiter(waiter)
	stop, err := s.Run(context.Background(), 0)
	s.Finalize()
	if err != nil || stop != FixedPoint {
		t.Fatalf("stop=%v err=%v", stop, err)
	}
	if !slices.Equal(ranAt, []uint64{0, 40, 41}) {
		t.Fatalf("ran at %v, want [0 40 41]: the waiter was not waited for, or idle ticks were not skipped", ranAt)
	}
}

// TestSchedulerImageKeepsTheLastStep: a scheduler restored from an image reports the last tick
// its original stepped, though it never stepped itself (a restored run cancelled before its
// first tick still names the tick it stopped after).
func TestSchedulerImageKeepsTheLastStep(t *testing.T) {
	w := NewWorld(Config{})
	busy := &recorder{name: "busy", journal: new([]string), work: func(w *World) { w.Touch(1) }}
	s := NewScheduler(w, busy)
	if _, err := s.Run(context.Background(), 4); err != nil {
		t.Fatal(err)
	}
	s.Finalize()
	back := NewScheduler(NewWorld(Config{}))
	if _, ok := back.LastStep(); ok {
		t.Fatal("a fresh scheduler says it stepped")
	}
	back.Restore(s.Image())
	if last, ok := back.LastStep(); !ok || last != 3 {
		t.Fatalf("restored LastStep = %d, %v; want 3, true", last, ok)
	}
}

// passJournal records a run's passes and hand-overs as a recording would.
type passJournal struct{ lines []string }

func (j *passJournal) Step(tick uint64, _ time.Time) {
	j.lines = append(j.lines, fmt.Sprintf("pass %d", tick))
}
func (j *passJournal) Handed(lane string, agent uint64, index int, started, handed uint64, rank int) {
	j.lines = append(j.lines, fmt.Sprintf("handed %s %d/%d %d->%d #%d", lane, agent, index, started, handed, rank))
}

// TestPlanGoesLive: a plan with Live (a resumed wall-clock run) replays its passes at their ticks
// and times, journaling them as the recorded run did, then goes on in wall time from the tick
// after its last: a job the plan never handed over (its result came after the recording's end)
// is handed over at the first live pass, and the run ends at its fixed point with the clock in
// wall mode, never going back.
func TestPlanGoesLive(t *testing.T) {
	w := NewWorld(Config{Clock: ClockConfig{Mode: Virtual, TickLength: time.Millisecond}})
	s := NewScheduler(w)
	lane := s.AddLane(LaneConfig{Name: "tool", Capacity: 4})
	at := time.Unix(1000, 0).UTC()
	s.SetPlan(&Plan{Ticks: []uint64{0, 5, 9}, Nows: []time.Time{at, at.Add(5 * time.Millisecond), at.Add(9 * time.Millisecond)}, Live: true,
		Lanes: map[string]LanePlan{"tool": {{Agent: 1, Index: 0, Started: 0}: {Handed: 1, Rank: 0}}}})
	j := &passJournal{}
	s.SetJournal(j)
	var seen []string
	sys := &recorder{name: "collect", journal: new([]string), work: func(w *World) {
		if w.Tick() == 0 {
			lane.Submit(0, Job{Agent: 1, Run: func() any { return "planned" }})
			lane.Submit(0, Job{Agent: 2, Run: func() any { return "late" }}) // not in the plan
			w.Touch(1)
		}
		for _, d := range lane.Collect() {
			seen = append(seen, fmt.Sprintf("%v at %d (%s)", d.Value, d.Tick, w.Clock().Mode()))
			w.Touch(1)
		}
	}}
	s.systems = []System{sys}
	stop, err := s.Run(context.Background(), 0)
	s.Finalize()
	if err != nil || stop != FixedPoint {
		t.Fatalf("stop=%v err=%v", stop, err)
	}
	if len(seen) != 2 || seen[0] != "planned at 5 (virtual)" || !strings.HasPrefix(seen[1], "late at ") || !strings.HasSuffix(seen[1], "(wall)") {
		t.Fatalf("results %q, want the planned one at its recorded pass and the late one live", seen)
	}
	var late uint64
	fmt.Sscanf(seen[1], "late at %d", &late)
	if late < 10 {
		t.Errorf("the first live pass is at tick %d, before the plan's last tick 9", late)
	}
	if want := []string{"pass 0", "pass 5", "handed tool 1/0 0->1 #0", "pass 9"}; len(j.lines) < 5 || !slices.Equal(j.lines[:4], want) || !strings.HasPrefix(j.lines[4], "pass ") {
		t.Errorf("journal %q, want the plan's passes and hand-overs as recorded, then live passes", j.lines)
	}
}

// outside is a waiter whose work waits on outside input: pending with no due tick while waiting.
type outside struct{ waiting atomic.Bool }

func (o *outside) Pending() bool           { return o.waiting.Load() }
func (o *outside) NextDue() (uint64, bool) { return 0, false }
func (o *outside) WaitsOutside() bool      { return o.waiting.Load() }

// TestSchedulerWaitsOutsideWithItsClockStill: a virtual-clock world idle with only outside input
// pending neither ends nor moves its clock; Wake lets it take the input at the next tick, and
// cancellation ends the wait.
func TestSchedulerWaitsOutsideWithItsClockStill(t *testing.T) {
	w := NewWorld(Config{})
	o := &outside{}
	o.waiting.Store(true)
	ticks := make(chan uint64, 16)
	sys := &recorder{name: "operator", journal: new([]string), work: func(w *World) {
		ticks <- w.Tick()
		if w.Tick() > 0 && o.waiting.Load() {
			o.waiting.Store(false) // the input arrived: applied this tick
			w.Touch(1)
		}
	}}
	s := NewScheduler(w, sys)
	w.AddWaiter(o)
	done := make(chan Stop, 1)
	go func() {
		stop, _ := s.Run(context.Background(), 0)
		done <- stop
	}()
	if got := <-ticks; got != 0 {
		t.Fatalf("first tick %d", got)
	}
	select {
	case got := <-ticks:
		t.Fatalf("the world ran tick %d while it waited for outside input", got)
	case <-done:
		t.Fatal("the world ended while outside input was pending")
	case <-time.After(50 * time.Millisecond):
	}
	s.Wake()
	if got := <-ticks; got != 1 {
		t.Fatalf("after Wake the world ran tick %d, want 1 (the clock held still while it waited)", got)
	}
	if stop := <-done; stop != FixedPoint {
		t.Fatalf("stop %v", stop)
	}
	s.Finalize()

	// Cancelled while it waits.
	w2 := NewWorld(Config{})
	o2 := &outside{}
	o2.waiting.Store(true)
	s2 := NewScheduler(w2, &recorder{name: "idle", journal: new([]string)})
	w2.AddWaiter(o2)
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(10 * time.Millisecond); cancel() }()
	if stop, err := s2.Run(ctx, 0); stop != Cancelled || err != nil {
		t.Fatalf("cancelled wait: %v %v", stop, err)
	}
	s2.Finalize()
}
