package scenarios_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/warrenhq/warren"
	"github.com/warrenhq/warren/ecs"
	"github.com/warrenhq/warren/hostconfig"
	"github.com/warrenhq/warren/policy"
	"github.com/warrenhq/warren/scenarios"
	"github.com/warrenhq/warren/tools"
	"github.com/warrenhq/warren/trace"
)

// The permission scenarios under testdata/permissions run the tool gate end to end: the host
// ceiling, blueprint layers, launch overrides, grants, prompts, unattended runs, the write budget
// and the safety modes. Each test runs one scenario, requires its own [[expect]] entries to hold,
// and then reads the trace back to check what the gate decided for every call, and why.

// permFile is the path of a permission scenario (or of a file beside it).
func permFile(name string) string { return filepath.Join("testdata", "permissions", name) }

// gateEvent holds the fields of a trace event the permission tests look at.
type gateEvent struct {
	Tick    uint64   `json:"tick"`
	Name    string   `json:"name"`
	Kind    string   `json:"kind"`
	CallID  string   `json:"call_id"`
	Tool    string   `json:"tool"`
	Keys    []string `json:"keys"`
	Verdict string   `json:"verdict"`
	Layer   string   `json:"layer"`
	Reason  string   `json:"reason"`
	Prompt  string   `json:"prompt"`
	Text    string   `json:"text"`
	Answer  string   `json:"answer"`
	By      string   `json:"by"`
	OK      bool     `json:"ok"`
	Content string   `json:"content"`
	Stage   string   `json:"stage"`
	Visit   int      `json:"visit"`
	Fn      string   `json:"fn"`
	// mcp_server events.
	Server  string `json:"server"`
	Event   string `json:"event"`
	Session uint64 `json:"session"`
}

// decodeEvents reads a trace back into gateEvents, in trace order.
func decodeEvents(t *testing.T, tr []byte) []gateEvent {
	t.Helper()
	_, raw, err := trace.ReadAll(bytes.NewReader(tr))
	if err != nil {
		t.Fatalf("the trace does not read back: %v", err)
	}
	events := make([]gateEvent, len(raw))
	for i, line := range raw {
		if err := json.Unmarshal(line, &events[i]); err != nil {
			t.Fatalf("event %d: %v", i+1, err)
		}
	}
	return events
}

// gateLog summarises what the gate did for one agent, one line per event, in trace order:
//
//	enter <stage> <visit>
//	call <tool> [<keys>] <verdict> by <layer>
//	prompt <approval|question> [<keys>] "<text>"
//	answer <tool> "<answer>" by <script|timeout|unanswered>: <verdict>
//	result <tool> ok|error: <content>
func gateLog(events []gateEvent, agent string) []string {
	var log []string
	for _, e := range events {
		if e.Name != agent {
			continue
		}
		keys := "[" + strings.Join(e.Keys, " ") + "]"
		switch e.Kind {
		case trace.KindStageEnter:
			log = append(log, fmt.Sprintf("enter %s %d", e.Stage, e.Visit))
		case trace.KindToolCall:
			log = append(log, fmt.Sprintf("call %s %s %s by %s", e.Tool, keys, e.Verdict, e.Layer))
		case trace.KindPrompt:
			log = append(log, fmt.Sprintf("prompt %s %s %q", e.Prompt, keys, e.Text))
		case trace.KindAnswer:
			log = append(log, fmt.Sprintf("answer %s %q by %s: %s", e.Tool, e.Answer, e.By, e.Verdict))
		case trace.KindToolResult:
			status := "error"
			if e.OK {
				status = "ok"
			}
			log = append(log, fmt.Sprintf("result %s %s: %s", e.Tool, status, e.Content))
		}
	}
	return log
}

