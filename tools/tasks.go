package tools

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
)

// MaxTasksPerAgent caps one agent's checklist, bounding the memory a runaway model can pin (the
// host holds up to 10^6 agents).
const MaxTasksPerAgent = 256

// Checklist errors.
var (
	// ErrTaskNotFound: the agent's checklist has no task with that id.
	ErrTaskNotFound = errors.New("no such task")
	// ErrTaskLimit: the agent's checklist already holds MaxTasksPerAgent tasks.
	ErrTaskLimit = errors.New("checklist is full")
)

// Task is one checklist item.
type Task struct {
	// ID is sequential per agent: 1 for the agent's first task, then 2, 3, ...
	ID uint64
	// Text says what is to be done.
	Text string
	// Done is set once the task is completed.
	Done bool
}

// TaskBroker is the single writer for checklist state: one per world, holding every agent's list
// behind one mutex. Lists are created on an agent's first Add, so an agent that never touches the
// checklist costs nothing, and Release frees a list when the agent is reaped. All methods are
// safe for concurrent use and deterministic (ids depend only on the order of Adds per agent). The
// zero value is ready to use.
type TaskBroker struct {
	mu    sync.Mutex
	lists map[uint64][]Task
}

// NewTaskBroker returns an empty broker.
func NewTaskBroker() *TaskBroker { return &TaskBroker{} }

// Add appends a task to agent's checklist and returns it with its id. A full checklist wraps
// ErrTaskLimit.
func (b *TaskBroker) Add(agent uint64, text string) (Task, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	list := b.lists[agent]
	if len(list) >= MaxTasksPerAgent {
		return Task{}, fmt.Errorf("the checklist already holds %d tasks: %w", MaxTasksPerAgent, ErrTaskLimit)
	}
	task := Task{ID: uint64(len(list)) + 1, Text: text}
	if b.lists == nil {
		b.lists = make(map[uint64][]Task)
	}
	b.lists[agent] = append(list, task)
	return task, nil
}

// Complete marks task id of agent's checklist done and returns it; wasDone reports that it had
// already been completed (the call then changes nothing). An unknown id wraps ErrTaskNotFound.
func (b *TaskBroker) Complete(agent, id uint64) (task Task, wasDone bool, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	list := b.lists[agent]
	if id == 0 || id > uint64(len(list)) {
		return Task{}, false, fmt.Errorf("task %d: %w (%s)", id, ErrTaskNotFound, describeIDs(len(list)))
	}
	item := &list[id-1]
	wasDone = item.Done
	item.Done = true
	return *item, wasDone, nil
}

// describeIDs tells the agent which ids exist, so it can correct a wrong one.
func describeIDs(n int) string {
	switch n {
	case 0:
		return "the checklist is empty"
	case 1:
		return "the checklist has task 1 only"
	default:
		return fmt.Sprintf("the checklist has tasks 1-%d", n)
	}
}

// List returns a copy of agent's checklist in id order; nil when the agent has none. It never
// creates a list.
func (b *TaskBroker) List(agent uint64) []Task {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.lists[agent])
}

// Release frees agent's checklist. The reap system calls it when the agent is removed; a later Add
// starts again at id 1.
func (b *TaskBroker) Release(agent uint64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.lists, agent)
}

// Agents returns how many agents currently hold a checklist (a memory gauge for metrics).
func (b *TaskBroker) Agents() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.lists)
}

// TaskList is one agent's checklist as data, for a snapshot of the world.
type TaskList struct {
	Agent uint64
	Tasks []Task
}

// Image returns every agent's checklist, by agent id, sharing nothing with the broker.
func (b *TaskBroker) Image() []TaskList {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]TaskList, 0, len(b.lists))
	for _, agent := range slices.Sorted(maps.Keys(b.lists)) {
		out = append(out, TaskList{Agent: agent, Tasks: slices.Clone(b.lists[agent])})
	}
	return out
}

// RestoreTaskBroker returns a broker holding the checklists lists describe.
func RestoreTaskBroker(lists []TaskList) *TaskBroker {
	b := NewTaskBroker()
	if len(lists) > 0 {
		b.lists = make(map[uint64][]Task, len(lists))
	}
	for _, l := range lists {
		b.lists[l.Agent] = slices.Clone(l.Tasks)
	}
	return b
}
