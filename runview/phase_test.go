package runview_test

import (
	"encoding/json"
	"fmt"
	"strconv"
	"testing"

	"github.com/warrenhq/warren/runview"
)

// TestPhases applies golden traces up to a seq and checks the phase one agent shows then: every
// rule of PhaseNames, on the events that make it.
func TestPhases(t *testing.T) {
	tests := []struct {
		name  string
		trace string
		seq   int64
		agent string
		phase string
	}{
		{"spawn enters", "gated", 1, "editors-0", "entering"},
		{"stage_enter readies", "gated", 5, "editors-0", "ready_to_infer"},
		{"a turn with calls awaits tools", "gated", 9, "editors-0", "awaiting_tools"},
		{"a prompt awaits a person", "gated", 14, "editors-0", "awaiting_prompt"},
		{"an answer awaits the tool again", "gated", 22, "editors-0", "awaiting_tools"},
		{"the last result readies", "gated", 23, "editors-0", "ready_to_infer"},
		{"two calls: awaiting both", "gated", 12, "planners-0", "awaiting_tools"},
		{"a denied call while a prompt is open", "gated", 21, "planners-0", "awaiting_prompt"},
		{"one result of two", "gated", 41, "planners-0", "awaiting_tools"},
		{"the second result of two", "gated", 42, "planners-0", "ready_to_infer"},
		{"a turn without calls resolves", "gated", 43, "planners-0", "resolve_transition"},
		{"a transition enters the next stage", "gated", 47, "planners-0", "entering"},
		{"an edge out of the graph still resolves", "gated", 65, "planners-0", "resolve_transition"},
		{"terminal", "gated", 66, "planners-0", "terminal"},
		{"reaped stays terminal", "gated", 67, "planners-0", "terminal"},
		{"wait_start waits", "wait_storm", 4002, "parents-000", "waiting"},
		{"wait_end with the call's result outstanding", "wait_storm", 9009, "parents-000", "awaiting_tools"},
		{"the waited call's result", "wait_storm", 9010, "parents-000", "ready_to_infer"},
		{"a fan-out stage's call has no turn", "fanout", 9, "splitters-0", "awaiting_tools"},
		{"workers ending keep the fan-out awaited", "fanout", 7011, "splitters-0", "awaiting_tools"},
		{"the fan-out's result", "fanout", 7012, "splitters-0", "ready_to_infer"},
		{"killed in a cascade, before its terminal event", "kill_tree", 86, "root-0/1/1", "ready_to_infer"},
		{"killed in a cascade, its terminal event", "kill_tree", 88, "root-0/1/1", "terminal"},
	}
	cache := map[string][][]byte{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lines, ok := cache[tt.trace]
			if !ok {
				lines = golden(t, tt.trace)
				cache[tt.trace] = lines
			}
			v := feed(t, runview.Options{}, lines[:tt.seq+1])
			if p := v.Progress(); p.LastSeq != tt.seq {
				t.Fatalf("applied up to seq %d", p.LastSeq)
			}
			d, ok := v.Agent(tt.agent)
			if !ok {
				t.Fatalf("no agent %q", tt.agent)
			}
			if d.Phase != tt.phase {
				t.Errorf("phase %q, want %q (last entry %+v)", d.Phase, tt.phase, d.Log[len(d.Log)-1])
			}
		})
	}
}

// TestEveryPhaseReachable feeds every golden trace and checks that each of PhaseNames is some
// agent's phase at some point, that the phases always add up to the agents and the live ones
// are those not terminal, and that the trace ends only at its end event.
func TestEveryPhaseReachable(t *testing.T) {
	seen := map[string]bool{}
	for _, name := range sized(goldenNames) {
		v := runview.New(runview.Options{})
		lines := golden(t, name)
		for i, l := range lines {
			if err := v.Apply(l); err != nil {
				t.Fatalf("%s line %d: %v", name, i+1, err)
			}
			if p := v.Progress(); p.Ended != (i == len(lines)-1) || p.Ended != (p.Status != "") {
				t.Fatalf("%s line %d of %d: progress %+v", name, i+1, len(lines), p)
			}
			c := v.Counts()
			if c.Live != c.Agents-int(c.ByPhase[len(c.ByPhase)-1].N) {
				t.Fatalf("%s line %d: %d live of %d agents, %d terminal", name, i+1, c.Live, c.Agents, c.ByPhase[len(c.ByPhase)-1].N)
			}
			var sum int64
			for _, p := range c.ByPhase {
				sum += p.N
				if p.N > 0 {
					seen[p.Name] = true
				}
			}
			if sum != int64(c.Agents) {
				t.Fatalf("%s line %d: phases add up to %d, %d agents", name, i+1, sum, c.Agents)
			}
		}
	}
	for _, p := range runview.PhaseNames {
		if !seen[p] {
			t.Errorf("no golden trace shows an agent in phase %q", p)
		}
	}
}

// builder writes a synthetic trace: a real header, then events with seq counted for them.
type builder struct {
	lines [][]byte
	seq   int64
}

func newBuilder(t *testing.T) *builder {
	return &builder{lines: [][]byte{golden(t, "gated")[0]}}
}

