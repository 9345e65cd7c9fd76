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
