package runview_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/warrenhq/warren/runview"
)

// TestAgentsPaging walks every agent of wait_storm (2,000 agents, 1,000 of them children) page
// by page at several limits: each agent exactly once, in id order, every page full but the last,
// Total the same on every page.
func TestAgentsPaging(t *testing.T) {
	v := feed(t, runview.Options{}, golden(t, "wait_storm"))
	const agents = 2000
	tests := []struct {
		name     string
		limit    int
		pageSize int
	}{
		{"one a page", 1, 1},
		{"seven a page", 7, 7},
		{"default for zero", 0, runview.DefaultLimit},
		{"default for negative", -5, runview.DefaultLimit},
		{"the maximum", runview.MaxLimit, runview.MaxLimit},
		{"over the maximum is clamped", 5000, runview.MaxLimit},
		{"exactly all", agents, runview.MaxLimit},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			seen := map[int64]bool{}
			var after, last int64
			pages := 0
			for {
				p := v.Agents(runview.AgentQuery{After: after, Limit: tt.limit})
				pages++
				if p.Total != agents {
					t.Fatalf("page %d: total %d, want %d", pages, p.Total, agents)
				}
				if p.Next != 0 && len(p.Items) != tt.pageSize {
					t.Fatalf("page %d: %d items, want %d", pages, len(p.Items), tt.pageSize)
				}
				for _, a := range p.Items {
					if seen[a.ID] || a.ID <= last {
						t.Fatalf("agent %d twice or out of order (after %d)", a.ID, last)
					}
					seen[a.ID], last = true, a.ID
				}
				if p.Next == 0 {
					break
				}
				if p.Next != last {
					t.Fatalf("next %d, want the page's last id %d", p.Next, last)
				}
				after = p.Next
			}
			if len(seen) != agents {
				t.Fatalf("walked %d agents, want %d", len(seen), agents)
			}
			if want := (agents + tt.pageSize - 1) / tt.pageSize; pages != want {
				t.Errorf("%d pages, want %d", pages, want)
			}
		})
	}
	t.Run("a cursor past the end", func(t *testing.T) {
		if p := v.Agents(runview.AgentQuery{After: 1 << 40}); len(p.Items) != 0 || p.Next != 0 || p.Total != agents {
			t.Errorf("%+v", p)
		}
	})
}

// TestAgentsFilter checks each filter, and filters together, against the agents counted
// straight from the trace's spawn and terminal events (fanout: 1,001 agents, 20 workers failed).
func TestAgentsFilter(t *testing.T) {
	lines := golden(t, "fanout")
	v := feed(t, runview.Options{}, lines)
	type who struct{ name, group, status string }
	var agents []who
	status := map[string]string{}
	for _, e := range decodeAll(t, lines) {
		switch e.kind() {
		case "spawn":
			agents = append(agents, who{name: e.str("name"), group: e.str("group")})
		case "terminal":
			status[e.str("name")] = e.str("status")
		}
	}
	for i := range agents {
		agents[i].status = status[agents[i].name]
	}
	expect := func(keep func(w who) bool) []string {
		var out []string
		for _, w := range agents {
			if keep(w) {
				out = append(out, w.name)
			}
		}
		return out
	}
	tests := []struct {
		name string
		q    runview.AgentQuery
		want []string
	}{
		{"all", runview.AgentQuery{}, expect(func(who) bool { return true })},
		{"status failed", runview.AgentQuery{Status: "failed"}, expect(func(w who) bool { return w.status == "failed" })},
		{"status done", runview.AgentQuery{Status: "done"}, expect(func(w who) bool { return w.status == "done" })},
		{"group", runview.AgentQuery{Group: "splitters"}, expect(func(w who) bool { return w.group == "splitters" })},
		{"phase terminal", runview.AgentQuery{Phase: "terminal"}, expect(func(who) bool { return true })},
		{"phase nobody is in", runview.AgentQuery{Phase: "waiting"}, nil},
		{"name prefix", runview.AgentQuery{NamePrefix: "splitters-0/9"},
			expect(func(w who) bool { return strings.HasPrefix(w.name, "splitters-0/9") })},
		{"prefix and status", runview.AgentQuery{NamePrefix: "splitters-0/9", Status: "failed"},
			expect(func(w who) bool { return strings.HasPrefix(w.name, "splitters-0/9") && w.status == "failed" })},
		{"group and status", runview.AgentQuery{Group: "item_worker", Status: "done"},
			expect(func(w who) bool { return w.group == "item_worker" && w.status == "done" })},
		{"unknown group", runview.AgentQuery{Group: "nobody"}, nil},
		{"a status used as a group", runview.AgentQuery{Group: "done"}, nil},
		{"unknown phase", runview.AgentQuery{Phase: "dreaming"}, nil},
		{"unknown status", runview.AgentQuery{Status: "running"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, lim := range []int{3, 1000} {
				tt.q.Limit = lim
				var got []string
				for _, a := range allAgents(t, v, tt.q) {
					got = append(got, a.Name)
				}
				if !reflect.DeepEqual(got, tt.want) {
					t.Fatalf("limit %d: %d agents %.200v, want %d %.200v", lim, len(got), got, len(tt.want), tt.want)
				}
				if p := v.Agents(tt.q); p.Total != len(tt.want) {
					t.Errorf("limit %d: total %d, want %d", lim, p.Total, len(tt.want))
				}
				if p := v.Agents(runview.AgentQuery{Status: tt.q.Status, Group: tt.q.Group, Phase: tt.q.Phase,
					NamePrefix: tt.q.NamePrefix, After: 500}); p.Total != len(tt.want) {
					t.Errorf("total from a cursor %d, want %d (it counts every match)", p.Total, len(tt.want))
				}
			}
		})
	}
	if len(expect(func(w who) bool { return w.status == "failed" })) != 20 {
		t.Fatal("the fixture changed: fanout should have 20 failed workers")
	}
}

