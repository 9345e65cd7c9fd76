package systems_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/warrenhq/warren/components"
	"github.com/warrenhq/warren/ecs"
	"github.com/warrenhq/warren/models"
	"github.com/warrenhq/warren/subagents"
	"github.com/warrenhq/warren/systems"
)

// Benchmarks of the sub-agent paths: settling spawn_agent calls, a 10^5-item fan-out, and the
// heap a reaped tree leaves behind.

// benchLeafKey is the blueprint key of the children the benchmarks spawn.
const benchLeafKey = "leaf"

// benchLeafBlueprint is a child that finishes on its first model turn.
const benchLeafBlueprint = `
name = "leaf"

[[stages]]
name = "work"
max_iterations = 1
`

// benchBoss is a parent that may spawn, wait for and fan out to leaves, with no cap on its live
// children, keeping maxMessages conversation messages. The turns that spawn or wait for 10^5
// children set it above their call count: the conversation cannot drop the turn it is building,
// and re-checking that on every appended result costs O(calls) per result (see BenchmarkSpawn).
func benchBoss(maxMessages int) string {
	return `
name = "boss"
max_messages = ` + strconv.Itoa(maxMessages) + `

[subagents]
spawnable = ["leaf"]

[[stages]]
name = "delegate"
available_tools = ["spawn_agent", "wait_for_agent", "fan_out"]
max_iterations = 3
`
}

// benchFinish is a model turn that ends the stage.
func benchFinish(*models.State, *models.View) (models.Reply, error) {
	return models.Reply{Text: "done"}, nil
}

// benchLeafModel finishes at once, inline.
var benchLeafModel = inlineModel{id: "leaf", turn: benchFinish}

// benchTurns is an inline model that plays turns[i] on its i-th turn, then finishes; each
// turn's calls are cloned, because the host keeps the slice a model returns.
func benchTurns(id string, turns ...func(v *models.View) []models.ToolCall) inlineModel {
	return inlineModel{id: id, turn: func(st *models.State, v *models.View) (models.Reply, error) {
		i := int(st.Cursor)
		st.Cursor++
		if i >= len(turns) {
			return models.Reply{Text: "done"}, nil
		}
		return models.Reply{Calls: turns[i](v)}, nil
	}}
}

// benchSpawnCalls is n spawn_agent calls of a leaf, without wait, sharing one argument object (the
// host treats arguments as read-only).
func benchSpawnCalls(n int) []models.ToolCall {
	args := json.RawMessage(`{"blueprint":"leaf","task":"t"}`)
	calls := make([]models.ToolCall, n)
	for i := range calls {
		calls[i] = models.ToolCall{Name: subagents.NameSpawn, Args: args}
	}
	return calls
}

// benchWaitCalls is a wait_for_agent call for each of the caller's first n children.
func benchWaitCalls(parent string, n int) []models.ToolCall {
	calls := make([]models.ToolCall, n)
	for i := range calls {
		calls[i] = models.ToolCall{Name: subagents.NameWait, Args: json.RawMessage(`{"id":"` + parent + "/" + strconv.Itoa(i+1) + `"}`)}
	}
	return calls
}

// benchTimedSystem wraps a system and adds up the wall time of its updates.
type benchTimedSystem struct {
	ecs.System
	elapsed time.Duration
}

func (t *benchTimedSystem) Update(w *ecs.World) {
	start := time.Now()
	t.System.Update(w)
	t.elapsed += time.Since(start)
}

// benchTimedPipeline is systems.Pipeline with every system timed, by name.
func benchTimedPipeline() ([]ecs.System, map[string]*benchTimedSystem) {
	byName := map[string]*benchTimedSystem{}
	var list []ecs.System
	for _, s := range systems.Pipeline() {
		ts := &benchTimedSystem{System: s}
		byName[s.Name()] = ts
		list = append(list, ts)
	}
	return list, byName
}