// wantLog fails the test unless agent's gate log is exactly want.
func wantLog(t *testing.T, events []gateEvent, agent string, want []string) {
	t.Helper()
	got := gateLog(events, agent)
	if !slices.Equal(got, want) {
		t.Errorf("gate log of %s:\n  %s\nwant:\n  %s", agent, strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

// toolCall returns the tool_call event of callID.
func toolCall(t *testing.T, events []gateEvent, callID string) gateEvent {
	t.Helper()
	for _, e := range events {
		if e.Kind == trace.KindToolCall && e.CallID == callID {
			return e
		}
	}
	t.Fatalf("no tool_call event for %s", callID)
	return gateEvent{}
}

// wantReason fails the test unless the tool_call of callID gives a reason containing each part.
func wantReason(t *testing.T, events []gateEvent, callID string, parts ...string) {
	t.Helper()
	e := toolCall(t, events, callID)
	for _, part := range parts {
		if !strings.Contains(e.Reason, part) {
			t.Errorf("%s: reason %q does not contain %q", callID, e.Reason, part)
		}
	}
}

// runPermission runs a permission scenario with opt, requires its expectations to hold, and
// returns the summary and the decoded trace.
func runPermission(t *testing.T, name string, opt warren.Options) (*warren.Summary, []gateEvent) {
	t.Helper()
	sum, tr := runTraced(t, permFile(name), opt)
	if len(sum.Failures) > 0 {
		t.Fatalf("%s: expectations failed:\n%s", name, strings.Join(sum.Failures, "\n"))
	}
	return sum, decodeEvents(t, tr)
}

// TestPermissionGrants answers prompts for the stage and for the run: the stage grant survives a
// revisit of the same stage and is dropped on a move to another, where the write asks again; the
// run grant holds throughout.
func TestPermissionGrants(t *testing.T) {
	root := t.TempDir()
	_, events := runPermission(t, "grants.toml", warren.Options{WorkRoot: root})
	wantLog(t, events, "revisers-0", []string{
		"enter draft 1",
		"call write_file [write_file] ask by default",
		`prompt approval [write_file] ""`,
		`answer write_file "stage" by script: allow`,
		`result write_file ok: Wrote 2 bytes to "a.md" (new file)`,
		"call edit_file [edit_file] ask by default",
		`prompt approval [edit_file] ""`,
		`answer edit_file "run" by script: allow`,
		`result edit_file ok: Replaced 1 occurrence in "a.md"`,
		// done -> draft: the same stage index, so the stage grant holds.
		"enter draft 2",
		"call write_file [write_file] allow by grant:stage",
		`result write_file ok: Wrote 7 bytes to "b.md" (new file)`,
		// error -> publish: another stage, so the stage grant is gone; the run grant is not.
		"enter publish 1",
		"call write_file [write_file] ask by default",
		`prompt approval [write_file] ""`,
		`answer write_file "once" by script: allow`,
		`result write_file ok: Wrote 9 bytes to "c.md" (new file)`,
		"call edit_file [edit_file] allow by grant:run",
		`result edit_file ok: Replaced 1 occurrence in "a.md"`,
	})
	wantReason(t, events, "revisers-0-t3-c0", "every asking key is covered: write_file (grant:stage)")
	wantReason(t, events, "revisers-0-t6-c0", "every asking key is covered: edit_file (grant:run)")
	dir := filepath.Join(root, "revisers", "revisers-0")
	wantFile(t, filepath.Join(dir, "a.md"), "v3")
	wantFile(t, filepath.Join(dir, "b.md"), "revised")
	wantFile(t, filepath.Join(dir, "c.md"), "published")
}

// unattendedLog is the gate log of an agent of unattended.toml when nobody is watching: the
// write is denied without a prompt, ask_user_text (not required) is answered at once by the
// stand-in, and the required ask_user_confirm still prompts and gets its scripted reply.
var unattendedLog = []string{
	"enter solo 1",
	"call write_file [write_file] deny by unattended",
	"result write_file error: permission denied for write_file by unattended: nobody is watching this run, and no grant or --yolo covers the ask (default: no layer sets write_file; its built-in default is ask)",
	"call ask_user_text [ask_user_text] allow by default",
	"result ask_user_text ok: " + tools.UnattendedAnswer,
	"enter confirm 1",
	"call ask_user_confirm [ask_user_confirm] allow by default",
	`prompt question [ask_user_confirm] "Ship it?"`,
	`answer ask_user_confirm "yes" by script: allow`,
	"result ask_user_confirm ok: The user answered yes.",
	"call ask_user_text [ask_user_text] allow by default",
	"result ask_user_text ok: " + tools.UnattendedAnswer,
}

// TestPermissionUnattended runs unattended.toml unattended in each of the three ways a run can
// be: the scenario's [launch] unattended, warren.Options.Unattended (host run --unattended), and a host
// config's [interaction] unattended (host run --config). --yolo covers the write's ask, so it
// runs even unattended. The same scenario run attended prompts for the write and puts the
// questions to the script instead.
func TestPermissionUnattended(t *testing.T) {
	unattendedHost, err := hostconfig.Load(permFile(filepath.Join("hosts", "unattended.toml")), scenarios.KnownTools())
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		// attended clears the scenario's [launch] unattended before the run.
		attended bool
		opt      warren.Options
		want     []string
	}{
		{"scenario launch", false, warren.Options{}, unattendedLog},
		{"options", true, warren.Options{Unattended: true}, unattendedLog},
		{"host config", true, warren.Options{Host: unattendedHost}, unattendedLog},
		{"yolo covers the ask", false, warren.Options{Launch: policy.Launch{Yolo: true}}, slices.Concat([]string{
			"enter solo 1",
			"call write_file [write_file] allow by launch:yolo",
			`result write_file ok: Wrote 10 bytes to "out.txt" (new file)`,
		}, unattendedLog[3:])},
		{"attended", true, warren.Options{}, []string{
			"enter solo 1",
			"call write_file [write_file] ask by default",
			`prompt approval [write_file] ""`,
			`answer write_file "once" by script: allow`,
			`result write_file ok: Wrote 10 bytes to "out.txt" (new file)`,
			"call ask_user_text [ask_user_text] allow by default",
			`prompt question [ask_user_text] "Which format?"`,
			`answer ask_user_text "markdown" by script: allow`,
			"result ask_user_text ok: The user answered: markdown",
			"enter confirm 1",
			"call ask_user_confirm [ask_user_confirm] allow by default",
			`prompt question [ask_user_confirm] "Ship it?"`,
			`answer ask_user_confirm "yes" by script: allow`,
			"result ask_user_confirm ok: The user answered yes.",
			"call ask_user_text [ask_user_text] allow by default",
			`prompt question [ask_user_text] "Anything else?"`,
			`answer ask_user_text "markdown" by script: allow`,
			"result ask_user_text ok: The user answered: markdown",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sc, err := scenarios.Load(permFile("unattended.toml"), scenarios.KnownTools())
			if err != nil {
				t.Fatal(err)
			}
			if !sc.Unattended {
				t.Fatal("[launch] unattended = true did not make the scenario unattended")
			}
			if tt.attended {
				sc.Unattended = false
			}
			var tr bytes.Buffer
			tt.opt.Trace = &tr
			sum, err := warren.Run(context.Background(), sc, tt.opt)
			if err != nil {
				t.Fatal(err)
			}
			if len(sum.Failures) > 0 {
				t.Fatalf("expectations failed:\n%s", strings.Join(sum.Failures, "\n"))
			}
			events := decodeEvents(t, tr.Bytes())
			wantLog(t, events, "askers-0", tt.want)
			wantLog(t, events, "askers-1", tt.want)
		})
	}
}

// on disk as it was, and each agent has its own running total.
func TestPermissionWriteBudget(t *testing.T) {
	root := t.TempDir()
	_, events := runPermission(t, "budget.toml", warren.Options{WorkRoot: root})
	for _, agent := range []string{"writers-0", "writers-1"} {
		allow := "call write_file [write_file] allow by blueprint:agent"
		wantLog(t, events, agent, []string{
			"enter work 1",
			allow, `result write_file ok: Wrote 10 bytes to "a.txt" (new file)`,
			allow, "result write_file error: write refused: 13 bytes exceed the per-call write budget of 12 bytes",
			allow, `result write_file ok: Wrote 8 bytes to "b.txt" (new file)`,
			allow, "result write_file error: write refused: 5 bytes would exceed the per-run write budget of 20 bytes (2 bytes left)",
			"call edit_file [edit_file] allow by blueprint:agent",
			"result edit_file error: write refused: 11 bytes would exceed the per-run write budget of 20 bytes (2 bytes left)",
			allow, `result write_file ok: Wrote 2 bytes to "c.txt" (new file)`,
			allow, "result write_file error: write refused: 1 bytes would exceed the per-run write budget of 20 bytes (0 bytes left)",
		})
		dir := filepath.Join(root, "writers", agent)
		wantFile(t, filepath.Join(dir, "a.txt"), "0123456789")
		wantFile(t, filepath.Join(dir, "b.txt"), "abcdefgh")
		wantFile(t, filepath.Join(dir, "c.txt"), "ok")
		wantAbsent(t, filepath.Join(dir, "big.txt"))
		wantAbsent(t, filepath.Join(dir, "d.txt"))
	}
}

// TestPermissionPlanMode drafts a plan: the plan file is the one writable path (approved by a
// prompt, or allowed by the blueprint), every other write is refused by the read-only floor
// before any permission layer is consulted. Read-only mode without a plan file refuses the plan
// file too.
func TestPermissionPlanMode(t *testing.T) {
	root := t.TempDir()
	_, events := runPermission(t, "plan.toml", warren.Options{WorkRoot: root})
	const (
		planDenyWrite = "result write_file error: permission denied for write_file by safety:read-only: the agent is drafting a plan, so everything is read-only except PLAN.md: write_file writes notes.md"
		planDenyEdit  = "result edit_file error: permission denied for edit_file by safety:read-only: the agent is drafting a plan, so everything is read-only except PLAN.md: edit_file writes notes.md"
		readOnly      = "call %s [%s] deny by safety:read-only"
	)
	wantLog(t, events, "planners-0", []string{
		"enter plan 1",
		fmt.Sprintf(readOnly, "write_file", "write_file"), planDenyWrite,
		"call write_file [write_file] ask by default",
		`prompt approval [write_file] ""`,
		`answer write_file "once" by script: allow`,
		`result write_file ok: Wrote 17 bytes to "PLAN.md" (new file)`,
		fmt.Sprintf(readOnly, "edit_file", "edit_file"), planDenyEdit,
		"call list_dir [list_dir] allow by default",
		"result list_dir ok: PLAN.md",
	})
	wantLog(t, events, "writers-0", []string{
		"enter work 1",
		fmt.Sprintf(readOnly, "write_file", "write_file"), planDenyWrite,
		"call write_file [write_file] allow by blueprint:agent",
		`result write_file ok: Wrote 17 bytes to "PLAN.md" (new file)`,
		fmt.Sprintf(readOnly, "edit_file", "edit_file"), planDenyEdit,
		"call list_dir [list_dir] allow by default",
		"result list_dir ok: PLAN.md",
	})
	wantLog(t, events, "readers-0", []string{
		"enter work 1",
		fmt.Sprintf(readOnly, "write_file", "write_file"),
		"result write_file error: permission denied for write_file by safety:read-only: read-only mode: write_file writes notes.md",
		fmt.Sprintf(readOnly, "write_file", "write_file"),
		"result write_file error: permission denied for write_file by safety:read-only: read-only mode: write_file writes PLAN.md",
		fmt.Sprintf(readOnly, "edit_file", "edit_file"),
		"result edit_file error: permission denied for edit_file by safety:read-only: read-only mode: edit_file writes notes.md",
		"call list_dir [list_dir] allow by default",
		"result list_dir ok: (empty directory)",
	})
	for _, agent := range []string{"planners/planners-0", "writers/writers-0"} {
		wantFile(t, filepath.Join(root, agent, "PLAN.md"), "1. read\n2. write\n")
		wantAbsent(t, filepath.Join(root, agent, "notes.md"))
	}
	wantAbsent(t, filepath.Join(root, "readers", "readers-0", "PLAN.md"))
	wantAbsent(t, filepath.Join(root, "readers", "readers-0", "notes.md"))
}

// TestPermissionAutoMode runs auto mode with a scripted classifier (allow writes, deny edits,
// escalate listings to a prompt) beside a group in the default mode whose asks all prompt, and
// auto mode with no classifier rules at all, which fails safe: every ask stands and prompts.
func TestPermissionAutoMode(t *testing.T) {
	t.Run("classifier", func(t *testing.T) {
		_, events := runPermission(t, "auto.toml", warren.Options{})
		wantLog(t, events, "autos-0", []string{
			"enter work 1",
			"call write_file [write_file] allow by classifier",
			`result write_file ok: Wrote 4 bytes to "a.txt" (new file)`,
			"call edit_file [edit_file] deny by classifier",
			"result edit_file error: permission denied for edit_file by classifier: auto mode: the classifier denies it: no edits today",
			"call list_dir [list_dir] ask by blueprint:agent",
			`prompt approval [list_dir] ""`,
			`answer list_dir "once" by script: allow`,
			"result list_dir ok: a.txt",
			"call read_file [read_file] allow by default",
			"result read_file ok: auto",
		})
		wantReason(t, events, "autos-0-t0-c0", "auto mode: the classifier allows it: writes in the workdir are in scope")
		wantReason(t, events, "autos-0-t2-c0", "blueprint [tool_permissions] sets list_dir = ask", "the classifier escalates: a human should see listings")
		var prompted []string
		for _, e := range events {
			if e.Name == "manual-0" && e.Kind == trace.KindPrompt {
				prompted = append(prompted, e.Tool)
			}
		}
		if want := []string{"write_file", "edit_file", "list_dir"}; !slices.Equal(prompted, want) {
			t.Errorf("manual-0 (default mode) was prompted for %v, want %v: the classifier is for auto mode only", prompted, want)
		}
	})
	t.Run("no classifier", func(t *testing.T) {
		_, events := runPermission(t, "auto_unbound.toml", warren.Options{})
		wantLog(t, events, "autos-0", []string{
			"enter work 1",
			"call write_file [write_file] ask by default",
			`prompt approval [write_file] ""`,
			`answer write_file "once" by script: allow`,
			`result write_file ok: Wrote 4 bytes to "a.txt" (new file)`,
			"call list_dir [list_dir] ask by blueprint:agent",
			`prompt approval [list_dir] ""`,
			`answer list_dir "once" by script: allow`,
			"result list_dir ok: a.txt",
		})
		for _, id := range []string{"autos-0-t0-c0", "autos-0-t1-c0"} {
			wantReason(t, events, id, "auto mode has no classifier bound, so it fails safe to ask")
		}
	})
}

// TestPermissionHostCeiling runs three blueprints under one host ceiling: the global entries cap
// the blueprint that tries to allow everything, the per-blueprint section replaces them for its
// blueprint, and a blueprint tightens the defaults at agent and stage level.
func TestPermissionHostCeiling(t *testing.T) {
	_, events := runPermission(t, "ceiling.toml", warren.Options{})
	prompted := []string{`prompt approval [write_file] ""`, `answer write_file "once" by script: allow`, `result write_file ok: Wrote 5 bytes to "a.txt" (new file)`}
	wantLog(t, events, "loose-0", slices.Concat([]string{
		"enter work 1",
		"call write_file [write_file] ask by host",
	}, prompted, []string{
		"call edit_file [edit_file] deny by host",
		"result edit_file error: permission denied for edit_file by host: host [tool_permissions] sets edit_file = deny, and a blueprint may only tighten the ceiling",
		"call read_file [read_file] allow by default",
		"result read_file ok: first",
		"call list_dir [list_dir] allow by default",
		"result list_dir ok: a.txt",
	}))
	wantReason(t, events, "loose-0-t0-c0", "host [tool_permissions] sets write_file = ask, and a blueprint may only tighten the ceiling")
	wantLog(t, events, "strict-0", []string{
		"enter work 1",
		"call write_file [write_file] deny by host:strict",
		"result write_file error: permission denied for write_file by host:strict: host [agent_tool_permissions.strict] sets write_file = deny",
		"call edit_file [edit_file] allow by host:strict",
		`result edit_file error: cannot edit "a.txt": no such file or directory`,
		"call read_file [read_file] allow by default",
		`result read_file error: cannot read "a.txt": no such file or directory`,
		"call list_dir [list_dir] allow by default",
		"result list_dir ok: (empty directory)",
	})
	wantLog(t, events, "tight-0", slices.Concat([]string{
		"enter work 1",
		"call write_file [write_file] ask by host",
	}, prompted, []string{
		"call edit_file [edit_file] deny by host",
		"result edit_file error: permission denied for edit_file by host: host [tool_permissions] sets edit_file = deny",
		"call read_file [read_file] deny by blueprint:stage",
		"result read_file error: permission denied for read_file by blueprint:stage: blueprint stage \"work\" sets read_file = deny",
		"call list_dir [list_dir] ask by blueprint:agent",
		`prompt approval [list_dir] ""`,
		`answer list_dir "once" by script: allow`,
		"result list_dir ok: a.txt",
	}))
}

// withoutLoosenable takes tool off policy.Loosenable for the rest of the test. Every shipped tool
// that asks by default is loosenable, so this is the only way a scenario can show a blueprint
// that may not loosen a default. Resolvers read the list when a run builds them.
func withoutLoosenable(t *testing.T, tool string) {
	t.Helper()
	saved := policy.Loosenable
	policy.Loosenable = slices.DeleteFunc(slices.Clone(saved), func(name string) bool { return name == tool })
	t.Cleanup(func() { policy.Loosenable = saved })
}

// TestPermissionMayLoosen: a blueprint's allow of a tool the ceiling says nothing about holds if
// the tool is loosenable; otherwise it is ignored, unless the host sets [security]
// allow_blueprint_permissions.
func TestPermissionMayLoosen(t *testing.T) {
	prompt := []string{
		"enter work 1",
		"call write_file [write_file] ask by default",
		`prompt approval [write_file] ""`,
		`answer write_file "once" by script: allow`,
		`result write_file ok: Wrote 5 bytes to "a.txt" (new file)`,
	}
	allowed := []string{
		"enter work 1",
		"call write_file [write_file] allow by blueprint:agent",
		`result write_file ok: Wrote 5 bytes to "a.txt" (new file)`,
	}
	tests := []struct {
		name, file string
		loosenable bool
		want       []string
		reason     string
	}{
		{"loosenable", "loosen.toml", true, allowed, "loosening the built-in default ask (write_file is on the loosenable list)"},
		{"ignored without opt-in", "loosen.toml", false, prompt, "blueprint [tool_permissions] sets write_file = allow, but may not loosen the built-in default ask without [security] allow_blueprint_permissions"},
		{"honoured with opt-in", "loosen_opt_in.toml", false, allowed, "loosening the built-in default ask ([security] allow_blueprint_permissions = true)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !tt.loosenable {
				withoutLoosenable(t, tools.NameWriteFile)
			}
			_, events := runPermission(t, tt.file, warren.Options{})
			wantLog(t, events, "loose-0", tt.want)
			wantReason(t, events, "loose-0-t0-c0", tt.reason)
		})
	}
}

