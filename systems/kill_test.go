package systems_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/warrenhq/warren/components"
	"github.com/warrenhq/warren/ecs"
	"github.com/warrenhq/warren/gate"
	"github.com/warrenhq/warren/models"
	"github.com/warrenhq/warren/policy"
	"github.com/warrenhq/warren/resources"
	"github.com/warrenhq/warren/subagents"
	"github.com/warrenhq/warren/systems"
	"github.com/warrenhq/warren/tools"
)

// chainChildren are the models of a three-level chain below the boss: lead spawns mid and
// waits for it, mid spawns leaf and waits for it, leaf parks; worker parks beside them.
func chainChildren(t *testing.T) map[string]models.Model {
	return map[string]models.Model{
		"lead":   scripted(t, "scripted:lead", turn("", spawnCall("mid", "plan", map[string]any{"wait": true})), turn("lead done")),
		"mid":    scripted(t, "scripted:mid", turn("", spawnCall("leaf", "do", map[string]any{"wait": true})), turn("mid done")),
		"leaf":   scripted(t, "scripted:leaf", turn("", park("work")), turn("leaf done")),
		"worker": scripted(t, "scripted:worker", turn("", park("work")), turn("worker done")),
	}
}

// kill_agent ends the named agent and its whole live subtree in one kill event that lists the
// cascade, the named agent first; the rest of the tree goes on, and a waiter on a killed agent
// gets its killed status.
func TestKillAgentCascades(t *testing.T) {
	const reason = "killed by boss-0 (kill_agent)"
	cases := []struct {
		name      string
		target    string
		cascade   []string
		survivors []string // descendants that outlive the kill and end done
	}{
		{name: "the top of a three-deep chain", target: "boss-0/1", cascade: []string{"boss-0/1", "boss-0/1/1", "boss-0/1/1/1"}},
		{name: "the middle of the chain", target: "boss-0/1/1", cascade: []string{"boss-0/1/1", "boss-0/1/1/1"}, survivors: []string{"boss-0/1"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			boss := scripted(t, "scripted:boss",
				turn("", spawnCall("lead", "lead", nil), spawnCall("worker", "work", nil)),
				turn("", call("echo_inline", "1")), turn("", call("echo_inline", "2")),
				turn("", targetCall(subagents.NameKill, tc.target)),
				turn("", call("echo_inline", "3")), turn("", call("echo_inline", "4")),
				turn("done"))
			w := newTree(t, treeSpec{opt: parkFor(30), boss: boss, children: chainChildren(t)})
			w.runAll()

			const killTick = 3
			res := w.resultOf("boss-0", subagents.NameKill)
			want := subagents.KillJSON(tc.cascade)
			if !res.OK || res.Content != want || res.Tick != killTick {
				t.Errorf("kill_agent returned %q at tick %d, want %q at tick %d", res.Content, res.Tick, want, killTick)
			}
			var kills []event
			for _, ev := range w.events("kill", "") {
				if ev.Reason == reason {
					kills = append(kills, ev)
				}
			}
			if len(kills) != 1 {
				t.Fatalf("kill events by kill_agent:%s\nwant one", describeTree(kills))
			}
			k := kills[0]
			if k.Tick != killTick || k.Name != tc.target || k.Killer != 1 || k.KillerName != "boss-0" || !slices.Equal(k.Cascade, tc.cascade) {
				t.Errorf("kill event %+v, want %s killed by boss-0 with cascade %q", k, tc.target, tc.cascade)
			}
			for _, name := range tc.cascade {
				r := w.wantRecord(name, components.Killed, reason)
				if r.Tick != killTick {
					t.Errorf("%s was reaped at tick %d, want %d", name, r.Tick, killTick)
				}
				ends := w.events("terminal", name)
				if len(ends) != 1 || ends[0].Tick != killTick || ends[0].Status != "killed" || ends[0].Reason != reason {
					t.Errorf("terminal events of %s:%s", name, describeTree(ends))
				}
			}
			for _, name := range tc.survivors {
				w.wantRecord(name, components.Done, "")
				// It was waiting on the killed agent: the wait returns its killed status.
				st := agentStatus(t, w.resultOf(name, subagents.NameSpawn).Content)
				if st.ID != tc.target || st.Status != "killed" || st.Reason != reason {
					t.Errorf("%s's wait returned %+v, want %s killed", name, st, tc.target)
				}
			}
			// The sibling was never part of the cascade: it dies with its parent at the end.
			w.wantRecord("boss-0/2", components.Killed, "parent boss-0 ended (done)")
			w.wantRecord("boss-0", components.Done, "")
		})
	}
}

