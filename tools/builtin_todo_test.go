package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// todoEC returns a context for agent id with the given broker.
func todoEC(agent uint64, broker *TaskBroker) *ExecContext {
	ec := NewExecContext(context.Background(), "call", 1, AgentRef{ID: agent}, "")
	ec.Tasks = broker
	return ec
}

func TestTodoToolsHappyPath(t *testing.T) {
	broker := NewTaskBroker()
	ec := todoEC(1, broker)
	steps := []struct {
		name string
		tool Tool
		args string
		want string
	}{
		{"list when empty", TodoList{}, `{}`, "The checklist is empty."},
		{"add first", TodoAdd{}, `{"text":"write the tests"}`, "Added task 1: write the tests"},
		{"add second", TodoAdd{}, `{"text":"run the benchmarks"}`, "Added task 2: run the benchmarks"},
		{"add collapses whitespace", TodoAdd{}, `{"text":"  ship\n\tit   now "}`, "Added task 3: ship it now"},
		{"complete", TodoDone{}, `{"id":1}`, "Completed task 1: write the tests"},
		{"complete again", TodoDone{}, `{"id":1}`, "Task 1 was already done: write the tests"},
		{"complete with an integral float id", TodoDone{}, `{"id":3.0}`, "Completed task 3: ship it now"},
		{"list", TodoList{}, ``, "Checklist (2 of 3 done):\n[x] 1. write the tests\n[ ] 2. run the benchmarks\n[x] 3. ship it now"},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			if got := mustRun(t, s.tool, ec, s.args); got != s.want {
				t.Fatalf("got %q\nwant %q", got, s.want)
			}
		})
	}
}

func TestTodoToolsAreInline(t *testing.T) {
	for _, tool := range []Tool{TodoAdd{}, TodoDone{}, TodoList{}} {
		in, ok := tool.(Inline)
		if !ok || !in.Inline() {
			t.Fatalf("%s is not inline", tool.Spec().Name)
		}
	}
}

func TestTodoToolsAreIsolatedPerAgent(t *testing.T) {
	broker := NewTaskBroker()
	mustRun(t, TodoAdd{}, todoEC(1, broker), `{"text":"mine"}`)
	if got := mustRun(t, TodoAdd{}, todoEC(2, broker), `{"text":"theirs"}`); got != "Added task 1: theirs" {
		t.Fatalf("second agent's first task: %q", got)
	}
	if _, err := run(t, TodoDone{}, todoEC(3, broker), `{"id":1}`); !errors.Is(err, ErrTaskNotFound) {
		t.Fatalf("agent 3 completed another agent's task: %v", err)
	}
	if got := mustRun(t, TodoList{}, todoEC(1, broker), `{}`); got != "Checklist (0 of 1 done):\n[ ] 1. mine" {
		t.Fatalf("agent 1 list: %q", got)
	}
	if broker.Agents() != 2 {
		t.Fatalf("Agents = %d; a list-only or failed call created a checklist", broker.Agents())
	}
}

func TestTodoToolsWithoutBrokerAreGracefulNoOps(t *testing.T) {
	calls := []struct {
		tool Tool
		args string
	}{{TodoAdd{}, `{"text":"x"}`}, {TodoDone{}, `{"id":1}`}, {TodoList{}, `{}`}}
	for _, ec := range []*ExecContext{nil, todoEC(1, nil)} {
		for _, c := range calls {
			t.Run(fmt.Sprintf("%s/nil-context=%v", c.tool.Spec().Name, ec == nil), func(t *testing.T) {
				res, err := run(t, c.tool, ec, c.args)
				if err != nil || res.IsError || res.Content != NoChecklistText {
					t.Fatalf("got %+v, %v; want the no-checklist text", res, err)
				}
			})
		}
	}
}