// TestPermissionLaunch checks the launch overrides in a scenario's [launch] and added by warren.Options
// (host run flags): allow, ask and deny, yolo that never lifts a deny nor an explicit ask, and
// warren.Options.Host replacing the scenario's [host].
func TestPermissionLaunch(t *testing.T) {
	t.Run("allow ask deny", func(t *testing.T) {
		_, events := runPermission(t, "launch.toml", warren.Options{})
		wantLog(t, events, "workers-0", []string{
			"enter work 1",
			"call write_file [write_file] allow by launch:allow",
			`result write_file ok: Wrote 5 bytes to "a.txt" (new file)`,
			"call edit_file [edit_file] deny by launch:deny",
			"result edit_file error: permission denied for edit_file by launch:deny: launch flag --deny edit_file denies it",
			"call read_file [read_file] ask by launch:ask",
			`prompt approval [read_file] ""`,
			`answer read_file "once" by script: allow`,
			"result read_file ok: first",
			"call list_dir [list_dir] allow by default",
			"result list_dir ok: a.txt",
		})
	})
	// yoloLog is the gate log of yolo.toml's agent, given what happens to its edit and so what
	// its read finds.
	yoloLog := func(edit []string, read string) []string {
		return slices.Concat([]string{
			"enter work 1",
			"call write_file [write_file] allow by launch:yolo",
			`result write_file ok: Wrote 5 bytes to "a.txt" (new file)`,
		}, edit, []string{
			"call read_file [read_file] allow by default",
			"result read_file ok: " + read,
			"call list_dir [list_dir] ask by launch:ask",
			`prompt approval [list_dir] ""`,
			`answer list_dir "once" by script: allow`,
			"result list_dir ok: a.txt",
		})
	}
	t.Run("yolo", func(t *testing.T) {
		_, events := runPermission(t, "yolo.toml", warren.Options{})
		wantLog(t, events, "workers-0", yoloLog([]string{
			"call edit_file [edit_file] deny by host",
			"result edit_file error: permission denied for edit_file by host: host [tool_permissions] sets edit_file = deny",
		}, "first"))
	})
	t.Run("options host replaces the scenario's", func(t *testing.T) {
		_, events := runPermission(t, "yolo.toml", warren.Options{Host: hostconfig.Default()})
		wantLog(t, events, "workers-0", yoloLog([]string{
			"call edit_file [edit_file] allow by launch:yolo",
			`result edit_file ok: Replaced 1 occurrence in "a.txt"`,
		}, "second"))
	})
	t.Run("options add to the scenario's launch", func(t *testing.T) {
		_, events := runPermission(t, "yolo.toml", warren.Options{Launch: policy.Launch{Deny: []string{"write_file"}}})
		if e := toolCall(t, events, "workers-0-t0-c0"); e.Verdict != "deny" || e.Layer != policy.LayerLaunchDeny {
			t.Errorf("write_file with warren.Options deny: %s by %s, want deny by launch:deny", e.Verdict, e.Layer)
		}
		if e := toolCall(t, events, "workers-0-t3-c0"); e.Verdict != "ask" || e.Layer != policy.LayerLaunchAsk {
			t.Errorf("list_dir: %s by %s, want the scenario's [launch] ask kept", e.Verdict, e.Layer)
		}
	})
	t.Run("options conflicting with the scenario's launch", func(t *testing.T) {
		sc, err := scenarios.Load(permFile("launch.toml"), scenarios.KnownTools())
		if err != nil {
			t.Fatal(err)
		}
		_, err = warren.Run(context.Background(), sc, warren.Options{Launch: policy.Launch{Deny: []string{"write_file"}}})
		if !errors.Is(err, warren.ErrLaunch) || !errors.Is(err, policy.ErrConflictingFlags) {
			t.Fatalf("err = %v, want warren.ErrLaunch wrapping policy.ErrConflictingFlags", err)
		}
		if !strings.Contains(err.Error(), `"write_file" is given to both --allow and --deny`) {
			t.Errorf("error %q does not name the conflict", err)
		}
	})
}

