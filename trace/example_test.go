package trace_test

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/warrenhq/warren/trace"
)

func ExampleWriter() {
	w, err := trace.NewWriter(os.Stdout, trace.Header{
		Scenario:     "hello",
		ScenarioHash: trace.HashScenario([]byte("name = \"hello\"\n")),
		Clock:        trace.ClockVirtual,
		Seed:         7,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	agent := trace.AgentRef{ID: 1, Name: "greeter-0"}
	w.StageEnter(0, agent, "greet", 1)
	w.ToolCall(1, agent, "greeter-0-t0-c0", "shell", json.RawMessage(`{"command": "echo hi"}`), []string{"shell:echo"}, "allow", "launch", "--yolo")
	if err := w.Close(); err != nil {
		fmt.Println(err)
	}
	// Output:
	// {"format":"warren-trace","version":2,"scenario":"hello","scenario_hash":"sha256:eef4f823724aed1b3a4165d31b95c5df2be3edfa61e15817d79a85e6018d9bd9","seed":7,"clock":"virtual"}
	// {"tick":0,"seq":1,"agent":1,"name":"greeter-0","kind":"stage_enter","stage":"greet","visit":1}
	// {"tick":1,"seq":2,"agent":1,"name":"greeter-0","kind":"tool_call","call_id":"greeter-0-t0-c0","tool":"shell","args":{"command":"echo hi"},"keys":["shell:echo"],"verdict":"allow","layer":"launch","reason":"--yolo"}
}

func ExampleDiff() {
	header := `{"format":"warren-trace","version":2,"scenario":"hello","scenario_hash":"sha256:00","seed":7,"clock":"virtual"}` + "\n"
	want := header + `{"tick":0,"seq":1,"agent":1,"name":"greeter-0","kind":"transition","from":"greet","to":"done","on":"done"}` + "\n"
	got := header + `{"tick":0,"seq":1,"agent":1,"name":"greeter-0","kind":"transition","from":"greet","to":"retry","on":"error"}` + "\n"
	report, err := trace.Diff(strings.NewReader(want), strings.NewReader(got))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(report)
	// Output:
	// first difference at line 2; want has 1 events, got has 1
	// context (identical on both sides):
	//   line 1: {"format":"warren-trace","version":2,"scenario":"hello","scenario_hash":"sha256:00","seed":7,"clock":"virtual"}
	// want: seq 1, tick 0, agent greeter-0 (id 1), kind transition
	// got:  seq 1, tick 0, agent greeter-0 (id 1), kind transition
	// fields that differ:
	// - to: "done"
	// + to: "retry"
	// - on: "done"
	// + on: "error"
}
