package components

import (
	"context"
	"reflect"
	"strings"
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

func TestConversationDropsWholeTurnsKeepingTask(t *testing.T) {
	msg := func(role models.Role, content string) models.Message {
		return models.Message{Role: role, Content: content}
	}
	cases := []struct {
		name    string
		max     int32
		appends []models.Message
		want    []string
		dropped int32
	}{
		{"under the bound nothing drops", 4,
			[]models.Message{msg(models.RoleUser, "task"), msg(models.RoleAssistant, "a1")},
			[]string{"task", "a1"}, 0},
		{"a call and its result drop together", 4,
			[]models.Message{msg(models.RoleUser, "task"), msg(models.RoleAssistant, "a1"), msg(models.RoleTool, "r1"),
				msg(models.RoleAssistant, "a2"), msg(models.RoleAssistant, "a3")},
			[]string{"task", "a2", "a3"}, 2},
		{"without a task the first turn is not pinned", 3,
			[]models.Message{msg(models.RoleAssistant, "a1"), msg(models.RoleTool, "r1"),
				msg(models.RoleAssistant, "a2"), msg(models.RoleTool, "r2")},
			[]string{"a2", "r2"}, 2},
		{"the turn being built is never split", 3,
			[]models.Message{msg(models.RoleUser, "task"), msg(models.RoleAssistant, "a1"),
				msg(models.RoleTool, "r1a"), msg(models.RoleTool, "r1b"), msg(models.RoleTool, "r1c")},
			[]string{"task", "a1", "r1a", "r1b", "r1c"}, 0},
		{"an oversized turn is trimmed by the next append", 3,
			[]models.Message{msg(models.RoleUser, "task"), msg(models.RoleAssistant, "a1"),
				msg(models.RoleTool, "r1a"), msg(models.RoleTool, "r1b"), msg(models.RoleAssistant, "a2")},
			[]string{"task", "a2"}, 3},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := Conversation{Max: tc.max}
			for _, m := range tc.appends {
				c.Append(m)
			}
			var got []string
			for _, m := range c.Messages {
				got = append(got, m.Content)
			}
			if strings.Join(got, ",") != strings.Join(tc.want, ",") || c.Dropped != tc.dropped {
				t.Fatalf("messages %v dropped %d, want %v dropped %d", got, c.Dropped, tc.want, tc.dropped)
			}
		})
	}
	c := Conversation{}
	c.Append(msg(models.RoleAssistant, "a3"))
	c.Append(msg(models.RoleTool, "r3"))
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

func TestAgentsReleasesEmptyPages(t *testing.T) {
	var a Agents
	slots := make([]uint32, 3*agentPage)
	for i := range slots {
		slots[i] = a.Alloc()
		a.Get(slots[i]).Name = "agent"
	}
	keep := a.Alloc() // page 3 stays in use throughout
	for _, s := range slots[agentPage : 2*agentPage] {
		a.Free(s)
	}
	if a.pages[1] != nil {
		t.Fatal("page 1 is still held after every agent on it was freed")
	}
	if a.pages[0] == nil || a.pages[2] == nil {
		t.Fatal("a page with live agents was released")
	}
	if got := a.Live(); got != 2*agentPage+1 {
		t.Fatalf("Live = %d, want %d", got, 2*agentPage+1)
	}
	reused := a.Alloc() // the free list hands back a slot of page 1, which is made again
	if reused/agentPage != 1 || a.pages[1] == nil || a.Get(reused).Name != "" {
		t.Fatalf("reused slot %d: page 1 held %v, data %+v; want a fresh zeroed page", reused, a.pages[1] != nil, *a.Get(reused))
	}
	a.Free(reused)
	for _, s := range append(slots[:agentPage:agentPage], slots[2*agentPage:]...) {
		a.Free(s)
	}
	a.Free(keep)
	if a.Live() != 0 || len(a.pages) != 0 || a.free != nil {
		t.Fatalf("after freeing every agent: live %d, %d pages, free list %d; want an empty store", a.Live(), len(a.pages), len(a.free))
	}
	if s := a.Alloc(); s != 0 {
		t.Fatalf("first slot after a reset = %d, want 0", s)
	}
}

