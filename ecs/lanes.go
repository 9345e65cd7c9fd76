package ecs

import (
	"cmp"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
)

// Job is one piece of blocking work (a tool call, a model call) handed from a dispatch system to
// a lane. Run executes on a worker goroutine and must not touch the world; what it returns comes
// back to a collect system as Done.Value.
type Job struct {
	// Agent is the stable id of the agent the job belongs to: the first key of canonical order.
	Agent uint64
	// Entity is where the result goes.
	Entity Entity
	// Index orders the jobs of one agent (the call index within a turn): the second key.
	Index int
	// Latency is how many virtual ticks after it starts the result becomes available (values
	// below 1 count as 1). Ignored in wall time.
	Latency uint64
	// Run does the work.
	Run func() any
	// Recipe, when set, is the work as data (a value gob can encode): what a snapshot keeps of a
	// job still waiting for a slot, from which the dispatching system makes Run again on restore.
	// A waiting job without one cannot be saved, and a snapshot waits for a tick without it.
	Recipe any
}

// Done is a finished job as a collect system receives it.
type Done struct {
	Agent  uint64
	Entity Entity
	Index  int
	// Value is what Run returned (nil if it panicked).
	Value any
	// Panic holds the panic value, formatted, when Run panicked; the job's agent fails alone and
	// the world goes on.
	Panic string
	// Tick is the tick at which the result was handed over.
	Tick uint64
}

// LaneConfig sizes a lane.
type LaneConfig struct {
	// Name identifies the lane ("model", "tool").
	Name string
	// Capacity bounds the jobs that hold a slot at once: started and not yet collected. Jobs
	// submitted beyond it wait, in submission order, for a slot. Default 64.
	Capacity int
	// Workers is how many goroutines execute jobs. Default min(Capacity, 4×GOMAXPROCS); blocking
	// I/O wants more workers than cores. Worker count never changes results, only speed.
	Workers int
}

// task is a started job.
type task struct {
	job   Job
	ready uint64 // virtual tick at which the result is due (the pass, in a planned lane)
	// started is the pass the job started in; rank its place among its pass's hand-overs in a
	// planned lane.
	started uint64
	rank    int
	value   any
	panic   string
	// next is the agent's following job, run after this one on the same worker; done marks
	// that this one has been executed (both guarded by Lane.mu).
	next *task
	done bool
}

// Lane is a bounded worker pool with the two clock semantics of a world: in virtual time a tick's
// jobs all finish before the next tick (Barrier) and their results are handed over at their due
// tick in canonical order (agent id, then index); in wall time results are handed over in arrival
// order and the lane wakes a sleeping scheduler when one arrives.
//
// Submit, Advance, Barrier and Collect belong to the world's goroutine; only Run executes
// elsewhere.
type Lane struct {
	name     string
	mode     ClockMode
	capacity int
	workers  int

	inflight int   // slots held: started, result not yet collected
	waiting  []Job // submitted beyond capacity, FIFO
	work     chan *task
	running  sync.WaitGroup
	exited   sync.WaitGroup
	wake     chan struct{}
	closed   bool
	due      DueQueue[*task] // virtual: finished tasks until their due tick
	dueBuf   []*task
	ready    []Done // handed over by Advance, taken by Collect
	// collected is how many results the last Collect took, cleared at the next Advance.
	collected int

	mu       sync.Mutex
	finished []*task          // executed by workers, not yet sorted into due/ready
	chains   map[uint64]*task // agent -> its latest started job (guarded by mu)

	// passes counts Advance calls: the scheduler's passes. journal records a wall-clock lane's
	// hand-overs; plan places a replayed one's (planned: the lane follows a plan).
	passes  uint64
	journal Journal
	plan    LanePlan
	planned bool
	handed  int // hand-overs so far in this pass
}

