package report

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
)

// GraphBlueprint is one entry of a run directory's graph.json, as warren.RunDir writes it and
// the report reads it: a blueprint's stage graph, by its name (Blueprint) and the scenario's key
// for it (Key). Entry is optional for a reader (the first stage when it is absent).
type GraphBlueprint struct {
	Blueprint string      `json:"blueprint"`
	Key       string      `json:"key,omitempty"`
	Entry     string      `json:"entry"`
	Stages    []string    `json:"stages"`
	Edges     []GraphEdge `json:"edges"`
}

// GraphEdge is one way out of a stage: a transition, or an outcome no transition catches. To is
// "" when the edge ends the agent, and End then says how (done or failed); When is the
// transition's condition, when it has one.
type GraphEdge struct {
	From string `json:"from"`
	To   string `json:"to"`
	On   string `json:"on"`
	When string `json:"when,omitempty"`
	End  string `json:"end,omitempty"`
}

// readGraph reads and checks graph.json: a JSON array of blueprints, each with unique stage
// names, edges between its stages, and an end on exactly the edges that end the agent.
func readGraph(path string) ([]GraphBlueprint, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, badWrap(err, "%s", path)
	}
	if err := checkJSON(path, data); err != nil {
		return nil, err
	}
	if t := bytes.TrimLeft(data, " \t\r\n"); len(t) == 0 || t[0] != '[' {
		return nil, badf("%s:1:1: want a JSON array of blueprints: [{\"blueprint\":…,\"stages\":[…],\"edges\":[…]}]", path)
	}
	// The file is valid JSON: walk its array for each blueprint's place, to name its line.
	dec := json.NewDecoder(bytes.NewReader(data))
	_, _ = dec.Token()
	var out []GraphBlueprint
	for dec.More() {
		var raw json.RawMessage
		_ = dec.Decode(&raw)
		start := dec.InputOffset() - int64(len(raw))
		line, _ := lineCol(data, start)
		var g GraphBlueprint
		if err := json.Unmarshal(raw, &g); err != nil {
			var typ *json.UnmarshalTypeError
			if errors.As(err, &typ) {
				typ.Offset += start
			}
			return nil, jsonError(path, data, err)
		}
		if i := slices.IndexFunc(out, func(o GraphBlueprint) bool { return o.Blueprint == g.Blueprint }); i >= 0 {
			// One blueprint file under two keys of the scenario: the trace names both alike.
			if sameGraph(out[i], g) {
				continue
			}
			return nil, badf("%s:%d: blueprint %q appears twice with different graphs; the trace could not tell their agents apart", path, line, g.Blueprint)
		}
		if err := checkGraph(g); err != nil {
			return nil, badf("%s:%d: %v", path, line, err)
		}
		out = append(out, g)
	}
	return out, nil
}

// sameGraph reports whether two entries draw the same graph.
func sameGraph(a, b GraphBlueprint) bool {
	return a.Entry == b.Entry && slices.Equal(a.Stages, b.Stages) && slices.Equal(a.Edges, b.Edges)
}

// checkGraph checks one blueprint's graph.
func checkGraph(g GraphBlueprint) error {
	if g.Blueprint == "" {
		return errors.New(`a blueprint needs its "blueprint" name`)
	}
	if len(g.Stages) == 0 {
		return fmt.Errorf("blueprint %q has no stages; want \"stages\": [the stage names, in order]", g.Blueprint)
	}
	names := map[string]bool{}
	for _, s := range g.Stages {
		if s == "" || names[s] {
			return fmt.Errorf("blueprint %q: stage %q is empty or listed twice; stage names are unique", g.Blueprint, s)
		}
		names[s] = true
	}
	if g.Entry != "" && !names[g.Entry] {
		return fmt.Errorf("blueprint %q: entry %q is not one of its stages (%s)", g.Blueprint, g.Entry, strings.Join(g.Stages, ", "))
	}
	for i, e := range g.Edges {
		switch {
		case !names[e.From]:
			return fmt.Errorf("blueprint %q: edge %d: from %q is not one of its stages (%s)", g.Blueprint, i, e.From, strings.Join(g.Stages, ", "))
		case e.To != "" && !names[e.To]:
			return fmt.Errorf("blueprint %q: edge %d: to %q is not one of its stages (%s), nor \"\" (the edge ends the agent)", g.Blueprint, i, e.To, strings.Join(g.Stages, ", "))
		case e.On == "":
			return fmt.Errorf("blueprint %q: edge %d: \"on\" is empty; want done, error, max_iterations or always", g.Blueprint, i)
		case e.To == "" && e.End != "done" && e.End != "failed":
			return fmt.Errorf("blueprint %q: edge %d ends the agent (to is \"\"): end is %q, want done or failed", g.Blueprint, i, e.End)
		case e.To != "" && e.End != "":
			return fmt.Errorf("blueprint %q: edge %d goes to %q and has end %q; only an edge with to \"\" ends the agent", g.Blueprint, i, e.To, e.End)
		}
	}
	return nil
}