// TestTree walks the whole sub-agent tree level by level with small pages, and checks it
// against the spawn events' parent fields: every agent once, under its parent, with its
// children and descendants counted.
func TestTree(t *testing.T) {
	for _, name := range sized([]string{"kill_tree", "fanout", "planner", "wait_storm", "inherit_attack", "gated"}) {
		t.Run(name, func(t *testing.T) {
			lines := golden(t, name)
			v := feed(t, runview.Options{}, lines)
			parent := map[string]string{}
			children := map[string][]string{}
			var roots []string
			for _, e := range decodeAll(t, lines) {
				if e.kind() != "spawn" {
					continue
				}
				if e.has("parent") {
					parent[e.str("name")] = e.str("parent_name")
					children[e.str("parent_name")] = append(children[e.str("parent_name")], e.str("name"))
				} else {
					roots = append(roots, e.str("name"))
				}
			}
			var descendants func(string) int
			descendants = func(n string) int {
				d := 0
				for _, c := range children[n] {
					d += 1 + descendants(c)
				}
				return d
			}
			seen := 0
			var walk func(parentName string, want []string)
			walk = func(parentName string, want []string) {
				var got []string
				var after int64
				for {
					p, ok := v.Tree(runview.TreeQuery{Parent: parentName, After: after, Limit: 7})
					if !ok {
						t.Fatalf("no node %q", parentName)
					}
					if p.Total != len(want) {
						t.Fatalf("%q: total %d, want %d", parentName, p.Total, len(want))
					}
					if (parentName == "") != (p.Parent == nil) || (p.Parent != nil && p.Parent.Name != parentName) {
						t.Fatalf("%q: page parent %+v", parentName, p.Parent)
					}
					for _, n := range p.Items {
						got = append(got, n.Name)
						if n.Children != len(children[n.Name]) || n.Descendants != descendants(n.Name) {
							t.Fatalf("%s: %d children, %d descendants; want %d, %d", n.Name, n.Children, n.Descendants,
								len(children[n.Name]), descendants(n.Name))
						}
						if n.Status == "" || n.Phase != "terminal" {
							t.Fatalf("%s: status %q phase %q", n.Name, n.Status, n.Phase)
						}
					}
					if p.Next == 0 {
						break
					}
					after = p.Next
				}
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("children of %q: %.200v, want %.200v", parentName, got, want)
				}
				for _, c := range got {
					seen++
					walk(c, children[c])
				}
			}
			walk("", roots)
			if seen != len(parent)+len(roots) {
				t.Errorf("walked %d agents, the trace spawned %d", seen, len(parent)+len(roots))
			}
			if _, ok := v.Tree(runview.TreeQuery{Parent: "nobody"}); ok {
				t.Error("a tree under an agent that does not exist")
			}
		})
	}
}

// TestPromptsOpen applies every prefix of the traces with prompts and checks what is open
// against the prompts opened and not yet answered, nor closed by their agent's end, counted
// from the events themselves.
func TestPromptsOpen(t *testing.T) {
	for _, name := range []string{"gated", "quickstart", "on_error", "bad_calls"} {
		t.Run(name, func(t *testing.T) {
			lines := golden(t, name)
			evs := decodeAll(t, lines)
			v := runview.New(runview.Options{})
			if err := v.Apply(lines[0]); err != nil {
				t.Fatal(err)
			}
			group := map[string]string{}
			var open []ev // in the order opened
			sawOpen := 0
			for i, e := range evs {
				if err := v.Apply(lines[i+1]); err != nil {
					t.Fatal(err)
				}
				switch e.kind() {
				case "spawn":
					group[e.str("name")] = e.str("group")
				case "prompt":
					open = append(open, e)
				case "answer", "terminal", "reap":
					open = slicesDelete(open, func(p ev) bool {
						return p.num("agent") == e.num("agent") && (e.kind() != "answer" || p.str("call_id") == e.str("call_id"))
					})
				}
				got := v.Prompts()
				if len(got) != len(open) || v.Counts().PromptsOpen != len(open) {
					t.Fatalf("after seq %d: %d prompts open (counts say %d), want %d", e.num("seq"), len(got),
						v.Counts().PromptsOpen, len(open))
				}
				sawOpen = max(sawOpen, len(open))
				for j, p := range got {
					w := open[j]
					want := runview.Prompt{CallID: w.str("call_id"), AgentID: w.num("agent"), Agent: w.str("name"),
						Group: group[w.str("name")], Stage: w.str("stage"), Tool: w.str("tool"), Kind: w.str("prompt"),
						Text: w.str("text"), Keys: strs(w["keys"]), Deadline: w.num("deadline"), Opened: w.num("tick"),
						Seq: w.num("seq")}
					if !reflect.DeepEqual(p, want) {
						t.Fatalf("after seq %d, prompt %d:\ngot  %+v\nwant %+v", e.num("seq"), j, p, want)
					}
				}
			}
			if sawOpen == 0 {
				t.Fatal("no prompt was ever open: the fixture changed")
			}
		})
	}
}

// slicesDelete removes the items del matches.
func slicesDelete(s []ev, del func(ev) bool) []ev {
	out := s[:0]
	for _, x := range s {
		if !del(x) {
			out = append(out, x)
		}
	}
	return out
}

// strs converts a decoded JSON array of strings.
func strs(x any) []string {
	out := []string{}
	for _, s := range x.([]any) {
		out = append(out, s.(string))
	}
	return out
}
