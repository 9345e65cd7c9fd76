package systems_test

import (
	"bytes"
	"cmp"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/warrenhq/warren/components"
	"github.com/warrenhq/warren/ecs"
	"github.com/warrenhq/warren/models"
	"github.com/warrenhq/warren/subagents"
)

// fanOutCall is a scripted fan_out call over items.
func fanOutCall(items []string, maxWorkers int, onFailure string) models.ScriptedCall {
	args := map[string]any{"blueprint": "worker", "items": items, "max_workers": maxWorkers}
	if onFailure != "" {
		args["on_worker_failure"] = onFailure
	}
	return models.ScriptedCall{Tool: subagents.NameFanOut, Args: args}
}

// fanOutWorker parks on its item, then reports it; the item "bad" fails at once and the item
// "slow" parks a second time.
func fanOutWorker(t testing.TB) models.Model {
	return scripted(t, "scripted:fan-worker",
		models.ScriptedTurn{Error: `{{if eq .Task "bad"}}cannot do it{{end}}`, Calls: []models.ScriptedCall{park("{{.Task}}")}},
		turn("did {{.Task}}"))
}

// liveWorkers counts the live agents below the boss at the end of every tick, keeping the most.
func liveWorkers(w **treeWorld, most *int) func(*ecs.World) {
	return func(*ecs.World) {
		n := 0
		for _, e := range (*w).entities() {
			if strings.Contains((*w).data(e).Name, "/") {
				n++
			}
		}
		*most = max(*most, n)
	}
}

