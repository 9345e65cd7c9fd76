package warren_test

import (
	"context"
	"fmt"

	"github.com/warrenhq/warren"
	"github.com/warrenhq/warren/components"
	"github.com/warrenhq/warren/models"
)

// noterBlueprint is a one-stage blueprint whose agents may add to their checklist.
const noterBlueprint = `
name = "noter"
[[stages]]
name = "work"
available_tools = ["todo_add"]
`

// Build a world from Go values: a blueprint, a scripted model, two agents that each note a task
// on their checklist and finish; count the trace events as they happen.
func Example() {
	bp, err := warren.ParseBlueprint("noter.toml", noterBlueprint)
	if err != nil {
		fmt.Println(err)
		return
	}
	note := models.ScriptedCall{Tool: "todo_add", Args: map[string]any{"text": "review the draft"}}
	model, err := models.NewScripted("scripted:noter", []models.ScriptedTurn{{Calls: []models.ScriptedCall{note}}}, models.ExhaustedFinish)
	if err != nil {
		fmt.Println(err)
		return
	}
	sc, err := warren.FromSpec(warren.Spec{Name: "notes", Seed: 7, Groups: []warren.GroupSpec{
		{Name: "noter", Count: 2, Blueprint: bp, Model: model, Task: "take notes as {{.Name}}"}}})
	if err != nil {
		fmt.Println(err)
		return
	}
	events := 0
	sum, err := warren.Run(context.Background(), sc, warren.Options{Events: func([]byte) { events++ }})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(sum.Agents, sum.ModelTurns, sum.ToolCalls, sum.Stop, events == int(sum.TraceEvents))
	// Output: 2 4 2 fixed_point true
}

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
