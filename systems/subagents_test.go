package systems_test

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/warrenhq/warren/components"
	"github.com/warrenhq/warren/ecs"
	"github.com/warrenhq/warren/models"
	"github.com/warrenhq/warren/subagents"
)

// A spawned child is named after its parent, starts in Entering (running from the next tick)
// with its task as first message and a workdir under its parent's; without wait the parent goes
// on at once, with wait it is parked until the child ends and gets the child's output.
func TestSpawnAgent(t *testing.T) {
	cases := []struct {
		name       string
		bossTurns  []models.ScriptedTurn
		wantStatus components.StatusKind // the boss's status after tick 0
		wantPhase  string                // and its phase
		wantSpawn  string                // the status spawn_agent returns
		wantOutput string                // the output spawn_agent returns
		wantWaits  bool
	}{
		{
			name:       "without wait the parent goes on",
			bossTurns:  []models.ScriptedTurn{turn("spawning", spawnCall("worker", "count the sheep", nil)), turn("", targetCall(subagents.NameWait, "boss-0/1")), turn("all done")},
			wantStatus: components.Active, wantPhase: "ReadyToInfer", wantSpawn: "active",
		},
		{
			name:       "with wait the parent is parked until the child ends",
			bossTurns:  []models.ScriptedTurn{turn("spawning", spawnCall("worker", "count the sheep", map[string]any{"wait": true})), turn("all done")},
			wantStatus: components.Waiting, wantPhase: "AwaitingTools", wantSpawn: "done", wantOutput: "42 sheep", wantWaits: true,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			child := newRecorder(t, "scripted:child", turn("counting", call("ctx_probe", "where am I")), turn("42 sheep"))
			var w *treeWorld
			var afterSpawn []string // the status or phase of every agent at the end of tick 0
			opt := withProbe(options{}, func(world *ecs.World) {
				if world.Tick() == 0 {
					for _, e := range w.entities() {
						afterSpawn = append(afterSpawn, w.data(e).Name+":"+w.status.Get(e).Kind.String()+":"+w.phase(e))
					}
				}
			})
			w = newTree(t, treeSpec{opt: opt, boss: scripted(t, "scripted:boss", tc.bossTurns...), children: map[string]models.Model{"worker": child}})
			w.runAll()
			wantAfter := []string{"boss-0:" + tc.wantStatus.String() + ":" + tc.wantPhase, "boss-0/1:active:Entering"}
			if !slices.Equal(afterSpawn, wantAfter) {
				t.Errorf("after the spawning tick: %q, want %q", afterSpawn, wantAfter)
			}

			res := w.resultOf("boss-0", subagents.NameSpawn)
			st := agentStatus(t, res.Content)
			if !res.OK || st.ID != "boss-0/1" || st.Blueprint != "worker" || st.Depth != 1 || st.Status != tc.wantSpawn || st.Output != tc.wantOutput {
				t.Errorf("spawn_agent result %q, want boss-0/1 of worker at depth 1 %s with output %q", res.Content, tc.wantSpawn, tc.wantOutput)
			}
			spawns := w.events("spawn", "boss-0/1")
			if len(spawns) != 1 {
				t.Fatalf("spawn events of the child:%s", describeTree(spawns))
			}
			sp := spawns[0]
			if sp.Tick != 0 || sp.Agent != 2 || sp.Group != "worker" || sp.Index != 0 || sp.Blueprint != "worker" || sp.Model != "scripted:child" ||
				sp.Parent != 1 || sp.ParentName != "boss-0" || sp.Depth != 1 || sp.Detached || sp.Call != "boss-0-t0-c0" {
				t.Errorf("spawn event %+v", sp)
			}
			seen := child.seen["boss-0/1"]
			if len(seen) == 0 || !slices.Equal(contents(seen[0].messages, models.RoleUser), []string{"count the sheep"}) {
				t.Errorf("the child's first turn saw %+v, want the task alone", seen)
			}
			if turns := w.events("model_turn", "boss-0/1"); len(turns) == 0 || turns[0].Tick != 1 {
				t.Errorf("child model turns:%s\nwant the first at tick 1", describeTree(turns))
			}
			wantDir := filepath.Join(w.root, "boss", "boss-0", "agents", "1")
			if len(w.execSeen) != 1 || w.execSeen[0].Workdir != wantDir || w.execSeen[0].Agent.Name != "boss-0/1" {
				t.Errorf("the child's calls ran with %+v, want workdir %s", w.execSeen, wantDir)
			}
			if r := w.wantRecord("boss-0/1", components.Done, ""); r.Parent != 1 || r.Depth != 1 || r.Output != "42 sheep" {
				t.Errorf("child record %+v", r)
			}
			starts, ends := w.events("wait_start", "boss-0"), w.events("wait_end", "boss-0")
			if !tc.wantWaits {
				return
			}
			if len(starts) != 1 || starts[0].Tick != 0 || starts[0].CallID != "boss-0-t0-c0" || starts[0].Target != 2 || starts[0].TargetName != "boss-0/1" {
				t.Errorf("wait_start events:%s", describeTree(starts))
			}
			childEnd := w.record("boss-0/1").Tick
			if len(ends) != 1 || ends[0].Tick != childEnd+1 || ends[0].CallID != "boss-0-t0-c0" || ends[0].TargetName != "boss-0/1" || ends[0].Status != "done" {
				t.Errorf("wait_end events:%s\nwant one at tick %d with status done", describeTree(ends), childEnd+1)
			}
			for _, ev := range w.events("model_turn", "boss-0") {
				if ev.Tick > 0 && ev.Tick <= ends[0].Tick {
					t.Errorf("the parked boss took a model turn at tick %d", ev.Tick)
				}
			}
		})
	}
}