// NewLane starts a lane's workers. wake (may be nil) receives a non-blocking signal whenever a
// job finishes in wall time.
func NewLane(cfg LaneConfig, mode ClockMode, wake chan struct{}) *Lane {
	if cfg.Capacity <= 0 {
		cfg.Capacity = 64
	}
	if cfg.Workers <= 0 {
		cfg.Workers = min(cfg.Capacity, 4*runtime.GOMAXPROCS(0))
	}
	l := &Lane{
		name:     cfg.Name,
		mode:     mode,
		capacity: cfg.Capacity,
		workers:  cfg.Workers,
		work:     make(chan *task, min(cfg.Capacity, 1<<16)),
		wake:     wake,
	}
	l.exited.Add(cfg.Workers)
	for range cfg.Workers {
		go l.worker()
	}
	return l
}

// Name returns the lane's name.
func (l *Lane) Name() string { return l.name }

// Submit hands a job to the lane at tick now: it starts at once if a slot is free, else it waits
// for one in submission order.
func (l *Lane) Submit(now uint64, j Job) {
	if l.inflight < l.capacity {
		l.start(now, j)
		return
	}
	l.waiting = append(l.waiting, j)
}

// start begins a job. One agent's jobs never run at the same time: a job whose agent still has
// one running or queued is chained behind it and runs after it, on the same worker, in
// submission order. So the calls of one turn that touch the same file see each other's effects
// in call order, whatever the worker count, and results stay deterministic; different agents'
// jobs still run in parallel.
func (l *Lane) start(now uint64, j Job) {
	l.inflight++
	l.running.Add(1)
	t := &task{job: j, ready: now + max(j.Latency, 1), started: l.pass()}
	if l.planned {
		l.placed(t)
	}
	l.mu.Lock()
	if l.chains == nil {
		l.chains = map[uint64]*task{}
	}
	if prev, ok := l.chains[j.Agent]; ok && !prev.done {
		prev.next = t
		l.chains[j.Agent] = t
		l.mu.Unlock()
		return
	}
	l.chains[j.Agent] = t
	l.mu.Unlock()
	l.work <- t
}

func (l *Lane) worker() {
	defer l.exited.Done()
	for t := range l.work {
		for t != nil {
			l.execute(t)
			l.mu.Lock()
			t.done = true
			l.finished = append(l.finished, t)
			next := t.next
			if l.chains[t.job.Agent] == t {
				delete(l.chains, t.job.Agent)
			}
			wall := l.mode == Wall // read under mu: a resumed wall-clock run's lane turns wall (goLive)
			l.mu.Unlock()
			l.running.Done()
			if wall && l.wake != nil {
				select {
				case l.wake <- struct{}{}:
				default:
				}
			}
			t = next
		}
	}
}

// execute runs one task, turning a panic into a failed result for that job alone.
func (l *Lane) execute(t *task) {
	defer func() {
		if r := recover(); r != nil {
			t.value = nil
			t.panic = fmt.Sprint(r)
		}
	}()
	t.value = t.job.Run()
}

// Barrier waits until every started job has finished executing (virtual time only; in wall time
// it returns at once). The scheduler calls it at the end of each tick, so that no work outlives the tick that submitted it and
// results depend only on virtual time.
func (l *Lane) Barrier() {
	if l.mode == Wall {
		return
	}
	l.running.Wait()
	l.mu.Lock()
	fin := l.finished
	l.finished = nil
	l.mu.Unlock()
	for _, t := range fin {
		l.due.Push(t.ready, t)
	}
}