// graphView is one blueprint's stage graph as the page draws it: nodes placed by layeredLayout,
// every edge with the number of times it was taken.
type graphView struct {
	Blueprint string      `json:"blueprint"`
	Nodes     []graphNode `json:"nodes"`
	Links     []graphLink `json:"links"`
	// Traced is false when the run directory has no trace, so no edge has a count.
	Traced bool `json:"traced"`
	// Listed is true when graph.json lists the blueprint; without it, the graph is the edges
	// the trace took, and none is drawn as missing from graph.json.
	Listed bool `json:"listed"`
}

// graphNode is a stage, or an end (done, failed) some edge leads to.
type graphNode struct {
	ID     string  `json:"id"`
	Label  string  `json:"label"`
	Kind   string  `json:"kind"` // entry, stage or end
	Visits int     `json:"visits"`
	X      float64 `json:"x"`
	Y      float64 `json:"y"`
}

// graphLink is the line drawn from one node to another: every edge between them (an end is
// often reached several ways: on error, on max_iterations, by a condition), so that parallel
// edges share a line whose label lists each. Count is their total; Label one line per edge,
// "what it fires on × how many times", and under it "when …" for an edge with a condition.
type graphLink struct {
	Source    string     `json:"source"`
	Target    string     `json:"target"`
	Count     int        `json:"count"`
	Label     string     `json:"label"`
	Curveness float64    `json:"curveness"`
	Edges     []linkEdge `json:"edges"`
	Extra     bool       `json:"extra,omitempty"`
}

// linkEdge is one edge of a link: what it fires on and how many times it was taken. Extra marks
// an edge the trace took that graph.json does not list (every edge, when there is no graph.json).
type linkEdge struct {
	On    string `json:"on"`
	When  string `json:"when,omitempty"`
	Count int    `json:"count"`
	Extra bool   `json:"extra,omitempty"`
}

// edgeKey identifies an edge of a blueprint; End is "" for an edge to a stage.
type edgeKey struct {
	Blueprint, From, To, On, When, End string
}

// compareEdgeKeys orders edge keys field by field.
func compareEdgeKeys(a, b edgeKey) int {
	return cmp.Or(cmp.Compare(a.Blueprint, b.Blueprint), cmp.Compare(a.From, b.From), cmp.Compare(a.To, b.To),
		cmp.Compare(a.On, b.On), cmp.Compare(a.When, b.When), cmp.Compare(a.End, b.End))
}

// maxWhen is the most characters of a condition an edge's label shows (on a line of its own,
// under what the edge fires on and its count), so that a label fits between two layers; the
// tooltip shows it whole.
const maxWhen = 34

// labelBraces keeps a condition's braces ({"a": 1} in expr) from reading as the templates
// ({b}, {c}) and rich-text styles ({style|text}) of an ECharts label: the label shows lookalikes,
// the tooltip the condition itself.
var labelBraces = strings.NewReplacer("{", "｛", "}", "｝")

