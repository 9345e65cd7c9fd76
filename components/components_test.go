package components

import (
	"reflect"
	"testing"

	"github.com/warrenhq/warren/models"
)

// hasPointers reports whether t holds anything the garbage collector traces.
func hasPointers(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Pointer, reflect.String, reflect.Slice, reflect.Map, reflect.Interface,
		reflect.Chan, reflect.Func, reflect.UnsafePointer:
		return true
	case reflect.Array:
		return t.Len() > 0 && hasPointers(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			if hasPointers(t.Field(i).Type) {
				return true
			}
		}
	}
	return false
}

// Every type stored in arche must be pointer-free: arche moves components with a byte copy the
// garbage collector does not see (see the package documentation).
func TestComponentsArePointerFree(t *testing.T) {
	for _, v := range []any{
		Identity{}, Status{}, Cursor{}, Counters{}, RNG{},
		Entering{}, ReadyToInfer{}, AwaitingInference{}, ReadyForTools{}, AwaitingTools{},
		ResolveTransition{}, Terminal{},
	} {
		if typ := reflect.TypeOf(v); hasPointers(typ) {
			t.Errorf("%s holds pointers; move them to AgentData", typ)
		}
	}
	if !hasPointers(reflect.TypeOf(AgentData{})) {
		t.Error("the check is blind: AgentData holds pointers")
	}
}

func TestConversationDropsOldestKeepingTask(t *testing.T) {
	c := Conversation{Max: 4}
	c.Append(models.Message{Role: models.RoleUser, Content: "task"})
	c.Append(models.Message{Role: models.RoleAssistant, Content: "a1", Calls: []models.ToolCall{{ID: "1"}}})
	c.Append(models.Message{Role: models.RoleTool, Content: "r1", CallID: "1"})
	c.Append(models.Message{Role: models.RoleAssistant, Content: "a2"})
	c.Append(models.Message{Role: models.RoleAssistant, Content: "a3"})
	var got []string
	for _, m := range c.Messages {
		got = append(got, m.Content)
	}
	// a1 is dropped, and its orphaned tool result r1 with it.
	want := []string{"task", "a2", "a3"}
	if len(got) != len(want) {
		t.Fatalf("messages %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("messages %v, want %v", got, want)
		}
	}
	if c.Dropped != 2 {
		t.Errorf("dropped %d, want 2", c.Dropped)
	}
	if c.LastAssistantText() != "a3" {
		t.Errorf("last assistant text %q", c.LastAssistantText())
	}
}

func TestToolCountsStaySorted(t *testing.T) {
	var tc ToolCounts
	for _, name := range []string{"write_file", "read_file", "write_file", "list_dir"} {
		tc.Add(name)
	}
	if tc.Of("write_file") != 2 || tc.Of("read_file") != 1 || tc.Of("edit_file") != 0 {
		t.Fatalf("counts %v", tc)
	}
	for i := 1; i < len(tc); i++ {
		if tc[i-1].Tool >= tc[i].Tool {
			t.Fatalf("not sorted: %v", tc)
		}
	}
}

func TestAgentsStoreReusesSlotsAndKeepsPointersStable(t *testing.T) {
	var a Agents
	first := a.Alloc()
	p := a.Get(first)
	p.Name = "first"
	for range agentPage * 2 {
		a.Alloc()
	}
	if a.Get(first) != p || p.Name != "first" {
		t.Fatal("growth moved an entry")
	}
	a.Free(first)
	if p.Name != "" {
		t.Fatal("Free kept the references")
	}
	if again := a.Alloc(); again != first {
		t.Fatalf("slot %d not reused (got %d)", first, again)
	}
	if a.Live() != agentPage*2+1 {
		t.Fatalf("live = %d", a.Live())
	}
}

func TestStatusNames(t *testing.T) {
	for i, n := range StatusNames {
		k, ok := ParseStatus(n)
		if !ok || int(k) != i || k.String() != n {
			t.Errorf("%q round-trips to %v %v", n, k, ok)
		}
	}
	if !Killed.Terminal() || Waiting.Terminal() {
		t.Error("terminal statuses wrong")
	}
	if _, ok := ParseStatus("zombie"); ok {
		t.Error("unknown status parsed")
	}
}