// fan_out runs one worker per item with at most max_workers alive at once, records each
// worker's end and merges the results into one report; continue runs every item, fail_all kills
// the running workers at the first failure and starts no more.
func TestFanOutTool(t *testing.T) {
	failReason := "model error: " + models.ErrScriptedFailure.Error() + ": cannot do it"
	cases := []struct {
		name       string
		bossSub    string
		items      []string
		maxWorkers int
		onFailure  string
		wantMost   int      // the most workers alive at once
		wantEnds   []string // worker_end events, "item worker status", in order
		wantText   string
		wantOK     bool
		counts     [4]int // the merge event's done, failed, killed, not_run
	}{
		{
			name: "every item done", items: []string{"a", "b", "c", "d", "e"}, maxWorkers: 2, wantMost: 2,
			wantEnds: []string{"0 boss-0/1 done", "1 boss-0/2 done", "2 boss-0/3 done", "3 boss-0/4 done", "4 boss-0/5 done"},
			wantText: "fan_out of 5 items: 5 done, 0 failed, 0 killed\n[0] done boss-0/1: did a\n[1] done boss-0/2: did b\n" +
				"[2] done boss-0/3: did c\n[3] done boss-0/4: did d\n[4] done boss-0/5: did e",
			wantOK: true, counts: [4]int{5, 0, 0, 0},
		},
		{
			name: "live-children cap below max_workers throttles", bossSub: "max_children = 1", items: []string{"a", "b", "c"}, maxWorkers: 3, wantMost: 1,
			wantEnds: []string{"0 boss-0/1 done", "1 boss-0/2 done", "2 boss-0/3 done"},
			wantText: "fan_out of 3 items: 3 done, 0 failed, 0 killed\n[0] done boss-0/1: did a\n[1] done boss-0/2: did b\n[2] done boss-0/3: did c",
			wantOK:   true, counts: [4]int{3, 0, 0, 0},
		},
		{
			name: "continue runs every item past a failure", items: []string{"a", "bad", "c"}, maxWorkers: 1, onFailure: "continue", wantMost: 1,
			wantEnds: []string{"0 boss-0/1 done", "1 boss-0/2 failed", "2 boss-0/3 done"},
			wantText: "fan_out of 3 items: 2 done, 1 failed, 0 killed\n[0] done boss-0/1: did a\n[1] failed boss-0/2: " + failReason + "\n[2] done boss-0/3: did c",
			wantOK:   true, counts: [4]int{2, 1, 0, 0},
		},
		{
			name: "fail_all stops at the first failure", items: []string{"a", "bad", "c", "d"}, maxWorkers: 2, onFailure: "fail_all", wantMost: 2,
			wantEnds: []string{"1 boss-0/2 failed", "0 boss-0/1 killed"},
			wantText: "fan_out of 4 items: 0 done, 1 failed, 1 killed (stopped after the first failure: fail_all)\n" +
				"[0] killed boss-0/1: fan_out fail_all: item 1 (boss-0/2) ended failed\n[1] failed boss-0/2: " + failReason + "\n[2] not run\n[3] not run",
			counts: [4]int{0, 1, 1, 2},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var w *treeWorld
			most := 0
			opt := withProbe(parkFor(3), liveWorkers(&w, &most))
			boss := scripted(t, "scripted:boss", turn("", fanOutCall(tc.items, tc.maxWorkers, tc.onFailure)), turn("merged"))
			w = newTree(t, treeSpec{opt: opt, bossSub: tc.bossSub, boss: boss, children: map[string]models.Model{"worker": fanOutWorker(t)}})
			w.runAll()
			w.wantRecord("boss-0", components.Done, "")

			if most != tc.wantMost {
				t.Errorf("at most %d workers were alive at once, want %d", most, tc.wantMost)
			}
			res := w.resultOf("boss-0", subagents.NameFanOut)
			if res.OK != tc.wantOK || res.Content != tc.wantText {
				t.Errorf("fan_out returned ok=%v\n%s\nwant ok=%v\n%s", res.OK, res.Content, tc.wantOK, tc.wantText)
			}
			policy := tc.onFailure
			if policy == "" {
				policy = "continue"
			}
			starts := w.events("fanout_start", "boss-0")
			if len(starts) != 1 || starts[0].Tick != 0 || starts[0].CallID != "boss-0-t0-c0" || starts[0].Blueprint != "worker" || starts[0].Items != len(tc.items) ||
				starts[0].MaxWorkers != tc.maxWorkers || starts[0].OnWorkerFailure != policy || starts[0].Mode != "tool" {
				t.Errorf("fanout_start events:%s", describeTree(starts))
			}
			var ends []string
			itemOf := map[string]int{}
			for _, ev := range w.events("worker_end", "boss-0") {
				if ev.CallID != "boss-0-t0-c0" {
					t.Errorf("worker_end for call %q", ev.CallID)
				}
				ends = append(ends, fmt.Sprintf("%d %s %s", ev.Item, ev.WorkerName, ev.Status))
				itemOf[ev.WorkerName] = ev.Item
			}
			if !slices.Equal(ends, tc.wantEnds) {
				t.Errorf("worker_end events %q, want %q", ends, tc.wantEnds)
			}
			spawned := 0
			for _, sp := range w.events("spawn", "") {
				if sp.Parent != 1 {
					continue
				}
				spawned++
				if item, ok := itemOf[sp.Name]; !ok || sp.Index != item || sp.Call != "boss-0-t0-c0" || sp.Detached {
					t.Errorf("worker spawn event %+v, want index %d (ended: %v) for the fan_out call", sp, item, ok)
				}
			}
			if spawned != len(tc.wantEnds) {
				t.Errorf("%d workers spawned, want %d", spawned, len(tc.wantEnds))
			}
			merges := w.events("merge", "boss-0")
			if len(merges) != 1 || [4]int{merges[0].Done, merges[0].Failed, merges[0].Killed, merges[0].NotRun} != tc.counts ||
				merges[0].OK != tc.wantOK || merges[0].Chars != len(tc.wantText) || merges[0].Tick != res.Tick {
				t.Errorf("merge events:%+v\nwant counts %v ok=%v", merges, tc.counts, tc.wantOK)
			}
			if msgs := w.events("message", ""); len(msgs) != 0 {
				t.Errorf("fan-out workers notified their parent:%s", describeTree(msgs))
			}
		})
	}
}

