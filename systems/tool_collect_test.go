package systems_test

import (
	"slices"
	"strconv"
	"testing"

	"github.com/warrenhq/warren/components"
	"github.com/warrenhq/warren/ecs"
	"github.com/warrenhq/warren/models"
	"github.com/warrenhq/warren/resources"
	"github.com/warrenhq/warren/systems"
)

// perToolLatency gives fast, medium and slow their own delays; other tools take one tick.
var perToolLatency = resources.Latency{Tool: 1, PerTool: map[string]uint64{"fast": 2, "medium": 3, "slow": 5}}

func TestToolCollectHonoursPerToolLatency(t *testing.T) {
	type outstandingAt struct {
		tick uint64
		n    int32
	}
	var mixed []outstandingAt
	var h *harness
	watch := &probe{fn: func(w *ecs.World) {
		for _, e := range h.entities() {
			if h.data(e).Name == "mixed-0" && h.phase(e) == "AwaitingTools" {
				mixed = append(mixed, outstandingAt{w.Tick(), h.data(e).Work.Outstanding})
			}
		}
	}}
	h = newHarness(t, options{latency: perToolLatency, systems: append(systems.Pipeline(), watch)})
	bp := h.blueprint(oneStageBlueprint)
	spawn := func(group string, calls ...models.ScriptedCall) {
		h.spawn(h.profile(group, bp, scripted(t, "scripted:"+group, turn("", calls...), turn("done")), ""), 1)
	}
	spawn("fast", call("fast", "f"))
	spawn("slow", call("slow", "s"))
	spawn("default", call("echo", "e"))
	// Called slowest first: results must still be appended in call order, not arrival order.
	spawn("mixed", call("slow", "1"), call("fast", "2"), call("echo_inline", "3"), call("medium", "4"))
	if stop := h.run(100); stop != ecs.FixedPoint {
		t.Fatalf("stop %v", stop)
	}

	for _, tc := range []struct {
		name  string
		tick  uint64 // when the turn's results are recorded
		tools []string
	}{
		{name: "fast-0", tick: 2, tools: []string{"fast"}},
		{name: "slow-0", tick: 5, tools: []string{"slow"}},
		{name: "default-0", tick: 1, tools: []string{"echo"}},
		{name: "mixed-0", tick: 5, tools: []string{"slow", "fast", "echo_inline", "medium"}},
	} {
		results := h.events("tool_result", tc.name)
		var got []string
		for _, ev := range results {
			got = append(got, ev.Tool)
			if ev.Tick != tc.tick {
				t.Errorf("%s: %s result recorded at tick %d, want %d", tc.name, ev.Tool, ev.Tick, tc.tick)
			}
		}
		if !slices.Equal(got, tc.tools) {
			t.Errorf("%s: results in order %v, want call order %v", tc.name, got, tc.tools)
		}
		// The next model turn follows the tick the last result came back.
		turns := h.events("model_turn", tc.name)
		if len(turns) != 2 || turns[1].Tick != tc.tick+1 {
			t.Errorf("%s: model turns %+v, want the second at tick %d", tc.name, turns, tc.tick+1)
		}
		if r := h.record(tc.name); r.Status != components.Done {
			t.Errorf("%s: %v %q", tc.name, r.Status, r.Reason)
		}
	}
	contents := []string{}
	for _, ev := range h.events("tool_result", "mixed-0") {
		contents = append(contents, ev.Content)
	}
	if want := []string{"slow: 1", "fast: 2", "echo: 3", "medium: 4"}; !slices.Equal(contents, want) {
		t.Errorf("mixed results %v, want %v", contents, want)
	}
	// Outstanding calls of the mixed agent at the end of every tick it waits: three from tick 0,
	// two once fast is back at tick 2, one once medium is back at tick 3, none (it moved on) once
	// slow is back at tick 5. Ticks 1 and 4 run because other agents had work then.
	want := []outstandingAt{{0, 3}, {1, 3}, {2, 2}, {3, 1}, {4, 1}}
	if !slices.Equal(mixed, want) {
		t.Errorf("mixed agent outstanding by tick %v, want %v", mixed, want)
	}
}

func TestToolCollectAppendsResultsInCallOrder(t *testing.T) {
	var seen []models.Message
	model := inlineModel{id: "inline:order", turn: func(_ *models.State, v *models.View) (models.Reply, error) {
		if v.Turn == 0 {
			return models.Reply{Calls: []models.ToolCall{
				{Name: "slow", Args: []byte(`{"text":"a"}`)},
				{Name: "medium", Args: []byte(`{"text":"b"}`)},
				{Name: "fast", Args: []byte(`{"text":"c"}`)},
			}}, nil
		}
		seen = append([]models.Message(nil), v.Messages...)
		return models.Reply{Text: "ok"}, nil
	}}
	h := newHarness(t, options{latency: perToolLatency})
	h.spawn(h.profile("g", h.blueprint(oneStageBlueprint), model, "task"), 1)
	h.run(100)

	var got []string
	for _, m := range seen[2:] {
		if m.Role != models.RoleTool {
			t.Fatalf("message %+v is not a tool result", m)
		}
		got = append(got, m.CallID+"="+m.Content)
	}
	want := []string{"g-0-t0-c0=slow: a", "g-0-t0-c1=medium: b", "g-0-t0-c2=fast: c"}
	if !slices.Equal(got, want) {
		t.Errorf("tool messages %v, want %v", got, want)
	}
}

