package systems_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/warrenhq/warren/components"
	"github.com/warrenhq/warren/ecs"
	"github.com/warrenhq/warren/models"
	"github.com/warrenhq/warren/resources"
	"github.com/warrenhq/warren/subagents"
	"github.com/warrenhq/warren/systems"
)

// bossTemplate is a top-level agent that may use every sub-agent tool; %s adds lines to its
// [subagents] table. "phantom" is spawnable but no profile exists for it.
const bossTemplate = `
name = "boss"

[subagents]
spawnable = ["deaf", "lead", "loner", "phantom", "worker"]
%s

[[stages]]
name = "lead"
max_iterations = 50
available_tools = ["spawn_agent", "check_agent", "wait_for_agent", "send_to_agent", "kill_agent", "list_agents", "fan_out", "echo_inline", "park"]
`

// workerTemplate is a child that may spawn anything (it lists no spawnable keys); %s adds lines
// to its [subagents] table.
const workerTemplate = `
name = "worker"

[subagents]
%s

[[stages]]
name = "work"
max_iterations = 50
available_tools = ["spawn_agent", "check_agent", "wait_for_agent", "send_to_agent", "kill_agent", "list_agents", "fan_out", "echo_inline", "park", "ctx_probe", "jitter"]
`

// detachedBlueprint is a child that outlives its parent.
const detachedBlueprint = `
name = "loner"

[subagents]
detached = true

[[stages]]
name = "work"
max_iterations = 50
available_tools = ["echo_inline", "park"]
`

// deafBlueprint starts in a stage that does not read its inbox, then moves to one that does.
const deafBlueprint = `
name = "deaf"
entry = "heads_down"

[[stages]]
name = "heads_down"
accepts_messages = false
max_iterations = 50
available_tools = ["echo_inline"]
[[stages.transitions]]
on = "done"
to = "listening"

[[stages]]
name = "listening"
max_iterations = 50
available_tools = ["echo_inline"]
`

// treeResults lists the tool_result events of agent name as "tool|ok|content" or
// "tool|error|content".
func (h *harness) treeResults(name string) []string {
	h.tb.Helper()
	var out []string
	for _, ev := range h.events("tool_result", name) {
		state := "error"
		if ev.OK {
			state = "ok"
		}
		out = append(out, ev.Tool+"|"+state+"|"+ev.Content)
	}
	return out
}

// resultOf returns the content of agent name's only result of tool, failing when there is not
// exactly one.
func (h *harness) resultOf(name, tool string) event {
	h.tb.Helper()
	var found []event
	for _, ev := range h.events("tool_result", name) {
		if ev.Tool == tool {
			found = append(found, ev)
		}
	}
	if len(found) != 1 {
		h.tb.Fatalf("%s has %d %s results, want 1: %q", name, len(found), tool, h.treeResults(name))
	}
	return found[0]
}

// agentStatus decodes a status object a sub-agent tool returned.
func agentStatus(tb testing.TB, content string) subagents.AgentStatus {
	tb.Helper()
	var st subagents.AgentStatus
	if err := json.Unmarshal([]byte(content), &st); err != nil {
		tb.Fatalf("status %q: %v", content, err)
	}
	return st
}

// describeTree renders events for failure messages, one per line.
func describeTree(evs []event) string {
	var sb strings.Builder
	for _, ev := range evs {
		fmt.Fprintf(&sb, "\n  tick %d %s %s tool=%s status=%s reason=%q content=%q text=%q cascade=%v",
			ev.Tick, ev.Kind, ev.Name, ev.Tool, ev.Status, ev.Reason, ev.Content, ev.Text, ev.Cascade)
	}
	return sb.String()
}

// spawnCall is a scripted spawn_agent call; extra adds wait, seed_context or max_child_depth.
func spawnCall(bp, task string, extra map[string]any) models.ScriptedCall {
	args := map[string]any{"blueprint": bp, "task": task}
	for k, v := range extra {
		args[k] = v
	}
	return models.ScriptedCall{Tool: subagents.NameSpawn, Args: args}
}

// targetCall is a scripted call of a tool that names one agent (check, wait, kill).
func targetCall(tool, id string) models.ScriptedCall {
	return models.ScriptedCall{Tool: tool, Args: map[string]any{"id": id}}
}

// sendCall is a scripted send_to_agent call.
func sendCall(id, message string) models.ScriptedCall {
	return models.ScriptedCall{Tool: subagents.NameSend, Args: map[string]any{"id": id, "message": message}}
}

