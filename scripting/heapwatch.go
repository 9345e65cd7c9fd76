package scripting

import (
	"runtime"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"time"
	"weak"
)

// The heap watch bounds what no built-in sees: the objects, arrays, closures and strings a
// script's own instructions allocate. Go has no per-goroutine allocation count, so one sampler
// per process reads the heap (runtime/metrics, about 0.6 µs) every heapWatchPeriod while a call
// runs, and shares each period's growth equally among the calls that executed JavaScript through
// it (a call waiting in a blocking host function takes no share); whenever the collector has
// completed a cycle, each share is set to its part of what the collector found live beyond what
// was live when the call began, so garbage stops counting at every cycle. A call whose share
// passes its line (heapWatchLine: twice its MaxMemory, at least 64 MiB) is interrupted with
// errHeapWatch, an ErrMemory, once garbage (the host's or the call's) cannot explain it: when
// the next collection still finds that much more live than when the call began, or at once when
// its share passes twice the line and garbage cannot make up the part past the line (see judge).
//
// Which calls it stops depends on when its samples land, so it may decide a trace; what
// confines that is written in docs/scripting.md ("Memory") and docs/decisions.md. A call costs
// the watch two atomic stores and a load: it is found by the sampler, not registered.
const (
	// heapWatchPeriod is how often the sampler reads the heap while a call runs. At goja's
	// fastest allocation (about 1 GB/s of closures on the reference machine) a period lets a call
	// build about 2 MB before it is looked at again.
	heapWatchPeriod = 2 * time.Millisecond
	// heapWatchIdle is how many periods with no running call the sampler waits before its
	// goroutine ends; a burst of short calls keeps it going rather than starting it for each.
	heapWatchIdle = 50
	// heapWatchFactor is the heap watch's line as a multiple of MaxMemory, and heapWatchFloor the
	// lowest line: below it the collector's own slack (what it marks live while a call allocates,
	// what it has not swept yet) is a fair part of what is measured, and a small budget is the
	// deterministic count's to enforce.
	heapWatchFactor = 2
	heapWatchFloor  = 64 << 20
	// heapWatchHard is the share, as a multiple of the line, at which the watch stops a call
	// without waiting for a collection, provided the share is over the line by more than the
	// garbage the collector lets pile up (see judge).
	heapWatchHard = 2
	// heapWatchForce is how many ticks the watch waits for the collector to run on its own
	// before it forces a collection to judge a call over its line.
	heapWatchForce = 10
)

// theHeapWatch is the process's sampler; workers join it when they are built.
var theHeapWatch = &heapWatch{}

// heapWatch is the sampler and the workers it looks at.
type heapWatch struct {
	mu      sync.Mutex
	workers []*callWatch
	calls   []*callWatch // scratch of one tick: the calls that executed JavaScript through it
	last    uint64       // the heap at the previous tick
	cycles  uint64       // the collector's completed cycles at the previous tick

	// sampling is set while the sampler's goroutine runs; a call starting when it is not starts it.
	sampling atomic.Bool
	// collecting is set while a collection judge forced runs.
	collecting atomic.Bool
	ticks      uint64 // ticks so far, under mu
	// late is, in nanoseconds, the most any of the sampler's ticks came later than
	// heapWatchPeriod while calls ran: the longest the machine kept it off the CPU, during which a
	// call allocates unwatched. It is what the watch's bound stretches by on a busy machine (the
	// tests read and reset it).
	late atomic.Int64
}

// sample is what the sampler reads at a tick.
type sample struct {
	heap   uint64 // the bytes of heap objects, live or not yet swept
	cycles uint64 // the collector's completed cycles
	live   uint64 // the bytes the last completed cycle marked live
}

// readSample reads a sample (one metrics.Read, about 0.6 µs).
func readSample() sample {
	s := [3]metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"},
		{Name: "/gc/cycles/total:gc-cycles"}, {Name: "/gc/heap/live:bytes"}}
	metrics.Read(s[:])
	return sample{heap: s[0].Value.Uint64(), cycles: s[1].Value.Uint64(), live: s[2].Value.Uint64()}
}

// readHeap reads the bytes of heap objects.
func readHeap() uint64 { return readSample().heap }

// callWatch is what the sampler knows of one worker. The worker is held weakly and reached only
// to interrupt it: a weak pointer's Value keeps its object alive through a collection in
// progress, so reading it every tick would keep every idle runtime the pool dropped.
type callWatch struct {
	// active is the running call's number (worker.seq), 0 between calls.
	active atomic.Uint64
	// inHost counts the blocking host functions the call is waiting in: a waiting call takes no
	// share of what the rest of the host allocates.
	inHost atomic.Int32
	// gone is set once the garbage collector took the worker.
	gone atomic.Bool
	// limit is the share past which the call is stopped (heapWatchLine).
	limit int64
	owner weak.Pointer[worker]

	// Under heapWatch.mu: the call being measured, its share of the heap's growth, and, once the
	// share is over the limit, the count of forced collections that must be reached to judge it.
	seq      uint64
	share    int64
	liveBase uint64 // the live heap when the call was first seen
	overAt   uint64 // the collector's cycle count at which the call is judged (0: not over)
	overTick uint64 // the tick at which it went over
}

// heapWatchLine is the share past which the heap watch stops a call of budget maxMemory.
func heapWatchLine(maxMemory int64) int64 { return max(heapWatchFactor*maxMemory, heapWatchFloor) }

// watch makes w visible to the sampler; the returned callWatch is w's to update.
func (h *heapWatch) watch(w *worker) *callWatch {
	c := &callWatch{limit: heapWatchLine(w.limits.MaxMemory), owner: weak.Make(w)}
	runtime.AddCleanup(w, func(c *callWatch) { c.gone.Store(true) }, c)
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.workers) == cap(h.workers) {
		h.prune()
	}
	h.workers = append(h.workers, c)
	return c
}

