package blueprint

import (
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Edge is one way out of a stage, for drawing the stage graph: a transition, or an outcome no
// transition catches (which ends the agent, done for outcome done and failed otherwise).
type Edge struct {
	// From is the stage's index; To the target stage's, or -1 when the edge ends the agent
	// (End says how).
	From, To int
	End      Ending
	// Transition is the transition's index in the stage, or -1 for an uncaught outcome, which
	// Outcome then names.
	Transition int
	Outcome    Outcome
	// Label is what the edge fires on: "done", "always when visit < 3", with "; set k1, k2"
	// when it writes memory.
	Label string
}

// Edges lists every way out of every stage, stage by stage: the transitions in file order,
// then the outcomes none of them catches.
func (b *Blueprint) Edges() []Edge {
	var out []Edge
	for i := range b.Stages {
		st := &b.Stages[i]
		for k := range st.Transitions {
			t := &st.Transitions[k]
			label := t.On.String()
			if t.When != nil {
				label += " when " + t.When.Source
			}
			if len(t.Set) > 0 {
				keys := make([]string, len(t.Set))
				for j := range t.Set {
					keys[j] = t.Set[j].Key
				}
				label += "; set " + strings.Join(keys, ", ")
			}
			out = append(out, Edge{From: i, To: t.To, End: t.End, Transition: k, Label: label})
		}
		for _, o := range st.outcomes() {
			if len(st.candidates(o)) > 0 {
				continue
			}
			end := EndFailed
			if o == OutcomeDone {
				end = EndDone
			}
			out = append(out, Edge{From: i, To: -1, End: end, Transition: -1, Outcome: o, Label: o.String()})
		}
	}
	return out
}

// GraphFormat is a text format the stage graph is drawn in.
type GraphFormat uint8

// The formats WriteGraph draws.
const (
	// GraphDOT is Graphviz's DOT (render with `dot -Tsvg`).
	GraphDOT GraphFormat = iota + 1
	// GraphMermaid is a Mermaid flowchart (GitHub and most Markdown viewers render it).
	GraphMermaid
)

// ParseGraphFormat reads a format's name: "dot" or "mermaid".
func ParseGraphFormat(s string) (GraphFormat, error) {
	switch s {
	case "dot":
		return GraphDOT, nil
	case "mermaid":
		return GraphMermaid, nil
	}
	return 0, fmt.Errorf("unknown graph format %q; valid: dot, mermaid", s)
}

// WriteGraph draws the stage graph: a node per stage (the entry in bold), a node per way of
// ending that some edge leads to, and an edge per Edges entry. counts, when not nil, is drawn
// on each edge ("× 12"): how often it was taken in a run, as a report computes from a trace.
func (b *Blueprint) WriteGraph(w io.Writer, format GraphFormat, counts func(Edge) int) error {
	edges := b.Edges()
	ends := map[Ending]bool{}
	for _, e := range edges {
		if e.To < 0 {
			ends[e.End] = true
		}
	}
	label := func(e Edge) string {
		if counts == nil {
			return e.Label
		}
		return e.Label + " × " + strconv.Itoa(counts(e))
	}
	var sb strings.Builder
	switch format {
	case GraphDOT:
		fmt.Fprintf(&sb, "digraph %s {\n  rankdir=LR;\n  node [shape=box, style=rounded];\n", strconv.Quote(b.Name))
		for i := range b.Stages {
			attrs := ""
			if i == b.Entry {
				attrs = ", penwidth=2"
			}
			fmt.Fprintf(&sb, "  s%d [label=%s%s];\n", i, strconv.Quote(b.Stages[i].Name), attrs)
		}
		for _, end := range [...]Ending{EndDone, EndFailed} {
			if ends[end] {
				fmt.Fprintf(&sb, "  end_%s [label=%q, shape=doublecircle];\n", end, end.String())
			}
		}
		for _, e := range edges {
			fmt.Fprintf(&sb, "  s%d -> %s [label=%s];\n", e.From, edgeTarget(e), strconv.Quote(label(e)))
		}
		sb.WriteString("}\n")
	case GraphMermaid:
		sb.WriteString("flowchart LR\n")
		for i := range b.Stages {
			open, closing := "[", "]"
			if i == b.Entry {
				open, closing = "[[", "]]"
			}
			fmt.Fprintf(&sb, "  s%d%s\"%s\"%s\n", i, open, mermaidText(b.Stages[i].Name), closing)
		}
		for _, end := range [...]Ending{EndDone, EndFailed} {
			if ends[end] {
				fmt.Fprintf(&sb, "  end_%s((\"%s\"))\n", end, end)
			}
		}
		for _, e := range edges {
			fmt.Fprintf(&sb, "  s%d -->|\"%s\"| %s\n", e.From, mermaidText(label(e)), edgeTarget(e))
		}
	default:
		return fmt.Errorf("unknown graph format %d", format)
	}
	_, err := io.WriteString(w, sb.String())
	return err
}

// edgeTarget is the node an edge leads to.
func edgeTarget(e Edge) string {
	if e.To < 0 {
		return "end_" + e.End.String()
	}
	return "s" + strconv.Itoa(e.To)
}

// mermaidText escapes text for a quoted Mermaid label: quotes and the characters Mermaid reads
// as markup become entity codes.
var mermaidText = strings.NewReplacer(`"`, "#quot;", "<", "#lt;", ">", "#gt;", "|", "#124;").Replace