// BenchmarkSpawn measures what settling one spawn_agent call costs, without the model: one
// parent's inline model returns n spawn_agent calls (no wait) of a leaf in one turn, and the
// tick that takes them through tool_dispatch (visibility, schema, gate, trace) and the
// sub-agent system (tree checks, entity, agent slot, name, trace) is timed system by system.
// The children's lives (next ticks) are run untimed between iterations and a first round warms
// the world untimed, so the world each parent spawns into is warm; a collection before each
// timed tick keeps the previous round's garbage from being charged to it. Metrics per spawn: ns/spawn (the tick minus infer_dispatch),
// subagents-ns (the sub-agent system alone), dispatch-ns (tool_dispatch alone), model-ns
// (infer_dispatch: the model's turn and its conversation entry), allocs and bytes (the whole
// tick, model included).
func BenchmarkSpawn(b *testing.B) {
	for _, tc := range []struct {
		name               string
		calls, maxMessages int
		traced             bool
	}{
		{"calls=100", 100, 1000, false},
		{"calls=10k", 10_000, 100_000, false},
		{"calls=10k,traced", 10_000, 100_000, true},
		// The default max_messages: each result appended to the turn re-scans the turn.
		{"calls=10k,max_messages=32", 10_000, 32, false},
	} {
		b.Run(tc.name, func(b *testing.B) { benchmarkSpawn(b, tc.calls, tc.maxMessages, tc.traced) })
	}
}

func benchmarkSpawn(b *testing.B, n, maxMessages int, traced bool) {
	list, timed := benchTimedPipeline()
	h := newHarness(b, options{noTrace: !traced, systems: list})
	h.spawnable(benchLeafKey, h.blueprint(benchLeafBlueprint), benchLeafModel)
	calls := benchSpawnCalls(n)
	boss := h.profile("boss", h.blueprint(benchBoss(maxMessages)), benchTurns("boss", func(*models.View) []models.ToolCall {
		return slices.Clone(calls)
	}), "")
	var tick, model, dispatch, sub time.Duration
	var allocs, bytes uint64
	spawns := 0
	// round spawns one parent, times the tick that settles its n spawns (after a collection, so
	// the previous round's garbage is not charged to it) and runs the children's lives untimed.
	round := func() {
		h.spawn(boss, 1)
		before := make(map[string]time.Duration, len(timed))
		for k, ts := range timed {
			before[k] = ts.elapsed
		}
		runtime.GC()
		m0 := benchMemStats()
		b.StartTimer()
		start := time.Now()
		h.step()
		elapsed := time.Since(start)
		b.StopTimer()
		m1 := benchMemStats()
		if got := h.w.Entities(); got != n+1 {
			b.Fatalf("%d entities after the spawning tick, want the parent and %d children", got, n)
		}
		tick += elapsed
		model += timed["infer_dispatch"].elapsed - before["infer_dispatch"]
		dispatch += timed["tool_dispatch"].elapsed - before["tool_dispatch"]
		sub += timed["subagents"].elapsed - before["subagents"]
		allocs += m1.Mallocs - m0.Mallocs
		bytes += m1.TotalAlloc - m0.TotalAlloc
		spawns += n
		if stop := h.run(h.w.Tick() + 100); stop != ecs.FixedPoint || h.w.Entities() != 0 {
			b.Fatalf("the tree did not end: stop %v, %d entities", stop, h.w.Entities())
		}
		if traced {
			h.traceBytes()
			h.buf.Reset()
		}
	}
	// A first round warms the world (archetype storage, maps, the agent store) untimed, so even
	// -benchtime 3x reports the steady state.
	round()
	tick, model, dispatch, sub, allocs, bytes, spawns = 0, 0, 0, 0, 0, 0, 0
	b.StartTimer() // b.Loop must start with the timer running
	for b.Loop() {
		b.StopTimer()
		round()
		b.StartTimer()
	}
	per := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / float64(spawns) }
	b.ReportMetric(per(tick-model), "ns/spawn")
	b.ReportMetric(per(sub), "subagents-ns/spawn")
	b.ReportMetric(per(dispatch), "dispatch-ns/spawn")
	b.ReportMetric(per(model), "model-ns/spawn")
	b.ReportMetric(float64(allocs)/float64(spawns), "allocs/spawn")
	b.ReportMetric(float64(bytes)/float64(spawns), "B/spawn")
}

