package systems_test

import (
	"runtime"
	"slices"
	"strconv"
	"testing"
	"weak"

	"github.com/warrenhq/warren/components"
	"github.com/warrenhq/warren/ecs"
	"github.com/warrenhq/warren/models"
	"github.com/warrenhq/warren/resources"
	"github.com/warrenhq/warren/systems"
)

const reapBlueprint = `
name = "reaped"
entry = "gather"

[[stages]]
name = "gather"
available_tools = ["todo_add", "echo_inline", "echo", "fail"]
[[stages.transitions]]
on = "done"
to = "report"

[[stages]]
name = "report"
available_tools = ["echo_inline"]
`

func TestReapWritesTheFinalRecordAndFreesTheAgent(t *testing.T) {
	h := newHarness(t, options{latency: resources.Latency{Tool: 2}})
	bp := h.blueprint(reapBlueprint)
	model := scripted(t, "scripted:reap",
		turn("planning", models.ScriptedCall{Tool: "todo_add", Args: map[string]any{"text": "write the report"}}, call("echo", "a")),
		turn("more", call("echo_inline", "b"), call("fail", "c"), call("echo", "d")),
		turn("gathered"),
		turn("", call("echo_inline", "e")),
		turn("report written", call("echo_inline", "f")),
		turn(""), // an empty last word: the output is the last assistant text with content
	)
	h.spawn(h.profile("g", bp, model, "write a report"), 1)
	if got := h.host.Agents.Live(); got != 1 {
		t.Fatalf("live slots %d after spawning", got)
	}
	if stop := h.run(100); stop != ecs.FixedPoint {
		t.Fatalf("stop %v", stop)
	}

	r := h.record("g-0")
	if r.ID != 1 || r.Group != "g" || r.Index != 0 || r.Status != components.Done || r.Reason != "" || r.Stage != "report" {
		t.Errorf("record %+v, want agent 1 of g done in report", r)
	}
	if r.Output != "report written" {
		t.Errorf("output %q, want the last assistant text", r.Output)
	}
	wantCounters := components.Counters{ModelTurns: 6, ToolCalls: 7, ToolErrors: 1, Transitions: 1}
	if r.Counters != wantCounters {
		t.Errorf("counters %+v, want %+v", r.Counters, wantCounters)
	}
	wantByTool := components.ToolCounts{{Tool: "echo", N: 2}, {Tool: "echo_inline", N: 3}, {Tool: "fail", N: 1}, {Tool: "todo_add", N: 1}}
	if !slices.Equal(r.ByTool, wantByTool) {
		t.Errorf("by tool %+v, want %+v", r.ByTool, wantByTool)
	}
	reaps := h.events("reap", "g-0")
	if len(reaps) != 1 || reaps[0].Status != "done" || reaps[0].ModelTurns != 6 || reaps[0].ToolCalls != 7 || reaps[0].ToolErrors != 1 {
		t.Errorf("reap events %+v", reaps)
	}
	if r.Tick != reaps[0].Tick {
		t.Errorf("record tick %d, reap event at tick %d", r.Tick, reaps[0].Tick)
	}
	if n := h.w.Entities(); n != 0 {
		t.Errorf("%d entities left after reaping", n)
	}
	if n := h.host.Agents.Live(); n != 0 {
		t.Errorf("%d agent slots still in use", n)
	}
	if n := h.host.Tasks.Agents(); n != 0 {
		t.Errorf("%d checklists still held", n)
	}
	if list := h.host.Tasks.List(1); list != nil {
		t.Errorf("checklist of a reaped agent: %+v", list)
	}
}