// TestPermissionUnanswered: prompts no [[interactions]] entry answers are refused on the next
// tick, and the run fails its expectations with a message naming the agent, the tool and the
// keys, instead of waiting; an answer scripted after the prompt timeout is a timeout denial.
func TestPermissionUnanswered(t *testing.T) {
	sum, tr := runTraced(t, permFile("unanswered.toml"), warren.Options{})
	want := []string{
		"agent writers-0 asked about write_file (keys write_file) at tick 0 and nothing answers it (add an [[interactions]] entry, or give it to people: host run --interactive, host serve); it was refused",
		`agent writers-0 asked about ask_user_text question "Anybody there?" at tick 2 and nothing answers it (add an [[interactions]] entry, or give it to people: host run --interactive, host serve); it was refused`,
	}
	if !slices.Equal(sum.Failures, want) {
		t.Errorf("failures:\n%s\nwant:\n%s", strings.Join(sum.Failures, "\n"), strings.Join(want, "\n"))
	}
	if sum.Stop != ecs.FixedPoint || sum.Ticks > 10 {
		t.Errorf("the run stopped by %s after %d ticks; unanswered prompts must not keep it waiting", sum.Stop, sum.Ticks)
	}
	events := decodeEvents(t, tr)
	wantLog(t, events, "writers-0", []string{
		"enter solo 1",
		"call write_file [write_file] ask by default",
		`prompt approval [write_file] ""`,
		`answer write_file "deny" by unanswered: deny`,
		"result write_file error: permission denied for write_file: nothing can answer the prompt",
		"call ask_user_text [ask_user_text] allow by default",
		`prompt question [ask_user_text] "Anybody there?"`,
		`answer ask_user_text "" by unanswered: deny`,
		"result ask_user_text error: nobody can answer the question",
		"enter confirm 1",
	})
	wantLog(t, events, "slow-0", []string{
		"enter solo 1",
		"call write_file [write_file] ask by default",
		`prompt approval [write_file] ""`,
		`answer write_file "deny" by timeout: deny`,
		"result write_file error: permission denied for write_file: nobody answered the prompt before its deadline (tick 3)",
		"call ask_user_text [ask_user_text] allow by default",
		`prompt question [ask_user_text] "Anybody there?"`,
		`answer ask_user_text "here" by script: allow`,
		"result ask_user_text ok: The user answered: here",
		"enter confirm 1",
	})
}

