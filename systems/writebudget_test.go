package systems_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/warrenhq/warren/ecs"
	"github.com/warrenhq/warren/gate"
	"github.com/warrenhq/warren/models"
	"github.com/warrenhq/warren/systems"
	"github.com/warrenhq/warren/tools"
)

// budgetBlueprint lets write_file run unasked (a blueprint may loosen it).
const budgetBlueprint = `
name = "budget"

[tool_permissions]
write_file = "allow"

[[stages]]
name = "work"
available_tools = ["todo_add", "write_file"]
`

// todoCall is a scripted todo_add call (inline, writes no file).
func todoCall(text string) models.ScriptedCall {
	return models.ScriptedCall{Tool: tools.NameTodoAdd, Args: map[string]any{"text": text}}
}

// budgetSeen is what a probe saw of one agent's write budget at the end of one tick.
type budgetSeen struct {
	tick   uint64
	budget *tools.WriteBudget
	spent  int64
}

// budgetWatch is a probe recording, per agent and tick, the agent's write budget.
func budgetWatch(h **harness, seen map[string][]budgetSeen) *probe {
	return &probe{fn: func(w *ecs.World) {
		for _, e := range (*h).entities() {
			d := (*h).data(e)
			seen[d.Name] = append(seen[d.Name], budgetSeen{w.Tick(), d.Tools.Writes, d.Tools.Writes.Spent()})
		}
	}}
}

// One write budget per agent, allocated by its first lane call and shared by every later turn:
// three 8-byte writes against a 20-byte run budget leave the third refused.
func TestWriteBudgetIsPerAgentAndSharedAcrossTurns(t *testing.T) {
	var h *harness
	seen := map[string][]budgetSeen{}
	h = newHarness(t, options{gate: gate.Standard{}, systems: append(systems.Pipeline(), budgetWatch(&h, seen))})
	bp := h.blueprint(budgetBlueprint)
	model := scripted(t, "scripted:budget",
		turn("", todoCall("write three files")),
		turn("", writeCall("a.txt", "12345678")),
		turn("", writeCall("b.txt", "12345678")),
		turn("", writeCall("c.txt", "12345678")),
		turn("done"))
	h.spawn(h.gatedProfile("g", bp, model, policySpec{perRun: 20}), 2)
	h.runToEnd("g-0")
	h.runToEnd("g-1")

	want := []string{
		"ok|",
		`ok|Wrote 8 bytes to "a.txt" (new file)`,
		`ok|Wrote 8 bytes to "b.txt" (new file)`,
		"error|write refused: 8 bytes would exceed the per-run write budget of 20 bytes (4 bytes left)",
	}
	budgets := map[*tools.WriteBudget]string{}
	for _, name := range []string{"g-0", "g-1"} {
		got := h.results(name)
		if len(got) != len(want) || !strings.HasPrefix(got[0], want[0]) || !slices.Equal(got[1:], want[1:]) {
			t.Errorf("%s: results %q, want %q", name, got, want)
		}
		for file, wantExists := range map[string]bool{"a.txt": true, "b.txt": true, "c.txt": false} {
			if _, exists := h.fileIn("g", name, file); exists != wantExists {
				t.Errorf("%s: %s exists: %v, want %v", name, file, exists, wantExists)
			}
		}
		// No budget after tick 0, where the agent made only an inline call; from tick 1, where
		// its first write went to the lane, one budget for the rest of the run.
		ticks := seen[name]
		if len(ticks) < 3 || ticks[0].tick != 0 || ticks[0].budget != nil || ticks[1].tick != 1 || ticks[1].budget == nil {
			t.Fatalf("%s: budgets by tick %+v, want none at tick 0 and one from tick 1", name, ticks)
		}
		budget := ticks[1].budget
		for _, s := range ticks[1:] {
			if s.budget != budget {
				t.Errorf("%s: the budget changed at tick %d", name, s.tick)
			}
		}
		if perCall, perRun := budget.Limits(); perCall != 0 || perRun != 20 {
			t.Errorf("%s: budget limits %d/%d, want none/20", name, perCall, perRun)
		}
		if last := seen[name][len(seen[name])-1]; last.spent != 16 {
			t.Errorf("%s: spent %d, want 16 (two writes; the refused one is not charged)", name, last.spent)
		}
		if other, shared := budgets[budget]; shared {
			t.Errorf("%s shares its budget with %s", name, other)
		}
		budgets[budget] = name
	}
}

func TestWriteBudgetPerCallCeiling(t *testing.T) {
	h := newHarness(t, options{gate: gate.Standard{}})
	bp := h.blueprint(budgetBlueprint)
	model := scripted(t, "scripted:percall", turn("", writeCall("big.txt", "123456"), writeCall("small.txt", "12345")), turn("done"))
	h.spawn(h.gatedProfile("g", bp, model, policySpec{perCall: 5, perRun: 100}), 1)
	h.runToEnd("g-0")
	want := []string{
		"error|write refused: 6 bytes exceed the per-call write budget of 5 bytes",
		`ok|Wrote 5 bytes to "small.txt" (new file)`,
	}
	if got := h.results("g-0"); !slices.Equal(got, want) {
		t.Errorf("results %q, want %q", got, want)
	}
}

// A profile without a policy has no write ceilings: no budget is allocated and nothing is refused.
func TestNoPolicyNoWriteBudget(t *testing.T) {
	var h *harness
	seen := map[string][]budgetSeen{}
	h = newHarness(t, options{systems: append(systems.Pipeline(), budgetWatch(&h, seen))})
	bp := h.blueprint(budgetBlueprint)
	h.spawn(h.profile("g", bp, scripted(t, "scripted:nobudget", turn("", writeCall("a.txt", "12345678")), turn("done")), ""), 1)
	h.runToEnd("g-0")
	if got := h.results("g-0"); len(got) != 1 || got[0] != `ok|Wrote 8 bytes to "a.txt" (new file)` {
		t.Errorf("results %q", got)
	}
	for _, s := range seen["g-0"] {
		if s.budget != nil {
			t.Errorf("tick %d: a budget without a policy", s.tick)
		}
	}
}