func TestReapRemovesOnlyTerminalAgents(t *testing.T) {
	h := newHarness(t, options{systems: []ecs.System{&systems.Reap{}}})
	bp := h.blueprint(reapBlueprint)
	agents := h.spawn(h.profile("g", bp, scripted(t, "scripted:g"), ""), 3)
	if _, err := h.host.Tasks.Add(2, "pending"); err != nil {
		t.Fatal(err)
	}
	if _, err := h.host.Tasks.Add(3, "kept"); err != nil {
		t.Fatal(err)
	}
	h.status.Get(agents[1]).Kind = components.Failed
	h.data(agents[1]).Reason = "gave up"
	h.cursor.Get(agents[1]).Stage = 1
	h.counters.Get(agents[1]).ModelTurns = 4
	h.moveTo(agents[1], "Terminal")
	slot := h.identity.Get(agents[1]).Slot

	if touched := h.step(); touched != 1 {
		t.Errorf("touched %d, want 1", touched)
	}
	if h.w.Alive(agents[1]) || !h.w.Alive(agents[0]) || !h.w.Alive(agents[2]) {
		t.Fatal("reap removed the wrong entities")
	}
	if n := h.w.Entities(); n != 2 {
		t.Errorf("%d entities, want 2", n)
	}
	if n := h.host.Agents.Live(); n != 2 {
		t.Errorf("%d live slots, want 2", n)
	}
	if d := h.host.Agents.Get(slot); d.Name != "" || d.Reason != "" {
		t.Errorf("freed slot still holds %+v", *d)
	}
	if h.host.Tasks.List(2) != nil || len(h.host.Tasks.List(3)) != 1 {
		t.Errorf("checklists: agent 2 %v (want released), agent 3 %v (want kept)", h.host.Tasks.List(2), h.host.Tasks.List(3))
	}
	r, ok := h.host.Records.Get(2)
	if !ok || r.Status != components.Failed || r.Reason != "gave up" || r.Stage != "report" || r.Counters.ModelTurns != 4 {
		t.Errorf("record %+v", r)
	}
	// A new agent reuses the freed slot, starting from zero.
	h.spawn(h.profile("h", bp, scripted(t, "scripted:h"), ""), 1)
	if n := h.host.Agents.Live(); n != 3 {
		t.Errorf("%d live slots after respawning, want 3", n)
	}
}

func TestUnfinishedReportsAgentsLeftMidRun(t *testing.T) {
	h := newHarness(t, options{latency: resources.Latency{Tool: 1, PerTool: map[string]uint64{"slow": 1000}}})
	bp := h.blueprint(reapBlueprint + `
[[stages]]
name = "wait"
available_tools = ["slow"]
`)
	// Two agents park on a slow call; one finishes first.
	waiting := h.profile("waiting", bp, scripted(t, "scripted:waiting", turn("waiting for it", call("slow", "x")), turn("never")), "")
	h.spawn(h.profile("quick", bp, scripted(t, "scripted:quick", turn("quick"), turn("")), ""), 1)
	late := h.spawn(waiting, 2)
	for _, e := range late {
		h.cursor.Get(e).Stage = 2 // start in "wait"
	}
	if stop := h.run(10); stop != ecs.MaxTicks {
		t.Fatalf("stop %v, want max_ticks", stop)
	}
	if h.record("quick-0").Status != components.Done {
		t.Fatal("quick agent did not finish")
	}
	left := systems.Unfinished(h.w, "the run ended early")
	if len(left) != 2 {
		t.Fatalf("unfinished records %+v, want 2", left)
	}
	for i, r := range left {
		if r.ID != uint64(i+2) || r.Name != "waiting-"+strconv.Itoa(i) || r.Group != "waiting" {
			t.Errorf("record %d: %+v, want agent %d in id order", i, r, i+2)
		}
		if r.Status != components.Active || r.Reason != "the run ended early" || r.Stage != "wait" || r.Output != "waiting for it" {
			t.Errorf("record %d: %+v, want active in wait with the given reason and the last text", i, r)
		}
		if r.Counters.ModelTurns != 1 || r.Counters.ToolCalls != 0 {
			t.Errorf("record %d counters %+v", i, r.Counters)
		}
	}
	if n := h.host.Records.Len(); n != 1 {
		t.Errorf("Unfinished added records: %d", n)
	}
	if n := h.w.Entities(); n != 2 {
		t.Errorf("Unfinished removed entities: %d left", n)
	}
}

// TestReapReleasesTheAgentsMemory: once an agent is reaped nothing the host holds still reaches
// its conversation (an inline model's reused view once did, until the next inline turn).
func TestReapReleasesTheAgentsMemory(t *testing.T) {
	h := newHarness(t, options{noTrace: true})
	h.host.Records = nil // the host on its own keeps no record of a top-level agent
	var task weak.Pointer[models.Message]
	model := inlineModel{id: "weak", turn: func(_ *models.State, v *models.View) (models.Reply, error) {
		task = weak.Make(&v.Messages[0])
		return models.Reply{Text: "done"}, nil
	}}
	h.spawn(h.profile("w", h.blueprint(oneStageBlueprint), model, "remember me"), 1)
	if stop := h.run(0); stop != ecs.FixedPoint || h.w.Entities() != 0 {
		t.Fatalf("stop %v with %d agents left", stop, h.w.Entities())
	}
	runtime.GC()
	if task.Value() != nil {
		t.Fatal("the reaped agent's conversation is still reachable")
	}
}
