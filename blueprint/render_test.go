package blueprint

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"

	"github.com/warrenhq/warren/internal/golden"
	"github.com/warrenhq/warren/internal/testenv"
)

// TestWriteGraph draws the conditions corpus blueprint in both formats against golden files:
// every transition an edge with its condition and set keys, uncaught outcomes edges to the
// endings, the entry marked, and counts on the edges when given.
func TestWriteGraph(t *testing.T) {
	bp, err := Load("testdata/good/conditions.toml", testTools)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		format GraphFormat
		counts func(Edge) int
	}{
		{"conditions.dot", GraphDOT, nil},
		{"conditions.mmd", GraphMermaid, nil},
		{"conditions_counts.dot", GraphDOT, func(e Edge) int { return 10*e.From + e.Transition + 1 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			if err := bp.WriteGraph(&out, tc.format, tc.counts); err != nil {
				t.Fatal(err)
			}
			golden.Check(t, "testdata/graph/"+tc.name, out.String())
		})
	}
	if _, err := ParseGraphFormat("svg"); err == nil || !strings.Contains(err.Error(), "valid: dot, mermaid") {
		t.Fatalf("ParseGraphFormat(svg) = %v", err)
	}
}

// TestGraphRendersInGraphviz hands the DOT to Graphviz itself: it must parse, and the picture
// must hold every stage and every condition.
func TestGraphRendersInGraphviz(t *testing.T) {
	dot := testenv.MustHaveProgram(t, "dot", "graphviz")
	bp, err := Load("testdata/good/conditions.toml", testTools)
	if err != nil {
		t.Fatal(err)
	}
	var src bytes.Buffer
	if err := bp.WriteGraph(&src, GraphDOT, nil); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(dot, "-Tsvg")
	cmd.Stdin = &src
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	svg, err := cmd.Output()
	if err != nil || stderr.Len() > 0 {
		t.Fatalf("dot: %v\n%s", err, stderr.String())
	}
	for _, want := range []string{">draft<", ">ask<", ">review<", ">failed<", "tools.write_file != nil", "set attempts"} {
		if !bytes.Contains(svg, []byte(want)) {
			t.Errorf("the SVG lacks %q", want)
		}
	}
}
