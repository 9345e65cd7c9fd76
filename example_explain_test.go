package warren_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/warrenhq/warren"
)

// Ask the gate how it would decide a researcher's calls, without running anything: a write while
// gathering, which its stage makes ask, and a read while reporting, which its blueprint allows.
func ExampleExplain() {
	for _, call := range []struct{ stage, tool, args string }{
		{"gather", "write_file", `{"path":"notes.md","content":"x"}`},
		{"report", "read_file", `{"path":"notes.md"}`},
	} {
		x, err := warren.Explain(context.Background(), warren.ExplainRequest{
			Blueprint: "scenarios/examples/blueprints/researcher.toml",
			Stage:     call.stage, Tool: call.tool, Args: call.args,
		})
		if err != nil {
			fmt.Println(err)
			return
		}
		d := x.Gate.Decision
		fmt.Printf("%s, stage %s, %s: %s by %s (%s)\n", strings.Join(x.Line, " > "), x.Stage, call.tool, d.Verdict, d.Layer, d.Reason)
	}
	// Output:
	// blueprint researcher, stage gather, write_file: ask by blueprint:stage (blueprint stage "gather" sets write_file = ask)
	// blueprint researcher, stage report, read_file: allow by blueprint:agent (blueprint [tool_permissions] sets read_file = allow)
}
