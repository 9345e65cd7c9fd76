package runview_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"reflect"
	"strings"
	"testing"

	"github.com/warrenhq/warren/runview"
)

// TestGoldenTotals feeds every golden trace and checks the View's totals against the trace's
// own end event, which the run wrote from its counters, not from its trace.
func TestGoldenTotals(t *testing.T) {
	for _, name := range sized(goldenNames) {
		t.Run(name, func(t *testing.T) {
			lines := golden(t, name)
			evs := decodeAll(t, lines)
			end := evs[len(evs)-1]
			if end.kind() != "end" {
				t.Fatalf("the golden trace does not end with its end event")
			}
			v := feed(t, runview.Options{}, lines)
			c, p := v.Counts(), v.Progress()
			ended := map[int64]bool{}
			var promptTokens int64
			for _, e := range evs {
				if e.kind() == "terminal" {
					ended[e.num("agent")] = true
				}
				if e.kind() == "model_turn" {
					promptTokens += e.num("prompt_tokens")
				}
			}
			checks := []struct {
				what      string
				got, want any
			}{
				{"agents", int64(c.Agents), end.num("agents")},
				{"model turns", c.ModelTurns, end.num("model_turns")},
				{"tool calls", c.ToolCalls, end.num("tool_calls")},
				{"tool errors", c.ToolErrors, end.num("tool_errors")},
				{"tokens", c.Tokens, end.num("tokens")},
				{"prompt tokens", c.PromptTokens, promptTokens},
				{"cost", c.CostUSD, costOr0(end.str("cost_usd"))},
				{"ended", p.Ended, true},
				{"status", p.Status, end.str("status")},
				{"ticks", p.Ticks, end.num("ticks")},
				{"events", p.Events, end.num("events") + 1},
				{"last seq", p.LastSeq, end.num("seq")},
				{"last tick", p.LastTick, end.num("tick")},
				{"open prompts at the end", c.PromptsOpen, 0},
				{"live agents", int64(c.Live), end.num("agents") - int64(len(ended))},
			}
			for _, ck := range checks {
				if !reflect.DeepEqual(ck.got, ck.want) {
					t.Errorf("%s: got %v, want %v (the end event's)", ck.what, ck.got, ck.want)
				}
			}
			var sumVerdicts, sumPhases, sumGroups, sumStatus int64
			for _, x := range c.ToolCallsByVerdict {
				sumVerdicts += x.N
			}
			for _, x := range c.ByPhase {
				sumPhases += x.N
			}
			for _, x := range c.ByGroup {
				sumGroups += x.N
			}
			for _, x := range c.ByStatus {
				sumStatus += x.N
			}
			if sumVerdicts != c.ToolCalls || sumPhases != int64(c.Agents) || sumGroups != int64(c.Agents) ||
				sumStatus != int64(c.Agents) {
				t.Errorf("the breakdowns do not add up: verdicts %d of %d calls, phases %d, groups %d, statuses %d of %d agents",
					sumVerdicts, c.ToolCalls, sumPhases, sumGroups, sumStatus, c.Agents)
			}
			if h := v.Header(); h.Version != 5 || h.Scenario == "" || h.ScenarioHash == "" || h.Clock == "" {
				t.Errorf("header %+v", h)
			}
		})
	}
}

// costOr0 is the end event's cost, "0" when the run had none (the field is left out).
func costOr0(s string) string {
	if s == "" {
		return "0"
	}
	return s
}

