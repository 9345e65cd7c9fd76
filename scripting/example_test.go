package scripting_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/warrenhq/warren/scripting"
)

// Compile a tool file once, then run calls through an Engine. This tool uses no host function,
// so the calls pass a nil Host; the script tool passes the agent's host functions.
func Example() {
	src := []byte(`defineTool({
  name: "greet",
  description: "Greets someone at the virtual clock's hour.",
  parameters: { type: "object", properties: { who: { type: "string" } }, required: ["who"] },
  run(args) {
    if (args.who === "") throw new Error("nobody to greet");
    return { greeting: "hello " + args.who, at: new Date().toISOString(), lucky: Math.floor(Math.random() * 10) };
  },
});`)
	script, err := scripting.Compile("tools/greet.js", src)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(script.Name, string(script.Parameters))

	engine := scripting.NewEngine(scripting.DefaultLimits())
	defer engine.Close()
	env := scripting.CallEnv{
		Now:  time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC),
		Rand: func() float64 { return 0.42 }, // the agent's seeded source in the host
	}
	out, err := engine.Run(context.Background(), script, json.RawMessage(`{"who":"Ada"}`), nil, env)
	fmt.Println(out, err)

	_, err = engine.Run(context.Background(), script, json.RawMessage(`{"who":""}`), nil, env)
	fmt.Println(err, errors.Is(err, scripting.ErrRuntime))
	// Output:
	// greet {"type":"object","properties":{"who":{"type":"string"}},"required":["who"]}
	// {"greeting":"hello Ada","at":"2030-01-02T03:04:05.000Z","lucky":4} <nil>
	// tools/greet.js:6:32: Error: nobody to greet true
}
