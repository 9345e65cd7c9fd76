package tools_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/warrenhq/warren/tools"
)

// greet is a minimal tool: it greets whoever the arguments name.
type greet struct{ greeting string }

func (g greet) Spec() tools.Spec {
	return tools.Spec{
		Name:        "greet",
		Description: "Greet someone by name.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string","minLength":1}},` +
			`"required":["name"],"additionalProperties":false}`),
	}
}

func (g greet) Execute(_ *tools.ExecContext, args json.RawMessage) (tools.Result, error) {
	var a struct {
		Name string `json:"name"`
	}
	if err := json.Unmarshal(args, &a); err != nil {
		return tools.Result{}, err
	}
	return tools.TextResult(g.greeting + ", " + a.Name + "!"), nil
}

func ExampleRegistry_Register() {
	reg := tools.NewRegistry()
	if err := reg.Register(greet{greeting: "Hello"}); err != nil {
		fmt.Println(err)
	}
	err := reg.Register(greet{greeting: "Hi"})
	fmt.Println(errors.Is(err, tools.ErrDuplicate), err)

	h, _ := reg.Lookup("greet")
	res, _ := h.Execute(nil, json.RawMessage(`{"name":"Ada"}`))
	fmt.Println(res.Content)
	_, err = h.Execute(nil, json.RawMessage(`{"name":""}`))
	fmt.Println(err)
	// Output:
	// true register tool "greet": duplicate tool name
	// Hello, Ada!
	// invalid arguments for tool "greet": at /name: minLength: got 0, want 1
}

func ExampleScopedToolRegistry() {
	base := tools.NewRegistry()
	if err := base.Register(greet{greeting: "Hello"}); err != nil {
		fmt.Println(err)
	}
	if err := tools.RegisterBuiltins(base); err != nil {
		fmt.Println(err)
	}
	reg := tools.NewScoped(base)
	args := json.RawMessage(`{"name":"Ada"}`)

	func() {
		stage := reg.PushScopeGuarded()
		defer stage.Release()
		// A stage overrides greet for its lifetime, shadowing the base tool.
		if _, err := reg.RegisterInScope(stage.ID(), greet{greeting: "Ahoy"}); err != nil {
			fmt.Println(err)
		}
		res, _ := reg.Execute(nil, "greet", args)
		fmt.Println(res.Content, "depth", reg.ScopeDepth(), "tools", reg.Len())
	}()

	res, _ := reg.Execute(nil, "greet", args)
	fmt.Println(res.Content, "depth", reg.ScopeDepth())

	ec := tools.NewExecContext(context.Background(), "call-1", 1, tools.AgentRef{ID: 1}, "")
	ec.Tasks = tools.NewTaskBroker()
	res, _ = reg.Execute(ec, "todo_add", json.RawMessage(`{"text":"say hello"}`))
	fmt.Println(res.Content)

	_, err := reg.Execute(ec, "shout", nil)
	fmt.Println(err)
	// Output:
	// Ahoy, Ada! depth 1 tools 8
	// Hello, Ada! depth 0
	// Added task 1: say hello
	// tool not found: "shout"
}
