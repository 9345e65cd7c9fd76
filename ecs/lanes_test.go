package ecs

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// drain advances a virtual lane tick by tick, collecting everything it hands over, as a
// scheduler would.
func drain(l *Lane, from, to uint64) map[uint64][]Done {
	out := map[uint64][]Done{}
	for tick := from; tick <= to; tick++ {
		l.Advance(tick)
		got := l.Collect()
		if len(got) > 0 {
			out[tick] = append([]Done(nil), got...)
		}
		l.Barrier()
	}
	return out
}

func TestVirtualLaneCanonicalOrderAndLatency(t *testing.T) {
	l := NewLane(LaneConfig{Name: "tool", Capacity: 16, Workers: 4}, Virtual, nil)
	defer l.Close()
	// Submitted out of canonical order, with different latencies and uneven run times.
	for _, j := range []struct {
		agent uint64
		index int
		lat   uint64
	}{{3, 0, 1}, {1, 1, 1}, {2, 0, 2}, {1, 0, 1}, {5, 0, 0}} {
		j := j
		l.Submit(0, Job{Agent: j.agent, Index: j.index, Latency: j.lat, Run: func() any {
			time.Sleep(time.Duration(6-j.agent) * time.Millisecond)
			return j.agent*10 + uint64(j.index)
		}})
	}
	l.Barrier()
	got := drain(l, 1, 3)
	want := map[uint64][]uint64{1: {10, 11, 30, 50}, 2: {20}}
	for tick, vals := range want {
		if len(got[tick]) != len(vals) {
			t.Fatalf("tick %d: got %d results, want %d (%v)", tick, len(got[tick]), len(vals), got)
		}
		for i, v := range vals {
			if got[tick][i].Value.(uint64) != v || got[tick][i].Tick != tick {
				t.Errorf("tick %d result %d = %+v, want value %d", tick, i, got[tick][i], v)
			}
		}
	}
	if l.Pending() != 0 {
		t.Errorf("pending = %d after draining", l.Pending())
	}
}

func TestVirtualLaneCapacityQueuesInSubmissionOrder(t *testing.T) {
	l := NewLane(LaneConfig{Name: "tool", Capacity: 2}, Virtual, nil)
	defer l.Close()
	for a := uint64(1); a <= 5; a++ {
		a := a
		l.Submit(0, Job{Agent: a, Latency: 1, Run: func() any { return a }})
	}
	if l.Pending() != 5 {
		t.Fatalf("pending = %d, want 5", l.Pending())
	}
	l.Barrier()
	got := drain(l, 1, 4)
	// Two slots: agents 1,2 finish at tick 1; 3,4 start at tick 1 and finish at 2; 5 at 3.
	want := map[uint64][]uint64{1: {1, 2}, 2: {3, 4}, 3: {5}}
	for tick, vals := range want {
		if len(got[tick]) != len(vals) {
			t.Fatalf("tick %d: got %v, want %v", tick, got[tick], vals)
		}
		for i, v := range vals {
			if got[tick][i].Agent != v {
				t.Errorf("tick %d #%d: agent %d, want %d", tick, i, got[tick][i].Agent, v)
			}
		}
	}
}

func TestLanePanicFailsOnlyThatJob(t *testing.T) {
	l := NewLane(LaneConfig{Name: "tool", Capacity: 4}, Virtual, nil)
	defer l.Close()
	l.Submit(0, Job{Agent: 1, Run: func() any { panic("boom") }})
	l.Submit(0, Job{Agent: 2, Run: func() any { return "ok" }})
	l.Barrier()
	got := drain(l, 1, 1)[1]
	if len(got) != 2 || got[0].Panic != "boom" || got[0].Value != nil || got[1].Value != "ok" || got[1].Panic != "" {
		t.Fatalf("got %+v", got)
	}
}

