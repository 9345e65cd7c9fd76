package components

import (
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"testing"

	"github.com/warrenhq/warren/internal/gobtest"
	"github.com/warrenhq/warren/models"
	"github.com/warrenhq/warren/policy"
	"github.com/warrenhq/warren/recording"
	"github.com/warrenhq/warren/tools"
)

type leftRunning struct{ call string }

func (l leftRunning) Report() string { return "report of " + l.call }

// busyAgent is an agent in the middle of everything: a trimmed conversation, grants of both
// scopes, a spent write budget, a turn with a finished background call and a diverged script.
func busyAgent() AgentData {
	d := AgentData{Name: "worker-3", Reason: "stage done", Visits: []uint32{1, 2, 0}, Workdir: "/w/worker-3",
		Parent: 7, Depth: 1, Root: 2, ContextTokens: 420, ContextBytes: 1700, Model: models.State{Cursor: 5},
		StageModels: []models.State{{Cursor: 2}, {Cursor: 9}}}
	d.Conversation.Max = 4
	d.Conversation.Append(models.Message{Role: models.RoleUser, Content: "the task"})
	for i := range 3 {
		d.Conversation.Append(models.Message{Role: models.RoleAssistant, Calls: []models.ToolCall{{ID: "c" + string(rune('0'+i)), Name: "shell", Args: json.RawMessage(`{"cmd":"ls"}`)}}})
		d.Conversation.Append(models.Message{Role: models.RoleTool, CallID: "c" + string(rune('0'+i)), Content: "ok"})
	}
	d.Conversation.Append(models.Message{Role: models.RoleUser, Content: "a person's answer"})
	d.ByTool = ToolCounts{{Tool: "shell", N: 3}}
	d.Seen = &ResultsSeen{List: []ResultSeen{{ID: 1, Matched: true, Calls: 2, Last: "ok"}}}
	d.Tools = AgentToolState{Stage: 2, Grants: &policy.Grants{}, Writes: tools.NewWriteBudget(0, 1000), Prompts: 1, Waits: 1}
	d.Tools.Grants.Grant([]string{"shell:ls"}, policy.ScopeRun, 2)
	d.Tools.Grants.Grant([]string{"write:/a"}, policy.ScopeStage, 2)
	if err := d.Tools.Writes.Charge(300); err != nil {
		panic(err)
	}
	d.Inbox = []models.Message{{Role: models.RoleUser, Content: "from worker-4"}}
	d.Spend = Spend{Tokens: models.Usage{Prompt: 10, Completion: 3}, Cost: 99, Turns: 1, Attempts: 2}
	d.Work = ToolWork{
		Calls: []models.ToolCall{{ID: "b1", Name: "shell"}, {ID: "s1", Name: "count"}, {ID: "p1", Name: "write_file"}},
		Results: []ToolResult{
			{Content: "started", Detached: leftRunning{"b1"}, Notes: []tools.Note{{Fn: "sandbox", Text: "bwrap"}}},
			{Content: "3", Ops: []recording.Op{{Fn: "readFile", Request: "h", Out: json.RawMessage(`"x"`)}}, Divergence: errors.New("asked readFile b, the recording has a")},
			{},
		},
		Keys:        [][]string{{"shell:sleep 9 &"}, {"script:count"}, {"write:/a"}},
		Outstanding: 1,
	}
	d.Dynamic = &DynamicTools{Stamps: map[string]FileStamp{"count.js": {Size: 10, ModNano: 5}}, Reported: map[string]string{"bad.js": "syntax"}}
	for key, v := range map[string]any{"rounds": 2, "verdict": "revise", "notes": []string{"a", "b"}} {
		if err := d.Memory.Set(key, v); err != nil {
			panic(err)
		}
	}
	d.Output = &StageOutput{Result: `{"verdict":"revise"}`, HasResult: true, Text: "see notes", Tools: []ToolOutput{{Tool: "review", Content: "{}"}}}
	return d
}

func TestAgentImageRoundTrips(t *testing.T) {
	d := busyAgent()
	img := gobtest.RoundTrip(t, d.Image())
	var asked []string
	back := RestoreAgent(&img, func(call string) tools.Detached { asked = append(asked, call); return leftRunning{call} })
	if !reflect.DeepEqual(back.Image(), d.Image()) {
		t.Fatalf("restored agent images as\n%+v\nthe original as\n%+v", back.Image(), d.Image())
	}
	if !slices.Equal(asked, []string{"b1"}) || back.Work.Results[0].Detached.Report() != "report of b1" {
		t.Fatalf("background work asked for %q, restored %v", asked, back.Work.Results[0].Detached)
	}
	if back.Conversation.LastUserText() != "a person's answer" || back.Conversation.Dropped != d.Conversation.Dropped || back.Conversation.Dropped == 0 {
		t.Fatalf("conversation restored with last user %q, dropped %d (original %d)", back.Conversation.LastUserText(), back.Conversation.Dropped, d.Conversation.Dropped)
	}
	if back.Work.Results[1].Divergence == nil || back.Work.Results[1].Divergence.Error() != d.Work.Results[1].Divergence.Error() {
		t.Fatalf("divergence restored as %v", back.Work.Results[1].Divergence)
	}
	// Both go on alike: the next appends trim alike, the budget refuses alike.
	for _, a := range []*AgentData{&d, &back} {
		a.Conversation.Append(models.Message{Role: models.RoleAssistant, Content: "done"})
	}
	if !reflect.DeepEqual(back.Conversation.Messages, d.Conversation.Messages) {
		t.Fatal("restored conversation trims differently")
	}
	if err := back.Tools.Writes.Charge(701); err == nil {
		t.Fatal("restored budget forgot what was spent")
	}
}

