package systems_test

import (
	"strings"
	"testing"

	"github.com/warrenhq/warren/blueprint"
	"github.com/warrenhq/warren/components"
	"github.com/warrenhq/warren/ecs"
	"github.com/warrenhq/warren/models"
	"github.com/warrenhq/warren/systems"
)

// conditionsBlueprint routes out of "check" by conditions over each input a condition reads, in
// file order, with the fallback last; "errs" holds a condition that fails at run time.
const conditionsBlueprint = `
name = "gated"
entry = "check"

[[stages]]
name = "check"
available_tools = ["read_file", "write_file"]
  [[stages.transitions]]
  on = "done"
  when = 'result?.verdict == "ship" && !result_error'
  to = "by_result"
  set = { verdict = "result.verdict", seen = "(memory.seen ?? 0) + 1" }
  [[stages.transitions]]
  on = "done"
  when = 'tools.read_file == "ok" && result == nil'
  to = "by_tool"
  [[stages.transitions]]
  on = "done"
  when = 'text contains "SHIP"'
  to = "by_text"
  [[stages.transitions]]
  on = "done"
  when = "visit >= 2 && iteration == 4"
  to = "by_counts"
  [[stages.transitions]]
  on = "done"
  when = "counters.tool_errors >= 3"
  to = "by_counters"
  [[stages.transitions]]
  on = "done"
  when = 'len(inbox) > 0 && inbox[0] == "stop"'
  end = "failed"
  [[stages.transitions]]
  on = "done"
  when = 'memory.mode == "fast" && group == "g" && index == 0 && name == "g-0" && stage == "check" && outcome == "done"'
  end = "done"
  set = { mode = "nil" }
  [[stages.transitions]]
  on = "always"
  to = "fallback"

[[stages]]
name = "by_result"
[[stages]]
name = "by_tool"
[[stages]]
name = "by_text"
[[stages]]
name = "by_counts"
[[stages]]
name = "by_counters"
[[stages]]
name = "fallback"

[[stages]]
name = "errs"
  [[stages.transitions]]
  on = "done"
  when = "memory.n + 1 > 2"
  to = "fallback"
  [[stages.transitions]]
  on = "always"
  to = "fallback"
`