func TestVirtualLaneResultsIndependentOfWorkers(t *testing.T) {
	run := func(workers int) []uint64 {
		l := NewLane(LaneConfig{Name: "tool", Capacity: 8, Workers: workers}, Virtual, nil)
		defer l.Close()
		var order []uint64
		for tick := uint64(0); tick < 20; tick++ {
			l.Advance(tick)
			for _, d := range l.Collect() {
				order = append(order, d.Value.(uint64))
			}
			for a := uint64(1); a <= 3; a++ {
				v := tick*100 + a
				l.Submit(tick, Job{Agent: 4 - a, Latency: a, Run: func() any { return v }})
			}
			l.Barrier()
		}
		return order
	}
	prev := runtime.GOMAXPROCS(1)
	one := run(1)
	runtime.GOMAXPROCS(prev)
	many := run(8)
	if len(one) == 0 || len(one) != len(many) {
		t.Fatalf("lengths %d vs %d", len(one), len(many))
	}
	for i := range one {
		if one[i] != many[i] {
			t.Fatalf("order differs at %d: %d vs %d", i, one[i], many[i])
		}
	}
}

func TestWallLaneWakesAndHandsOverOnArrival(t *testing.T) {
	wake := make(chan struct{}, 1)
	l := NewLane(LaneConfig{Name: "tool", Capacity: 2}, Wall, wake)
	defer l.Close()
	release := make(chan struct{})
	var ran atomic.Int32
	l.Submit(0, Job{Agent: 1, Run: func() any { <-release; ran.Add(1); return 1 }})
	l.Advance(0)
	if len(l.Collect()) != 0 {
		t.Fatal("result handed over before the job finished")
	}
	close(release)
	select {
	case <-wake:
	case <-time.After(5 * time.Second):
		t.Fatal("lane never woke the scheduler")
	}
	l.Advance(1)
	got := l.Collect()
	if len(got) != 1 || got[0].Value != 1 || ran.Load() != 1 {
		t.Fatalf("got %+v", got)
	}
}

func TestDueQueuePopsInTickThenPushOrder(t *testing.T) {
	var q DueQueue[string]
	q.Push(5, "e1")
	q.Push(2, "b1")
	q.Push(5, "e2")
	q.Push(3, "c1")
	if next, ok := q.Next(); !ok || next != 2 || q.Len() != 4 {
		t.Fatalf("next %d %v len %d", next, ok, q.Len())
	}
	if got := q.PopDue(1, nil); len(got) != 0 {
		t.Fatalf("popped %v before anything was due", got)
	}
	got := q.PopDue(5, nil)
	want := []string{"b1", "c1", "e1", "e2"}
	if len(got) != len(want) {
		t.Fatalf("popped %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("popped %v, want %v", got, want)
		}
	}
	if _, ok := q.Next(); ok || q.Len() != 0 {
		t.Fatal("queue not empty after popping everything")
	}
}

// One agent's jobs run one after another in submission order, even with many workers, so calls
// of one turn that touch the same state see each other's effects; other agents run in parallel.
func TestLaneRunsOneAgentsJobsInOrder(t *testing.T) {
	l := NewLane(LaneConfig{Name: "tool", Capacity: 64, Workers: 8}, Virtual, nil)
	defer l.Close()
	var mu sync.Mutex
	order := map[uint64][]int{}
	running := map[uint64]int{}
	overlap := false
	for a := uint64(1); a <= 4; a++ {
		for i := range 5 {
			l.Submit(0, Job{Agent: a, Index: i, Run: func() any {
				mu.Lock()
				running[a]++
				if running[a] > 1 {
					overlap = true
				}
				mu.Unlock()
				time.Sleep(time.Millisecond)
				mu.Lock()
				running[a]--
				order[a] = append(order[a], i)
				mu.Unlock()
				return nil
			}})
		}
	}
	l.Barrier()
	if overlap {
		t.Fatal("two jobs of one agent ran at the same time")
	}
	for a := uint64(1); a <= 4; a++ {
		if !slices.Equal(order[a], []int{0, 1, 2, 3, 4}) {
			t.Fatalf("agent %d ran its jobs in order %v", a, order[a])
		}
	}
	if got := len(drain(l, 1, 1)[1]); got != 20 {
		t.Fatalf("%d results handed over, want 20", got)
	}
}

