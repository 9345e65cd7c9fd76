package systems_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/warrenhq/warren/components"
	"github.com/warrenhq/warren/models"
	"github.com/warrenhq/warren/subagents"
	"github.com/warrenhq/warren/tools"
)

// Every refused sub-agent call is an error result the caller reads, worded around the sentinel
// error that refused it: no panic, no hang, and the caller's run goes on (each script's last turn
// ends its agent done).
func TestSubagentCallRefusals(t *testing.T) {
	// A boss waits for its first child, so that the child's own refused call is made while the
	// tree lives.
	waitChild := turn("", targetCall(subagents.NameWait, "boss-0/1"))
	spawnDeeper := turn("", spawnCall("worker", "go deeper", nil))
	wait := map[string]any{"wait": true}
	cases := []struct {
		name               string
		opt                options
		bossSub, workerSub string
		bosses             int
		bossTurns          []models.ScriptedTurn
		childTurns         []models.ScriptedTurn // nil: park, then finish
		agent, tool        string                // whose call of which tool is refused (its last one)
		wantErr            error
		wantParts          []string
	}{
		{
			name:      "unknown blueprint",
			bossTurns: []models.ScriptedTurn{turn("", spawnCall("phantom", "haunt", nil))},
			agent:     "boss-0", tool: subagents.NameSpawn, wantErr: subagents.ErrUnknownBlueprint,
			wantParts: []string{`spawn_agent: unknown blueprint "phantom"`},
		},
		{
			name:      "a blueprint the caller may not spawn",
			bossTurns: []models.ScriptedTurn{turn("", spawnCall("stranger", "hello", nil))},
			agent:     "boss-0", tool: subagents.NameSpawn, wantErr: subagents.ErrNotSpawnable,
			wantParts: []string{`blueprint boss may spawn deaf, lead, loner, phantom, worker, not "stranger"`},
		},
		{
			name:      "the caller's blueprint allows no children",
			bossSub:   "max_child_depth = 0",
			bossTurns: []models.ScriptedTurn{turn("", spawnCall("worker", "dig", nil))},
			agent:     "boss-0", tool: subagents.NameSpawn, wantErr: subagents.ErrDepth,
			wantParts: []string{"boss-0 (depth 0) may not spawn sub-agents"},
		},
		{
			name:       "the caller's budget is its parent's minus one",
			bossSub:    "max_child_depth = 1",
			bossTurns:  []models.ScriptedTurn{turn("", spawnCall("worker", "dig", nil)), waitChild},
			childTurns: []models.ScriptedTurn{spawnDeeper},
			agent:      "boss-0/1", tool: subagents.NameSpawn, wantErr: subagents.ErrDepth,
			wantParts: []string{"boss-0/1 (depth 1) may not spawn sub-agents"},
		},
		{
			name:       "the child blueprint's max_child_depth",
			workerSub:  "max_child_depth = 0",
			bossTurns:  []models.ScriptedTurn{turn("", spawnCall("worker", "dig", nil)), waitChild},
			childTurns: []models.ScriptedTurn{spawnDeeper},
			agent:      "boss-0/1", tool: subagents.NameSpawn, wantErr: subagents.ErrDepth,
			wantParts: []string{"boss-0/1 (depth 1) may not spawn sub-agents"},
		},
		{
			name:       "the spawn call's max_child_depth",
			bossTurns:  []models.ScriptedTurn{turn("", spawnCall("worker", "dig", map[string]any{"max_child_depth": 0})), waitChild},
			childTurns: []models.ScriptedTurn{spawnDeeper},
			agent:      "boss-0/1", tool: subagents.NameSpawn, wantErr: subagents.ErrDepth,
			wantParts: []string{"boss-0/1 (depth 1) may not spawn sub-agents"},
		},
		{
			name:       "the host's depth cap",
			opt:        options{limits: subagents.Limits{MaxDepth: 1}},
			bossTurns:  []models.ScriptedTurn{turn("", spawnCall("worker", "dig", nil)), waitChild},
			childTurns: []models.ScriptedTurn{spawnDeeper},
			agent:      "boss-0/1", tool: subagents.NameSpawn, wantErr: subagents.ErrDepth,
			wantParts: []string{"a child of boss-0/1 would be at depth 2 and the host allows at most 1"},
		},
		{
			name:      "the caller's blueprint caps its live children",
			bossSub:   "max_children = 1",
			bossTurns: []models.ScriptedTurn{turn("", spawnCall("worker", "one", nil), spawnCall("worker", "two", nil))},
			agent:     "boss-0", tool: subagents.NameSpawn, wantErr: subagents.ErrTooManyChildren,
			wantParts: []string{"boss-0 already has 1 live children (limit 1)"},
		},
		{
			name:      "the host caps live children",
			opt:       options{limits: subagents.Limits{MaxChildren: 2}},
			bossTurns: []models.ScriptedTurn{turn("", spawnCall("worker", "one", nil), spawnCall("worker", "two", nil), spawnCall("worker", "three", nil))},
			agent:     "boss-0", tool: subagents.NameSpawn, wantErr: subagents.ErrTooManyChildren,
			wantParts: []string{"boss-0 already has 2 live children (limit 2)"},
		},
		{
			name:      "the host caps live sub-agents across trees",
			opt:       options{limits: subagents.Limits{MaxLive: 1}},
			bosses:    2,
			bossTurns: []models.ScriptedTurn{turn("", spawnCall("worker", "one", nil))},
			agent:     "boss-1", tool: subagents.NameSpawn, wantErr: subagents.ErrTooManyAgents,
			wantParts: []string{"1 are running (limit 1)"},
		},
		{
			name:       "a sibling",
			bossTurns:  []models.ScriptedTurn{turn("", spawnCall("worker", "one", nil), spawnCall("worker", "two", nil)), waitChild},
			childTurns: []models.ScriptedTurn{turn("", targetCall(subagents.NameCheck, "boss-0/2"))},
			agent:      "boss-0/1", tool: subagents.NameCheck, wantErr: subagents.ErrOutsideSubtree,
			wantParts: []string{`check_agent: not in your subtree: "boss-0/2"`},
		},
		{
			name:       "the parent",
			bossTurns:  []models.ScriptedTurn{turn("", spawnCall("worker", "one", nil)), waitChild},
			childTurns: []models.ScriptedTurn{turn("", sendCall("boss-0", "let me out"))},
			agent:      "boss-0/1", tool: subagents.NameSend, wantErr: subagents.ErrOutsideSubtree,
			wantParts: []string{`send_to_agent: not in your subtree: "boss-0"`},
		},
		{
			// Both bosses list first, so that both are in the tree: a top-level agent joins it
			// on its first sub-agent call.
			name:      "another top-level agent",
			bosses:    2,
			bossTurns: []models.ScriptedTurn{turn("", listCall()), turn("", targetCall(subagents.NameKill, "boss-1"))},
			agent:     "boss-0", tool: subagents.NameKill, wantErr: subagents.ErrOutsideSubtree,
			wantParts: []string{`kill_agent: not in your subtree: "boss-1"`},
		},
		{
			name:      "a child number never spawned",
			bossTurns: []models.ScriptedTurn{turn("", spawnCall("worker", "one", nil)), turn("", targetCall(subagents.NameCheck, "boss-0/7"))},
			agent:     "boss-0", tool: subagents.NameCheck, wantErr: subagents.ErrUnknownAgent,
			wantParts: []string{`check_agent: no such agent: "boss-0/7"`},
		},
		{
			name:      "a child never spawned",
			bossTurns: []models.ScriptedTurn{turn("", targetCall(subagents.NameWait, "boss-0/9"))},
			agent:     "boss-0", tool: subagents.NameWait, wantErr: subagents.ErrUnknownAgent,
			wantParts: []string{`wait_for_agent: no such agent: "boss-0/9"`},
		},
		{
			// The name is not below the caller's: outside its subtree, whether or not anyone has
			// it, so the caller learns nothing about agents it may not address.
			name:      "a name nobody has",
			bossTurns: []models.ScriptedTurn{turn("", targetCall(subagents.NameWait, "nobody"))},
			agent:     "boss-0", tool: subagents.NameWait, wantErr: subagents.ErrOutsideSubtree,
			wantParts: []string{`wait_for_agent: not in your subtree: "nobody"`},
		},
		{
			name:      "a wait on oneself",
			bossTurns: []models.ScriptedTurn{turn("", targetCall(subagents.NameWait, "boss-0"))},
			agent:     "boss-0", tool: subagents.NameWait, wantErr: subagents.ErrSelf,
			wantParts: []string{"boss-0 would wait for its own end"},
		},
		{
			name:      "a kill of oneself",
			bossTurns: []models.ScriptedTurn{turn("", targetCall(subagents.NameKill, "boss-0"))},
			agent:     "boss-0", tool: subagents.NameKill, wantErr: subagents.ErrSelf,
			wantParts: []string{"kill_agent: "},
		},
		{
			name:      "a kill of a finished agent",
			bossTurns: []models.ScriptedTurn{turn("", spawnCall("worker", "one", wait)), turn("", targetCall(subagents.NameKill, "boss-0/1"))},
			agent:     "boss-0", tool: subagents.NameKill, wantErr: subagents.ErrAlreadyEnded,
			wantParts: []string{"kill_agent: ", "boss-0/1 is done"},
		},
		{
			name:      "a message to a finished agent",
			bossTurns: []models.ScriptedTurn{turn("", spawnCall("worker", "one", wait)), turn("", sendCall("boss-0/1", "too late"))},
			agent:     "boss-0", tool: subagents.NameSend, wantErr: subagents.ErrAlreadyEnded,
			wantParts: []string{"send_to_agent: ", "boss-0/1 is done"},
		},
		{
			name:      "a full inbox",
			opt:       options{inboxCap: 2},
			bossTurns: []models.ScriptedTurn{turn("", spawnCall("worker", "one", nil)), turn("", sendCall("boss-0/1", "a"), sendCall("boss-0/1", "b"), sendCall("boss-0/1", "c"))},
			agent:     "boss-0", tool: subagents.NameSend, wantErr: subagents.ErrInboxFull,
			wantParts: []string{"boss-0/1 has 2 unread messages (the host allows 2)"},
		},
		{
			name:      "arguments the schema refuses",
			bossTurns: []models.ScriptedTurn{turn("", spawnCall("worker", "one", map[string]any{"max_child_depth": 99}))},
			agent:     "boss-0", tool: subagents.NameSpawn, wantErr: tools.ErrInvalidArguments,
			wantParts: []string{"max_child_depth"},
		},
		{
			name: "fan_out with both items and items_file",
			bossTurns: []models.ScriptedTurn{turn("", models.ScriptedCall{Tool: subagents.NameFanOut,
				Args: map[string]any{"blueprint": "worker", "items": []string{"a"}, "items_file": "items.txt"}})},
			agent: "boss-0", tool: subagents.NameFanOut, wantErr: tools.ErrInvalidArguments,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			opt := tc.opt
			opt.latency.PerTool = map[string]uint64{"park": 20}
			child := tc.childTurns
			if child == nil {
				child = []models.ScriptedTurn{turn("", park("busy"))}
			}
			child = slices.Concat(child, []models.ScriptedTurn{turn("child done")})
			w := newTree(t, treeSpec{opt: opt, bossSub: tc.bossSub, workerSub: tc.workerSub, bosses: tc.bosses,
				boss:     scripted(t, "scripted:boss", slices.Concat(tc.bossTurns, []models.ScriptedTurn{turn("boss done")})...),
				children: map[string]models.Model{"worker": scripted(t, "scripted:child", child...)}})
			w.runAll()

			var results []event
			for _, ev := range w.events("tool_result", tc.agent) {
				if ev.Tool == tc.tool {
					results = append(results, ev)
				}
			}
			if len(results) == 0 {
				t.Fatalf("%s made no %s call: %q", tc.agent, tc.tool, w.treeResults(tc.agent))
			}
			for _, ok := range results[:len(results)-1] {
				if !ok.OK {
					t.Errorf("an earlier %s call was refused too: %s", tc.tool, ok.Content)
				}
			}
			refused := results[len(results)-1]
			if refused.OK {
				t.Fatalf("%s's %s call succeeded: %s", tc.agent, tc.tool, refused.Content)
			}
			for _, part := range append([]string{tc.wantErr.Error()}, tc.wantParts...) {
				if !strings.Contains(refused.Content, part) {
					t.Errorf("error result %q does not contain %q", refused.Content, part)
				}
			}
			if r := w.wantRecord(tc.agent, components.Done, ""); r.Counters.ToolErrors != 1 {
				t.Errorf("%s counted %d tool errors, want 1", tc.agent, r.Counters.ToolErrors)
			}
		})
	}
}