// permissionFailures lists the permission scenarios that fail their expectations on purpose.
var permissionFailures = map[string]int{"unanswered.toml": 2}

// TestPermissionDeterminism runs every permission scenario twice and at GOMAXPROCS(1): the traces
// must be byte-identical, prompts, grants, classifier and write budget included.
func TestPermissionDeterminism(t *testing.T) {
	files, err := filepath.Glob(permFile("*.toml"))
	if err != nil || len(files) < 10 {
		t.Fatalf("too few permission scenarios (%d): %v", len(files), err)
	}
	for _, file := range files {
		base := filepath.Base(file)
		t.Run(strings.TrimSuffix(base, ".toml"), func(t *testing.T) {
			sum, first := runTraced(t, file, warren.Options{})
			if len(sum.Failures) != permissionFailures[base] {
				t.Errorf("%d failed expectations, want %d:\n%s", len(sum.Failures), permissionFailures[base], strings.Join(sum.Failures, "\n"))
			}
			_, second := runTraced(t, file, warren.Options{})
			if !bytes.Equal(first, second) {
				t.Errorf("two runs gave different traces:\n%s", traceDiff(t, first, second))
			}
			previous := runtime.GOMAXPROCS(0)
			single := func() []byte {
				runtime.GOMAXPROCS(1)
				defer runtime.GOMAXPROCS(previous)
				_, tr := runTraced(t, file, warren.Options{})
				return tr
			}()
			if !bytes.Equal(first, single) {
				t.Errorf("GOMAXPROCS(1) gave a different trace than GOMAXPROCS(%d):\n%s", previous, traceDiff(t, first, single))
			}
		})
	}
}