func TestTodoToolErrors(t *testing.T) {
	broker := NewTaskBroker()
	full := todoEC(9, broker)
	for i := range MaxTasksPerAgent {
		if _, err := broker.Add(9, fmt.Sprint(i)); err != nil {
			t.Fatal(err)
		}
	}
	mustRun(t, TodoAdd{}, todoEC(1, broker), `{"text":"only"}`)
	cases := []struct {
		name     string
		ec       *ExecContext
		tool     Tool
		args     string
		sentinel error
		want     string
	}{
		{"blank text", todoEC(1, broker), TodoAdd{}, `{"text":" \n\t "}`, ErrInvalidArguments, "text is blank"},
		{"text too long", todoEC(1, broker), TodoAdd{}, fmt.Sprintf(`{"text":%q}`, strings.Repeat("a", maxTaskTextLength+1)), ErrInvalidArguments,
			fmt.Sprintf("at /text: maxLength: got %d, want %d", maxTaskTextLength+1, maxTaskTextLength)},
		{"checklist full", full, TodoAdd{}, `{"text":"more"}`, ErrTaskLimit, "the checklist already holds 256 tasks: checklist is full"},
		{"unknown id", todoEC(1, broker), TodoDone{}, `{"id":2}`, ErrTaskNotFound, "task 2: no such task (the checklist has task 1 only)"},
		{"fractional id", todoEC(1, broker), TodoDone{}, `{"id":1.5}`, ErrInvalidArguments, "at /id: got number, want integer"},
		{"negative id", todoEC(1, broker), TodoDone{}, `{"id":-1}`, ErrInvalidArguments, "at /id: minimum: got -1, want 1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := run(t, tc.tool, tc.ec, tc.args)
			wantError(t, err, tc.sentinel, tc.want)
		})
	}
	if got := broker.List(1); len(got) != 1 || got[0].Done {
		t.Fatalf("failed calls changed the checklist: %+v", got)
	}
}

func TestTodoDoneDirectCallWithoutID(t *testing.T) {
	_, err := TodoDone{}.Execute(todoEC(1, NewTaskBroker()), json.RawMessage(`{}`))
	wantError(t, err, ErrInvalidArguments, "id is required")
}

func TestFormatChecklist(t *testing.T) {
	cases := []struct {
		name  string
		tasks []Task
		want  string
	}{
		{"none", nil, "The checklist is empty."},
		{"one open", []Task{{ID: 1, Text: "a"}}, "Checklist (0 of 1 done):\n[ ] 1. a"},
		{"mixed", []Task{{ID: 1, Text: "a", Done: true}, {ID: 2, Text: "b"}}, "Checklist (1 of 2 done):\n[x] 1. a\n[ ] 2. b"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := FormatChecklist(tc.tasks); got != tc.want {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestBuiltins(t *testing.T) {
	r := NewRegistry()
	if err := RegisterBuiltins(r); err != nil {
		t.Fatal(err)
	}
	want := []string{NameAskUserChoice, NameAskUserConfirm, NameAskUserText, NameEditFile, NameListDir, NameMemoryGet, NameMemorySet, NameReadFile,
		NameShell, NameTodoAdd, NameTodoDone, NameTodoList, NameWriteFile}
	if !slices.Equal(r.Names(), want) {
		t.Fatalf("Names = %v, want %v", r.Names(), want)
	}
	for _, spec := range r.Specs() {
		var schema struct {
			Type                 string         `json:"type"`
			AdditionalProperties *bool          `json:"additionalProperties"`
			Properties           map[string]any `json:"properties"`
			Required             []string       `json:"required"`
		}
		if err := json.Unmarshal(spec.Parameters, &schema); err != nil {
			t.Fatalf("%s: %v", spec.Name, err)
		}
		if schema.Type != "object" || schema.AdditionalProperties == nil || *schema.AdditionalProperties {
			t.Fatalf("%s: schema is not a strict object", spec.Name)
		}
		for _, req := range schema.Required {
			if _, ok := schema.Properties[req]; !ok {
				t.Fatalf("%s: required %q is not a property", spec.Name, req)
			}
		}
		if len(spec.Description) < 20 {
			t.Fatalf("%s: description %q is too thin for a model", spec.Name, spec.Description)
		}
	}
	err := RegisterBuiltins(r)
	wantError(t, err, ErrDuplicate, "register built-in tools")
}