// fan_out reads its items from a file in the caller's workdir (a JSON array of strings, or one
// item per non-empty line), and refuses what it cannot run with an error result.
func TestFanOutItems(t *testing.T) {
	cases := []struct {
		name     string
		file     string // the content of the items file ("": no file)
		filePath string // where it is, relative to the boss's workdir ("": items.txt)
		call     models.ScriptedCall
		opt      options
		wantText string   // the whole result, when it succeeds
		wantErr  []string // fragments of the error result, when it fails
	}{
		{
			name: "a JSON array", file: `  ["alpha", "beta gamma"]`,
			call:     models.ScriptedCall{Tool: subagents.NameFanOut, Args: map[string]any{"blueprint": "worker", "items_file": "items.txt"}},
			wantText: "fan_out of 2 items: 2 done, 0 failed, 0 killed\n[0] done boss-0/1: did alpha\n[1] done boss-0/2: did beta gamma",
		},
		{
			name: "one item a line", file: "alpha\n\n  beta gamma  \n",
			call:     models.ScriptedCall{Tool: subagents.NameFanOut, Args: map[string]any{"blueprint": "worker", "items_file": "items.txt"}},
			wantText: "fan_out of 2 items: 2 done, 0 failed, 0 killed\n[0] done boss-0/1: did alpha\n[1] done boss-0/2: did beta gamma",
		},
		{
			name:    "a missing file",
			call:    models.ScriptedCall{Tool: subagents.NameFanOut, Args: map[string]any{"blueprint": "worker", "items_file": "items.txt"}},
			wantErr: []string{"fan_out: items file", "items.txt"},
		},
		{
			name: "a path outside the workdir", file: "alpha\n", filePath: "../items.txt",
			call:    models.ScriptedCall{Tool: subagents.NameFanOut, Args: map[string]any{"blueprint": "worker", "items_file": "../items.txt"}},
			wantErr: []string{"fan_out: items file", "../items.txt"},
		},
		{
			name: "a JSON array of something else", file: `["alpha", 2]`,
			call:    models.ScriptedCall{Tool: subagents.NameFanOut, Args: map[string]any{"blueprint": "worker", "items_file": "items.txt"}},
			wantErr: []string{"items file items.txt: not a JSON array of strings"},
		},
		{
			name: "an empty file", file: "\n\n",
			call:    models.ScriptedCall{Tool: subagents.NameFanOut, Args: map[string]any{"blueprint": "worker", "items_file": "items.txt"}},
			wantErr: []string{subagents.ErrNoItems.Error()},
		},
		{
			name: "more items than the host allows", opt: options{maxFanOutItems: 2},
			call:    fanOutCall([]string{"a", "b", "c"}, 1, ""),
			wantErr: []string{subagents.ErrTooManyItems.Error(), "3 items, at most 2"},
		},
		{
			// The report says why it stopped; it was no fail_all stop, so it does not say so.
			name: "a blueprint the caller may not spawn",
			call: models.ScriptedCall{Tool: subagents.NameFanOut, Args: map[string]any{"blueprint": "stranger", "items": []string{"a"}}},
			wantErr: []string{"fan_out stopped: " + subagents.ErrNotSpawnable.Error() +
				": blueprint boss may spawn deaf, lead, loner, phantom, worker, not \"stranger\"\nfan_out of 1 items: 0 done, 0 failed, 0 killed\n[0] not run"},
		},
		{
			name:    "a blueprint the host does not have",
			call:    models.ScriptedCall{Tool: subagents.NameFanOut, Args: map[string]any{"blueprint": "phantom", "items": []string{"a"}}},
			wantErr: []string{"fan_out stopped: ", subagents.ErrUnknownBlueprint.Error()},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			boss := scripted(t, "scripted:boss", turn("", tc.call), turn("merged"))
			w := newTree(t, treeSpec{opt: tc.opt, boss: boss, children: map[string]models.Model{"worker": fanOutWorker(t)}})
			if tc.file != "" {
				w.putFile("boss", "boss-0", cmp.Or(tc.filePath, "items.txt"), tc.file)
			}
			w.runAll()
			w.wantRecord("boss-0", components.Done, "")
			res := w.resultOf("boss-0", subagents.NameFanOut)
			if tc.wantErr == nil {
				if !res.OK || res.Content != tc.wantText {
					t.Errorf("fan_out returned ok=%v\n%s\nwant\n%s", res.OK, res.Content, tc.wantText)
				}
				return
			}
			if res.OK {
				t.Fatalf("fan_out succeeded: %s", res.Content)
			}
			for _, part := range tc.wantErr {
				if !strings.Contains(res.Content, part) {
					t.Errorf("error result %q does not contain %q", res.Content, part)
				}
			}
			if n := len(w.host.Records.All()); n != 1 {
				t.Errorf("%d agents ran, want the boss alone", n)
			}
		})
	}
}