// check_agent reads a live child from its components and an ended one from its final record.
func TestCheckAgent(t *testing.T) {
	cases := []struct {
		name      string
		bossTurns []models.ScriptedTurn
		want      subagents.AgentStatus
	}{
		{
			name:      "a live child",
			bossTurns: []models.ScriptedTurn{turn("", spawnCall("worker", "dig", nil)), turn("", targetCall(subagents.NameCheck, "boss-0/1")), turn("leaving")},
			want:      subagents.AgentStatus{ID: "boss-0/1", Blueprint: "worker", Depth: 1, Status: "active", Stage: "work", ModelTurns: 1},
		},
		{
			name:      "an ended child",
			bossTurns: []models.ScriptedTurn{turn("", spawnCall("worker", "dig", map[string]any{"wait": true})), turn("", targetCall(subagents.NameCheck, "boss-0/1")), turn("leaving")},
			want:      subagents.AgentStatus{ID: "boss-0/1", Blueprint: "worker", Depth: 1, Status: "done", Stage: "work", Output: "dug", ModelTurns: 2, ToolCalls: 1},
		},
		{
			name:      "itself",
			bossTurns: []models.ScriptedTurn{turn("", spawnCall("worker", "dig", nil)), turn("", targetCall(subagents.NameCheck, "boss-0")), turn("leaving")},
			want:      subagents.AgentStatus{ID: "boss-0", Blueprint: "boss", Depth: 0, Status: "active", Stage: "lead", ModelTurns: 2, ToolCalls: 1, LiveChildren: 1},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newTree(t, treeSpec{opt: parkFor(3), boss: scripted(t, "scripted:boss", tc.bossTurns...),
				children: map[string]models.Model{"worker": scripted(t, "scripted:child", turn("", park("shovel")), turn("dug"))}})
			w.runAll()
			res := w.resultOf("boss-0", subagents.NameCheck)
			if !res.OK {
				t.Fatalf("check_agent failed: %s", res.Content)
			}
			if got := agentStatus(t, res.Content); got != tc.want {
				t.Errorf("check_agent returned %+v, want %+v", got, tc.want)
			}
		})
	}
}