// TestLanePlanHandsOverAsRecorded: a planned lane hands each job over at its recorded pass and in
// its recorded order, whatever order the workers finished in, and never one the plan does not
// place; a journal sees every wall-clock hand-over with the passes it started and ended in.
func TestLanePlanHandsOverAsRecorded(t *testing.T) {
	w := NewWorld(Config{Clock: ClockConfig{Mode: Virtual}})
	s := NewScheduler(w)
	lane := s.AddLane(LaneConfig{Name: "tool", Capacity: 8, Workers: 4})
	defer lane.Close()
	s.SetPlan(&Plan{Lanes: map[string]LanePlan{"tool": {
		{Agent: 1, Index: 0, Started: 0}: {Handed: 2, Rank: 1},
		{Agent: 2, Index: 0, Started: 0}: {Handed: 2, Rank: 0},
		{Agent: 3, Index: 0, Started: 0}: {Handed: 1, Rank: 0},
	}}})
	var got [][]uint64
	for pass := range 4 {
		lane.Advance(uint64(pass))
		var ids []uint64
		for _, d := range lane.Collect() {
			ids = append(ids, d.Agent)
		}
		got = append(got, ids)
		if pass == 0 {
			for agent := uint64(1); agent <= 4; agent++ { // agent 4 is not in the plan
				lane.Submit(0, Job{Agent: agent, Run: func() any { return agent }})
			}
		}
		lane.Barrier()
	}
	want := [][]uint64{nil, {3}, {2, 1}, nil}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("hand-overs by pass %v, want %v", got, want)
	}
	if lane.Pending() != 1 {
		t.Fatalf("pending %d, want the unplanned job never handed over", lane.Pending())
	}
}

type journal struct{ handed []string }

func (j *journal) Step(uint64, time.Time) {}
func (j *journal) Handed(lane string, agent uint64, index int, started, handed uint64, rank int) {
	j.handed = append(j.handed, fmt.Sprintf("%s %d/%d %d->%d #%d", lane, agent, index, started, handed, rank))
}

