package scenarios_test

import (
	"context"
	"fmt"

	"github.com/warrenhq/warren/components"
	"github.com/warrenhq/warren/scenarios"
)

// Load a shipped example, run it to its fixed point and read the summary.
func ExampleRun() {
	sc, err := scenarios.Load("examples/on_error.toml", scenarios.KnownTools())
	if err != nil {
		fmt.Println(err)
		return
	}
	sum, err := scenarios.Run(context.Background(), sc, scenarios.Options{})
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

// Rescale a scenario's groups, keeping their proportions.
func ExampleScenario_GroupCounts() {
	sc, err := scenarios.Load("examples/on_error.toml", scenarios.KnownTools())
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(sc.GroupCounts(0), sc.GroupCounts(50))
	// Output: [2 2 1] [20 20 10]
}