// wait_for_agent parks until a live child ends; on a child that has ended it answers at once.
func TestWaitForAgent(t *testing.T) {
	cases := []struct {
		name      string
		bossTurns []models.ScriptedTurn
		wantPark  bool
	}{
		{
			name:      "a live child",
			bossTurns: []models.ScriptedTurn{turn("", spawnCall("worker", "dig", nil)), turn("", targetCall(subagents.NameWait, "boss-0/1")), turn("leaving")},
			wantPark:  true,
		},
		{
			name: "a child that has already ended",
			bossTurns: []models.ScriptedTurn{turn("", spawnCall("worker", "dig", nil)), turn("", call("echo_inline", "1")), turn("", call("echo_inline", "2")),
				turn("", targetCall(subagents.NameWait, "boss-0/1")), turn("leaving")},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newTree(t, treeSpec{boss: scripted(t, "scripted:boss", tc.bossTurns...),
				children: map[string]models.Model{"worker": scripted(t, "scripted:child", turn("dug"))}})
			w.runAll()
			res := w.resultOf("boss-0", subagents.NameWait)
			if st := agentStatus(t, res.Content); !res.OK || st.ID != "boss-0/1" || st.Status != "done" || st.Output != "dug" {
				t.Errorf("wait_for_agent returned %q, want the child's final status", res.Content)
			}
			var callTick uint64
			for _, ev := range w.events("tool_call", "boss-0") {
				if ev.Tool == subagents.NameWait {
					callTick = ev.Tick
				}
			}
			starts := w.events("wait_start", "boss-0")
			if !tc.wantPark {
				if len(starts) != 0 || res.Tick != callTick {
					t.Errorf("a wait on an ended child parked (wait_start:%s), result at tick %d for a call at tick %d", describeTree(starts), res.Tick, callTick)
				}
				return
			}
			if len(starts) != 1 || starts[0].Tick != callTick || starts[0].TargetName != "boss-0/1" {
				t.Errorf("wait_start events:%s\nwant one at tick %d", describeTree(starts), callTick)
			}
			if res.Tick != w.record("boss-0/1").Tick+1 {
				t.Errorf("the wait returned at tick %d, want the tick after the child's end (%d)", res.Tick, w.record("boss-0/1").Tick)
			}
		})
	}
}

// send_to_agent queues a message the child reads at its next model turn, once it is in a stage
// that accepts messages.
func TestSendToAgent(t *testing.T) {
	cases := []struct {
		name       string
		key        string
		childTurns []models.ScriptedTurn
		bossTurns  []models.ScriptedTurn
		// wantSeen says, per child turn, whether it saw the message.
		wantSeen  []bool
		wantInbox int // what check_agent reports after the send (-1: no check)
	}{
		{
			name:       "a stage that accepts messages reads it at the next turn",
			key:        "worker",
			childTurns: []models.ScriptedTurn{turn("", park("tools")), turn("painted it blue")},
			bossTurns: []models.ScriptedTurn{turn("", spawnCall("worker", "paint", nil)), turn("", sendCall("boss-0/1", "use blue")),
				turn("", targetCall(subagents.NameWait, "boss-0/1")), turn("done")},
			wantSeen: []bool{false, true}, wantInbox: -1,
		},
		{
			name: "a stage that does not accept messages keeps them in the inbox",
			key:  "deaf",
			childTurns: []models.ScriptedTurn{
				onStage("heads_down", call("echo_inline", "1")), onStage("heads_down", call("echo_inline", "2")), onStage("heads_down"),
				{Stage: "listening", Text: "painted it blue"},
			},
			bossTurns: []models.ScriptedTurn{turn("", spawnCall("deaf", "paint", nil)), turn("", sendCall("boss-0/1", "use blue")),
				turn("", targetCall(subagents.NameCheck, "boss-0/1")), turn("", targetCall(subagents.NameWait, "boss-0/1")), turn("done")},
			wantSeen: []bool{false, false, false, true}, wantInbox: 1,
		},
	}
	const delivered = "[message from boss-0] use blue"
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			child := newRecorder(t, "scripted:child", tc.childTurns...)
			w := newTree(t, treeSpec{opt: parkFor(3), boss: scripted(t, "scripted:boss", tc.bossTurns...), children: map[string]models.Model{tc.key: child}})
			w.runAll()
			w.wantRecord("boss-0/1", components.Done, "")
			if res := w.resultOf("boss-0", subagents.NameSend); !res.OK || res.Content != `{"id":"boss-0/1","queued":true,"inbox":1}` {
				t.Errorf("send_to_agent returned %q", res.Content)
			}
			msgs := w.events("message", "")
			if len(msgs) != 1 || msgs[0].Tick != 1 || msgs[0].Name != "boss-0/1" || msgs[0].Agent != 2 || msgs[0].Sender != 1 ||
				msgs[0].SenderName != "boss-0" || msgs[0].Via != "send" || msgs[0].Text != "use blue" {
				t.Errorf("message events:%s\nwant one send from boss-0 to boss-0/1 at tick 1", describeTree(msgs))
			}
			seen := child.seen["boss-0/1"]
			if len(seen) != len(tc.wantSeen) {
				t.Fatalf("the child took %d turns, want %d", len(seen), len(tc.wantSeen))
			}
			for i, turn := range seen {
				got := slices.Contains(contents(turn.messages, models.RoleUser), delivered)
				if got != tc.wantSeen[i] {
					t.Errorf("child turn %d (stage %s) saw the message: %v, want %v", i, turn.stage, got, tc.wantSeen[i])
				}
				if got {
					if last := turn.messages[len(turn.messages)-1]; last.Role != models.RoleUser || last.Content != delivered {
						t.Errorf("the delivered message is not the last of turn %d: %+v", i, last)
					}
				}
			}
			if tc.wantInbox >= 0 {
				if st := agentStatus(t, w.resultOf("boss-0", subagents.NameCheck).Content); st.Inbox != tc.wantInbox {
					t.Errorf("check_agent reports %d queued messages, want %d", st.Inbox, tc.wantInbox)
				}
			}
		})
	}
}

