package runview_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/warrenhq/warren/internal/testenv"
	"github.com/warrenhq/warren/runview"
)

// goldenDir holds the scenarios' golden traces: read-only fixtures, real runs of every shipped
// example.
const goldenDir = "../scenarios/testdata/golden"

// goldenNames are the golden traces the tests feed, all of them: together they have every kind
// of event the examples write (prompts and answers in gated, quickstart, on_error and bad_calls;
// kills in kill_tree; waits in wait_storm and inherit_attack; a 1000-worker fan-out in fanout;
// tokens and cost in live).
var goldenNames = []string{"bad_calls", "corpus", "expect_fail", "fanout", "faults", "gated", "gossip",
	"inherit_attack", "kill_tree", "live", "max_iterations", "mcp", "on_error", "planner", "quickstart",
	"review", "sandbox", "scripts", "tool_results", "wait_storm"}

// bigTraces are the golden traces of more than 3,000 lines: under the race detector, which
// slows a line tenfold, the checks of every golden trace leave them to the plain run (the
// concurrency test still feeds wait_storm).
var bigTraces = map[string]bool{"fanout": true, "faults": true, "gossip": true, "wait_storm": true}

// sized returns names, without the big traces under the race detector.
func sized(names []string) []string {
	if !testenv.Race {
		return names
	}
	var out []string
	for _, n := range names {
		if !bigTraces[n] {
			out = append(out, n)
		}
	}
	return out
}

// readLines returns a trace file's lines, without newlines.
func readLines(tb testing.TB, path string) [][]byte {
	tb.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	var out [][]byte
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		out = append(out, bytes.Clone(sc.Bytes()))
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	return out
}

// golden returns a golden trace's lines.
func golden(tb testing.TB, name string) [][]byte {
	return readLines(tb, filepath.Join(goldenDir, name+".jsonl"))
}

// ev is an event line decoded by encoding/json, independently of the View's own decoder, so
// the tests' expectations do not share its mistakes.
type ev map[string]any

func (e ev) kind() string { s, _ := e["kind"].(string); return s }
func (e ev) str(k string) string {
	s, _ := e[k].(string)
	return s
}
func (e ev) num(k string) int64 {
	n, _ := e[k].(json.Number)
	i, _ := n.Int64()
	return i
}
func (e ev) has(k string) bool { _, ok := e[k]; return ok }

// decodeAll decodes every event line (the header aside).
func decodeAll(tb testing.TB, lines [][]byte) []ev {
	tb.Helper()
	out := make([]ev, 0, len(lines))
	for _, l := range lines[1:] {
		d := json.NewDecoder(bytes.NewReader(l))
		d.UseNumber()
		var e ev
		if err := d.Decode(&e); err != nil {
			tb.Fatal(err)
		}
		out = append(out, e)
	}
	return out
}

// feed applies lines to a new View with opts, failing the test on any error.
func feed(tb testing.TB, opts runview.Options, lines [][]byte) *runview.View {
	tb.Helper()
	v := runview.New(opts)
	for i, l := range lines {
		if err := v.Apply(l); err != nil {
			tb.Fatalf("line %d: %v", i+1, err)
		}
	}
	return v
}

// countOf returns the count named name in cs (0 when absent).
func countOf(cs []runview.Count, name string) int64 {
	for _, c := range cs {
		if c.Name == name {
			return c.N
		}
	}
	return 0
}

// allAgents walks every page of Agents for q, failing on a repeated or out-of-order agent.
func allAgents(tb testing.TB, v *runview.View, q runview.AgentQuery) []runview.AgentSummary {
	tb.Helper()
	var out []runview.AgentSummary
	q.After = 0
	for pages := 0; ; pages++ {
		if pages > 1e6 {
			tb.Fatal("paging does not end")
		}
		p := v.Agents(q)
		for _, a := range p.Items {
			if len(out) > 0 && a.ID <= out[len(out)-1].ID {
				tb.Fatalf("agent %d after agent %d: pages are not in id order", a.ID, out[len(out)-1].ID)
			}
			out = append(out, a)
		}
		if p.Next == 0 {
			return out
		}
		q.After = p.Next
	}
}
