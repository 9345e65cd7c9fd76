package systems_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/warrenhq/warren/components"
	"github.com/warrenhq/warren/ecs"
	"github.com/warrenhq/warren/models"
	"github.com/warrenhq/warren/subagents"
	"github.com/warrenhq/warren/systems"
	"github.com/warrenhq/warren/trace"
)

// The chaos property test: agents whose model picks random sub-agent calls (spawn, send, check,
// wait, kill, list, fan_out, a lane tool, or finishing) build random trees under random host caps, and
// after every tick the tree must be sound; at the end the world must empty out.

// Blueprint keys the chaos agents may spawn: an attached child and a detached one.
const (
	chaosKid   = "kid"
	chaosLoner = "loner"
	// chaosStray is a key no blueprint lists, so a spawn of it is refused.
	chaosStray = "stray"
)

// chaosStage is the one stage every chaos blueprint shares: every sub-agent tool, and a lane
// tool so that kills meet calls in flight. Its max_iterations bounds every agent's
// life to four model turns.
const chaosStage = `
[[stages]]
name = "act"
available_tools = ["spawn_agent", "check_agent", "wait_for_agent", "send_to_agent", "kill_agent", "list_agents", "fan_out", "jitter"]
max_iterations = 4
`

// chaosBlueprint is the blueprint of the roots and of the attached children.
const chaosBlueprint = `
name = "kid"

[subagents]
max_child_depth = 3
max_children = 4
spawnable = ["kid", "loner"]
` + chaosStage

// chaosLonerBlueprint is the blueprint of the detached children.
const chaosLonerBlueprint = `
name = "loner"

[subagents]
max_child_depth = 3
detached = true
spawnable = ["kid", "loner"]
` + chaosStage

// chaosModel decides every turn with the agent's own random stream. It remembers in
// State.Cursor how many spawn_agent calls it has made (the host keeps one State per agent), so
// it can name its children "<self>/<k>" — and one past the last, which may not exist.
type chaosModel struct{}

var (
	_ models.Model        = chaosModel{}
	_ systems.InlineModel = chaosModel{}
)

// errChaosNoRand is returned when the host gives a chaos agent no random stream.
var errChaosNoRand = errors.New("chaos model needs View.Rand")

func (chaosModel) ID() string { return "chaos" }

func (chaosModel) Inline() bool { return true }

func (m chaosModel) Turn(_ context.Context, st *models.State, v *models.View) (models.Reply, error) {
	r := v.Rand
	if r == nil {
		return models.Reply{}, errChaosNoRand
	}
	if r.IntN(5) == 0 {
		return models.Reply{Text: "done"}, nil
	}
	n := 1 + r.IntN(2)
	calls := make([]models.ToolCall, 0, n)
	for range n {
		calls = append(calls, m.call(st, v))
	}
	return models.Reply{Text: "chaos", Calls: calls}, nil
}

// call picks one random sub-agent call (or the lane tool). A fan_out's workers are not counted
// in State.Cursor: they take child numbers too, so some "<self>/<k>" names are workers.
func (chaosModel) call(st *models.State, v *models.View) models.ToolCall {
	r := v.Rand
	switch a := r.IntN(12); {
	case a < 3:
		key := chaosKid
		switch r.IntN(9) {
		case 0, 1, 2, 3:
			key = chaosLoner
		case 4:
			if r.IntN(4) == 0 {
				key = chaosStray
			}
		}
		args := map[string]any{"blueprint": key, "task": "chaos task", "wait": r.IntN(3) == 0}
		if r.IntN(4) == 0 {
			args["max_child_depth"] = r.IntN(3)
		}
		if r.IntN(6) == 0 {
			args["seed_context"] = true
		}
		st.Cursor++
		return chaosCall(subagents.NameSpawn, args)
	case a < 5:
		return chaosCall(subagents.NameSend, map[string]any{"id": chaosTarget(st, v), "message": "ping " + strconv.Itoa(r.IntN(100))})
	case a < 6:
		return chaosCall(subagents.NameCheck, map[string]any{"id": chaosTarget(st, v)})
	case a < 8:
		return chaosCall(subagents.NameWait, map[string]any{"id": chaosTarget(st, v)})
	case a < 10:
		return chaosCall(subagents.NameKill, map[string]any{"id": chaosTarget(st, v)})
	case a < 11:
		if r.IntN(2) == 0 {
			return chaosCall(subagents.NameList, map[string]any{})
		}
		// A small fan-out: its workers are attached whatever their blueprint says.
		items := make([]string, 1+r.IntN(3))
		for i := range items {
			items[i] = "item " + strconv.Itoa(i)
		}
		policy := "continue"
		if r.IntN(2) == 0 {
			policy = "fail_all"
		}
		return chaosCall(subagents.NameFanOut, map[string]any{"blueprint": []string{chaosKid, chaosLoner}[r.IntN(2)],
			"items": items, "max_workers": 1 + r.IntN(2), "on_worker_failure": policy})
	default:
		return chaosCall("jitter", map[string]any{"text": "x" + strconv.Itoa(r.IntN(10))})
	}
}