// splitterTemplate is a blueprint whose entry stage is a fan-out stage; the first %s sets its
// failure policy, the second adds lines to its [stages.fan_out] table, the third transitions.
const splitterTemplate = `
name = "splitter"
entry = "split"

[subagents]
spawnable = ["worker"]

[[stages]]
name = "split"
available_tools = ["fan_out"]
[stages.fan_out]
blueprint = "worker"
items_file = "items.txt"
max_workers = 2
on_worker_failure = "%s"
%s
[[stages.transitions]]
on = "done"
to = "report"
%s

[[stages]]
name = "report"

[[stages]]
name = "recover"
`

// A fan-out stage makes its fan_out call itself (its model is not asked); the merged result
// joins the conversation and the stage ends done, or with outcome error when the fan-out failed.
func TestFanOutStage(t *testing.T) {
	cases := []struct {
		name        string
		onFailure   string
		fanOutExtra string
		transitions string
		items       string
		turns       []models.ScriptedTurn
		wantTo      string // the stage the split moved to ("": none, the run ended)
		wantOn      string
		wantStatus  components.StatusKind
		wantReason  string
		noStart     bool // the fan-out is refused before it starts
	}{
		{
			name: "every worker done moves on by done", onFailure: "continue", items: "a\nb\nc\n",
			turns:  []models.ScriptedTurn{{Stage: "report", Text: "reported"}},
			wantTo: "report", wantOn: "done", wantStatus: components.Done,
		},
		{
			name: "a failure under continue still ends done", onFailure: "continue", items: "a\nbad\nc\n",
			turns:  []models.ScriptedTurn{{Stage: "report", Text: "reported"}},
			wantTo: "report", wantOn: "done", wantStatus: components.Done,
		},
		{
			name: "a failure under fail_all ends with outcome error", onFailure: "fail_all", items: "a\nbad\nc\n",
			transitions: "[[stages.transitions]]\non = \"error\"\nto = \"recover\"",
			turns:       []models.ScriptedTurn{{Stage: "recover", Text: "recovered"}},
			wantTo:      "recover", wantOn: "error", wantStatus: components.Done,
		},
		{
			name: "a fail_all failure with no error transition fails the agent", onFailure: "fail_all", items: "a\nbad\nc\n",
			wantStatus: components.Failed, wantReason: "fan_out failed: fan_out of 3 items: 0 done, 1 failed, 1 killed (stopped after the first failure: fail_all)",
		},
		{
			name: "more items than the stage's max_items", onFailure: "continue", fanOutExtra: "max_items = 2", items: "a\nb\nc\n",
			wantStatus: components.Failed, noStart: true,
			wantReason: "fan_out failed: fan_out: " + subagents.ErrTooManyItems.Error() + ": 3 items, at most 2",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, parkFor(3))
			h.spawnable("worker", h.blueprint(fmt.Sprintf(workerTemplate, "")), fanOutWorker(t))
			boss := newRecorder(t, "scripted:splitter", tc.turns...)
			h.spawn(h.profile("boss", h.blueprint(fmt.Sprintf(splitterTemplate, tc.onFailure, tc.fanOutExtra, tc.transitions)), boss, ""), 1)
			h.putFile("boss", "boss-0", "items.txt", tc.items)
			h.runAll()

			h.wantRecord("boss-0", tc.wantStatus, tc.wantReason)
			if tc.wantReason == "" && h.record("boss-0").Reason != "" {
				t.Errorf("the splitter's reason %q, want none", h.record("boss-0").Reason)
			}
			starts := h.events("fanout_start", "boss-0")
			if tc.noStart {
				if len(starts) != 0 {
					t.Errorf("fanout_start events:%s\nwant none", describeTree(starts))
				}
			} else if len(starts) != 1 || starts[0].Mode != "stage" || starts[0].Items != 3 || starts[0].MaxWorkers != 2 || starts[0].OnWorkerFailure != tc.onFailure {
				t.Errorf("fanout_start events:%s", describeTree(starts))
			}
			if turns := h.events("model_turn", "boss-0"); len(turns) != len(tc.turns) {
				t.Errorf("the splitter's model was asked %d times, want %d (never in the fan-out stage)", len(turns), len(tc.turns))
			}
			var moves, ends []event
			for _, ev := range h.events("transition", "boss-0") {
				if ev.To == "" {
					ends = append(ends, ev) // the agent leaving its graph
				} else {
					moves = append(moves, ev)
				}
			}
			if len(ends) > 1 || len(ends) == 1 && ends[0].End == "" {
				t.Errorf("transitions out of the graph:%+v, want one at most, with its end", ends)
			}
			switch {
			case tc.wantTo == "" && len(moves) != 0:
				t.Errorf("transitions:%+v, want none", moves)
			case tc.wantTo != "" && (len(moves) != 1 || moves[0].To != tc.wantTo || moves[0].On != tc.wantOn):
				t.Errorf("transitions:%+v, want split -> %s on %s", moves, tc.wantTo, tc.wantOn)
			}
			res := h.resultOf("boss-0", subagents.NameFanOut)
			if seen := boss.seen["boss-0"]; len(seen) > 0 {
				last := seen[0].messages[len(seen[0].messages)-1]
				if last.Role != models.RoleTool || last.Content != res.Content || !strings.HasPrefix(last.Content, "fan_out of 3 items: ") {
					t.Errorf("the next stage's first turn ends its conversation with %+v, want the merged result", last)
				}
			}
		})
	}
}

