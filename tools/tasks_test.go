package tools

import (
	"fmt"
	"slices"
	"sync"
	"testing"
)

func TestTaskBrokerSequentialIDsPerAgent(t *testing.T) {
	b := NewTaskBroker()
	steps := []struct {
		agent  uint64
		text   string
		wantID uint64
	}{{1, "a1", 1}, {2, "b1", 1}, {1, "a2", 2}, {1, "a3", 3}, {2, "b2", 2}}
	for _, s := range steps {
		task, err := b.Add(s.agent, s.text)
		if err != nil || task.ID != s.wantID || task.Text != s.text || task.Done {
			t.Fatalf("Add(%d, %q) = %+v, %v; want id %d", s.agent, s.text, task, err, s.wantID)
		}
	}
	want := []Task{{1, "a1", false}, {2, "a2", false}, {3, "a3", false}}
	if got := b.List(1); !slices.Equal(got, want) {
		t.Fatalf("List(1) = %+v, want %+v", got, want)
	}
}

func TestTaskBrokerLazyListsAndRelease(t *testing.T) {
	b := &TaskBroker{} // the zero value is usable
	if b.List(5) != nil || b.Agents() != 0 {
		t.Fatal("List created a checklist for an agent that never added one")
	}
	if _, _, err := b.Complete(5, 1); err == nil || b.Agents() != 0 {
		t.Fatal("Complete on an untouched agent created a checklist or succeeded")
	}
	if _, err := b.Add(5, "x"); err != nil {
		t.Fatal(err)
	}
	if b.Agents() != 1 {
		t.Fatalf("Agents = %d after one Add", b.Agents())
	}
	b.Release(5)
	b.Release(6) // releasing an agent without a list is harmless
	if b.Agents() != 0 || b.List(5) != nil {
		t.Fatal("Release did not free the checklist")
	}
	task, _ := b.Add(5, "again")
	if task.ID != 1 {
		t.Fatalf("after Release ids restart at 1, got %d", task.ID)
	}
}

func TestTaskBrokerComplete(t *testing.T) {
	b := NewTaskBroker()
	for _, text := range []string{"one", "two"} {
		if _, err := b.Add(1, text); err != nil {
			t.Fatal(err)
		}
	}
	task, wasDone, err := b.Complete(1, 2)
	if err != nil || wasDone || task != (Task{ID: 2, Text: "two", Done: true}) {
		t.Fatalf("Complete = %+v, %v, %v", task, wasDone, err)
	}
	task, wasDone, err = b.Complete(1, 2)
	if err != nil || !wasDone || !task.Done {
		t.Fatalf("second Complete = %+v, %v, %v; want wasDone", task, wasDone, err)
	}
	if got := b.List(1); got[0].Done || !got[1].Done {
		t.Fatalf("List after Complete = %+v", got)
	}
}

func TestTaskBrokerCompleteUnknownID(t *testing.T) {
	b := NewTaskBroker()
	cases := []struct {
		name     string
		tasks    int
		id       uint64
		fragment string
	}{
		{"empty checklist", 0, 1, "the checklist is empty"},
		{"one task", 1, 2, "the checklist has task 1 only"},
		{"several tasks", 3, 4, "the checklist has tasks 1-3"},
		{"id zero", 3, 0, "task 0: no such task"},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			agent := uint64(100 + i)
			for range tc.tasks {
				if _, err := b.Add(agent, "t"); err != nil {
					t.Fatal(err)
				}
			}
			_, _, err := b.Complete(agent, tc.id)
			wantError(t, err, ErrTaskNotFound, tc.fragment)
		})
	}
}

func TestTaskBrokerLimit(t *testing.T) {
	b := NewTaskBroker()
	for i := range MaxTasksPerAgent {
		if _, err := b.Add(1, fmt.Sprint(i)); err != nil {
			t.Fatalf("Add #%d: %v", i+1, err)
		}
	}
	_, err := b.Add(1, "one too many")
	wantError(t, err, ErrTaskLimit, "256 tasks")
	if len(b.List(1)) != MaxTasksPerAgent {
		t.Fatal("a refused Add changed the checklist")
	}
	if _, err := b.Add(2, "other agent"); err != nil {
		t.Fatal("one agent's full checklist blocked another agent")
	}
}

func TestTaskBrokerListIsACopy(t *testing.T) {
	b := NewTaskBroker()
	if _, err := b.Add(1, "original"); err != nil {
		t.Fatal(err)
	}
	list := b.List(1)
	list[0].Text, list[0].Done = "mutated", true
	if got := b.List(1)[0]; got.Text != "original" || got.Done {
		t.Fatalf("mutating List's result changed the broker: %+v", got)
	}
}

// TestTaskBrokerConcurrentAgents adds, completes, lists and releases from many goroutines (run
// with -race); each agent's ids stay sequential because its calls are ordered.
func TestTaskBrokerConcurrentAgents(t *testing.T) {
	b := NewTaskBroker()
	const agents, perAgent = 16, 50
	var wg sync.WaitGroup
	for a := range uint64(agents) {
		wg.Go(func() {
			for i := range perAgent {
				task, err := b.Add(a, fmt.Sprintf("task %d", i))
				if err != nil || task.ID != uint64(i+1) {
					t.Errorf("agent %d Add #%d = %+v, %v", a, i+1, task, err)
					return
				}
				if i%2 == 0 {
					if _, _, err := b.Complete(a, task.ID); err != nil {
						t.Error(err)
					}
				}
				_ = b.List(a)
				_ = b.Agents()
			}
		})
	}
	wg.Wait()
	for a := range uint64(agents) {
		list := b.List(a)
		if len(list) != perAgent {
			t.Fatalf("agent %d has %d tasks", a, len(list))
		}
		for i, task := range list {
			if task.ID != uint64(i+1) || task.Done != (i%2 == 0) {
				t.Fatalf("agent %d task %d = %+v", a, i, task)
			}
		}
	}
	for a := range uint64(agents) {
		wg.Go(func() { b.Release(a) })
	}
	wg.Wait()
	if b.Agents() != 0 {
		t.Fatalf("Agents = %d after releasing all", b.Agents())
	}
}

func TestTaskBrokerImageGoesOnAlike(t *testing.T) {
	b := NewTaskBroker()
	for _, agent := range []uint64{9, 2} {
		for _, text := range []string{"read", "write", "test"} {
			if _, err := b.Add(agent, text); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, _, err := b.Complete(2, 2); err != nil {
		t.Fatal(err)
	}
	img := b.Image()
	if len(img) != 2 || img[0].Agent != 2 || img[1].Agent != 9 {
		t.Fatalf("image lists agents %+v, want 2 then 9", img)
	}
	back := RestoreTaskBroker(img)
	b.Release(9) // the original goes on; the image and the restored broker keep agent 9's list
	if len(back.List(9)) != 3 || len(img[1].Tasks) != 3 {
		t.Fatal("the image shares its lists with the broker")
	}
	x, _ := b.Add(2, "ship")
	y, _ := back.Add(2, "ship")
	if x != y || !back.List(2)[1].Done {
		t.Fatalf("after the restore the next task is %+v, the original's %+v; list %+v", y, x, back.List(2))
	}
}