// prune drops the workers the garbage collector took.
func (h *heapWatch) prune() {
	live := h.workers[:0]
	for _, c := range h.workers {
		if !c.gone.Load() {
			live = append(live, c)
		}
	}
	clear(h.workers[len(live):])
	h.workers = live
}

// callStarted starts the sampler if it is not running; a worker calls it after marking its call
// active. Both sides store before they load (Go's atomics are sequentially consistent), so either
// the sampler sees the call before it stops, or the call sees it stopped and starts it again.
func (h *heapWatch) callStarted() {
	if !h.sampling.Load() && h.sampling.CompareAndSwap(false, true) {
		go h.run()
	}
}

// run is the sampler's goroutine: a tick every heapWatchPeriod while calls run; it ends after
// heapWatchIdle periods without one, so an idle host has no sampler.
func (h *heapWatch) run() {
	h.mu.Lock()
	h.last = readHeap() // what grew while no sampler ran belongs to no call
	h.mu.Unlock()
	ticker := time.NewTicker(heapWatchPeriod)
	defer ticker.Stop()
	idle := 0
	prev := time.Now()
	for range ticker.C {
		now := time.Now()
		gap := now.Sub(prev)
		prev = now
		if h.tick() {
			if d := int64(gap - heapWatchPeriod); d > h.late.Load() {
				h.late.Store(d) // the sampler alone stores it; tests reset it between calls
			}
			idle = 0
			continue
		}
		if idle++; idle < heapWatchIdle {
			continue
		}
		h.sampling.Store(false)
		if !h.tick() || !h.sampling.CompareAndSwap(false, true) {
			return // idle, or a call that started meanwhile started another sampler
		}
		idle = 0
	}
}

// tick takes one sample, shares its growth among the calls that ran JavaScript since the last
// one, and judges those over their line (judge). It reports whether any call is running.
func (h *heapWatch) tick() (busy bool) {
	sample := readSample()
	h.mu.Lock()
	defer h.mu.Unlock()
	defer func() { clear(h.calls) }() // the scratch keeps no runtime alive between ticks
	h.ticks++
	growth := int64(sample.heap) - int64(h.last)
	h.last = sample.heap
	h.calls = h.calls[:0]
	for _, c := range h.workers {
		seq := c.active.Load()
		if seq == 0 {
			continue
		}
		busy = true
		switch {
		case c.seq != seq: // first seen: its share starts now
			c.seq, c.share, c.overAt, c.liveBase = seq, 0, 0, sample.live
		case c.inHost.Load() == 0:
			h.calls = append(h.calls, c)
		}
	}
	if sample.cycles != h.cycles {
		// A collection completed: what it found live replaces the shares, so garbage it
		// found (freed only as the heap is swept, later) stops counting at once.
		h.cycles = sample.cycles
		for _, c := range h.calls {
			c.share = max(0, (int64(sample.live)-int64(c.liveBase))/int64(len(h.calls)))
		}
		growth = 0
	}
	if h.spread(growth) {
		h.judge(sample)
	}
	return busy
}

// judge decides for the calls of the tick whose share is over their line whether it is garbage
// (the host's or the call's own). It waits for a collection that begins after the call went
// over to complete, and then compares what that collection found live with what was live when
// the call began, shared among the calls running now: over the line, the call is interrupted;
// otherwise its share is set back to that live growth. A call that goes on allocating makes the
// collector run soon enough; when none has completed heapWatchForce ticks after a call went
// over, the watch forces one, on a goroutine of its own so that it goes on sampling meanwhile.
func (h *heapWatch) judge(s sample) {
	k := int64(len(h.calls))
	garbage := sync.OnceValue(garbageBound)
	for _, c := range h.calls {
		switch {
		case c.share <= c.limit:
			c.overAt = 0
		case c.share > heapWatchHard*c.limit && c.share > c.limit+garbage():
			// Growing this far before a collection could judge it, by more than the garbage the
			// collector lets pile up: a string doubled, whose every step copies all the steps
			// before it, is the path that gets here.
			if w := c.owner.Value(); w != nil {
				w.interruptCall(c.seq, errHeapWatch)
			}
			c.share, c.overAt = 0, 0
		case c.overAt == 0:
			c.overAt, c.overTick = s.cycles+1, h.ticks
		case s.cycles >= c.overAt:
			live := (int64(s.live) - int64(c.liveBase)) / k
			if live > c.limit {
				if w := c.owner.Value(); w != nil {
					w.interruptCall(c.seq, errHeapWatch)
				}
			}
			c.share, c.overAt = max(0, live), 0
		case h.ticks-c.overTick >= heapWatchForce && h.collecting.CompareAndSwap(false, true):
			go func() {
				runtime.GC()
				h.collecting.Store(false)
			}()
		}
	}
}

// garbageBound is how much garbage the heap holds at most, give or take the collector's overshoot
// while it marks: its goal less the live heap it last marked (what it lets pile up before it
// collects).
func garbageBound() int64 {
	s := [2]metrics.Sample{{Name: "/gc/heap/goal:bytes"}, {Name: "/gc/heap/live:bytes"}}
	metrics.Read(s[:])
	return max(0, int64(s[0].Value.Uint64())-int64(s[1].Value.Uint64()))
}

// spread adds an equal part of growth to the share of every call of the tick (a share never
// drops below zero) and reports whether one is over its threshold.
func (h *heapWatch) spread(growth int64) (over bool) {
	if len(h.calls) == 0 {
		return false
	}
	part := growth / int64(len(h.calls))
	for _, c := range h.calls {
		c.share = max(0, c.share+part)
		over = over || c.share > c.limit
	}
	return over
}
