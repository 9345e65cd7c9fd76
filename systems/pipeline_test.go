package systems_test

import (
	"bytes"
	"fmt"
	"runtime"
	"slices"
	"testing"

	"github.com/warrenhq/warren/components"
	"github.com/warrenhq/warren/ecs"
	"github.com/warrenhq/warren/models"
	"github.com/warrenhq/warren/resources"
)

const pipelineBlueprint = `
name = "pipeline"
entry = "gather"

[[stages]]
name = "gather"
available_tools = ["echo_inline", "echo", "fast", "medium", "slow", "jitter", "todo_add"]
[[stages.transitions]]
on = "done"
to = "report"

[[stages]]
name = "report"
available_tools = ["echo_inline", "jitter", "slow"]
`

// mixedRun runs a world of several groups over the two-stage blueprint: scripted agents with
// inline and lane tools of mixed latencies (through small lanes, so calls also queue for slots),
// and agents of a lane model that draws from its random stream. It returns the harness after the
// fixed point.
func mixedRun(t *testing.T, perGroup int) *harness {
	t.Helper()
	h := newHarness(t, options{
		latency:      resources.Latency{Model: 2, Tool: 1, PerTool: map[string]uint64{"fast": 1, "medium": 3, "slow": 7, "jitter": 2}},
		toolCapacity: 8, modelCapacity: 4,
	})
	bp := h.blueprint(pipelineBlueprint)
	workers := scripted(t, "scripted:worker",
		turn("gathering {{.Name}}", call("slow", "{{.Name}}"), call("jitter", "{{.Name}}-{{.Turn}}"), call("fast", "f"), call("echo_inline", "i")),
		turn("more", call("medium", "m"), models.ScriptedCall{Tool: "todo_add", Args: map[string]any{"text": "report on {{.Name}}"}}),
		turn("gathered"),
		turn("reporting", call("jitter", "{{.Name}}{{.Name}}"), call("slow", "s")),
		turn("report for {{.Name}}"))
	thinker := laneModel{id: "lane:thinker", turn: func(st *models.State, v *models.View) (models.Reply, error) {
		st.Cursor++
		draw := v.Rand.IntN(1000)
		if v.Iteration == 0 {
			return models.Reply{Text: fmt.Sprintf("%s thinks %d", v.Stage, draw), Calls: []models.ToolCall{
				{Name: "jitter", Args: []byte(fmt.Sprintf(`{"text":"%d"}`, draw))},
				{Name: "echo", Args: []byte(`{"text":"e"}`)},
			}}, nil
		}
		return models.Reply{Text: fmt.Sprintf("%s concluded after %d turns", v.Stage, st.Cursor)}, nil
	}}
	h.spawn(h.profile("worker", bp, workers, "gather facts"), perGroup)
	h.spawn(h.profile("thinker", bp, thinker, ""), perGroup)
	h.spawn(h.profile("straggler", bp, workers, "late to the party"), perGroup)
	if stop := h.run(10_000); stop != ecs.FixedPoint {
		t.Fatalf("stop %v, want fixed_point", stop)
	}
	return h
}

func TestPipelineRunsTwoStagesToAFixedPoint(t *testing.T) {
	const perGroup = 5
	h := mixedRun(t, perGroup)

	if n := h.host.Records.Len(); n != 3*perGroup {
		t.Fatalf("%d records, want %d", n, 3*perGroup)
	}
	for _, r := range h.host.Records.All() {
		if r.Status != components.Done || r.Stage != "report" || r.Counters.Transitions != 1 {
			t.Errorf("%s: %v in %s after %d transitions (%s)", r.Name, r.Status, r.Stage, r.Counters.Transitions, r.Reason)
		}
	}
	if r := h.record("worker-3"); r.Output != "report for worker-3" || r.Counters.ModelTurns != 5 || r.Counters.ToolCalls != 8 {
		t.Errorf("worker-3 %+v", r)
	}
	if r := h.record("thinker-0"); r.Output != "report concluded after 4 turns" || r.Counters.ModelTurns != 4 || r.Counters.ToolCalls != 4 {
		t.Errorf("thinker-0 %+v", r)
	}
	if h.w.Entities() != 0 || h.host.Agents.Live() != 0 || h.host.Lanes.Tool.Pending() != 0 || h.host.Lanes.Model.Pending() != 0 {
		t.Errorf("left behind: %d entities, %d slots, %d tool jobs, %d model jobs",
			h.w.Entities(), h.host.Agents.Live(), h.host.Lanes.Tool.Pending(), h.host.Lanes.Model.Pending())
	}

	want := []string{
		"spawn", "stage_enter", "model_turn", "tool_call", "tool_call", "tool_call", "tool_call",
		"tool_result", "tool_result", "tool_result", "tool_result",
		"model_turn", "tool_call", "tool_call", "tool_result", "tool_result",
		"model_turn", "transition", "stage_enter",
		"model_turn", "tool_call", "tool_call", "tool_result", "tool_result",
		"model_turn", "transition", "terminal", "reap",
	}
	if got := kinds(h.events("", "worker-0")); !slices.Equal(got, want) {
		t.Errorf("worker-0 events\n got %v\nwant %v", got, want)
	}
	all := h.events("", "")
	var last uint64
	for i, ev := range all {
		if ev.Seq != uint64(i+1) {
			t.Fatalf("event %d has seq %d", i, ev.Seq)
		}
		if ev.Tick < last {
			t.Fatalf("event %d at tick %d after tick %d", i, ev.Tick, last)
		}
		last = ev.Tick
	}
	// The fixed point is the first tick after the last reap that changes nothing.
	if h.w.Tick() != last+1 {
		t.Errorf("stopped at tick %d, last event at tick %d", h.w.Tick(), last)
	}
}

func TestPipelineTraceIsByteIdenticalAcrossRuns(t *testing.T) {
	first := mixedRun(t, 8).traceBytes()
	second := mixedRun(t, 8).traceBytes()
	if !bytes.Equal(first, second) {
		t.Fatalf("two runs wrote different traces:\n%s", firstDifference(first, second))
	}
}

func TestPipelineTraceDoesNotDependOnGOMAXPROCS(t *testing.T) {
	previous := runtime.GOMAXPROCS(0)
	t.Cleanup(func() { runtime.GOMAXPROCS(previous) })

	runtime.GOMAXPROCS(1)
	one := mixedRun(t, 12).traceBytes()
	runtime.GOMAXPROCS(4)
	four := mixedRun(t, 12).traceBytes()
	if !bytes.Equal(one, four) {
		t.Fatalf("GOMAXPROCS=1 and GOMAXPROCS=4 wrote different traces:\n%s", firstDifference(one, four))
	}
	if n := bytes.Count(one, []byte(`"kind":"tool_result"`)); n < 12*3*4 {
		t.Errorf("only %d tool results: the run did not exercise the lanes", n)
	}
}

// firstDifference shows the first line where two traces differ.
func firstDifference(a, b []byte) string {
	la, lb := bytes.Split(a, []byte("\n")), bytes.Split(b, []byte("\n"))
	for i := range min(len(la), len(lb)) {
		if !bytes.Equal(la[i], lb[i]) {
			return fmt.Sprintf("line %d:\n  %s\n  %s", i+1, la[i], lb[i])
		}
	}
	return fmt.Sprintf("one trace is a prefix of the other (%d vs %d lines)", len(la), len(lb))
}