// list_agents names the caller first, then its descendants in pre-order, ended ones included
// while the caller lives; a child sees only its own subtree.
func TestListAgents(t *testing.T) {
	boss := scripted(t, "scripted:boss",
		turn("", spawnCall("lead", "organise", nil), spawnCall("worker", "dig", nil)),
		turn("", call("echo_inline", "wait a tick")),
		turn("", listCall()),
		turn("", targetCall(subagents.NameKill, "boss-0/1")),
		turn("", listCall()),
		turn("done"))
	lead := scripted(t, "scripted:lead", turn("", spawnCall("worker", "dig deeper", nil)), turn("", listCall()), turn("", park("rest")), turn("lead done"))
	worker := scripted(t, "scripted:worker", turn("", park("dig")), turn("dug"))
	w := newTree(t, treeSpec{opt: parkFor(20), boss: boss, children: map[string]models.Model{"lead": lead, "worker": worker}})
	w.runAll()

	type entry struct {
		id     string
		depth  int
		status string
	}
	decode := func(content string) []entry {
		var list struct {
			Agents  []subagents.AgentStatus `json:"agents"`
			Total   int                     `json:"total"`
			Omitted int                     `json:"omitted"`
		}
		if err := json.Unmarshal([]byte(content), &list); err != nil {
			t.Fatalf("list %q: %v", content, err)
		}
		if list.Total != len(list.Agents) || list.Omitted != 0 {
			t.Errorf("list %q: total %d omitted %d for %d entries", content, list.Total, list.Omitted, len(list.Agents))
		}
		var out []entry
		for _, a := range list.Agents {
			out = append(out, entry{a.ID, a.Depth, a.Status})
		}
		return out
	}
	var bossLists []string
	for _, ev := range w.events("tool_result", "boss-0") {
		if ev.Tool == subagents.NameList {
			bossLists = append(bossLists, ev.Content)
		}
	}
	if len(bossLists) != 2 {
		t.Fatalf("boss list results %q", bossLists)
	}
	cases := []struct {
		name    string
		content string
		want    []entry
	}{
		{"the boss's whole tree", bossLists[0], []entry{{"boss-0", 0, "active"}, {"boss-0/1", 1, "active"}, {"boss-0/1/1", 2, "active"}, {"boss-0/2", 1, "active"}}},
		{"ended descendants stay listed", bossLists[1], []entry{{"boss-0", 0, "active"}, {"boss-0/1", 1, "killed"}, {"boss-0/1/1", 2, "killed"}, {"boss-0/2", 1, "active"}}},
		{"a child's own subtree", w.resultOf("boss-0/1", subagents.NameList).Content, []entry{{"boss-0/1", 1, "active"}, {"boss-0/1/1", 2, "active"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := decode(tc.content); !slices.Equal(got, tc.want) {
				t.Errorf("list %+v, want %+v", got, tc.want)
			}
		})
	}
}

// A child that ends while nobody waits for it is reported in its parent's inbox (a notify
// message the parent reads at its next turn); a wait that consumed the end leaves no notify.
func TestChildEndNotifiesItsParent(t *testing.T) {
	cases := []struct {
		name       string
		bossTurns  []models.ScriptedTurn
		childTurns []models.ScriptedTurn
		want       string // the notify text ("": none)
	}{
		{
			name:       "a child that ended done",
			bossTurns:  []models.ScriptedTurn{turn("", spawnCall("worker", "dig", nil)), turn("", park("busy")), turn("done")},
			childTurns: []models.ScriptedTurn{turn("found gold")},
			want:       "[sub-agent boss-0/1 ended: done] found gold",
		},
		{
			name:       "a child that failed",
			bossTurns:  []models.ScriptedTurn{turn("", spawnCall("worker", "dig", nil)), turn("", park("busy")), turn("done")},
			childTurns: []models.ScriptedTurn{turnError("out of ideas")},
			want:       "[sub-agent boss-0/1 ended: failed] model error: " + models.ErrScriptedFailure.Error() + ": out of ideas",
		},
		{
			name:       "spawn_agent with wait consumed the end",
			bossTurns:  []models.ScriptedTurn{turn("", spawnCall("worker", "dig", map[string]any{"wait": true})), turn("", park("busy")), turn("done")},
			childTurns: []models.ScriptedTurn{turn("found gold")},
		},
		{
			name:       "wait_for_agent consumed the end",
			bossTurns:  []models.ScriptedTurn{turn("", spawnCall("worker", "dig", nil)), turn("", targetCall(subagents.NameWait, "boss-0/1")), turn("", park("busy")), turn("done")},
			childTurns: []models.ScriptedTurn{turn("found gold")},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			boss := newRecorder(t, "scripted:boss", tc.bossTurns...)
			w := newTree(t, treeSpec{opt: parkFor(4), boss: boss, children: map[string]models.Model{"worker": scripted(t, "scripted:child", tc.childTurns...)}})
			w.runAll()
			w.wantRecord("boss-0", components.Done, "")
			msgs := w.events("message", "")
			if tc.want == "" {
				if len(msgs) != 0 {
					t.Errorf("message events:%s\nwant none", describeTree(msgs))
				}
				return
			}
			end := w.record("boss-0/1").Tick
			if len(msgs) != 1 || msgs[0].Tick != end+1 || msgs[0].Name != "boss-0" || msgs[0].Sender != 2 || msgs[0].SenderName != "boss-0/1" ||
				msgs[0].Via != "notify" || msgs[0].Text != tc.want {
				t.Fatalf("message events:%s\nwant a notify of %q to boss-0 at tick %d", describeTree(msgs), tc.want, end+1)
			}
			seen := boss.seen["boss-0"]
			last := seen[len(seen)-1].messages
			if m := last[len(last)-1]; m.Role != models.RoleUser || m.Content != tc.want {
				t.Errorf("the boss's last turn ended its conversation with %+v, want the notify", m)
			}
			for _, turn := range seen[:len(seen)-1] {
				if slices.Contains(contents(turn.messages, models.RoleUser), tc.want) {
					t.Error("the boss saw the notify before the turn after it was sent")
				}
			}
		})
	}
}