// event appends one event; kv are the kind's fields, name then value, in order.
func (b *builder) event(tick, agent int64, name, kind string, kv ...any) *builder {
	b.seq++
	s := fmt.Sprintf(`{"tick":%d,"seq":%d,"agent":%d,"name":%s,"kind":%q`, tick, b.seq, agent, strconv.Quote(name), kind)
	for i := 0; i < len(kv); i += 2 {
		val, err := json.Marshal(kv[i+1])
		if err != nil {
			panic(err)
		}
		s += fmt.Sprintf(`,%q:%s`, kv[i], val)
	}
	b.lines = append(b.lines, []byte(s+"}"))
	return b
}

func (b *builder) spawn(tick, id int64, name string, parent int64, parentName string) *builder {
	kv := []any{"group", "g", "index", 0, "blueprint", "bp", "model", "scripted:m", "task", "t"}
	if parent != 0 {
		kv = append(kv, "parent", parent, "parent_name", parentName, "depth", 1, "detached", false, "call", "c")
	}
	return b.event(tick, id, name, "spawn", kv...)
}

func (b *builder) prompt(tick, id int64, name, call string) *builder {
	return b.event(tick, id, name, "prompt", "stage", "s", "call_id", call, "tool", "write_file", "prompt", "approval",
		"keys", []string{"write_file"}, "text", "", "deadline", tick+100)
}

func (b *builder) answer(tick, id int64, name, call, by string) *builder {
	return b.event(tick, id, name, "answer", "stage", "s", "call_id", call, "tool", "write_file", "answer", "once",
		"by", by, "verdict", "allow")
}

// TestPromptsClosedByEnd checks that a prompt closes with its agent: at its terminal event, at
// a kill whose cascade names it (before the cascade's terminal events), and at its reap; that an
// answer coming after that is no error; and that an agent with two prompts awaits until both are
// answered.
func TestPromptsClosedByEnd(t *testing.T) {
	b := newBuilder(t).
		spawn(0, 1, "a", 0, "").spawn(0, 2, "p", 0, "").spawn(0, 3, "p/1", 2, "p").spawn(0, 4, "r", 0, "").
		spawn(0, 5, "two", 0, "").
		prompt(1, 1, "a", "a-c0").prompt(1, 3, "p/1", "p/1-c0").prompt(1, 4, "r", "r-c0").
		prompt(1, 5, "two", "two-c0").prompt(1, 5, "two", "two-c1")
	open := len(b.lines)
	b.event(2, 1, "a", "terminal", "status", "failed", "reason", "panic", "stage", "s")
	afterTerminal := len(b.lines)
	b.event(3, 2, "p", "kill", "killer", 0, "killer_name", "host", "reason", "run timeout", "cascade", []string{"p", "p/1"})
	afterKill := len(b.lines)
	b.event(3, 2, "p", "terminal", "status", "killed", "reason", "run timeout", "stage", "s").
		event(3, 3, "p/1", "terminal", "status", "killed", "reason", "run timeout", "stage", "s").
		answer(3, 3, "p/1", "p/1-c0", "cancelled").
		event(4, 4, "r", "reap", "status", "killed", "model_turns", 0, "tool_calls", 0, "tool_errors", 0)
	afterReap := len(b.lines)
	b.answer(5, 5, "two", "two-c0", "script")
	afterFirst := len(b.lines)
	b.answer(5, 5, "two", "two-c1", "script")

	openCalls := func(v *runview.View) []string {
		var out []string
		for _, p := range v.Prompts() {
			out = append(out, p.CallID)
		}
		return out
	}
	tests := []struct {
		name  string
		upto  int
		calls []string
		two   string // the phase of agent "two"
	}{
		{"all open", open, []string{"a-c0", "p/1-c0", "r-c0", "two-c0", "two-c1"}, "awaiting_prompt"},
		{"terminal closes", afterTerminal, []string{"p/1-c0", "r-c0", "two-c0", "two-c1"}, "awaiting_prompt"},
		{"a kill's cascade closes", afterKill, []string{"r-c0", "two-c0", "two-c1"}, "awaiting_prompt"},
		{"reap closes; a late answer is ignored", afterReap, []string{"two-c0", "two-c1"}, "awaiting_prompt"},
		{"one of two answered", afterFirst, []string{"two-c1"}, "awaiting_prompt"},
		{"both answered", len(b.lines), nil, "ready_to_infer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := feed(t, runview.Options{}, b.lines[:tt.upto])
			if got := openCalls(v); fmt.Sprint(got) != fmt.Sprint(tt.calls) || v.Counts().PromptsOpen != len(tt.calls) {
				t.Errorf("open %v (count %d), want %v", got, v.Counts().PromptsOpen, tt.calls)
			}
			if d, _ := v.Agent("two"); d.Phase != tt.two || d.PromptsOpen != len(tt.calls) && tt.upto >= afterReap {
				t.Errorf("agent two: phase %q with %d prompts open, want %q", d.Phase, d.PromptsOpen, tt.two)
			}
		})
	}
}