// TestGoldenAgents checks every agent of every golden trace against its own events: identity
// against its spawn, status and reason against its terminal event, counters against its reap
// event (which the run wrote from the agent's counters), and the tree against spawn's parent.
func TestGoldenAgents(t *testing.T) {
	for _, name := range sized(goldenNames) {
		t.Run(name, func(t *testing.T) {
			lines := golden(t, name)
			v := feed(t, runview.Options{}, lines)
			spawns := map[int64]ev{}
			terms, reaps := map[int64]ev{}, map[int64]ev{}
			children := map[int64]int{}
			var order []int64
			tokens := map[int64]int64{}
			for _, e := range decodeAll(t, lines) {
				id := e.num("agent")
				switch e.kind() {
				case "spawn":
					spawns[id] = e
					order = append(order, id)
					if e.has("parent") {
						children[e.num("parent")]++
					}
				case "terminal":
					terms[id] = e
				case "reap":
					reaps[id] = e
				case "model_turn":
					tokens[id] += e.num("prompt_tokens") + e.num("completion_tokens")
				}
			}
			descendants := map[int64]int{}
			for _, id := range order {
				for p := spawns[id]; p.has("parent"); p = spawns[p.num("parent")] {
					descendants[p.num("parent")]++
				}
			}
			for _, id := range order {
				sp := spawns[id]
				d, ok := v.Agent(sp.str("name"))
				if !ok {
					t.Fatalf("no agent %q", sp.str("name"))
				}
				byID, _ := v.AgentByID(id)
				if !reflect.DeepEqual(byID, d) {
					t.Errorf("AgentByID(%d) differs from Agent(%q)", id, sp.str("name"))
				}
				want := runview.AgentSummary{ID: id, Name: sp.str("name"), Group: sp.str("group"),
					Blueprint: sp.str("blueprint"), Model: sp.str("model"), Stage: terms[id].str("stage"),
					Status: terms[id].str("status"), Phase: "terminal", ParentID: sp.num("parent"),
					Depth: int(sp.num("depth")), Children: children[id], ModelTurns: reaps[id].num("model_turns"),
					ToolCalls: reaps[id].num("tool_calls"), ToolErrors: reaps[id].num("tool_errors"), Tokens: tokens[id]}
				if d.AgentSummary != want {
					t.Errorf("agent %d:\ngot  %+v\nwant %+v", id, d.AgentSummary, want)
				}
				if r := reaps[id]; r.has("tokens") && r.num("tokens") != d.Tokens {
					t.Errorf("agent %d: %d tokens, its reap says %d", id, d.Tokens, r.num("tokens"))
				}
				if d.Reason != terms[id].str("reason") || d.Task != sp.str("task") || !d.Reaped ||
					d.Descendants != descendants[id] {
					t.Errorf("agent %d: reason %q task %q reaped %v descendants %d; want %q %q true %d", id,
						d.Reason, d.Task, d.Reaped, d.Descendants, terms[id].str("reason"), sp.str("task"), descendants[id])
				}
				if sp.has("parent") && d.ParentName != sp.str("parent_name") {
					t.Errorf("agent %d: parent %q, want %q", id, d.ParentName, sp.str("parent_name"))
				}
			}
		})
	}
}

// TestGoldenLogs checks that every event of every golden trace comes back from its agent's log
// as the trace wrote it: kind, tick, seq and every field, in order, with its value (a json field
// as its compact text), when the log is large enough to keep them all and nothing is cut.
func TestGoldenLogs(t *testing.T) {
	for _, name := range sized(goldenNames) {
		t.Run(name, func(t *testing.T) {
			lines := golden(t, name)
			v := feed(t, runview.Options{MaxEntries: 1 << 20, MaxContent: 1 << 20}, lines)
			byAgent := map[int64][]int{} // agent -> indexes of its event lines
			for i, l := range lines[1:] {
				var common struct{ Agent int64 }
				if err := json.Unmarshal(l, &common); err != nil {
					t.Fatal(err)
				}
				if common.Agent != 0 {
					byAgent[common.Agent] = append(byAgent[common.Agent], i+1)
				}
			}
			for id, idx := range byAgent {
				d, _ := v.AgentByID(id)
				if len(d.Log) != len(idx) || d.LogDropped != 0 {
					t.Fatalf("agent %d: %d entries (%d dropped), want %d", id, len(d.Log), d.LogDropped, len(idx))
				}
				for j, e := range d.Log {
					if diff := sameEvent(t, e, lines[idx[j]]); diff != "" {
						t.Fatalf("agent %d entry %d: %s\nline %s", id, j, diff, lines[idx[j]])
					}
				}
			}
		})
	}
}

