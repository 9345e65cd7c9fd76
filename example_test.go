package warren_test

import (
	"context"
	"fmt"

	"github.com/warrenhq/warren"
	"github.com/warrenhq/warren/components"
)

// Load a shipped example, run it to its fixed point and read the summary.
func ExampleRun() {

	sc, err := warren.Load("scenarios/examples/on_error.toml")
	if err != nil {
		fmt.Println(err)
		return
	}
	sum, err := warren.Run(context.Background(), sc, warren.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s: %d agents, %d done, %d failed, stopped at %s\n", sum.Scenario, sum.Agents,
		sum.ByStatus[components.Done], sum.ByStatus[components.Failed], sum.Stop)
	fmt.Printf("%d model turns, %d tool calls, %d expectations failed\n", sum.ModelTurns, sum.ToolCalls, len(sum.Failures))
	// Output:
	// on-error: 5 agents, 4 done, 1 failed, stopped at fixed_point
	// 18 model turns, 6 tool calls, 0 expectations failed
}