// clipText cuts s to n characters, marking the cut with "…".
func clipText(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// Layout distances between layers and between the nodes of a layer, in the graph's own units
// (ECharts scales them to the chart).
const (
	layerGap = 220.0
	rowGap   = 110.0
)

// buildGraphs joins graph.json's graphs (nil when there is none) with what the trace counted:
// each graph edge gets the count of the traced edges it matches, and a traced edge no graph
// lists is added to its blueprint's graph (a whole graph for a blueprint graph.json lacks).
func buildGraphs(graphs []GraphBlueprint, ts *traceStats) []graphView {
	var counts map[edgeKey]int
	if ts != nil {
		counts = ts.edges
	}
	byBlueprint := map[string]*GraphBlueprint{}
	var order []string
	for i := range graphs {
		byBlueprint[graphs[i].Blueprint] = &graphs[i]
		order = append(order, graphs[i].Blueprint)
	}
	extra := map[string][]GraphEdge{}
	extraCount := map[string][]int{}
	assigned := make(map[string][]int, len(graphs))
	for _, g := range graphs {
		assigned[g.Blueprint] = make([]int, len(g.Edges))
	}
	keys := make([]edgeKey, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, compareEdgeKeys)
	for _, k := range keys {
		if g := byBlueprint[k.Blueprint]; g != nil {
			if i := matchEdge(g.Edges, k); i >= 0 {
				assigned[k.Blueprint][i] += counts[k]
				continue
			}
		} else if !slices.Contains(order, k.Blueprint) && extra[k.Blueprint] == nil {
			order = append(order, k.Blueprint)
		}
		extra[k.Blueprint] = append(extra[k.Blueprint], GraphEdge{From: k.From, To: k.To, On: k.On, When: k.When, End: k.End})
		extraCount[k.Blueprint] = append(extraCount[k.Blueprint], counts[k])
	}
	var out []graphView
	for _, bp := range order {
		var stages []string
		var edges []GraphEdge
		var taken []int
		var entry string
		if g := byBlueprint[bp]; g != nil {
			stages, edges, taken, entry = g.Stages, g.Edges, assigned[bp], g.Entry
		}
		nGraph := len(edges)
		edges = append(slices.Clone(edges), extra[bp]...)
		taken = append(slices.Clone(taken), extraCount[bp]...)
		stages = appendStages(stages, edges, ts, bp)
		visits := make([]int, len(stages))
		if ts != nil {
			for i, s := range stages {
				visits[i] = ts.enters[stageKey{bp, s}]
			}
		}
		v := layeredLayout(bp, stages, entry, edges, taken, visits, nGraph, ts != nil)
		v.Listed = byBlueprint[bp] != nil
		out = append(out, v)
	}
	return out
}

// appendStages adds to stages (graph.json's, in order) the stages only the trace names: those
// of the extra edges and of stage_enter events, sorted by name.
func appendStages(stages []string, edges []GraphEdge, ts *traceStats, bp string) []string {
	known := map[string]bool{}
	for _, s := range stages {
		known[s] = true
	}
	var more []string
	add := func(s string) {
		if s != "" && !known[s] {
			known[s] = true
			more = append(more, s)
		}
	}
	for _, e := range edges {
		add(e.From)
		add(e.To)
	}
	if ts != nil {
		for _, k := range ts.stageOrder {
			if k.Blueprint == bp {
				add(k.Stage)
			}
		}
	}
	slices.Sort(more)
	return append(slices.Clone(stages), more...)
}

// matchEdge finds the graph edge a traced edge took: the same from, to, when and end, and the
// same on, or failing that on "always" (a transition on always is traced with the outcome it
// fired on). The first in graph order wins, as the first matching transition fires. -1 if none.
func matchEdge(edges []GraphEdge, k edgeKey) int {
	for _, on := range [...]string{k.On, "always"} {
		for i, e := range edges {
			if e.From == k.From && e.To == k.To && e.When == k.When && e.End == k.End && e.On == on {
				return i
			}
		}
	}
	return -1
}

// layeredLayout places a graph's nodes in layers left to right, as a Sugiyama layout's first
// step does: a depth-first search from the entry (then from each stage it did not reach, in
// stage order) finds the back edges (those to a stage still on the search's path: the loops);
// without them the graph is acyclic, and each stage's layer is the longest path to it from a
// stage with no forward edge in. In a layer stages keep their order and are centred vertically.
// The end done comes in a layer of its own on the right; the end failed under the stages that
// lead to it, so that the many ways to fail do not cross the pipeline. It is deterministic
// (ECharts' force layout is not) and reads as the pipeline runs. Back edges curve above the
// stages, as do forward edges that skip a layer; edges to an end are straight.
func layeredLayout(bp string, stages []string, entry string, edges []GraphEdge, taken, visits []int, nGraph int, traced bool) graphView {
	index := make(map[string]int, len(stages))
	for i, s := range stages {
		index[s] = i
	}
	start := 0
	if entry != "" {
		start = index[entry]
	}
	out := make([][]int, len(stages))
	for _, e := range edges {
		if e.To != "" {
			out[index[e.From]] = append(out[index[e.From]], index[e.To])
		}
	}
	back, post := backEdges(out, start)
	layer := make([]int, len(stages))
	for i := len(post) - 1; i >= 0; i-- { // reverse post-order is a topological order
		u := post[i]
		for _, v := range out[u] {
			if !back[[2]int{u, v}] && v != u {
				layer[v] = max(layer[v], layer[u]+1)
			}
		}
	}
	last := 0
	for _, l := range layer {
		last = max(last, l)
	}
	perLayer := make([]int, last+1)
	for _, l := range layer {
		perLayer[l]++
	}
	row := make([]int, last+1)
	v := graphView{Blueprint: bp, Traced: traced}
	lowest := 0.0
	for i, s := range stages {
		kind := "stage"
		if i == start {
			kind = "entry"
		}
		l := layer[i]
		y := (float64(row[l]) - float64(perLayer[l]-1)/2) * rowGap
		row[l]++
		lowest = max(lowest, y)
		v.Nodes = append(v.Nodes, graphNode{ID: "s:" + s, Label: s, Kind: kind, Visits: visits[i], X: float64(l) * layerGap, Y: y})
	}
	// The ends: done on the right, failed under the mean of the stages that can fail.
	failX, failN := 0.0, 0
	done, failed := false, false
	for _, e := range edges {
		switch {
		case e.End == "done":
			done = true
		case e.End == "failed":
			failed = true
			failX += float64(layer[index[e.From]]) * layerGap
			failN++
		}
	}
	if done {
		v.Nodes = append(v.Nodes, graphNode{ID: "end:done", Label: "done", Kind: "end", X: (float64(last) + 1.25) * layerGap})
	}
	if failed {
		v.Nodes = append(v.Nodes, graphNode{ID: "end:failed", Label: "failed", Kind: "end", X: failX / float64(failN), Y: lowest + 2*rowGap})
	}
	// One link per pair of nodes, in the order of its first edge.
	links := map[[2]string]int{}
	for i, e := range edges {
		source, target := "s:"+e.From, "end:"+e.End
		if e.To != "" {
			target = "s:" + e.To
		}
		k, ok := links[[2]string{source, target}]
		if !ok {
			k = len(v.Links)
			links[[2]string{source, target}] = k
			curve := 0.0
			if e.To != "" {
				from, to := index[e.From], index[e.To]
				switch {
				case back[[2]int{from, to}] || layer[to] <= layer[from]:
					curve = -0.35 // a loop: right to left, bent upwards
				case layer[to]-layer[from] > 1:
					curve = 0.3 // skips a layer: left to right, bent upwards
				}
			}
			v.Links = append(v.Links, graphLink{Source: source, Target: target, Curveness: curve})
		}
		l := &v.Links[k]
		le := linkEdge{On: e.On, When: e.When, Count: taken[i], Extra: i >= nGraph}
		line := e.On
		if traced {
			line += " × " + strconv.Itoa(le.Count)
		}
		if e.When != "" {
			line += "\n  when " + clipText(e.When, maxWhen)
		}
		line = labelBraces.Replace(line)
		if l.Label != "" {
			l.Label += "\n"
		}
		l.Label += line
		l.Count += le.Count
		l.Extra = l.Extra || le.Extra
		l.Edges = append(l.Edges, le)
	}
	return v
}

// backEdges searches the graph depth first from start, then from each node not yet reached, in
// order, and returns the edges to a node on the search's path (which close loops) and the nodes
// in post-order. It is iterative, so a 20,000-stage chain does not grow the stack.
func backEdges(out [][]int, start int) (map[[2]int]bool, []int) {
	const (
		unseen = iota
		onPath
		finished
	)
	state := make([]int, len(out))
	back := map[[2]int]bool{}
	var post []int
	visit := func(root int) {
		type frame struct{ node, next int }
		stack := []frame{{root, 0}}
		state[root] = onPath
		for len(stack) > 0 {
			f := &stack[len(stack)-1]
			if f.next < len(out[f.node]) {
				to := out[f.node][f.next]
				f.next++
				switch state[to] {
				case onPath:
					back[[2]int{f.node, to}] = true
				case unseen:
					state[to] = onPath
					stack = append(stack, frame{to, 0})
				}
				continue
			}
			state[f.node] = finished
			post = append(post, f.node)
			stack = stack[:len(stack)-1]
		}
	}
	if len(out) > 0 {
		visit(start)
	}
	for i := range out {
		if state[i] == unseen {
			visit(i)
		}
	}
	return back, post
}
