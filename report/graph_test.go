package report

import (
	"slices"
	"strings"
	"testing"
)

func TestMatchEdge(t *testing.T) {
	edges := []GraphEdge{
		{From: "a", To: "b", On: "done"},
		{From: "a", To: "b", On: "always"},
		{From: "a", To: "", On: "done", When: "x > 1", End: "done"},
		{From: "a", To: "", On: "done", End: "done"},
	}
	tests := []struct {
		name string
		key  edgeKey
		want int
	}{
		{"the exact on first", edgeKey{From: "a", To: "b", On: "done"}, 0},
		{"always catches the other outcomes", edgeKey{From: "a", To: "b", On: "error"}, 1},
		{"the condition tells two ends apart", edgeKey{From: "a", On: "done", When: "x > 1", End: "done"}, 2},
		{"the uncaught end", edgeKey{From: "a", On: "done", End: "done"}, 3},
		{"an edge the graph lacks", edgeKey{From: "b", To: "a", On: "done"}, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := matchEdge(edges, tt.key); got != tt.want {
				t.Errorf("matchEdge = %d, want %d", got, tt.want)
			}
		})
	}
}

// node returns the graph's node id.
func node(t *testing.T, g graphView, id string) graphNode {
	t.Helper()
	i := slices.IndexFunc(g.Nodes, func(n graphNode) bool { return n.ID == id })
	if i < 0 {
		t.Fatalf("no node %s in %+v", id, g.Nodes)
	}
	return g.Nodes[i]
}

func TestLayeredLayout(t *testing.T) {
	tests := []struct {
		name   string
		stages []string
		entry  string
		edges  []GraphEdge
		x      map[string]float64 // node -> layer × layerGap
		curved map[string]float64 // "source target" -> curveness
	}{
		{"a pipeline with a loop back",
			[]string{"plan", "work", "review"}, "",
			[]GraphEdge{{From: "plan", To: "work", On: "done"}, {From: "work", To: "review", On: "done"}, {From: "review", To: "work", On: "done"},
				{From: "review", On: "done", When: "ok", End: "done"}, {From: "work", On: "error", End: "failed"}},
			map[string]float64{"s:plan": 0, "s:work": layerGap, "s:review": 2 * layerGap, "end:done": 3.25 * layerGap, "end:failed": layerGap},
			map[string]float64{"s:review s:work": -0.35, "s:work s:review": 0, "s:review end:done": 0}},
		{"a branch that rejoins: the longest path decides",
			[]string{"attempt", "wrap_up", "recover"}, "",
			[]GraphEdge{{From: "attempt", To: "wrap_up", On: "done"}, {From: "attempt", To: "recover", On: "error"}, {From: "recover", To: "wrap_up", On: "done"}},
			map[string]float64{"s:attempt": 0, "s:recover": layerGap, "s:wrap_up": 2 * layerGap},
			map[string]float64{"s:attempt s:wrap_up": 0.3, "s:attempt s:recover": 0}},
		{"the entry is not the first stage",
			[]string{"b", "a"}, "a",
			[]GraphEdge{{From: "a", To: "b", On: "done"}},
			map[string]float64{"s:a": 0, "s:b": layerGap}, nil},
		{"a stage no edge reaches starts its own layer 0",
			[]string{"a", "b", "lonely"}, "",
			[]GraphEdge{{From: "a", To: "b", On: "done"}},
			map[string]float64{"s:a": 0, "s:b": layerGap, "s:lonely": 0}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			taken := make([]int, len(tt.edges))
			g := layeredLayout("bp", tt.stages, tt.entry, tt.edges, taken, make([]int, len(tt.stages)), len(tt.edges), true)
			for id, x := range tt.x {
				if n := node(t, g, id); n.X != x {
					t.Errorf("%s at x %v, want %v", id, n.X, x)
				}
			}
			for pair, c := range tt.curved {
				source, target, _ := strings.Cut(pair, " ")
				i := slices.IndexFunc(g.Links, func(l graphLink) bool { return l.Source == source && l.Target == target })
				if i < 0 {
					t.Fatalf("no link %s", pair)
				}
				if g.Links[i].Curveness != c {
					t.Errorf("link %s curves %v, want %v", pair, g.Links[i].Curveness, c)
				}
			}
		})
	}
}

func TestParallelEdgesShareALink(t *testing.T) {
	edges := []GraphEdge{
		{From: "review", On: "done", When: `tools.grade?.verdict == "approve" && memory.rounds < 10`, End: "failed"},
		{From: "review", On: "error", End: "failed"},
		{From: "review", On: "max_iterations", End: "failed"},
	}
	g := layeredLayout("bp", []string{"review"}, "", edges, []int{1, 0, 2}, []int{3}, 2, true)
	if len(g.Links) != 1 {
		t.Fatalf("%d links, want one for the three edges to failed", len(g.Links))
	}
	l := g.Links[0]
	want := "done × 1\n  when tools.grade?.verdict == \"approve\"…\nerror × 0\nmax_iterations × 2"
	if l.Label != want || l.Count != 3 || !l.Extra || len(l.Edges) != 3 || !l.Edges[2].Extra || l.Edges[1].Extra {
		t.Errorf("link %+v;\nwant label %q, count 3, the third edge extra", l, want)
	}
}

func TestLabelsShowBracesAsLookalikes(t *testing.T) {
	edges := []GraphEdge{{From: "a", On: "done", When: `memory.x == {"b": 1}`, End: "done"}}
	g := layeredLayout("bp", []string{"a"}, "", edges, []int{2}, []int{2}, 1, true)
	if want := "done × 2\n  when memory.x == ｛\"b\": 1｝"; g.Links[0].Label != want || g.Links[0].Edges[0].When != edges[0].When {
		t.Errorf("label %q, when %q; want the label %q and the condition as written", g.Links[0].Label, g.Links[0].Edges[0].When, want)
	}
}