// The turn's intent is the latest non-empty user message appended, whatever came after it, and
// it stands when a bounded conversation drops that message.
func TestConversationLastUserText(t *testing.T) {
	c := Conversation{Max: 3}
	if got := c.LastUserText(); got != "" {
		t.Fatalf("empty conversation: intent %q", got)
	}
	c.Append(models.Message{Role: models.RoleUser, Content: "the task"})
	c.Append(models.Message{Role: models.RoleAssistant, Content: "on it", Calls: []models.ToolCall{{ID: "c1"}}})
	c.Append(models.Message{Role: models.RoleTool, Content: "done", CallID: "c1"})
	if got := c.LastUserText(); got != "the task" {
		t.Fatalf("intent %q, want the task", got)
	}
	c.Append(models.Message{Role: models.RoleUser, Content: ""})
	c.Append(models.Message{Role: models.RoleUser, Content: "a message from the boss"})
	c.Append(models.Message{Role: models.RoleAssistant, Content: "ok"})
	c.Append(models.Message{Role: models.RoleAssistant, Content: "still ok"})
	if got := c.LastUserText(); got != "a message from the boss" {
		t.Fatalf("intent %q, want the latest non-empty user message", got)
	}
	for _, m := range c.Messages {
		if m.Content == "a message from the boss" {
			t.Fatalf("the boss's message is still held (%+v): the test no longer checks a dropped intent", c.Messages)
		}
	}
}

// namedModel is a model that is only an id, for the profile's model lookups.
type namedModel string

func (m namedModel) ID() string { return string(m) }
func (namedModel) Turn(context.Context, *models.State, *models.View) (models.Reply, error) {
	return models.Reply{}, nil
}

// TestStageModels: a stage with a model of its own resolves to it and its slot, every other stage
// to the profile's model (slot 0); an agent's state in each slot is its own, the extra slots made
// on first use only.
func TestStageModels(t *testing.T) {
	p := &Profile{Model: namedModel("scripted:writer"), ModelID: "scripted:writer",
		StageModels: []StageModel{{}, {Model: namedModel("openai:grader"), ID: "openai:grader", Slot: 1}, {}, {Model: namedModel("js:judge"), ID: "js:judge", Slot: 2}}}
	for _, tc := range []struct {
		name  string
		stage int32
		id    string
		slot  uint8
	}{
		{"a stage of the profile's model", 0, "scripted:writer", 0},
		{"a stage with its own model", 1, "openai:grader", 1},
		{"the other stage with its own", 3, "js:judge", 2},
		{"a stage past the table", 9, "scripted:writer", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, id, slot := p.ModelOf(tc.stage)
			if m.ID() != tc.id || id != tc.id || slot != tc.slot {
				t.Errorf("ModelOf(%d) = %s, %q, %d; want %q, slot %d", tc.stage, m.ID(), id, slot, tc.id, tc.slot)
			}
		})
	}
	if got := p.Models(); len(got) != 3 || got[0].ID() != "scripted:writer" || got[1].ID() != "openai:grader" || got[2].ID() != "js:judge" {
		t.Errorf("Models() = %v", got)
	}
	var d AgentData
	d.ModelState(0).Cursor = 4
	if d.StageModels != nil {
		t.Fatal("the profile's model's state made stage model slots")
	}
	d.ModelState(2).Cursor = 7
	d.ModelState(1).Cursor++
	if d.Model.Cursor != 4 || len(d.StageModels) != 2 || d.StageModels[0].Cursor != 1 || d.StageModels[1].Cursor != 7 {
		t.Errorf("states: model %+v, stage models %+v", d.Model, d.StageModels)
	}
}