// Advance hands over the results available at tick now (their slots free up) and starts waiting
// jobs in the freed slots. The scheduler calls it at the start of each tick.
func (l *Lane) Advance(now uint64) {
	// The results collected last pass are done with: let their values go (Collect reuses the
	// slice, so its old entries would otherwise keep every answer of the largest batch alive).
	clear(l.ready[len(l.ready):l.collected])
	l.collected = 0
	l.passes++
	l.handed = 0
	if l.planned {
		l.dueBuf = l.due.PopDue(l.pass(), l.dueBuf[:0])
		sortPlanned(l.dueBuf)
		for _, t := range l.dueBuf {
			l.handOver(t, now)
		}
		clear(l.dueBuf)
	} else if l.mode == Wall {
		l.mu.Lock()
		fin := l.finished
		l.finished = nil
		l.mu.Unlock()
		for _, t := range fin {
			l.handOver(t, now)
		}
	} else {
		first := len(l.ready)
		l.dueBuf = l.due.PopDue(now, l.dueBuf[:0])
		for _, t := range l.dueBuf {
			l.handOver(t, now)
		}
		clear(l.dueBuf)
		slices.SortFunc(l.ready[first:], func(a, b Done) int {
			if c := cmp.Compare(a.Agent, b.Agent); c != 0 {
				return c
			}
			return cmp.Compare(a.Index, b.Index)
		})
	}
	for len(l.waiting) > 0 && l.inflight < l.capacity {
		j := l.waiting[0]
		l.waiting[0] = Job{}
		l.waiting = l.waiting[1:]
		l.start(now, j)
	}
}

// pass is the index of the scheduler's current pass (0 before the first).
func (l *Lane) pass() uint64 {
	if l.passes == 0 {
		return 0
	}
	return l.passes - 1
}

func (l *Lane) handOver(t *task, now uint64) {
	if l.journal != nil && (l.mode == Wall || l.planned) {
		l.journal.Handed(l.name, t.job.Agent, t.job.Index, t.started, l.pass(), l.handed)
	}
	l.handed++
	l.inflight--
	l.ready = append(l.ready, Done{
		Agent: t.job.Agent, Entity: t.job.Entity, Index: t.job.Index,
		Value: t.value, Panic: t.panic, Tick: now,
	})
}

// Collect returns the results handed over so far and empties the hand-over list. The slice is
// reused by the lane: a collect system must finish with it before the next Advance.
func (l *Lane) Collect() []Done {
	out := l.ready
	l.ready = l.ready[:0]
	l.collected = len(out)
	return out
}

// Pending reports jobs the lane still owes: started, waiting for a slot, or handed over and not
// yet collected. A world is at a fixed point only when every lane owes nothing.
func (l *Lane) Pending() int { return l.inflight + len(l.waiting) + len(l.ready) }

// Waiting is how many submitted jobs wait for a slot (submitted beyond the lane's capacity): the
// queue an operator watches grow.
func (l *Lane) Waiting() int { return len(l.waiting) }

// NextDue returns the earliest virtual tick at which a result becomes available.
func (l *Lane) NextDue() (uint64, bool) { return l.due.Next() }

// Close stops the workers after the jobs already started finish. Jobs still waiting for a slot
// are dropped.
func (l *Lane) Close() {
	if l.closed {
		return
	}
	l.closed = true
	l.waiting = nil
	close(l.work)
	l.exited.Wait()
}

// HeldJob is a job a lane holds at a tick boundary, as data: one that ran and waits for its due
// tick (Ready, with what it returned in Value or Panic) or one still waiting for a slot (Ready
// 0, its Job.Recipe in Value). Value is the dispatching system's own type: a snapshot asks that
// system to turn it into data and back.
type HeldJob struct {
	Agent   uint64
	Entity  EntityRef
	Index   int
	Latency uint64
	Ready   uint64
	Value   any
	Panic   string
}

// LaneImage is a virtual-clock lane's state at a tick boundary: the jobs that ran and are not
// due yet, in due order, the jobs waiting for a slot, in the order they will start, and the
// passes counted so far.
type LaneImage struct {
	Passes  uint64
	Due     []HeldJob
	Waiting []HeldJob
}

// ErrLaneImage is wrapped by the errors Image and Restore return when a lane cannot be saved or
// restored as it stands.
var ErrLaneImage = errors.New("lane image")