// When an agent ends, its live children that are not detached are killed in the same tick
// (their subtrees with them); a detached child runs on to its own end.
func TestParentEndKillsLiveChildren(t *testing.T) {
	cases := []struct {
		name     string
		lastTurn models.ScriptedTurn
		reason   string
	}{
		{name: "the parent finishes", lastTurn: turn("done"), reason: "parent boss-0 ended (done)"},
		{name: "the parent fails", lastTurn: turnError("crash"), reason: "parent boss-0 ended (failed)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			boss := scripted(t, "scripted:boss", turn("", spawnCall("lead", "lead", nil), spawnCall("loner", "roam", nil)), turn("", call("echo_inline", "1")), tc.lastTurn)
			children := map[string]models.Model{
				"lead":   scripted(t, "scripted:lead", turn("", spawnCall("worker", "work", nil)), turn("", park("rest")), turn("lead done")),
				"worker": scripted(t, "scripted:worker", turn("", park("work")), turn("worker done")),
				"loner": scripted(t, "scripted:loner", turn("", call("echo_inline", "a")), turn("", call("echo_inline", "b")),
					turn("", call("echo_inline", "c")), turn("loner finished")),
			}
			w := newTree(t, treeSpec{opt: parkFor(30), boss: boss, children: children})
			w.runAll()

			end := w.record("boss-0").Tick
			if end != 2 {
				t.Fatalf("the boss ended at tick %d, want 2", end)
			}
			for _, name := range []string{"boss-0/1", "boss-0/1/1"} {
				if r := w.wantRecord(name, components.Killed, tc.reason); r.Tick != end {
					t.Errorf("%s was reaped at tick %d, want the parent's tick %d", name, r.Tick, end)
				}
			}
			kills := w.events("kill", "")
			if len(kills) != 1 || kills[0].Tick != end || kills[0].Name != "boss-0/1" || kills[0].Killer != 1 || kills[0].KillerName != "boss-0" ||
				kills[0].Reason != tc.reason || !slices.Equal(kills[0].Cascade, []string{"boss-0/1", "boss-0/1/1"}) {
				t.Errorf("kill events:%s\nwant one of boss-0/1 and its child by boss-0", describeTree(kills))
			}
			if sp := w.events("spawn", "boss-0/2"); len(sp) != 1 || !sp[0].Detached {
				t.Errorf("the loner's spawn event:%s\nwant it detached", describeTree(sp))
			}
			loner := w.wantRecord("boss-0/2", components.Done, "")
			if loner.Output != "loner finished" || loner.Tick <= end {
				t.Errorf("the loner ended at tick %d with %q, want it to finish after its parent (tick %d)", loner.Tick, loner.Output, end)
			}
			if msgs := w.events("message", ""); len(msgs) != 0 {
				t.Errorf("message events:%s\nwant none (nobody is left to notify)", describeTree(msgs))
			}
		})
	}
}

// blockTool runs on the tool lane and blocks until its call's context is cancelled (or a
// safety timeout passes, so a broken kill fails the test instead of hanging it).
type blockTool struct {
	ended *atomic.Pointer[string] // how the last call ended: "cancelled: <err>" or "timeout"
}

var _ tools.Tool = blockTool{}

func (blockTool) Spec() tools.Spec {
	return tools.Spec{Name: "block", Description: "blocks until cancelled", Parameters: textSchema}
}

func (t blockTool) Execute(ec *tools.ExecContext, _ json.RawMessage) (tools.Result, error) {
	how := "timeout"
	select {
	case <-ec.Ctx.Done():
		how = "cancelled: " + ec.Ctx.Err().Error()
	case <-time.After(10 * time.Second):
	}
	t.ended.Store(&how)
	return tools.TextResult("unblocked"), nil
}

