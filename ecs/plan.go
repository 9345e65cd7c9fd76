package ecs

import (
	"cmp"
	"slices"
	"time"
)

// A wall-clock run is not a function of its inputs: which pass of the scheduler each lane result
// arrives at, and the machine's time, are the machine's. A Journal records both as the run goes;
// a Plan, made from a journal, replays them in virtual time: the scheduler steps the recorded
// ticks, each lane hands a result over at the recorded pass in the recorded order, and Now reads
// the recorded time. So a recorded wall-clock run replays exactly.

// Journal receives what a wall-clock run's clock and lanes did, on the world's goroutine.
type Journal interface {
	// Step is called as each pass of the scheduler begins: its tick and the time Now reads
	// during it.
	Step(tick uint64, now time.Time)
	// Handed is called as a lane hands a result over: the lane, the job's agent and index, the
	// pass it started in and the pass it is handed over in (passes count from 0), and its place
	// among that pass's hand-overs on the lane.
	Handed(lane string, agent uint64, index int, started, handed uint64, rank int)
}

// Plan is a recorded wall-clock run as a replay steps it.
type Plan struct {
	// Ticks and Nows are the tick and time of every pass, in order.
	Ticks []uint64
	Nows  []time.Time
	// Stop is how the recorded run ended, returned once every pass has run.
	Stop Stop
	// Lanes gives each lane's hand-overs, by lane name.
	Lanes map[string]LanePlan
	// Live makes the run go on in wall time once every pass has run, instead of stopping: a
	// resumed wall-clock run replays its committed passes, then runs on live (Stop is unused).
	Live bool
}

// LanePlan is one lane's recorded hand-overs.
type LanePlan map[PlanKey]PlanSlot

// PlanKey identifies a lane job: its agent and index, and the pass it started in (an agent has
// one job of an index in flight at a time).
type PlanKey struct {
	Agent   uint64
	Index   int
	Started uint64
}

// PlanSlot is where a job's result was handed over: the pass, and its place in that pass.
type PlanSlot struct {
	Handed uint64
	Rank   int
}

// neverHanded is the pass of a job the recorded run never handed over (it ended first).
const neverHanded = ^uint64(0)

// SetJournal makes the scheduler and its lanes report a wall-clock run to j (nil: not recorded).
// Call it before Run.
func (s *Scheduler) SetJournal(j Journal) {
	s.journal = j
	for _, l := range s.world.lanes {
		l.journal = j
	}
}

// SetPlan makes the scheduler replay p: call it before Run, on a world in virtual time. A
// journal set as well (SetJournal) receives the replayed passes and hand-overs as a recorded run's
// would, so that a resumed run writes its recording again alike.
func (s *Scheduler) SetPlan(p *Plan) {
	s.plan = p
	for _, l := range s.world.lanes {
		l.plan = p.Lanes[l.name]
		l.planned = true
	}
}

// placed marks the task of a job a plan places: due at the recorded pass, ranked as recorded.
func (l *Lane) placed(t *task) {
	slot, ok := l.plan[PlanKey{Agent: t.job.Agent, Index: t.job.Index, Started: t.started}]
	if !ok {
		t.ready, t.rank = neverHanded, 0
		return
	}
	t.ready, t.rank = slot.Handed, slot.Rank
}

// sortPlanned orders a pass's hand-overs as recorded.
func sortPlanned(ts []*task) {
	slices.SortFunc(ts, func(a, b *task) int { return cmp.Compare(a.rank, b.rank) })
}

// goLive turns a world that replayed a plan (Plan.Live) into a wall-clock one going on from the
// last replayed tick: its clock counts the machine's time from there, and its lanes hand their
// results over as they arrive. The jobs the plan never handed over (their results came after the
// recording's end) are handed over at the first live pass, in canonical order.
func (s *Scheduler) goLive() {
	w := s.world
	c := w.clock
	c.mode, c.fixed = Wall, time.Time{}
	c.start = time.Now().Add(-time.Duration(c.tick+1) * c.length)
	for _, l := range w.lanes {
		l.goLive()
	}
}

// goLive makes a planned lane a wall-clock one (Scheduler.goLive).
func (l *Lane) goLive() {
	held := l.due.PopDue(neverHanded, nil)
	slices.SortFunc(held, func(a, b *task) int {
		return cmp.Or(cmp.Compare(a.ready, b.ready), cmp.Compare(a.rank, b.rank), cmp.Compare(a.job.Agent, b.job.Agent), cmp.Compare(a.job.Index, b.job.Index))
	})
	l.mu.Lock()
	l.finished = append(held, l.finished...)
	l.mode = Wall
	l.mu.Unlock()
	l.planned, l.plan = false, nil
}