// Two runs of the same forest (fan-outs whose workers finish on the lane in wall-clock disorder,
// spawns, messages, kills and parents ending over live children) write byte-identical traces.
func TestSubagentTreesAreDeterministic(t *testing.T) {
	run := func() []byte {
		boss := scripted(t, "scripted:boss",
			turn("", spawnCall("lead", "lead {{.Name}}", nil), sendCall("{{.Name}}/1", "hello from {{.Name}}")),
			turn("", fanOutCall([]string{"a", "bad", "c", "dd", "eee", "f"}, 3, "")),
			turn("", targetCall(subagents.NameKill, "{{.Name}}/1"), listCall()),
			turn("done"))
		worker := scripted(t, "scripted:jitter-worker",
			models.ScriptedTurn{Error: `{{if eq .Task "bad"}}cannot do it{{end}}`, Calls: []models.ScriptedCall{call("jitter", "{{.Task}}{{.Name}}")}},
			turn("did {{.Task}}"))
		lead := scripted(t, "scripted:lead", turn("", spawnCall("worker", "x", nil), park("1")), turn("", park("2")), turn("lead done"))
		opt := parkFor(40)
		opt.latency.Tool, opt.toolCapacity = 2, 4
		w := newTree(t, treeSpec{opt: opt, bosses: 3, boss: boss, children: map[string]models.Model{"worker": worker, "lead": lead}})
		w.runAll()
		if len(w.events("merge", "")) != 3 || len(w.events("kill", "")) == 0 || len(w.events("message", "")) == 0 {
			t.Fatal("the forest did not fan out, kill and message")
		}
		return bytes.Clone(w.traceBytes())
	}
	first, second := run(), run()
	if !bytes.Equal(first, second) {
		t.Errorf("traces differ: %s", firstDifference(first, second))
	}
}