// A kill cancels the context of the victim's calls on the tool lane, so a blocking tool returns
// and the tick's barrier does not wait on it; its result is dropped.
func TestKillCancelsInFlightLaneCall(t *testing.T) {
	ended := &atomic.Pointer[string]{}
	boss := scripted(t, "scripted:boss", turn("", spawnCall("blocker", "block", nil)), turn("", targetCall(subagents.NameKill, "boss-0/1")), turn("done"))
	h := newHarness(t, options{latency: resources.Latency{PerTool: map[string]uint64{"block": 5}}})
	if err := h.scoped.Base().Register(blockTool{ended: ended}); err != nil {
		t.Fatal(err)
	}
	h.known = append(h.known, "block")
	h.spawnable("blocker", h.blueprint(`
name = "blocker"

[[stages]]
name = "work"
available_tools = ["block"]
`), scripted(t, "scripted:blocker", turn("", call("block", "x")), turn("never")))
	h.spawn(h.profile("boss", h.blueprint(`
name = "boss"

[[stages]]
name = "lead"
available_tools = ["spawn_agent", "kill_agent"]
`), boss, ""), 1)
	start := time.Now()
	h.runAll()
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("the run took %v: the kill did not stop the blocking call", took)
	}
	if how := ended.Load(); how == nil || *how != "cancelled: "+context.Canceled.Error() {
		t.Errorf("the blocking call ended by %v, want its context cancelled", how)
	}
	r := h.wantRecord("boss-0/1", components.Killed, "killed by boss-0 (kill_agent)")
	if r.Tick != 1 || r.Counters.ToolCalls != 0 {
		t.Errorf("the blocker's record %+v, want it reaped at tick 1 with no call finished", r)
	}
	if res := h.events("tool_result", "boss-0/1"); len(res) != 0 {
		t.Errorf("the killed agent's lane result was filed:%s", describeTree(res))
	}
	if got := h.resultOf("boss-0", subagents.NameKill).Content; got != subagents.KillJSON([]string{"boss-0/1"}) {
		t.Errorf("kill_agent returned %q", got)
	}
}

// A kill closes the victim's open prompts at once (answered "cancelled"): nothing stays on the
// hub, and the run does not wait for the prompt's answer.
func TestKillClosesOpenPrompts(t *testing.T) {
	childAsks := testGate(func(_ *gate.Policy, req *gate.Request, keys []string) gate.Decision {
		if req.Tool == "echo_inline" && req.Agent.Name == "boss-0/1" {
			return gate.Decision{Verdict: policy.Ask, Layer: "test", Reason: "the child must ask", Keys: keys}
		}
		return gate.Decision{Verdict: policy.Allow, Layer: "test", Reason: "allowed", Keys: keys}
	})
	var w *treeWorld
	open := map[uint64]int{}
	opt := withProbe(options{gate: childAsks, answerer: answers(reply{answer: "once", delay: 50})}, func(world *ecs.World) {
		open[world.Tick()] = w.host.Hub.Open()
	})
	boss := scripted(t, "scripted:boss", turn("", spawnCall("worker", "ask", nil)), turn("", targetCall(subagents.NameCheck, "boss-0/1")),
		turn("", targetCall(subagents.NameKill, "boss-0/1")), turn("done"))
	w = newTree(t, treeSpec{opt: opt, boss: boss, children: map[string]models.Model{"worker": scripted(t, "scripted:child", turn("", call("echo_inline", "x")), turn("never"))}})
	w.runAll()

	if st := agentStatus(t, w.resultOf("boss-0", subagents.NameCheck).Content); st.Status != "waiting" {
		t.Errorf("the child on its prompt is %q, want waiting", st.Status)
	}
	prompts := w.events("prompt", "boss-0/1")
	answers := w.events("answer", "boss-0/1")
	if len(prompts) != 1 || prompts[0].Tick != 1 {
		t.Errorf("prompt events:%s\nwant one at tick 1", describeTree(prompts))
	}
	if len(answers) != 1 || answers[0].Tick != 2 || answers[0].CallID != "boss-0/1-t0-c0" || answers[0].By != "cancelled" {
		t.Errorf("answer events:%s\nwant one by cancelled at tick 2", describeTree(answers))
	}
	for tick, n := range open {
		if want := boolToInt(tick == 1); n != want || tick > 10 {
			t.Errorf("open prompts per tick %v, want one at tick 1 only and a run over long before the answer is due", open)
			break
		}
	}
	if w.host.Hub.Open() != 0 || len(w.host.Hub.Unanswered()) != 0 {
		t.Errorf("%d prompts open, unanswered %q", w.host.Hub.Open(), w.host.Hub.Unanswered())
	}
	w.wantRecord("boss-0/1", components.Killed, "killed by boss-0 (kill_agent)")
	if r := w.wantRecord("boss-0", components.Done, ""); r.Tick != 3 {
		t.Errorf("the boss ended at tick %d, want 3 (the run must not wait for the answer)", r.Tick)
	}
}

