package models_test

import (
	"context"
	"fmt"

	"github.com/warrenhq/warren/models"
)

func ExampleNewScripted() {
	script, err := models.NewScripted("scripted:worker", []models.ScriptedTurn{
		{Stage: "plan", Text: "{{.Name}} reads its task", Calls: []models.ScriptedCall{
			{Tool: "read_file", Args: map[string]any{"path": "tasks/{{.Index}}.md"}},
		}},
		{Text: "nothing left to do"},
	}, models.ExhaustedFail)
	if err != nil {
		fmt.Println(err)
		return
	}
	var state models.State // kept by the host, one per agent
	view := &models.View{Agent: models.AgentInfo{Name: "worker-3", Index: 3}, Stage: "plan", Visit: 1}
	for turn := range 3 {
		view.Turn, view.Iteration = turn, turn
		reply, err := script.Turn(context.Background(), &state, view)
		if err != nil {
			fmt.Println("error:", err)
			continue
		}
		fmt.Printf("%q", reply.Text)
		for _, c := range reply.Calls {
			fmt.Printf(" %s %s %s", c.ID, c.Name, c.Args)
		}
		fmt.Println()
	}
	// Output:
	// "worker-3 reads its task" worker-3-t0-c0 read_file {"path":"tasks/3.md"}
	// "nothing left to do"
	// error: scripted model ran out of turns after 2
}