// chaosTarget names a random agent from the caller's point of view: itself, one of its children
// "<self>/<k>" for k up to one past the spawns it made, sometimes a grandchild, or an agent
// outside its subtree (its parent, or a name nobody has).
func chaosTarget(st *models.State, v *models.View) string {
	r := v.Rand
	self := v.Agent.Name
	spawned := int(st.Cursor)
	switch k := r.IntN(spawned + 3); {
	case k == 0:
		return self
	case k <= spawned+1:
		name := self + "/" + strconv.Itoa(k)
		if r.IntN(4) == 0 {
			name += "/1"
		}
		return name
	default:
		if i := strings.LastIndexByte(self, '/'); i > 0 && r.IntN(2) == 0 {
			return self[:i]
		}
		return "nobody"
	}
}

// chaosCall builds a call; the host names it.
func chaosCall(tool string, args map[string]any) models.ToolCall {
	raw, err := json.Marshal(args)
	if err != nil {
		panic(err) // maps of strings, ints and bools always marshal
	}
	return models.ToolCall{Name: tool, Args: raw}
}

// chaosConfig is one chaos run.
type chaosConfig struct {
	seed  uint64
	roots int
}

// chaosTickBudget bounds a chaos run: every agent lives at most four model turns, so a run that
// needs more ticks than this has deadlocked or livelocked.
const chaosTickBudget = 2000

// chaosEvent is what the whole-run checks read of a trace event: a spawn's parent, depth and
// detached flag, and a tool call's id argument and result.
type chaosEvent struct {
	Kind      string          `json:"kind"`
	Tick      uint64          `json:"tick"`
	Agent     uint64          `json:"agent"`
	Name      string          `json:"name"`
	Blueprint string          `json:"blueprint"`
	Parent    uint64          `json:"parent"`
	Depth     int             `json:"depth"`
	Detached  bool            `json:"detached"`
	Call      string          `json:"call"`
	CallID    string          `json:"call_id"`
	Tool      string          `json:"tool"`
	Args      json.RawMessage `json:"args"`
	OK        bool            `json:"ok"`
	Content   string          `json:"content"`
}

// chaosResult is what a chaos run leaves behind for the checks that need the whole run.
type chaosResult struct {
	trace  []byte
	ticks  uint64
	spawns int
}