// boolToInt is 1 for true.
func boolToInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// teardownInstaller registers teardown steps on the host while the scheduler initializes,
// before reap reads them.
type teardownInstaller struct{ steps []resources.TeardownStep }

var _ ecs.System = (*teardownInstaller)(nil)

func (*teardownInstaller) Name() string { return "teardown_installer" }

func (s *teardownInstaller) Initialize(w *ecs.World) error {
	teardown := ecs.Resource[resources.Teardown](w)
	if teardown == nil {
		return errors.New("no teardown resource")
	}
	for _, st := range s.steps {
		teardown.Add(st)
	}
	return nil
}

func (*teardownInstaller) Update(*ecs.World)   {}
func (*teardownInstaller) Finalize(*ecs.World) {}

// Registered teardown steps run at their documented places among the built-in ones (equal
// orders after the built-in step), once per reaped agent (orphans killed by a parent's end
// included), while the agent's data is still whole.
func TestReapRunsRegisteredTeardownInOrder(t *testing.T) {
	var h *treeWorld
	var log []string
	var problems []string
	step := func(order resources.TeardownOrder, name string) resources.TeardownStep {
		return resources.TeardownStep{Order: order, Name: name, Release: func(id *components.Identity, d *components.AgentData) {
			if d.Name == "" || id.ID == 0 {
				problems = append(problems, name+": the agent's data is already gone")
			}
			tasks := h.host.Tasks.List(id.ID) != nil
			if want := name != "tasks-extra"; id.ID == 1 && tasks != want {
				problems = append(problems, name+": checklist held "+strconv.FormatBool(tasks))
			}
			log = append(log, d.Name+":"+name)
		}}
	}
	// Registered out of order on purpose: Teardown.Add sorts by order, stably.
	installer := &teardownInstaller{steps: []resources.TeardownStep{
		step(resources.TeardownScripts, "scripts-extra"), step(resources.TeardownSandbox, "sandbox-extra"), step(resources.TeardownTasks, "tasks-extra"),
		step(resources.TeardownMCP, "mcp-extra"), step(resources.TeardownChildren, "children-extra"),
	}}
	pipeline := systems.Pipeline()
	var reap *systems.Reap
	for _, s := range pipeline {
		if r, ok := s.(*systems.Reap); ok {
			reap = r
		}
	}
	if reap == nil {
		t.Fatal("the pipeline has no reap")
	}
	opt := parkFor(30)
	opt.systems = append([]ecs.System{installer}, pipeline...)
	boss := scripted(t, "scripted:boss", turn("", spawnCall("worker", "park", nil), spawnCall("lead", "quick", map[string]any{"wait": true})), turn("done"))
	h = newTree(t, treeSpec{opt: opt, boss: boss, children: map[string]models.Model{
		"worker": scripted(t, "scripted:worker", turn("", park("long"))),
		"lead":   scripted(t, "scripted:lead", turn("quick done")),
	}})
	if _, err := h.host.Tasks.Add(1, "the boss's checklist"); err != nil {
		t.Fatal(err)
	}

	wantSteps := []string{"children", "children-extra", "sandbox", "sandbox-extra", "mcp", "mcp-extra", "scripts", "scripts-extra", "prompts", "tasks", "tasks-extra"}
	if got := reap.Steps(); !slices.Equal(got, wantSteps) {
		t.Errorf("teardown steps %q, want %q", got, wantSteps)
	}
	h.runAll()
	var want []string
	// The quick child ends first; the boss's end kills the parked one, reaped right after it.
	for _, agent := range []string{"boss-0/2", "boss-0", "boss-0/1"} {
		for _, s := range []string{"children-extra", "sandbox-extra", "mcp-extra", "scripts-extra", "tasks-extra"} {
			want = append(want, agent+":"+s)
		}
	}
	if !slices.Equal(log, want) {
		t.Errorf("teardown calls\n  %q\nwant\n  %q", log, want)
	}
	if len(problems) != 0 {
		t.Errorf("teardown problems: %q", problems)
	}
	if boss, parked := h.record("boss-0"), h.record("boss-0/1"); parked.Tick != boss.Tick || parked.Status != components.Killed {
		t.Errorf("the parked child ended %v at tick %d, want killed in the boss's tick %d", parked.Status, parked.Tick, boss.Tick)
	}
}