// sameEvent compares a log entry with the trace line it came from, field by field and in order,
// and says how they differ ("" when they do not).
func sameEvent(t *testing.T, e runview.Entry, line []byte) string {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(line))
	d.UseNumber()
	if _, err := d.Token(); err != nil {
		t.Fatal(err)
	}
	i := 0
	for d.More() {
		tok, err := d.Token()
		if err != nil {
			t.Fatal(err)
		}
		key := tok.(string)
		var raw json.RawMessage
		if err := d.Decode(&raw); err != nil {
			t.Fatal(err)
		}
		var want any
		switch key {
		case "agent", "name":
			continue
		case "tick":
			want = e.Tick
		case "seq":
			want = e.Seq
		case "kind":
			want = e.Kind
		}
		if want != nil {
			if got := strings.Trim(string(raw), `"`); got != fmt.Sprint(want) {
				return fmt.Sprintf("%s %v, want %s", key, want, raw)
			}
			continue
		}
		if i >= len(e.Fields) {
			return "missing field " + key
		}
		f := e.Fields[i]
		i++
		if f.Name != key || f.Cut != 0 || f.More != 0 {
			return fmt.Sprintf("field %d is %s (cut %d, more %d), want %s", i-1, f.Name, f.Cut, f.More, key)
		}
		var gotRaw []byte
		if f.Type == "json" {
			gotRaw = []byte(f.Value.(string))
		} else {
			gotRaw, err = json.Marshal(f.Value)
			if err != nil {
				t.Fatal(err)
			}
		}
		var a, b bytes.Buffer
		if json.Compact(&a, gotRaw) != nil || json.Compact(&b, raw) != nil {
			t.Fatalf("not JSON: %s or %s", gotRaw, raw)
		}
		var av, bv any
		_ = json.Unmarshal(a.Bytes(), &av)
		_ = json.Unmarshal(b.Bytes(), &bv)
		if !reflect.DeepEqual(av, bv) {
			return fmt.Sprintf("%s: %s, want %s", key, a.Bytes(), b.Bytes())
		}
	}
	if i != len(e.Fields) {
		return fmt.Sprintf("%d fields, the line has %d", len(e.Fields), i)
	}
	return ""
}

// TestGraph checks the graph against the stage_enter and transition events counted apart.
func TestGraph(t *testing.T) {
	for _, name := range sized([]string{"review", "gated", "on_error", "max_iterations", "fanout", "wait_storm"}) {
		t.Run(name, func(t *testing.T) {
			lines := golden(t, name)
			v := feed(t, runview.Options{}, lines)
			bp := map[int64]string{}
			visits := map[[2]string]int64{}
			edges := map[runview.GraphEdge]int64{}
			var edgeOrder []runview.GraphEdge
			for _, e := range decodeAll(t, lines) {
				switch e.kind() {
				case "spawn":
					bp[e.num("agent")] = e.str("blueprint")
				case "stage_enter":
					visits[[2]string{bp[e.num("agent")], e.str("stage")}]++
				case "transition":
					k := runview.GraphEdge{Blueprint: bp[e.num("agent")], From: e.str("from"), To: e.str("to"),
						On: e.str("on"), When: e.str("when"), End: e.str("end")}
					if edges[k] == 0 {
						edgeOrder = append(edgeOrder, k)
					}
					edges[k]++
				}
			}
			g := v.Graph()
			if len(g.Stages) != len(visits) || len(g.Edges) != len(edges) {
				t.Fatalf("%d stages and %d edges, want %d and %d", len(g.Stages), len(g.Edges), len(visits), len(edges))
			}
			for _, s := range g.Stages {
				if w := visits[[2]string{s.Blueprint, s.Stage}]; s.Visits != w {
					t.Errorf("stage %s/%s: %d visits, want %d", s.Blueprint, s.Stage, s.Visits, w)
				}
			}
			for i, e := range g.Edges {
				k := e
				k.Count = 0
				if k != edgeOrder[i] || e.Count != edges[k] {
					t.Errorf("edge %d: %+v, want %+v with count %d (first-seen order)", i, e, edgeOrder[i], edges[k])
				}
			}
		})
	}
}

// TestCostIsExact checks the cost sum against an exact rational sum of every cost_usd.
func TestCostIsExact(t *testing.T) {
	lines := golden(t, "live")
	sum := new(big.Rat)
	for _, e := range decodeAll(t, lines) {
		if e.kind() == "model_turn" && e.has("cost_usd") {
			r, ok := new(big.Rat).SetString(e.str("cost_usd"))
			if !ok {
				t.Fatal(e.str("cost_usd"))
			}
			sum.Add(sum, r)
		}
	}
	got, ok := new(big.Rat).SetString(feed(t, runview.Options{}, lines).Counts().CostUSD)
	if !ok || got.Cmp(sum) != 0 || sum.Sign() == 0 {
		t.Errorf("cost %v, want %v", got, sum.FloatString(12))
	}
}