// chaosRun runs one chaos world to its end, checking the tree after every tick, and returns
// its trace. The host caps (depth, live children, live sub-agents, inbox) are drawn from the
// seed, so the seeds cover refusals as well as successes.
func chaosRun(tb testing.TB, cfg chaosConfig) chaosResult {
	tb.Helper()
	caps := rand.New(rand.NewPCG(cfg.seed, 0x5eed))
	limits := subagents.Limits{MaxDepth: caps.IntN(4), MaxChildren: caps.IntN(4), MaxLive: caps.IntN(40)}
	var h *harness
	checker := &chaosChecker{tb: tb, limits: limits}
	opt := options{
		seed:     cfg.seed,
		limits:   limits,
		inboxCap: 1 + caps.IntN(3),
		systems:  append(systems.Pipeline(), &probe{fn: func(w *ecs.World) { checker.check(h, w) }}),
	}
	h = newHarness(tb, opt)
	defer h.close()
	h.spawnable(chaosKid, h.blueprint(chaosBlueprint), chaosModel{})
	h.spawnable(chaosLoner, h.blueprint(chaosLonerBlueprint), chaosModel{})
	h.spawn(h.profile("chaos", h.blueprint(chaosBlueprint), chaosModel{}, "make a mess"), cfg.roots)

	stop := h.run(chaosTickBudget)
	if checker.failed {
		tb.FailNow()
	}
	if stop != ecs.FixedPoint {
		tb.Fatalf("seed %d: stop %v after %d ticks with %d agents left: want a fixed point (deadlock?)", cfg.seed, stop, h.w.Tick(), h.w.Entities())
	}
	if n, live := h.w.Entities(), h.host.Agents.Live(); n != 0 || live != 0 {
		tb.Fatalf("seed %d: %d entities and %d agent slots left at the fixed point, want none", cfg.seed, n, live)
	}
	data := bytes.Clone(h.traceBytes())
	spawns := chaosCheckTrace(tb, cfg, h, data)
	return chaosResult{trace: data, ticks: h.w.Tick(), spawns: spawns}
}

// chaosCheckTrace checks the run as a whole: every agent has a final record, every spawn event
// says detached exactly when the blueprint is, and no attached child outlived its parent (it was
// reaped in its parent's tick or before). It returns the number of children spawned.
func chaosCheckTrace(tb testing.TB, cfg chaosConfig, h *harness, data []byte) int {
	tb.Helper()
	_, lines, err := trace.ReadAll(bytes.NewReader(data))
	if err != nil {
		tb.Fatalf("seed %d: trace: %v", cfg.seed, err)
	}
	var spawns, events []chaosEvent
	spawnTick := map[string]uint64{}
	for _, line := range lines {
		var ev chaosEvent
		if err := json.Unmarshal(line, &ev); err != nil {
			tb.Fatalf("seed %d: trace line %s: %v", cfg.seed, line, err)
		}
		events = append(events, ev)
		if ev.Kind == trace.KindSpawn && ev.Parent != 0 {
			spawns = append(spawns, ev)
			spawnTick[ev.Name] = ev.Tick
		}
	}
	chaosCheckAddressable(tb, cfg, events, spawnTick)
	if got, want := h.host.Records.Len(), cfg.roots+len(spawns); got != want {
		tb.Fatalf("seed %d: %d final records, want %d (%d roots + %d children)", cfg.seed, got, want, cfg.roots, len(spawns))
	}
	fanOuts := map[string]bool{}
	for _, ev := range events {
		if ev.Kind == trace.KindToolCall && ev.Tool == subagents.NameFanOut {
			fanOuts[ev.CallID] = true
		}
	}
	for _, ev := range spawns {
		if want := ev.Blueprint == chaosLoner && !fanOuts[ev.Call]; ev.Detached != want {
			tb.Fatalf("seed %d: spawn of %s (blueprint %s, call %s) says detached=%v", cfg.seed, ev.Name, ev.Blueprint, ev.Call, ev.Detached)
		}
		child, ok := h.host.Records.Get(ev.Agent)
		if !ok {
			tb.Fatalf("seed %d: no final record for %s", cfg.seed, ev.Name)
		}
		parent, ok := h.host.Records.Get(ev.Parent)
		if !ok {
			tb.Fatalf("seed %d: no final record for the parent of %s", cfg.seed, ev.Name)
		}
		if child.Parent != ev.Parent || int(child.Depth) != ev.Depth || ev.Depth != int(parent.Depth)+1 {
			tb.Fatalf("seed %d: %s: record parent %d depth %d, spawn event parent %d depth %d, parent depth %d",
				cfg.seed, ev.Name, child.Parent, child.Depth, ev.Parent, ev.Depth, parent.Depth)
		}
		if !ev.Detached && child.Tick > parent.Tick {
			tb.Fatalf("seed %d: attached %s was reaped at tick %d, after its parent %s (tick %d)", cfg.seed, ev.Name, child.Tick, parent.Name, parent.Tick)
		}
	}
	return len(spawns)
}