// TestRunHashNamesWhatTheCommandLineChanged: a trace of a run with a replacing host config,
// launch overrides or --unattended must not claim the plain scenario's hash.
func TestRunHashNamesWhatTheCommandLineChanged(t *testing.T) {
	sc, err := scenarios.Load(filepath.Join("examples", "gated.toml"), scenarios.KnownTools())
	if err != nil {
		t.Fatal(err)
	}
	host, err := hostconfig.Load(filepath.Join("examples", "hosts", "strict.toml"), scenarios.KnownTools())
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]string{}
	for name, opt := range map[string]warren.Options{
		"plain":      {},
		"config":     {Host: host},
		"yolo":       {Launch: policy.Launch{Yolo: true}},
		"deny":       {Launch: policy.Launch{Deny: []string{"write_file"}}},
		"unattended": {Unattended: true},
	} {
		var buf bytes.Buffer
		opt.Trace = &buf
		if _, err := warren.Run(context.Background(), sc, opt); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		h, _, err := trace.ReadAll(&buf)
		if err != nil {
			t.Fatal(err)
		}
		if other, dup := seen[h.ScenarioHash]; dup {
			t.Errorf("runs %q and %q share the header hash %q", name, other, h.ScenarioHash)
		}
		seen[h.ScenarioHash] = name
		if (name == "plain") != (h.ScenarioHash == sc.Hash) {
			t.Errorf("%s: header hash %q, scenario hash %q", name, h.ScenarioHash, sc.Hash)
		}
	}
}