// Image returns what the lane holds. Call it between ticks, after the tick's Barrier: every
// started job has then run, and every handed-over result was collected. A wall-clock or planned
// lane is refused: its hand-overs follow real time or a plan, not data.
func (l *Lane) Image() (LaneImage, error) {
	if l.mode == Wall || l.planned {
		return LaneImage{}, fmt.Errorf("%w: lane %s follows the wall clock or a plan", ErrLaneImage, l.name)
	}
	l.mu.Lock()
	busy := len(l.finished) > 0 || len(l.chains) > 0
	l.mu.Unlock()
	if busy || len(l.ready) > 0 {
		return LaneImage{}, fmt.Errorf("%w: lane %s is inside a tick (jobs running or results not collected)", ErrLaneImage, l.name)
	}
	img := LaneImage{Passes: l.passes}
	for _, held := range l.due.Held(nil) {
		t := held.Item
		img.Due = append(img.Due, HeldJob{Agent: t.job.Agent, Entity: RefOf(t.job.Entity), Index: t.job.Index,
			Latency: t.job.Latency, Ready: t.ready, Value: t.value, Panic: t.panic})
	}
	// Within a tick, due jobs sit in the order workers finished them; hand-over sorts them, so
	// the image sorts too, and the same lane always images alike.
	slices.SortStableFunc(img.Due, func(a, b HeldJob) int {
		return cmp.Or(cmp.Compare(a.Ready, b.Ready), cmp.Compare(a.Agent, b.Agent), cmp.Compare(a.Index, b.Index))
	})
	for _, j := range l.waiting {
		if j.Recipe == nil {
			return LaneImage{}, fmt.Errorf("%w: lane %s: agent %d's job %d waits for a slot and has no recipe", ErrLaneImage, l.name, j.Agent, j.Index)
		}
		img.Waiting = append(img.Waiting, HeldJob{Agent: j.Agent, Entity: RefOf(j.Entity), Index: j.Index, Latency: j.Latency, Value: j.Recipe})
	}
	return img, nil
}

// Restore gives a lane that never ran a job the state img holds. The due jobs come back with
// their values, without running again; each waiting job gets the work rebuild makes for it (its
// dispatching system's, from the agent's state), and starts when a slot frees, as it would have.
func (l *Lane) Restore(img *LaneImage, rebuild func(HeldJob) (func() any, error)) error {
	if l.mode == Wall || l.planned {
		return fmt.Errorf("%w: lane %s follows the wall clock or a plan", ErrLaneImage, l.name)
	}
	if l.passes != 0 || l.inflight != 0 || len(l.waiting) != 0 {
		return fmt.Errorf("%w: lane %s is in use", ErrLaneImage, l.name)
	}
	if len(img.Due) > l.capacity || len(img.Waiting) > 0 && len(img.Due) != l.capacity {
		return fmt.Errorf("%w: lane %s of capacity %d cannot hold %d jobs with %d waiting for a slot", ErrLaneImage,
			l.name, l.capacity, len(img.Due), len(img.Waiting))
	}
	for _, h := range img.Due {
		l.due.Push(h.Ready, &task{job: Job{Agent: h.Agent, Entity: h.Entity.Entity(), Index: h.Index, Latency: h.Latency},
			ready: h.Ready, value: h.Value, panic: h.Panic, done: true})
	}
	l.inflight = len(img.Due)
	for _, h := range img.Waiting {
		run, err := rebuild(h)
		if err != nil {
			return fmt.Errorf("%w: lane %s, agent %d call %d: %w", ErrLaneImage, l.name, h.Agent, h.Index, err)
		}
		l.waiting = append(l.waiting, Job{Agent: h.Agent, Entity: h.Entity.Entity(), Index: h.Index, Latency: h.Latency, Run: run, Recipe: h.Value})
	}
	l.passes = img.Passes
	return nil
}
