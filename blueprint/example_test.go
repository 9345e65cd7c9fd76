package blueprint_test

import (
	"fmt"

	"github.com/warrenhq/warren/blueprint"
)

func ExampleParse() {
	src := []byte(`
name = "worker"
[tool_permissions]
read_file = "allow"

[[stages]]
name = "gather"
available_tools = ["write_file", "read_file"]
max_iterations = 5
[stages.tool_permissions]
write_file = "ask"
[[stages.transitions]]
on = "done"
to = "report"

[[stages]]
name = "report"
`)
	known := []string{"read_file", "write_file", "shell"}
	bp, err := blueprint.Parse("worker.toml", src, known)
	if err != nil {
		fmt.Println(err)
		return
	}
	gather := &bp.Stages[bp.Entry]
	fmt.Println(bp.Name, gather.Name, gather.AvailableTools, gather.MaxIterations)
	fmt.Println("advertises shell:", gather.Advertises("shell"))
	fmt.Println("write_file:", gather.ToolPermissions["write_file"], "read_file:", bp.ToolPermissions["read_file"])
	next, ok := gather.Next(blueprint.OutcomeDone)
	fmt.Println("after done:", bp.Stages[next].Name, ok)
	_, ok = gather.Next(blueprint.OutcomeError)
	fmt.Println("after error, continue:", ok)

	_, err = blueprint.Parse("bad.toml", []byte("name = \"w\"\n[[stages]]\nname = \"a\"\navailable_tools = [\"sh\"]\n"), known)
	fmt.Println(err)
	// Output:
	// worker gather [read_file write_file] 5
	// advertises shell: false
	// write_file: ask read_file: allow
	// after done: report true
	// after error, continue: false
	// bad.toml:4:20: stages[0].available_tools[0]: unknown tool "sh"; valid tools: read_file, shell, write_file
}

func ExampleBlueprint_SpawnKeys() {
	src := []byte(`
name = "planner"
[subagents]
max_child_depth = 2
spawnable = ["worker", "critic"]

[[stages]]
name = "split"
available_tools = ["fan_out"]
[stages.fan_out]
blueprint = "worker"
items_file = "items.txt"
on_worker_failure = "fail_all"
`)
	bp, err := blueprint.Parse("planner.toml", src, []string{"fan_out", "spawn_agent"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("keys the scenario must define:", bp.SpawnKeys())
	for _, ref := range bp.SpawnRefs {
		fmt.Println(ref.Where+":", ref.Key)
	}
	fo := bp.Stages[0].FanOut
	fmt.Println("fan_out:", fo.Blueprint, fo.ItemsFile, fo.MaxWorkers, fo.MaxItems, fo.MergeChars, fo.FailAll)
	fmt.Println("depth:", bp.Subagents.MaxChildDepth, "may spawn planner:", bp.Subagents.MaySpawn("planner"))
	// Output:
	// keys the scenario must define: [critic worker]
	// planner.toml:5:14: subagents.spawnable[0]: worker
	// planner.toml:5:24: subagents.spawnable[1]: critic
	// planner.toml:11:1: stages[0].fan_out.blueprint: worker
	// fan_out: worker items.txt 8 1000 16000 true
	// depth: 2 may spawn planner: false
}