func TestAgentImageSharesNothing(t *testing.T) {
	d := busyAgent()
	img := d.Image()
	before := gobtest.RoundTrip(t, img)
	// The world goes on after the image is taken: it trims, counts and appends in place.
	d.Conversation.Append(models.Message{Role: models.RoleAssistant, Calls: []models.ToolCall{{ID: "c9"}}})
	d.Conversation.Append(models.Message{Role: models.RoleTool, CallID: "c9"})
	d.Conversation.Append(models.Message{Role: models.RoleUser, Content: "more"})
	d.Visits[0]++
	d.ByTool[0].N++
	d.Seen.List[0].Calls++
	d.Work.Results[2].Content = "late"
	d.Work.Keys[2] = nil
	d.Tools.Grants.Grant([]string{"shell:rm"}, policy.ScopeRun, 2)
	d.Dynamic.Stamps["new.js"] = FileStamp{}
	if err := d.Memory.Set("rounds", 3); err != nil {
		t.Fatal(err)
	}
	d.Output.Tools[0].Content = "later"
	d.ModelState(2).Cursor++
	if !reflect.DeepEqual(img, before) {
		t.Fatalf("the image changed with the agent:\n%+v\nwas\n%+v", img, before)
	}
}

// TestAgentImageCoversEveryField fails when AgentData gains a field: add it to the image (or to
// the list of what is made again) and to this table.
func TestAgentImageCoversEveryField(t *testing.T) {
	covered := map[string]string{
		"Name": "image", "Reason": "image", "Visits": "image", "Conversation": "image", "ByTool": "image",
		"Seen": "image", "Model": "image", "StageModels": "image", "Workdir": "image", "Work": "image", "Tools": "image",
		"Inbox": "image", "Parent": "image", "Depth": "image", "Root": "image", "Spend": "image",
		"ContextTokens": "image", "ContextBytes": "image", "Dynamic": "what the scan saw; compiled again",
		"Sandbox": "made again by the next command", "Memory": "image", "Output": "image",
	}
	typ := reflect.TypeFor[AgentData]()
	for i := range typ.NumField() {
		if _, ok := covered[typ.Field(i).Name]; !ok {
			t.Errorf("AgentData.%s is not in the snapshot image", typ.Field(i).Name)
		}
	}
	for _, sub := range []struct {
		typ    reflect.Type
		fields []string
	}{
		{reflect.TypeFor[Conversation](), []string{"Messages", "Max", "Dropped", "lastUser"}},
		{reflect.TypeFor[AgentToolState](), []string{"Stage", "Grants", "Writes", "Prompts", "Waits"}},
		{reflect.TypeFor[ToolWork](), []string{"Calls", "Results", "Keys", "Outstanding", "Ctx", "Cancel"}},
		{reflect.TypeFor[ToolResult](), []string{"Content", "IsError", "Notes", "Panic", "Detached", "Ops", "Divergence"}},
	} {
		var got []string
		for i := range sub.typ.NumField() {
			got = append(got, sub.typ.Field(i).Name)
		}
		if !slices.Equal(got, sub.fields) {
			t.Errorf("%s has fields %q; the snapshot image covers %q", sub.typ, got, sub.fields)
		}
	}
}

func TestAgentsImageReusesSlotsAlike(t *testing.T) {
	var a Agents
	for range 6 {
		a.Alloc()
	}
	for _, s := range []uint32{4, 1} {
		a.Free(s)
	}
	for _, s := range []uint32{0, 2, 3, 5} {
		a.Get(s).Name = "agent" + string(rune('0'+s))
	}
	img := gobtest.RoundTrip(t, a.Image())
	var back Agents
	if err := back.RestoreAgents(&img, nil); err != nil {
		t.Fatal(err)
	}
	if back.Live() != 4 || back.Get(3).Name != "agent3" {
		t.Fatalf("restored %d live, slot 3 named %q", back.Live(), back.Get(3).Name)
	}
	for range 3 {
		if x, y := a.Alloc(), back.Alloc(); x != y {
			t.Fatalf("the original reuses slot %d, the restored store %d", x, y)
		}
	}
	bad := img
	bad.Free = append(slices.Clone(bad.Free), bad.Slots[0])
	bad.Next++
	if err := new(Agents).RestoreAgents(&bad, nil); !errors.Is(err, ErrAgentsImage) {
		t.Fatalf("a slot both live and free restored with %v", err)
	}
	if err := back.RestoreAgents(&img, nil); !errors.Is(err, ErrAgentsImage) {
		t.Fatalf("restoring into a used store gave %v", err)
	}
}

func TestRecordsImageKeepsOrderAndLookups(t *testing.T) {
	var rs Records
	rs.Add(FinalRecord{ID: 7, Name: "b", ByTool: ToolCounts{{Tool: "shell", N: 2}}})
	rs.Add(FinalRecord{ID: 3, Name: "a", Results: []ResultSeen{{ID: 1, Matched: true}}})
	img := gobtest.RoundTrip(t, rs.Image())
	rs.All()[0].ByTool[0].N = 99 // the world's records may change after the image
	back := RestoreRecords(img)
	if got, ok := back.Get(3); !ok || got.Name != "a" || back.Len() != 2 || back.All()[0].ID != 7 {
		t.Fatalf("restored records %+v", back.All())
	}
	if back.All()[0].ByTool[0].N != 2 {
		t.Fatal("the image shares its tool counts with the records")
	}
}