// kill_agent ends an agent wherever it is in its cycle: spawned this very turn, on the model
// lane, on the tool lane, back from its tools, about to transition, or parked on a fan-out (whose
// workers die with it, and whose results are never merged). Nothing it had in flight is applied
// afterwards.
func TestKillFromEveryPhase(t *testing.T) {
	const reason = "killed by boss-0 (kill_agent)"
	spawnWorker := spawnCall("worker", "work", nil)
	kill := targetCall(subagents.NameKill, "boss-0/1")
	cases := []struct {
		name      string
		bossTurns []models.ScriptedTurn
		child     models.Model
		killTick  uint64
		cascade   []string
		turns     uint32 // model turns the victim took
	}{
		{
			name:      "spawned in the same turn (Entering)",
			bossTurns: []models.ScriptedTurn{turn("", spawnWorker, kill)},
			child:     scripted(t, "scripted:child", turn("never")),
			killTick:  0, cascade: []string{"boss-0/1"}, turns: 0,
		},
		{
			name:      "on the model lane (AwaitingInference)",
			bossTurns: []models.ScriptedTurn{turn("", spawnWorker), turn("", kill)},
			child: laneModel{id: "lane:child", turn: func(*models.State, *models.View) (models.Reply, error) {
				return models.Reply{Text: "too late"}, nil
			}},
			killTick: 1, cascade: []string{"boss-0/1"}, turns: 0,
		},
		{
			name:      "on the tool lane (AwaitingTools)",
			bossTurns: []models.ScriptedTurn{turn("", spawnWorker), turn("", kill)},
			child:     scripted(t, "scripted:child", turn("", park("x")), turn("never")),
			killTick:  1, cascade: []string{"boss-0/1"}, turns: 1,
		},
		{
			name:      "back from inline tools (ReadyToInfer)",
			bossTurns: []models.ScriptedTurn{turn("", spawnWorker), turn("", kill)},
			child:     scripted(t, "scripted:child", turn("", call("echo_inline", "x")), turn("never")),
			killTick:  1, cascade: []string{"boss-0/1"}, turns: 1,
		},
		{
			name:      "about to end its stage (ResolveTransition)",
			bossTurns: []models.ScriptedTurn{turn("", spawnWorker), turn("", kill)},
			child:     scripted(t, "scripted:child", turn("finished just now")),
			killTick:  1, cascade: []string{"boss-0/1"}, turns: 1,
		},
		{
			name:      "parked on a fan-out",
			bossTurns: []models.ScriptedTurn{turn("", spawnWorker), turn("", call("echo_inline", "1")), turn("", kill)},
			child:     scripted(t, "scripted:child", turn("", fanOutCall([]string{"a", "b", "c"}, 2, "")), turn("never")),
			killTick:  2, cascade: []string{"boss-0/1", "boss-0/1/1", "boss-0/1/2"}, turns: 1,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			opt := parkFor(10)
			opt.latency.Model = 5
			boss := scripted(t, "scripted:boss", slices.Concat(tc.bossTurns, []models.ScriptedTurn{turn("done")})...)
			w := newTree(t, treeSpec{opt: opt, boss: boss, children: map[string]models.Model{"worker": tc.child}})
			w.runAll()

			if got := w.resultOf("boss-0", subagents.NameKill).Content; got != subagents.KillJSON(tc.cascade) {
				t.Errorf("kill_agent returned %q, want %q", got, subagents.KillJSON(tc.cascade))
			}
			for _, name := range tc.cascade {
				if r := w.wantRecord(name, components.Killed, reason); r.Tick != tc.killTick {
					t.Errorf("%s was reaped at tick %d, want %d", name, r.Tick, tc.killTick)
				}
				for _, ev := range w.events("", name) {
					if ev.Tick > tc.killTick {
						t.Errorf("%s has a %s event at tick %d, after its kill", name, ev.Kind, ev.Tick)
					}
				}
			}
			if r := w.record("boss-0/1"); r.Counters.ModelTurns != tc.turns {
				t.Errorf("the victim took %d model turns, want %d", r.Counters.ModelTurns, tc.turns)
			}
			for _, kind := range []string{"worker_end", "merge"} {
				if evs := w.events(kind, ""); len(evs) != 0 {
					t.Errorf("%s events of a killed fan-out:%s", kind, describeTree(evs))
				}
			}
			w.wantRecord("boss-0", components.Done, "")
			if n := w.w.Entities(); n != 0 {
				t.Errorf("%d entities left", n)
			}
		})
	}
}
