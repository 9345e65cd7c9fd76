package systems_test

import (
	"testing"
)

const detachBlueprint = `
name = "bg"

[[stages]]
name = "work"
available_tools = ["detach", "echo"]
accepts_messages = true
max_iterations = 5
`

// TestBackgroundDeliversAtTheNextTick: a call's detached work reports into its agent's inbox at
// the end of the tick after the one its result was filed in, in agent order, and the agent
// reads the report at its next turn; work of an agent that has ended is never waited for.
func TestBackgroundDeliversAtTheNextTick(t *testing.T) {
	h := newHarness(t, options{})
	bp := h.blueprint(detachBlueprint)
	model := scripted(t, "scripted:bg",
		turn("", call("detach", "job of {{.Name}}")),
		turn("", call("echo", "meanwhile")),
		turn("done"),
	)
	h.spawn(h.profile("g", bp, model, ""), 2)
	h.run(20)

	messages := h.events("message", "")
	if len(messages) != 2 {
		t.Fatalf("%d messages, want 2", len(messages))
	}
	for i, name := range []string{"g-0", "g-1"} {
		var started uint64
		for _, r := range h.events("tool_result", name) {
			if r.Tool == "detach" {
				started = r.Tick
			}
		}
		m := messages[i]
		if m.Name != name || m.Text != "job of "+name+" ended" || m.Via != "background" || m.Tick != started+1 {
			t.Errorf("message %d: %+v, want %s's report at tick %d", i, m, name, started+1)
		}
		// The agent's next turn comes after the report, which it read: it ended done.
		if r := h.record(name); r.Status.String() != "done" {
			t.Errorf("%s ended %v", name, r.Status)
		}
	}
	if got := h.runs["detach"].Load(); got != 2 {
		t.Errorf("%d reports taken, want 2", got)
	}
}

const endAtOnceBlueprint = `
name = "quick"

[[stages]]
name = "work"
available_tools = ["detach"]
max_iterations = 1
`

// TestBackgroundDropsWorkOfEndedAgents: an agent that ends in the tick its work is due is reaped
// first, and the work is not waited for (reap's sandbox teardown ended it).
func TestBackgroundDropsWorkOfEndedAgents(t *testing.T) {
	h := newHarness(t, options{})
	bp := h.blueprint(endAtOnceBlueprint)
	model := scripted(t, "scripted:quick", turn("", call("detach", "job")))
	h.spawn(h.profile("g", bp, model, ""), 1)
	h.run(20)
	if got := h.runs["detach"].Load(); got != 0 {
		t.Errorf("%d reports taken from the work of an ended agent, want 0", got)
	}
	if msgs := h.events("message", ""); len(msgs) != 0 {
		t.Errorf("messages %+v, want none", msgs)
	}
}