func TestJournalSeesWallHandOvers(t *testing.T) {
	w := NewWorld(Config{Clock: ClockConfig{Mode: Wall}})
	s := NewScheduler(w)
	lane := s.AddLane(LaneConfig{Name: "model", Capacity: 4})
	defer lane.Close()
	j := &journal{}
	s.SetJournal(j)
	lane.Advance(0)
	lane.Submit(0, Job{Agent: 7, Index: 2, Run: func() any { return nil }})
	lane.Barrier()
	for range 200 {
		lane.Advance(1)
		if len(lane.Collect()) > 0 {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	if len(j.handed) != 1 || !strings.HasPrefix(j.handed[0], "model 7/2 0->") || !strings.HasSuffix(j.handed[0], " #0") {
		t.Fatalf("journal %q", j.handed)
	}
}

// TestLaneImageHandsOverAlike: a lane imaged at a tick boundary with jobs due later and jobs
// waiting for a slot, restored into a fresh lane, hands over the same results at the same ticks,
// without running the due jobs again.
func TestLaneImageHandsOverAlike(t *testing.T) {
	var runs atomic.Int32
	work := func(agent uint64, index int) func() any {
		return func() any { runs.Add(1); return fmt.Sprintf("a%d/%d", agent, index) }
	}
	jobs := []Job{{Agent: 4, Index: 0, Latency: 3}, {Agent: 1, Index: 0, Latency: 5}, {Agent: 2, Index: 1, Latency: 1},
		{Agent: 3, Index: 0, Latency: 2}, {Agent: 1, Index: 1, Latency: 1}}
	orig := NewLane(LaneConfig{Name: "tool", Capacity: 2, Workers: 2}, Virtual, nil)
	defer orig.Close()
	orig.Advance(0)
	for _, j := range jobs {
		j.Run, j.Recipe = work(j.Agent, j.Index), fmt.Sprintf("a%d/%d", j.Agent, j.Index)
		orig.Submit(0, j)
	}
	orig.Barrier()
	img, err := orig.Image()
	if err != nil {
		t.Fatal(err)
	}
	if len(img.Due) != 2 || len(img.Waiting) != 3 || runs.Load() != 2 {
		t.Fatalf("image holds %d due and %d waiting after %d runs, want 2, 3 and 2", len(img.Due), len(img.Waiting), runs.Load())
	}
	back := NewLane(LaneConfig{Name: "tool", Capacity: 2, Workers: 2}, Virtual, nil)
	defer back.Close()
	var rebuilt []string
	err = back.Restore(&img, func(h HeldJob) (func() any, error) {
		rebuilt = append(rebuilt, h.Value.(string))
		return work(h.Agent, h.Index), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(rebuilt, []string{"a2/1", "a3/0", "a1/1"}) {
		t.Fatalf("rebuilt %q, want the waiting jobs in submission order", rebuilt)
	}
	runs.Store(0)
	want := drain(orig, 1, 12)
	ranOrig := runs.Swap(0)
	got := drain(back, 1, 12)
	if runs.Load() != ranOrig || ranOrig != 3 {
		t.Fatalf("after the image the original ran %d jobs, the restored lane %d; want 3 each", ranOrig, runs.Load())
	}
	if fmt.Sprint(got) != fmt.Sprint(want) || len(want) == 0 {
		t.Fatalf("restored lane hands over\n%v\nthe original\n%v", got, want)
	}
	if back.Pending() != 0 || back.passes != orig.passes {
		t.Fatalf("restored lane owes %d after %d passes, the original %d passes", back.Pending(), back.passes, orig.passes)
	}
}

func TestLaneImageRefusals(t *testing.T) {
	l := NewLane(LaneConfig{Name: "tool", Capacity: 2, Workers: 1}, Virtual, nil)
	defer l.Close()
	release := make(chan struct{})
	l.Submit(0, Job{Agent: 1, Latency: 1, Run: func() any { <-release; return nil }})
	if _, err := l.Image(); !errors.Is(err, ErrLaneImage) {
		t.Fatalf("Image of a lane with a job running = %v, want ErrLaneImage", err)
	}
	close(release)
	l.Barrier()
	img, err := l.Image()
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Restore(&img, nil); !errors.Is(err, ErrLaneImage) {
		t.Fatalf("Restore into a used lane = %v, want ErrLaneImage", err)
	}
	fresh := NewLane(LaneConfig{Name: "tool", Capacity: 2, Workers: 1}, Virtual, nil)
	defer fresh.Close()
	queued := LaneImage{Due: img.Due, Waiting: []HeldJob{{Agent: 2}}} // one due of two slots, yet one waiting
	if err := fresh.Restore(&queued, func(HeldJob) (func() any, error) { return nil, nil }); !errors.Is(err, ErrLaneImage) {
		t.Fatalf("Restore of a job waiting beside a free slot = %v, want ErrLaneImage", err)
	}
	full := NewLane(LaneConfig{Name: "tool", Capacity: 1, Workers: 1}, Virtual, nil)
	defer full.Close()
	full.Submit(0, Job{Agent: 1, Latency: 2, Run: func() any { return nil }, Recipe: "one"})
	full.Submit(0, Job{Agent: 2, Latency: 2, Run: func() any { return nil }}) // waits, as a closure only
	full.Barrier()
	if _, err := full.Image(); !errors.Is(err, ErrLaneImage) || !strings.Contains(err.Error(), "no recipe") {
		t.Fatalf("Image of a lane with a waiting job without a recipe = %v, want ErrLaneImage naming the recipe", err)
	}
	wall := NewLane(LaneConfig{Name: "tool", Capacity: 2, Workers: 1}, Wall, nil)
	defer wall.Close()
	if _, err := wall.Image(); !errors.Is(err, ErrLaneImage) {
		t.Fatalf("Image of a wall-clock lane = %v, want ErrLaneImage", err)
	}
}
