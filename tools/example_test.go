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
	// Ahoy, Ada! depth 1 tools 14
	// Hello, Ada! depth 0
	// Added task 1: say hello
	// tool not found: "shout"
}

func ExampleWriteBudget() {
	// One budget per agent run, shared by every call through ExecContext.Writes.
	budget := tools.NewWriteBudget(4096, 10000)
	fmt.Println(budget.Charge(5000))
	fmt.Println(budget.Charge(4000), budget.Charge(4000))
	err := budget.Charge(3000)
	fmt.Println(errors.Is(err, tools.ErrWriteBudget), err)
	fmt.Println(budget.Spent())
	// Output:
	// write refused: 5000 bytes exceed the per-call write budget of 4096 bytes
	// <nil> <nil>
	// true write refused: 3000 bytes would exceed the per-run write budget of 10000 bytes (2000 bytes left)
	// 8000
}

func ExampleInteractive() {
	args := json.RawMessage(`{"question":"Which colour?","choices":["red","blue"]}`)
	var tool tools.Tool = tools.AskUserChoice{}

	// With a hub attached the host parks the agent and uses Question and Answer.
	ask := tool.(tools.Interactive)
	q, _ := ask.Question(args)
	fmt.Println(q.Kind, q.Text, q.Choices)
	_, err := ask.Answer(q, "Blue")
	fmt.Println(errors.Is(err, tools.ErrInvalidAnswer), err)
	res, _ := ask.Answer(q, "blue")
	fmt.Println(res.Content)

	// Headless, with no question broker, Execute gives the unattended answer.
	res, _ = tool.Execute(nil, args)
	fmt.Println(res.Content)
	// Output:
	// choice Which colour? [red blue]
	// true invalid answer: "Blue" is not one of the choices ("red", "blue"); the answer must match a choice exactly, case included
	// The user chose: blue
	// No one is available to answer right now. Proceed with your best judgment and say which assumptions you made.
}