// scopedTB is a testing.TB whose cleanups run when release is called instead of at the end of
// the benchmark, so that a benchmark iteration's harness (a world of 10^5 agents) is garbage
// before the next iteration runs or measures the heap.
type scopedTB struct {
	testing.TB
	cleanups []func()
}

func (s *scopedTB) Cleanup(f func()) { s.cleanups = append(s.cleanups, f) }

// release runs the cleanups, last registered first, and forgets them.
func (s *scopedTB) release() {
	for i := len(s.cleanups) - 1; i >= 0; i-- {
		s.cleanups[i]()
	}
	s.cleanups = nil
}

// benchFanOutItems is the size of the big fan-out.
const benchFanOutItems = 100_000

// BenchmarkFanOut100k runs one fan_out of 10^5 items with max_workers 1000 to its end, the items
// given inline or in an items file (and once with every worker at once); workers are leaves that
// finish on their first turn. It reports the wall time of the whole run (ns/op), its ticks, and
// workers per second.
func BenchmarkFanOut100k(b *testing.B) {
	items := make([]string, benchFanOutItems)
	for i := range items {
		items[i] = "item " + strconv.Itoa(i)
	}
	inline, err := json.Marshal(map[string]any{"blueprint": benchLeafKey, "items": items, "max_workers": 1000})
	if err != nil {
		b.Fatal(err)
	}
	fromFile := json.RawMessage(`{"blueprint":"leaf","items_file":"items.txt","max_workers":1000}`)
	// Every worker at once: what a fan-out costs when max_workers is as large as it gets.
	allAtOnce := json.RawMessage(`{"blueprint":"leaf","items_file":"items.txt","max_workers":100000}`)
	file := []byte(strings.Join(items, "\n") + "\n")
	for _, tc := range []struct {
		name string
		args json.RawMessage
	}{{"items", inline}, {"items_file", fromFile}, {"items_file,max_workers=100k", allAtOnce}} {
		b.Run(tc.name, func(b *testing.B) {
			var ticks uint64
			var wall time.Duration
			for b.Loop() {
				b.StopTimer()
				tb := &scopedTB{TB: b}
				h := newHarness(tb, options{noTrace: true, initialCapacity: 2048})
				h.spawnable(benchLeafKey, h.blueprint(benchLeafBlueprint), benchLeafModel)
				boss := h.profile("fan", h.blueprint(benchBoss(32)), benchTurns("fan", func(*models.View) []models.ToolCall {
					return []models.ToolCall{{Name: subagents.NameFanOut, Args: tc.args}}
				}), "")
				root := h.spawn(boss, 1)[0]
				rootID := h.identity.Get(root).ID
				dir := boss.Workdir("fan-0", 0)
				if err := os.MkdirAll(dir, 0o755); err != nil {
					b.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, "items.txt"), file, 0o644); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				start := time.Now()
				stop := h.run(0)
				wall += time.Since(start)
				b.StopTimer()
				if stop != ecs.FixedPoint {
					b.Fatalf("stop %v", stop)
				}
				done := 0
				for _, r := range h.host.Records.All() {
					if r.Parent == rootID && r.Status == components.Done {
						done++
					}
				}
				if parent, _ := h.host.Records.Get(rootID); done != benchFanOutItems || parent.Status != components.Done {
					b.Fatalf("%d of %d workers done, parent %v (%s)", done, benchFanOutItems, parent.Status, parent.Reason)
				}
				ticks += h.w.Tick()
				tb.release()
				b.StartTimer()
			}
			b.ReportMetric(float64(ticks)/float64(b.N), "ticks")
			b.ReportMetric(float64(benchFanOutItems*b.N)/wall.Seconds(), "workers/s")
		})
	}
}

// benchReapChildren is how many children BenchmarkReapHeap's trees have.
const benchReapChildren = 100_000