// listCall is a scripted list_agents call.
func listCall() models.ScriptedCall {
	return models.ScriptedCall{Tool: subagents.NameList, Args: map[string]any{}}
}

// seenTurn is what a recording model saw on one turn.
type seenTurn struct {
	stage    string
	messages []models.Message
}

// recorder is a scripted model that also records every view it is shown, by agent name.
type recorder struct {
	*models.Scripted
	seen map[string][]seenTurn
}

func newRecorder(tb testing.TB, id string, turns ...models.ScriptedTurn) *recorder {
	tb.Helper()
	return &recorder{Scripted: scripted(tb, id, turns...), seen: map[string][]seenTurn{}}
}

func (r *recorder) Turn(ctx context.Context, st *models.State, v *models.View) (models.Reply, error) {
	r.seen[v.Agent.Name] = append(r.seen[v.Agent.Name], seenTurn{stage: v.Stage, messages: slices.Clone(v.Messages)})
	return r.Scripted.Turn(ctx, st, v)
}

// contents lists the contents of messages of role.
func contents(msgs []models.Message, role models.Role) []string {
	var out []string
	for _, m := range msgs {
		if m.Role == role {
			out = append(out, m.Content)
		}
	}
	return out
}

// treeSpec shapes a world of one or more bosses and the children they may spawn.
type treeSpec struct {
	opt options
	// bossSub and workerSub add lines to the [subagents] tables of the boss and of the
	// worker-like children (keys worker, lead, mid, leaf).
	bossSub, workerSub string
	// bosses is how many top-level agents run boss (0: one), named boss-0, boss-1, ...
	bosses int
	boss   models.Model
	// bossTask is the bosses' first user message ("": none).
	bossTask string
	// children maps blueprint keys to the model their agents run: worker, lead, mid and leaf
	// run the worker blueprint, loner the detached one, deaf the deaf one.
	children map[string]models.Model
}

// treeWorld is a harness with the bosses spawned and the children's profiles registered.
type treeWorld struct {
	*harness
	bosses []ecs.Entity
}

// newTree builds the world spec describes.
func newTree(t testing.TB, spec treeSpec) *treeWorld {
	t.Helper()
	h := newHarness(t, spec.opt)
	worker := h.blueprint(fmt.Sprintf(workerTemplate, spec.workerSub))
	keys := make([]string, 0, len(spec.children))
	for key := range spec.children {
		keys = append(keys, key)
	}
	slices.Sort(keys)
	for _, key := range keys {
		bp := worker
		switch key {
		case "loner":
			bp = h.blueprint(detachedBlueprint)
		case "deaf":
			bp = h.blueprint(deafBlueprint)
		}
		h.spawnable(key, bp, spec.children[key])
	}
	bosses := h.spawn(h.profile("boss", h.blueprint(fmt.Sprintf(bossTemplate, spec.bossSub)), spec.boss, spec.bossTask), max(spec.bosses, 1))
	return &treeWorld{harness: h, bosses: bosses}
}

// park is a scripted call of the lane tool park, which the tests give a long latency so that
// the agent making it stays alive.
func park(text string) models.ScriptedCall { return call("park", text) }

// parkFor is the latency that keeps a parked agent alive for ticks ticks.
func parkFor(ticks uint64) options {
	return options{latency: resources.Latency{PerTool: map[string]uint64{"park": ticks}}}
}

// runAll runs to a fixed point, failing on any other stop.
func (h *harness) runAll() {
	h.tb.Helper()
	if stop := h.run(1000); stop != ecs.FixedPoint {
		h.tb.Fatalf("stop %v, want a fixed point", stop)
	}
}

// wantRecord checks the final record of name.
func (h *harness) wantRecord(name string, status components.StatusKind, reasonPart string) components.FinalRecord {
	h.tb.Helper()
	r := h.record(name)
	if r.Status != status || !strings.Contains(r.Reason, reasonPart) {
		h.tb.Errorf("%s ended %v %q, want %v with a reason containing %q", name, r.Status, r.Reason, status, reasonPart)
	}
	return r
}

// withProbe returns opt with a probe appended to the pipeline: fn runs at the end of every tick,
// after reap.
func withProbe(opt options, fn func(w *ecs.World)) options {
	opt.systems = append(systems.Pipeline(), &probe{fn: fn})
	return opt
}
