package trace_test

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/warrenhq/warren/trace"
)

// printTrace prints a trace with its header's "fields" object (every column and its type, over
// a thousand bytes) elided.
func printTrace(b *strings.Builder) {
	header, events, _ := strings.Cut(b.String(), "\n")
	if i := strings.Index(header, `,"fields":`); i >= 0 {
		header = header[:i] + `,"fields":{…}}`
	}
	fmt.Print(header + "\n" + events)
}

func ExampleWriter() {
	var out strings.Builder
	w, err := trace.NewWriter(&out, trace.Header{
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
	w.ToolCall(1, agent, "greet", "greeter-0-t0-c0", "shell", json.RawMessage(`{"command": "echo hi"}`), []string{"shell:echo"}, "allow", "launch", "--yolo")
	if err := w.Close(); err != nil {
		fmt.Println(err)
	}
	printTrace(&out)
	// Output:
	// {"format":"warren-trace","version":5,"host_version":"0.14.0-dev","scenario":"hello","scenario_hash":"sha256:eef4f823724aed1b3a4165d31b95c5df2be3edfa61e15817d79a85e6018d9bd9","seed":7,"clock":"virtual","fields":{…}}
	// {"tick":0,"seq":1,"agent":1,"name":"greeter-0","kind":"stage_enter","stage":"greet","visit":1}
	// {"tick":1,"seq":2,"agent":1,"name":"greeter-0","kind":"tool_call","stage":"greet","call_id":"greeter-0-t0-c0","tool":"shell","args":{"command":"echo hi"},"keys":["shell:echo"],"verdict":"allow","layer":"launch","reason":"--yolo"}
}

func ExampleWriter_SpawnChild() {
	var out strings.Builder
	w, err := trace.NewWriter(&out, trace.Header{Scenario: "tree", ScenarioHash: "sha256:00", Clock: trace.ClockVirtual, Seed: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	parent := trace.AgentRef{ID: 1, Name: "planner-0"}
	child := trace.AgentRef{ID: 2, Name: "planner-0/1"}
	w.SpawnChild(3, child, "planners", 0, "researcher", "scripted:researcher", "find where the parser fails", parent, "planner-0-t1-c0", 1, false, -1)
	w.Message(4, child, parent, "send", "start with the README")
	w.Kill(5, child, trace.AgentRef{ID: 0, Name: trace.HostName}, "run timeout", []string{"planner-0/1"})
	if err := w.Close(); err != nil {
		fmt.Println(err)
	}
	printTrace(&out)
	// Output:
	// {"format":"warren-trace","version":5,"host_version":"0.14.0-dev","scenario":"tree","scenario_hash":"sha256:00","seed":1,"clock":"virtual","fields":{…}}
	// {"tick":3,"seq":1,"agent":2,"name":"planner-0/1","kind":"spawn","group":"planners","index":0,"blueprint":"researcher","model":"scripted:researcher","task":"find where the parser fails","parent":1,"parent_name":"planner-0","depth":1,"detached":false,"call":"planner-0-t1-c0"}
	// {"tick":4,"seq":2,"agent":2,"name":"planner-0/1","kind":"message","sender":1,"sender_name":"planner-0","via":"send","text":"start with the README"}
	// {"tick":5,"seq":3,"agent":2,"name":"planner-0/1","kind":"kill","killer":0,"killer_name":"host","reason":"run timeout","cascade":["planner-0/1"]}
}

func ExampleDiff() {
	var head strings.Builder
	w, err := trace.NewWriter(&head, trace.Header{Scenario: "hello", ScenarioHash: "sha256:00", Clock: trace.ClockVirtual, Seed: 7})
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := w.Close(); err != nil {
		fmt.Println(err)
		return
	}
	header, _, _ := strings.Cut(head.String(), "\n")
	header += "\n"
	end := `{"tick":0,"seq":2,"agent":0,"name":"","kind":"end","status":"finished","ticks":1,"agents":1,"events":1,"model_turns":1,"tool_calls":0,"tool_errors":0}` + "\n"
	want := header + `{"tick":0,"seq":1,"agent":1,"name":"greeter-0","kind":"transition","from":"greet","to":"done","on":"done"}` + "\n" + end
	got := header + `{"tick":0,"seq":1,"agent":1,"name":"greeter-0","kind":"transition","from":"greet","to":"retry","on":"error"}` + "\n" + end
	report, err := trace.Diff(strings.NewReader(want), strings.NewReader(got))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(report)
	// Output:
	// first difference at line 2; want has 2 events, got has 2
	// context (identical on both sides):
	//   line 1: {"format":"warren-trace","version":5,"host_version":"0.14.0-dev","scenario":"hello","scenario_hash":"sha256:00","seed":7,"clock":"virtual","fields":{…}}
	// want: seq 1, tick 0, agent greeter-0 (id 1), kind transition
	// got:  seq 1, tick 0, agent greeter-0 (id 1), kind transition
	// fields that differ:
	// - to: "done"
	// + to: "retry"
	// - on: "done"
	// + on: "error"
	// after it: no later event differs (seq aside)
}