// TestConditionInputs puts an agent at the end of a visit of "check" with one input prepared
// and checks which transition fires: each input kind reaches the condition written for it, the
// first match wins (a result that would also match later conditions goes by_result), and the
// fallback catches the rest.
func TestConditionInputs(t *testing.T) {
	cases := []struct {
		name    string
		prepare func(d *components.AgentData, cur *components.Cursor, c *components.Counters)
		stage   string // where the agent goes; "" when it ends
		status  components.StatusKind
		memory  map[string]string // keys the set wrote, as JSON
	}{
		{"a JSON result", func(d *components.AgentData, _ *components.Cursor, _ *components.Counters) {
			d.Output = &components.StageOutput{Result: ` {"verdict": "ship"} `, HasResult: true, Text: "SHIP"}
		}, "by_result", components.Active, map[string]string{"verdict": `"ship"`, "seen": "1"}},
		{"an error result does not count", func(d *components.AgentData, _ *components.Cursor, _ *components.Counters) {
			d.Output = &components.StageOutput{Result: `{"verdict": "ship"}`, HasResult: true, ResultError: true}
		}, "fallback", components.Active, nil},
		// A result that is text is a string, which has no fields: reading one fails the agent
		// (docs/blueprints.md: guard with type(result) == "map").
		{"a text result is a string", func(d *components.AgentData, _ *components.Cursor, _ *components.Counters) {
			d.Output = &components.StageOutput{Result: `ship it`, HasResult: true}
		}, "", components.Failed, nil},
		{"a named tool's last result", func(d *components.AgentData, _ *components.Cursor, _ *components.Counters) {
			d.Output = &components.StageOutput{Tools: []components.ToolOutput{{Tool: "read_file", Content: `"ok"`}}}
		}, "by_tool", components.Active, nil},
		{"the model's final text", func(d *components.AgentData, _ *components.Cursor, _ *components.Counters) {
			d.Output = &components.StageOutput{Text: "Ready to SHIP."}
		}, "by_text", components.Active, nil},
		{"visit and iteration counts", func(d *components.AgentData, cur *components.Cursor, _ *components.Counters) {
			d.Visits[cur.Stage], cur.Iteration = 2, 4
		}, "by_counts", components.Active, nil},
		{"counters", func(_ *components.AgentData, _ *components.Cursor, c *components.Counters) {
			c.ToolErrors = 3
		}, "by_counters", components.Active, nil},
		{"the inbox", func(d *components.AgentData, _ *components.Cursor, _ *components.Counters) {
			d.Inbox = []models.Message{{Role: models.RoleUser, Content: "stop"}}
		}, "", components.Failed, nil},
		{"memory and identity", func(d *components.AgentData, _ *components.Cursor, _ *components.Counters) {
			if err := d.Memory.Set("mode", "fast"); err != nil {
				t.Fatal(err)
			}
		}, "", components.Done, map[string]string{"mode": "null"}},
		{"nothing matches: the fallback", func(*components.AgentData, *components.Cursor, *components.Counters) {}, "fallback", components.Active, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, options{systems: []ecs.System{&systems.Transition{}}})
			bp := h.blueprint(conditionsBlueprint)
			e := h.spawn(h.profile("g", bp, scripted(t, "scripted:g"), ""), 1)[0]
			cur, d := h.cursor.Get(e), h.data(e)
			cur.Stage, cur.Outcome = 0, blueprint.OutcomeDone
			d.Visits[0] = 1
			tc.prepare(d, cur, h.counters.Get(e))
			h.moveTo(e, "ResolveTransition")
			h.step()
			if tc.stage != "" {
				if got := bp.Stages[cur.Stage].Name; h.phase(e) != "Entering" || got != tc.stage {
					t.Fatalf("phase %s stage %s, want Entering %s", h.phase(e), got, tc.stage)
				}
				tr := h.events("transition", "g-0")
				if len(tr) != 1 || tr[0].To != tc.stage || (tc.stage == "fallback") != (tr[0].When == "") {
					t.Fatalf("transition events %+v", tr)
				}
			} else if h.phase(e) != "Terminal" || h.status.Get(e).Kind != tc.status {
				t.Fatalf("phase %s status %v (%s), want Terminal %v", h.phase(e), h.status.Get(e).Kind, d.Reason, tc.status)
			}
			mem := h.events("memory", "g-0")
			if len(mem) != len(tc.memory) {
				t.Fatalf("memory events %+v, want %v", mem, tc.memory)
			}
			for _, ev := range mem {
				if tc.memory[ev.Key] != ev.Value || ev.Stage != "check" {
					t.Errorf("memory event %+v, want %s = %s", ev, ev.Key, tc.memory[ev.Key])
				}
				if got, ok := d.Memory.Get(ev.Key); ev.Value == "null" && ok || ev.Value != "null" && got != ev.Value {
					t.Errorf("memory holds %s = %q (%v), the trace says %s", ev.Key, got, ok, ev.Value)
				}
			}
		})
	}
}

// TestConditionFailsTheAgent: a condition that cannot be evaluated (arithmetic on a key never
// set) fails the agent with a reason naming the transition and the condition, not a panic and
// not a silent fallback.
func TestConditionFailsTheAgent(t *testing.T) {
	h := newHarness(t, options{systems: []ecs.System{&systems.Transition{}}})
	bp := h.blueprint(conditionsBlueprint)
	e := h.spawn(h.profile("g", bp, scripted(t, "scripted:g"), ""), 1)[0]
	errs, _ := bp.Stage("errs")
	cur := h.cursor.Get(e)
	cur.Stage, cur.Outcome = int32(errs.Index), blueprint.OutcomeDone
	h.moveTo(e, "ResolveTransition")
	h.step()
	reason := h.data(e).Reason
	if h.phase(e) != "Terminal" || h.status.Get(e).Kind != components.Failed ||
		!strings.Contains(reason, "condition failed: stages[7].transitions[0].when: memory.n + 1 > 2: invalid operation") {
		t.Fatalf("phase %s status %v reason %q", h.phase(e), h.status.Get(e).Kind, reason)
	}
}