// chaosCheckAddressable checks that a live agent can always address its own descendants: a call
// that names a descendant spawned in an earlier tick never fails with "no such agent" (the tree
// keeps an ended node while an ancestor lives) nor with "not in your subtree".
func chaosCheckAddressable(tb testing.TB, cfg chaosConfig, events []chaosEvent, spawnTick map[string]uint64) {
	tb.Helper()
	type callAt struct {
		tick uint64
		id   string
	}
	calls := map[string]callAt{}
	for _, ev := range events {
		switch ev.Kind {
		case trace.KindToolCall:
			var a struct {
				ID string `json:"id"`
			}
			if json.Unmarshal(ev.Args, &a) == nil && a.ID != "" {
				calls[ev.CallID] = callAt{tick: ev.Tick, id: a.ID}
			}
		case trace.KindToolResult:
			c, ok := calls[ev.CallID]
			if !ok || ev.OK || !strings.HasPrefix(c.id, ev.Name+"/") {
				continue
			}
			born, spawned := spawnTick[c.id]
			if !spawned || born >= c.tick {
				continue
			}
			if strings.Contains(ev.Content, subagents.ErrUnknownAgent.Error()) || strings.Contains(ev.Content, subagents.ErrOutsideSubtree.Error()) {
				tb.Fatalf("seed %d: %s could not address its descendant %s (spawned at tick %d, called at tick %d): %s",
					cfg.seed, ev.Name, c.id, born, c.tick, ev.Content)
			}
		}
	}
}

// chaosChecker is the per-tick invariant, run by a probe after reap. It learns which agents are
// detached from the trace's spawn events (a fan-out worker is attached whatever its blueprint
// says), reading each tick only what the tick wrote.
type chaosChecker struct {
	tb       testing.TB
	limits   subagents.Limits
	live     map[uint64]bool
	detached map[uint64]bool
	// read is how much of the trace buffer has been read.
	read   int
	failed bool
}

// readSpawns notes the detached children the trace has announced since the last tick.
func (c *chaosChecker) readSpawns(h *harness) {
	if err := h.tw.Flush(); err != nil {
		c.tb.Fatalf("trace: %v", err)
	}
	if c.detached == nil {
		c.detached = map[uint64]bool{}
	}
	data := h.buf.Bytes()[c.read:]
	for {
		end := bytes.IndexByte(data, '\n')
		if end < 0 {
			return
		}
		line := data[:end]
		data = data[end+1:]
		c.read += end + 1
		if !bytes.Contains(line, []byte(`"kind":"spawn"`)) {
			continue
		}
		var ev chaosEvent
		if err := json.Unmarshal(line, &ev); err != nil {
			c.tb.Fatalf("trace line %s: %v", line, err)
		}
		if ev.Detached {
			c.detached[ev.Agent] = true
		}
	}
}

// check asserts, after reap: no agent is left Terminal; every agent holds exactly one slot of
// the agent store; no live agent has a parent that is gone from the world unless it is
// detached; and no agent is deeper than the host allows.
func (c *chaosChecker) check(h *harness, w *ecs.World) {
	if c.failed {
		return
	}
	c.readSpawns(h)
	if c.live == nil {
		c.live = map[uint64]bool{}
	}
	clear(c.live)
	ents := h.entities()
	for _, e := range ents {
		c.live[h.identity.Get(e).ID] = true
	}
	if live := h.host.Agents.Live(); live != len(ents) {
		c.fail(w, "%d agent slots in use for %d entities", live, len(ents))
		return
	}
	for _, e := range ents {
		id := h.identity.Get(e)
		d := h.data(e)
		if ecs.Has[components.Terminal](w, e) {
			c.fail(w, "%s is still Terminal after reap", d.Name)
			return
		}
		if c.limits.MaxDepth > 0 && int(d.Depth) > c.limits.MaxDepth {
			c.fail(w, "%s is at depth %d, the host allows %d", d.Name, d.Depth, c.limits.MaxDepth)
			return
		}
		if d.Parent == 0 || c.live[d.Parent] {
			continue
		}
		if !c.detached[id.ID] {
			c.fail(w, "%s (phase %s) outlived its parent %d but is not detached", d.Name, h.phase(e), d.Parent)
			return
		}
	}
}