func TestToolCollectIgnoresResultsOfRemovedAgents(t *testing.T) {
	var h *harness
	var replacement []ecs.Entity
	var victim ecs.Entity
	removed := false
	// At tick 1 the first agent is removed while its slow call runs, and a new agent is spawned
	// that may reuse its entity slot; the stale result (due at tick 5) must reach neither.
	killer := &probe{fn: func(w *ecs.World) {
		if w.Tick() != 1 || removed {
			return
		}
		removed = true
		victim = h.entities()[0]
		w.RemoveEntity(victim)
		bp := h.blueprint(oneStageBlueprint)
		replacement = h.spawn(h.profile("late", bp, scripted(t, "scripted:late", turn("", call("medium", "mine")), turn("done")), ""), 1)
	}}
	h = newHarness(t, options{latency: perToolLatency, systems: append(systems.Pipeline(), killer)})
	bp := h.blueprint(oneStageBlueprint)
	h.spawn(h.profile("doomed", bp, scripted(t, "scripted:doomed", turn("", call("slow", "lost")), turn("never")), ""), 1)
	h.spawn(h.profile("bystander", bp, scripted(t, "scripted:bystander", turn("", call("slow", "kept")), turn("done")), ""), 1)

	if stop := h.run(100); stop != ecs.FixedPoint {
		t.Fatalf("stop %v, want fixed_point", stop)
	}
	if !removed || len(replacement) != 1 {
		t.Fatal("the probe did not run")
	}
	if replacement[0].ID() != victim.ID() || replacement[0] == victim {
		t.Errorf("the replacement (%v) does not reuse the removed entity's slot (%v): the test lost its edge", replacement[0], victim)
	}
	if res := h.events("tool_result", "doomed-0"); len(res) != 0 {
		t.Errorf("a removed agent got results: %+v", res)
	}
	if _, ok := h.host.Records.Get(1); ok {
		t.Error("a removed agent was reaped")
	}
	if r := h.record("bystander-0"); r.Status != components.Done || r.Counters.ToolCalls != 1 {
		t.Errorf("bystander %+v", r)
	}
	late := h.record("late-0")
	if late.Status != components.Done || late.Counters.ToolCalls != 1 {
		t.Errorf("late agent %+v", late)
	}
	res := h.events("tool_result", "late-0")
	// Spawned at the end of tick 1, it enters and calls at tick 2; medium takes 3 ticks.
	if len(res) != 1 || res[0].Content != "medium: mine" || res[0].Tick != 2+3 {
		t.Errorf("late agent's results %+v, want its own medium result at tick 5", res)
	}
	if n := h.host.Lanes.Tool.Pending(); n != 0 {
		t.Errorf("tool lane still owes %d jobs", n)
	}
}

// A tool result must never reach the model without the assistant turn that asked for it, and an
// assistant turn's calls must never lose their results while the turn is kept: live back ends
// (OpenAI-compatible APIs) reject such a conversation. Blueprints accept max_messages down to 4.
func TestConversationKeepsCallsAndResultsTogether(t *testing.T) {
	cases := []struct {
		name  string
		task  string
		calls int
	}{
		{name: "with a task, three calls fill a small conversation", task: "task", calls: 3},
		{name: "without a task, one call per turn", calls: 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var problems []string
			model := inlineModel{id: "inline:pairs", turn: func(_ *models.State, v *models.View) (models.Reply, error) {
				problems = append(problems, unpaired(v.Turn, v.Messages)...)
				if v.Turn >= 3 {
					return models.Reply{Text: "done"}, nil
				}
				calls := make([]models.ToolCall, tc.calls)
				for i := range calls {
					calls[i] = models.ToolCall{Name: "echo_inline", Args: []byte(`{"text":"x"}`)}
				}
				return models.Reply{Text: "working", Calls: calls}, nil
			}}
			h := newHarness(t, options{})
			bp := h.blueprint(`
name = "tight"
max_messages = 4
[[stages]]
name = "work"
available_tools = ["echo_inline"]
`)
			h.spawn(h.profile("g", bp, model, tc.task), 1)
			h.run(50)
			for _, p := range problems {
				t.Error(p)
			}
		})
	}
}

// unpaired lists tool results whose call no kept assistant message made, and calls of a kept
// assistant message that have no result (a model turn starts only after every call of the
// previous turn has come back).
func unpaired(turn int, msgs []models.Message) []string {
	var out []string
	asked := map[string]bool{}
	answered := map[string]bool{}
	for _, m := range msgs {
		switch m.Role {
		case models.RoleAssistant:
			for _, c := range m.Calls {
				asked[c.ID] = true
			}
		case models.RoleTool:
			if !asked[m.CallID] {
				out = append(out, "turn "+strconv.Itoa(turn)+": tool result "+m.CallID+" without the assistant turn that asked for it")
			}
			answered[m.CallID] = true
		}
	}
	for _, m := range msgs {
		for _, c := range m.Calls {
			if !answered[c.ID] {
				out = append(out, "turn "+strconv.Itoa(turn)+": call "+c.ID+" kept without its result")
			}
		}
	}
	return out
}