// BenchmarkReapHeap measures whether memory returns once 10^5 sub-agents have been spawned,
// have run and have been reaped, their parent too: the live heap before the parent's first turn,
// at the peak, and after the world is empty. The host keeps no final records (Host.Records nil:
// an embedder that wants them all, like the scenario runner, keeps them itself), so what stays
// is what the host holds on its own. Two shapes:
//   - all_at_once: one turn spawns every child and the next waits for each, so 10^5 agents live
//     together. arche's archetype tables keep the capacity they grew to (a high-water mark the
//     next agents reuse; arche has no way to shrink them), and that is most of what remains.
//   - fan_out: one fan_out of 10^5 items, 1000 workers at a time, the shape wide trees have in
//     practice; no table ever holds more than a thousand agents.
//
// A probe before reap counts the agents that end done, so the run's outcome is checked without
// keeping records.
func BenchmarkReapHeap(b *testing.B) {
	items := make([]string, benchReapChildren)
	for i := range items {
		items[i] = "item " + strconv.Itoa(i)
	}
	fanArgs, err := json.Marshal(map[string]any{"blueprint": benchLeafKey, "items": items, "max_workers": 1000})
	if err != nil {
		b.Fatal(err)
	}
	spawn := benchSpawnCalls(benchReapChildren)
	shapes := []struct {
		name  string
		turns []func(v *models.View) []models.ToolCall
	}{
		{"all_at_once", []func(v *models.View) []models.ToolCall{
			func(*models.View) []models.ToolCall { return slices.Clone(spawn) },
			func(v *models.View) []models.ToolCall { return benchWaitCalls(v.Agent.Name, benchReapChildren) },
		}},
		{"fan_out", []func(v *models.View) []models.ToolCall{
			func(*models.View) []models.ToolCall {
				return []models.ToolCall{{Name: subagents.NameFanOut, Args: fanArgs}}
			},
		}},
	}
	for _, shape := range shapes {
		b.Run(shape.name, func(b *testing.B) {
			var before, peak, reaped int64
			for b.Loop() {
				tb := &scopedTB{TB: b}
				done := 0
				h := newHarness(tb, options{noTrace: true, systems: benchReapPipeline(&done)})
				h.host.Records = nil
				h.spawnable(benchLeafKey, h.blueprint(benchLeafBlueprint), benchLeafModel)
				boss := h.profile("heap", h.blueprint(benchBoss(4*benchReapChildren)), benchTurns("heap", shape.turns...), "")
				h.spawn(boss, 1)
				before = heapAlloc()
				peak = 0
				for h.w.Entities() > 0 {
					if h.w.Tick() > 10_000 {
						b.Fatalf("still %d agents at tick %d", h.w.Entities(), h.w.Tick())
					}
					h.step()
					if h.w.Tick()%20 == 0 {
						peak = max(peak, heapAlloc())
					}
				}
				if done != benchReapChildren+1 || h.host.Agents.Live() != 0 {
					b.Fatalf("%d of %d agents done, %d slots left", done, benchReapChildren+1, h.host.Agents.Live())
				}
				reaped = heapAlloc()
				tb.release()
			}
			agents := float64(benchReapChildren + 1)
			b.ReportMetric(float64(before)/1e6, "before-MB")
			b.ReportMetric(float64(peak)/1e6, "peak-MB")
			b.ReportMetric(float64(reaped)/1e6, "reaped-MB")
			b.ReportMetric(float64(reaped)/float64(before), "reaped/before")
			b.ReportMetric(float64(reaped-before)/agents, "retained-B/agent")
		})
	}
}

// benchReapPipeline is the pipeline with a probe before reap that counts agents ending done.
func benchReapPipeline(done *int) []ecs.System {
	list := systems.Pipeline()
	probe := &probe{fn: func(w *ecs.World) {
		view := ecs.NewView1[components.Status](w, []ecs.Comp{ecs.T[components.Terminal]()}, nil)
		q := view.Query()
		for q.Next() {
			if q.Get().Kind == components.Done {
				*done++
			}
		}
		view.Release()
	}}
	return append(list[:len(list)-1:len(list)-1], probe, list[len(list)-1])
}

// benchMemStats reads the allocator's counters.
func benchMemStats() runtime.MemStats {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m
}