func (c *chaosChecker) fail(w *ecs.World, format string, args ...any) {
	c.failed = true
	c.tb.Errorf("tick %d: %s", w.Tick(), fmt.Sprintf(format, args...))
}

// chaosSeeds and chaosRoots size TestTreeChaos.
const (
	chaosSeeds = 200
	chaosRoots = 5
)

// TestTreeChaos runs 200 seeded chaos worlds of five roots each.
func TestTreeChaos(t *testing.T) {
	spawned, ticks := 0, uint64(0)
	for seed := uint64(1); seed <= chaosSeeds; seed++ {
		res := chaosRun(t, chaosConfig{seed: seed, roots: chaosRoots})
		spawned += res.spawns
		ticks += res.ticks
	}
	// The property is only worth something if the worlds actually grow trees.
	if spawned < chaosSeeds {
		t.Fatalf("only %d children spawned over %d seeds: the chaos model no longer spawns", spawned, chaosSeeds)
	}
	t.Logf("%d seeds x %d roots: %d children spawned, %d ticks", chaosSeeds, chaosRoots, spawned, ticks)
}

// TestTreeChaosDeterministic runs chaos worlds twice, once on one CPU and once on all, and
// requires byte-identical traces: lane completions (the jitter tool sleeps a wall-time amount)
// and goroutine scheduling must not reach the trace.
func TestTreeChaosDeterministic(t *testing.T) {
	for _, seed := range []uint64{3, 17, 99, 1234} {
		t.Run("seed="+strconv.FormatUint(seed, 10), func(t *testing.T) {
			cfg := chaosConfig{seed: seed, roots: chaosRoots}
			prev := runtime.GOMAXPROCS(0)
			one := func() chaosResult {
				runtime.GOMAXPROCS(1)
				defer runtime.GOMAXPROCS(prev) // restored even when the run fails the test
				return chaosRun(t, cfg)
			}()
			all := chaosRun(t, cfg)
			if one.spawns == 0 {
				t.Fatalf("seed %d spawned no children: pick a seed that grows a tree", seed)
			}
			if !bytes.Equal(one.trace, all.trace) {
				t.Fatalf("traces differ between GOMAXPROCS 1 and %d:\n%s", prev, chaosFirstDiff(one.trace, all.trace))
			}
		})
	}
}

// chaosFirstDiff shows the first line where two traces differ.
func chaosFirstDiff(a, b []byte) string {
	la, lb := bytes.Split(a, []byte("\n")), bytes.Split(b, []byte("\n"))
	for i := range min(len(la), len(lb)) {
		if !bytes.Equal(la[i], lb[i]) {
			return fmt.Sprintf("line %d:\n  %s\n  %s", i+1, la[i], lb[i])
		}
	}
	return fmt.Sprintf("one trace is a prefix of the other (%d and %d lines)", len(la), len(lb))
}

// FuzzTreeChaos explores seeds and root counts beyond TestTreeChaos; its seed corpus runs as a
// normal test.
func FuzzTreeChaos(f *testing.F) {
	for _, c := range []struct {
		seed  uint64
		roots uint8
	}{{1, 1}, {2, 3}, {7, 5}, {42, 6}, {1 << 40, 2}, {^uint64(0), 4}} {
		f.Add(c.seed, c.roots)
	}
	f.Fuzz(func(t *testing.T, seed uint64, roots uint8) {
		chaosRun(t, chaosConfig{seed: seed, roots: 1 + int(roots%6)})
	})
}
