package tools

import (
	"encoding/json"
	"fmt"
	"strings"
)

// NoChecklistText is the result of every checklist tool when the context has no TaskBroker (bare
// contexts): a graceful no-op, not an error, so a tool-using model is not derailed.
const NoChecklistText = "No checklist is attached to this run; the call had no effect."

// maxTaskTextLength bounds one checklist item (in characters), enforced by the schema.
const maxTaskTextLength = 500

var (
	_ Tool   = TodoAdd{}
	_ Tool   = TodoDone{}
	_ Tool   = TodoList{}
	_ Inline = TodoAdd{}
	_ Inline = TodoDone{}
	_ Inline = TodoList{}
)

// init registers the checklist tools as built-ins (see RegisterBuiltin).
func init() {
	RegisterBuiltin(BuiltinInfo{ID: "tools.todo_add", New: func() Tool { return TodoAdd{} }})
	RegisterBuiltin(BuiltinInfo{ID: "tools.todo_done", New: func() Tool { return TodoDone{} }})
	RegisterBuiltin(BuiltinInfo{ID: "tools.todo_list", New: func() Tool { return TodoList{} }})
}

// TodoAdd is the todo_add tool: it appends a task to the calling agent's checklist.
type TodoAdd struct{}

var _ Tool = TodoAdd{} // compile-time guard: TodoAdd stays a Tool

var todoAddSchema = json.RawMessage(fmt.Sprintf(`{
	"type": "object",
	"properties": {
		"text": {"type": "string", "minLength": 1, "maxLength": %d, "description": "What is to be done, one line."}
	},
	"required": ["text"],
	"additionalProperties": false
}`, maxTaskTextLength))

// Spec describes todo_add.
func (TodoAdd) Spec() Spec {
	return Spec{
		Name: NameTodoAdd,
		Description: "Add a task to your checklist. Returns the task's id (ids count up from 1). " +
			"Use the checklist to plan multi-step work and track what is left.",
		Parameters: todoAddSchema,
	}
}

// Inline reports true: the checklist is pure memory behind one mutex.
func (TodoAdd) Inline() bool { return true }

type todoAddArgs struct {
	Text string `json:"text"`
}

// Execute adds the task; see the package documentation for the result texts.
func (TodoAdd) Execute(ec *ExecContext, args json.RawMessage) (Result, error) {
	var a todoAddArgs
	if err := decodeArguments(NameTodoAdd, args, &a); err != nil {
		return Result{}, err
	}
	// One line per task keeps todo_list's output unambiguous.
	text := strings.Join(strings.Fields(a.Text), " ")
	if text == "" {
		return Result{}, fmt.Errorf("%w: text is blank", ErrInvalidArguments)
	}
	broker := checklist(ec)
	if broker == nil {
		return TextResult(NoChecklistText), nil
	}
	task, err := broker.Add(ec.Agent.ID, text)
	if err != nil {
		return Result{}, err
	}
	return TextResult(fmt.Sprintf("Added task %d: %s", task.ID, task.Text)), nil
}

// TodoDone is the todo_done tool: it marks one of the calling agent's tasks done.
type TodoDone struct{}

var _ Tool = TodoDone{} // compile-time guard: TodoDone stays a Tool

var todoDoneSchema = json.RawMessage(`{
	"type": "object",
	"properties": {
		"id": {"type": "integer", "minimum": 1, "description": "The task id todo_add returned."}
	},
	"required": ["id"],
	"additionalProperties": false
}`)

// Spec describes todo_done.
func (TodoDone) Spec() Spec {
	return Spec{
		Name:        NameTodoDone,
		Description: "Mark a task on your checklist as done, by the id todo_add returned.",
		Parameters:  todoDoneSchema,
	}
}

// Inline reports true: the checklist is pure memory behind one mutex.
func (TodoDone) Inline() bool { return true }

type todoDoneArgs struct {
	ID *json.Number `json:"id"`
}

// Execute completes the task; see the package documentation for the result texts.
func (TodoDone) Execute(ec *ExecContext, args json.RawMessage) (Result, error) {
	var a todoDoneArgs
	if err := decodeArguments(NameTodoDone, args, &a); err != nil {
		return Result{}, err
	}
	if a.ID == nil {
		return Result{}, fmt.Errorf("%w: id is required", ErrInvalidArguments)
	}
	id, err := positiveInt("id", a.ID, 0)
	if err != nil {
		return Result{}, err
	}
	broker := checklist(ec)
	if broker == nil {
		return TextResult(NoChecklistText), nil
	}
	task, wasDone, err := broker.Complete(ec.Agent.ID, uint64(id))
	if err != nil {
		return Result{}, err
	}
	if wasDone {
		return TextResult(fmt.Sprintf("Task %d was already done: %s", task.ID, task.Text)), nil
	}
	return TextResult(fmt.Sprintf("Completed task %d: %s", task.ID, task.Text)), nil
}

// TodoList is the todo_list tool: it shows the calling agent's checklist.
type TodoList struct{}

var _ Tool = TodoList{} // compile-time guard: TodoList stays a Tool

var todoListSchema = json.RawMessage(`{"type": "object", "additionalProperties": false}`)

// Spec describes todo_list.
func (TodoList) Spec() Spec {
	return Spec{
		Name:        NameTodoList,
		Description: "Show your checklist: every task with its id, done ones marked [x].",
		Parameters:  todoListSchema,
	}
}

// Inline reports true: the checklist is pure memory behind one mutex.
func (TodoList) Inline() bool { return true }

// Execute renders the checklist; see the package documentation for the result texts.
func (TodoList) Execute(ec *ExecContext, args json.RawMessage) (Result, error) {
	var none struct{}
	if err := decodeArguments(NameTodoList, args, &none); err != nil {
		return Result{}, err
	}
	broker := checklist(ec)
	if broker == nil {
		return TextResult(NoChecklistText), nil
	}
	return TextResult(FormatChecklist(broker.List(ec.Agent.ID))), nil
}

// FormatChecklist renders tasks the way todo_list shows them:
//
//	Checklist (1 of 2 done):
//	[x] 1. write the tests
//	[ ] 2. run the benchmarks
//
// or "The checklist is empty." Exported so reports and traces can show a checklist identically.
func FormatChecklist(tasks []Task) string {
	if len(tasks) == 0 {
		return "The checklist is empty."
	}
	done := 0
	for _, t := range tasks {
		if t.Done {
			done++
		}
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "Checklist (%d of %d done):", done, len(tasks))
	for _, t := range tasks {
		mark := "[ ]"
		if t.Done {
			mark = "[x]"
		}
		fmt.Fprintf(&sb, "\n%s %d. %s", mark, t.ID, t.Text)
	}
	return sb.String()
}

// checklist returns the context's broker, nil in bare contexts.
func checklist(ec *ExecContext) *TaskBroker {
	if ec == nil {
		return nil
	}
	return ec.Tasks
}