// seed_context copies the parent's conversation up to (not including) the spawning turn.
func TestSeedContext(t *testing.T) {
	cases := []struct {
		name string
		seed bool
		want []string // role|content of the child's first view
	}{
		{name: "seeded", seed: true, want: []string{"user|plan the trip (boss-0)", "assistant|thinking", "tool|echo: note", "user|book a hotel"}},
		{name: "not seeded", seed: false, want: []string{"user|book a hotel"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			boss := scripted(t, "scripted:boss",
				turn("thinking", call("echo_inline", "note")),
				turn("delegating", spawnCall("worker", "book a hotel", map[string]any{"wait": true, "seed_context": tc.seed})),
				turn("done"))
			child := newRecorder(t, "scripted:child", turn("booked"))
			w := newTree(t, treeSpec{boss: boss, bossTask: "plan the trip", children: map[string]models.Model{"worker": child}})
			w.runAll()
			seen := child.seen["boss-0/1"]
			if len(seen) != 1 {
				t.Fatalf("the child took %d turns", len(seen))
			}
			var got []string
			for _, m := range seen[0].messages {
				got = append(got, m.Role.String()+"|"+m.Content)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("the child started from\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(tc.want, "\n  "))
			}
		})
	}
}

// Two waits in one turn park the caller until both children have ended; each call gets its own
// child's status, and the caller stays waiting in between.
func TestWaitForTwoChildrenInOneTurn(t *testing.T) {
	var w *treeWorld
	status := map[uint64]string{}
	opt := withProbe(parkFor(5), func(world *ecs.World) {
		if es := w.entities(); len(es) > 0 && w.data(es[0]).Name == "boss-0" {
			status[world.Tick()] = w.status.Get(es[0]).Kind.String()
		}
	})
	boss := scripted(t, "scripted:boss",
		turn("", spawnCall("worker", "quick", nil), spawnCall("lead", "slow", nil)),
		turn("", targetCall(subagents.NameWait, "boss-0/1"), targetCall(subagents.NameWait, "boss-0/2")),
		turn("done"))
	w = newTree(t, treeSpec{opt: opt, boss: boss, children: map[string]models.Model{
		"worker": scripted(t, "scripted:worker", turn("quick done")),
		"lead":   scripted(t, "scripted:lead", turn("", park("slowly")), turn("slow done")),
	}})
	w.runAll()

	ends := w.events("wait_end", "boss-0")
	if len(ends) != 2 || ends[0].TargetName != "boss-0/1" || ends[1].TargetName != "boss-0/2" || ends[0].Tick >= ends[1].Tick {
		t.Fatalf("wait_end events:%s\nwant boss-0/1's, then boss-0/2's", describeTree(ends))
	}
	var got []string
	for _, ev := range w.events("tool_result", "boss-0") {
		if ev.Tool == subagents.NameWait {
			st := agentStatus(t, ev.Content)
			got = append(got, st.ID+" "+st.Status+" "+st.Output)
			if ev.Tick != ends[1].Tick {
				t.Errorf("a wait result was filed at tick %d, want both at tick %d", ev.Tick, ends[1].Tick)
			}
		}
	}
	if want := []string{"boss-0/1 done quick done", "boss-0/2 done slow done"}; !slices.Equal(got, want) {
		t.Errorf("wait results %q, want %q", got, want)
	}
	for tick := uint64(1); tick < ends[1].Tick; tick++ {
		if s, seen := status[tick]; seen && s != "waiting" {
			t.Errorf("the boss was %s at tick %d, want waiting until both children ended", s, tick)
		}
	}
	if s := status[ends[1].Tick]; s != "active" {
		t.Errorf("the boss was %q at tick %d, want active once both waits returned", s, ends[1].Tick)
	}
}

// A list longer than its limit shows the first 100 entries and counts the rest.
func TestListAgentsIsBounded(t *testing.T) {
	const children = 101
	spawns := make([]models.ScriptedCall, children)
	for i := range spawns {
		spawns[i] = spawnCall("worker", "wait", nil)
	}
	// The result is longer than the trace keeps, so it is read from the boss's conversation.
	boss := newRecorder(t, "scripted:boss", turn("", spawns...), turn("", listCall()), turn("done"))
	w := newTree(t, treeSpec{opt: parkFor(5), boss: boss, children: map[string]models.Model{"worker": scripted(t, "scripted:worker", turn("", park("x")), turn("done"))}})
	w.runAll()
	var list struct {
		Agents  []subagents.AgentStatus `json:"agents"`
		Total   int                     `json:"total"`
		Omitted int                     `json:"omitted"`
	}
	seen := boss.seen["boss-0"]
	msgs := seen[len(seen)-1].messages
	if err := json.Unmarshal([]byte(msgs[len(msgs)-1].Content), &list); err != nil {
		t.Fatal(err)
	}
	if len(list.Agents) != 100 || list.Total != children+1 || list.Omitted != 2 || list.Agents[0].ID != "boss-0" || list.Agents[99].ID != "boss-0/99" {
		t.Errorf("list of %d entries (first %q, last %q), total %d, omitted %d; want 100 of 102 from boss-0 to boss-0/99",
			len(list.Agents), list.Agents[0].ID, list.Agents[len(list.Agents)-1].ID, list.Total, list.Omitted)
	}
}
