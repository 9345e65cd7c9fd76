package scenarios_test

import (
	"fmt"

	"github.com/warrenhq/warren/scenarios"
)

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
