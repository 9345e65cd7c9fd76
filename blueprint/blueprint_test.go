package blueprint

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"github.com/warrenhq/warren/internal/golden"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/warrenhq/warren/hostconfig"
	"github.com/warrenhq/warren/internal/tomlfile"
	"github.com/warrenhq/warren/policy"
	"github.com/warrenhq/warren/sandbox"
)

// testTools are the tool names the tests' host knows.
var testTools = []string{"write_file", "read_file", "shell", "edit_file", "ask_user", "spawn_agent", "fan_out"}

// TestBadCorpus loads every blueprint under testdata/bad and compares the
// complete error report with the paired .err golden file.
func TestBadCorpus(t *testing.T) {
	for _, file := range golden.Corpus(t, "bad", "*.toml") {
		name := strings.TrimSuffix(filepath.Base(file), ".toml")
		t.Run(name, func(t *testing.T) {
			bp, err := Load(file, testTools)
			if err == nil {
				t.Fatalf("Load succeeded: %+v", bp)
			}
			if bp != nil {
				t.Errorf("Load returned a blueprint with its error")
			}
			var errs tomlfile.Errors
			if !errors.As(err, &errs) || len(errs) == 0 {
				t.Fatalf("error %T is not a non-empty tomlfile.Errors: %v", err, err)
			}
			for _, e := range errs {
				if e.File != file {
					t.Errorf("%q names file %q, want %q", e, e.File, file)
				}
			}
			golden.Check(t, strings.TrimSuffix(file, ".toml")+".err", err.Error()+"\n")
		})
	}
}

// describe renders a compiled blueprint for golden files: every field, with
// maps in sorted order.
func describe(bp *Blueprint) string {
	var b strings.Builder
	fmt.Fprintf(&b, "name=%s entry=%d(%s) max_messages=%d\n", bp.Name, bp.Entry, bp.Stages[bp.Entry].Name, bp.MaxMessages)
	fmt.Fprintf(&b, "description=%q\n", bp.Description)
	fmt.Fprintf(&b, "permissions=%s\n", describePermissions(bp.ToolPermissions))
	fmt.Fprintf(&b, "dynamic_tools=%v script_permissions=%s\n", bp.DynamicTools, describeScriptPermissions(bp.ScriptPermissions))
	if bp.Endless {
		b.WriteString("endless=true\n")
	}
	sa := bp.Subagents
	spawnable := "any"
	if sa.Spawnable != nil {
		spawnable = fmt.Sprint(sa.Spawnable)
	}
	fmt.Fprintf(&b, "subagents: max_child_depth=%d max_children=%d detached=%v spawnable=%s\n",
		sa.MaxChildDepth, sa.MaxChildren, sa.Detached, spawnable)
	for _, ref := range bp.SpawnRefs {
		fmt.Fprintf(&b, "spawn ref %s at %s\n", ref.Key, ref.Where)
	}
	if !reflect.ValueOf(bp.Sandbox).IsZero() {
		fmt.Fprintf(&b, "sandbox: %s\n", describeSandbox(bp.Sandbox))
	}
	for _, st := range bp.Stages {
		fmt.Fprintf(&b, "stage %d %s: tools=%v max_iterations=%d accepts_messages=%v permissions=%s\n",
			st.Index, st.Name, st.AvailableTools, st.MaxIterations, st.AcceptsMessages, describePermissions(st.ToolPermissions))
		if !reflect.ValueOf(st.Sandbox).IsZero() {
			fmt.Fprintf(&b, "  sandbox: %s\n", describeSandbox(st.Sandbox))
		}
		if fo := st.FanOut; fo != nil {
			fmt.Fprintf(&b, "  fan_out blueprint=%s items_file=%s max_workers=%d max_items=%d merge_chars=%d fail_all=%v\n",
				fo.Blueprint, fo.ItemsFile, fo.MaxWorkers, fo.MaxItems, fo.MergeChars, fo.FailAll)
		}
		for _, tr := range st.Transitions {
			target := fmt.Sprintf("%d(%s)", tr.To, tr.ToName)
			if tr.End != EndNone {
				target = "end " + tr.End.String()
			}
			fmt.Fprintf(&b, "  on %s -> %s", tr.On, target)
			if tr.When != nil {
				fmt.Fprintf(&b, " when %q at %s", tr.When.Source, tr.When.At)
			}
			for _, a := range tr.Set {
				fmt.Fprintf(&b, " set %s=%q", a.Key, a.Value.Source)
			}
			b.WriteString("\n")
		}
	}
	if r := bp.Reads; r.Result || r.Text || r.Inbox || r.Memory || len(r.Tools) > 0 {
		fmt.Fprintf(&b, "reads: result=%v text=%v inbox=%v memory=%v tools=%v\n", r.Result, r.Text, r.Inbox, r.Memory, r.Tools)
	}
	return b.String()
}

func describePermissions(m map[string]policy.Verdict) string {
	parts := []string{}
	for _, tool := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, tool+"="+m[tool].String())
	}
	return "{" + strings.Join(parts, " ") + "}"
}

// TestGoodCorpus loads every blueprint under testdata/good and compares the
// compiled result with the paired .golden file.
func TestGoodCorpus(t *testing.T) {
	for _, file := range golden.Corpus(t, "good", "*.toml") {
		name := strings.TrimSuffix(filepath.Base(file), ".toml")
		t.Run(name, func(t *testing.T) {
			bp, err := Load(file, testTools)
			if err != nil {
				t.Fatal(err)
			}
			if bp.Path != file {
				t.Errorf("Path = %q, want %q", bp.Path, file)
			}
			checkInvariants(t, bp)
			golden.Check(t, strings.TrimSuffix(file, ".toml")+".golden", describe(bp))
		})
	}
}

// checkInvariants asserts what every compiled blueprint guarantees.
func checkInvariants(t *testing.T, bp *Blueprint) {
	t.Helper()
	if len(bp.Stages) == 0 || bp.Entry < 0 || bp.Entry >= len(bp.Stages) {
		t.Fatalf("entry %d outside %d stages", bp.Entry, len(bp.Stages))
	}
	if !validName(bp.Name) || bp.MaxMessages < MinMaxMessages || len(bp.Hash) != 64 {
		t.Errorf("bad blueprint header: name %q, max_messages %d, hash %q", bp.Name, bp.MaxMessages, bp.Hash)
	}
	sa := bp.Subagents
	if sa.MaxChildDepth < 0 || sa.MaxChildDepth > MaxChildDepthCeiling || sa.MaxChildren < 0 || sa.MaxChildren > MaxChildrenCeiling ||
		!slices.IsSorted(sa.Spawnable) || slices.Contains(sa.Spawnable, "") {
		t.Errorf("bad subagents %+v", sa)
	}
	if keys := bp.SpawnKeys(); !slices.IsSorted(keys) || len(slices.Compact(slices.Clone(keys))) != len(keys) {
		t.Errorf("SpawnKeys not sorted and unique: %v", keys)
	}
	for _, ref := range bp.SpawnRefs {
		if ref.Key == "" || !strings.HasPrefix(ref.Where, bp.Path+":") {
			t.Errorf("bad spawn ref %+v", ref)
		}
	}
	for fn, v := range bp.ScriptPermissions {
		if err := policy.CheckScriptEntry(fn, v); err != nil {
			t.Errorf("invalid script permission kept: %v", err)
		}
		if at := bp.scriptAt[fn]; at.File != bp.Path || at.Line < 1 || at.Key != "tool_script_permissions."+fn {
			t.Errorf("script permission %s positioned at %+v", fn, at)
		}
	}
	if !bp.Endless {
		if stuck := stuckStages(bp); len(stuck) > 0 {
			t.Errorf("stages %v are reachable and can never end, but the blueprint loaded without endless = true", stuck)
		}
	}
	for key, at := range bp.sandboxAt {
		if at.File != bp.Path || at.Line < 1 || at.Key != key || !strings.Contains(key, "sandbox.") {
			t.Errorf("sandbox setting %s positioned at %+v", key, at)
		}
	}
	for i := range bp.Stages {
		st := &bp.Stages[i]
		if fo := st.FanOut; fo != nil && (!st.Advertises(FanOutTool) || fo.Blueprint == "" || !sa.MaySpawn(fo.Blueprint) ||
			!filepath.IsLocal(fo.ItemsFile) || fo.MaxWorkers < 1 || fo.MaxItems < 1 || fo.MergeChars < MinMergeChars) {
			t.Errorf("stage %s: bad fan_out %+v", st.Name, fo)
		}
		if st.Index != i || st.Name == "" || st.MaxIterations < 1 || st.MaxIterations > MaxIterationsCeiling {
			t.Errorf("stage %d: bad header %+v", i, st)
		}
		if !slices.IsSorted(st.AvailableTools) {
			t.Errorf("stage %s: tools not sorted: %v", st.Name, st.AvailableTools)
		}
		for _, tool := range st.AvailableTools {
			if !st.Advertises(tool) {
				t.Errorf("stage %s does not advertise its tool %s", st.Name, tool)
			}
		}
		for _, tr := range st.Transitions {
			if tr.End != EndNone {
				if tr.To != -1 || tr.ToName != "" {
					t.Errorf("stage %s: transition %+v ends the agent and names a stage", st.Name, tr)
				}
				continue
			}
			if tr.To < 0 || tr.To >= len(bp.Stages) || bp.Stages[tr.To].Name != tr.ToName {
				t.Errorf("stage %s: transition %+v points nowhere", st.Name, tr)
			}
		}
	}
}

func TestParseDefaultsAndHash(t *testing.T) {
	data := []byte("name = \"d\"\n[[stages]]\nname = \"a\"\n[[stages]]\nname = \"b\"\n")
	bp, err := Parse("d.toml", data, testTools)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	tests := []struct {
		name      string
		got, want any
	}{
		{name: "path", got: bp.Path, want: "d.toml"},
		{name: "hash", got: bp.Hash, want: hex.EncodeToString(sum[:])},
		{name: "entry is first stage", got: bp.Entry, want: 0},
		{name: "max_messages default", got: bp.MaxMessages, want: DefaultMaxMessages},
		{name: "max_iterations default", got: bp.Stages[1].MaxIterations, want: DefaultMaxIterations},
		{name: "no tools", got: len(bp.Stages[0].AvailableTools), want: 0},
		{name: "no agent permissions", got: bp.ToolPermissions == nil, want: true},
		{name: "no transitions", got: len(bp.Stages[0].Transitions), want: 0},
		{name: "max_child_depth default", got: bp.Subagents.MaxChildDepth, want: DefaultMaxChildDepth},
		{name: "max_children default is the host's cap", got: bp.Subagents.MaxChildren, want: 0},
		{name: "not detached", got: bp.Subagents.Detached, want: false},
		{name: "any blueprint spawnable", got: bp.Subagents.Spawnable == nil, want: true},
		{name: "no spawn refs", got: len(bp.SpawnRefs), want: 0},
		{name: "accepts messages", got: bp.Stages[0].AcceptsMessages, want: true},
		{name: "not a fan_out stage", got: bp.Stages[0].FanOut == nil, want: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.got != tt.want {
				t.Errorf("got %v, want %v", tt.got, tt.want)
			}
		})
	}
}

func TestErrorsWrapSentinels(t *testing.T) {
	tests := []struct {
		file string
		want []error
	}{
		{file: "missing_name", want: []error{ErrMissingKey}},
		{file: "bad_name", want: []error{ErrInvalidName}},
		{file: "no_stages", want: []error{ErrNoStages}},
		{file: "duplicate_stage", want: []error{ErrDuplicateStage}},
		{file: "unknown_entry", want: []error{ErrUnknownStage}},
		{file: "unknown_tool", want: []error{ErrUnknownTool}},
		{file: "duplicate_tool", want: []error{ErrDuplicateTool}},
		{file: "max_iterations_range", want: []error{ErrOutOfRange}},
		{file: "unknown_on", want: []error{ErrUnknownCondition}},
		{file: "unknown_stage", want: []error{ErrUnknownStage}},
		{file: "bad_verdict", want: []error{policy.ErrBadVerdict}},
		{file: "permission_unknown_tool", want: []error{ErrUnknownTool, policy.ErrBadVerdict}},
		{file: "unknown_keys", want: []error{tomlfile.ErrUnknownKey}},
		{file: "wrong_type", want: []error{tomlfile.ErrType}},
		{file: "syntax", want: []error{tomlfile.ErrSyntax}},
		{file: "subagents_out_of_range", want: []error{ErrOutOfRange}},
		{file: "subagents_unknown_key", want: []error{tomlfile.ErrUnknownKey}},
		{file: "subagents_wrong_type", want: []error{tomlfile.ErrType}},
		{file: "spawnable_bad_entries", want: []error{ErrInvalidName, ErrDuplicateBlueprint}},
		{file: "accepts_messages_wrong_type", want: []error{tomlfile.ErrType}},
		{file: "fan_out_out_of_range", want: []error{ErrOutOfRange}},
		{file: "fan_out_bad_policy", want: []error{ErrUnknownFailurePolicy}},
		{file: "fan_out_not_local", want: []error{ErrNotLocalPath}},
		{file: "fan_out_missing_keys", want: []error{ErrMissingKey}},
		{file: "fan_out_empty_blueprint", want: []error{ErrInvalidName}},
		{file: "fan_out_not_available", want: []error{ErrFanOutUnavailable}},
		{file: "fan_out_not_spawnable", want: []error{ErrNotSpawnable}},
		{file: "fan_out_depth_zero", want: []error{ErrNotSpawnable}},
		{file: "fan_out_unknown_key", want: []error{tomlfile.ErrUnknownKey}},
		{file: "fan_out_wrong_type", want: []error{tomlfile.ErrType}},
		{file: "sandbox_values", want: []error{sandbox.ErrUnknownMode, sandbox.ErrUnknownFallback, hostconfig.ErrNotAbsolute, hostconfig.ErrBadDuration, hostconfig.ErrBadSize, hostconfig.ErrOutOfRange, hostconfig.ErrBadEnvName}},
		{file: "sandbox_unknown_key", want: []error{tomlfile.ErrUnknownKey, hostconfig.ErrOutOfRange}},
		{file: "sandbox_wrong_type", want: []error{tomlfile.ErrType}},
		{file: "many_errors", want: []error{
			ErrInvalidName, ErrUnknownStage, ErrOutOfRange, tomlfile.ErrUnknownKey, policy.ErrBadVerdict,
			ErrUnknownTool, ErrUnknownCondition, ErrDuplicateStage,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			_, err := Load(filepath.Join("testdata", "bad", tt.file+".toml"), testTools)
			for _, want := range tt.want {
				if !errors.Is(err, want) {
					t.Errorf("errors.Is(%v, %v) = false", err, want)
				}
			}
		})
	}
}

func TestLoadMissingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "absent.toml")
	_, err := Load(path, testTools)
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("err = %v, want fs.ErrNotExist", err)
	}
	if want := path + ": file does not exist"; err == nil || err.Error() != want {
		t.Errorf("err = %v, want %q", err, want)
	}
}

func TestNoKnownTools(t *testing.T) {
	_, err := Parse("n.toml", []byte("name = \"n\"\n[[stages]]\nname = \"a\"\navailable_tools = [\"shell\"]\n"), nil)
	want := `n.toml:4:20: stages[0].available_tools[0]: unknown tool "shell"; valid tools: none`
	if err == nil || err.Error() != want {
		t.Errorf("err = %v, want %q", err, want)
	}
}

const threeStages = `name = "flow"
[[stages]]
name = "a"
available_tools = ["shell", "read_file"]
[[stages.transitions]]
on = "error"
to = "c"
[[stages.transitions]]
on = "done"
to = "b"
[[stages.transitions]]
on = "always"
to = "a"
[[stages]]
name = "b"
[[stages.transitions]]
on = "max_iterations"
to = "a"
[[stages]]
name = "c"
`

func TestStageNext(t *testing.T) {
	bp, err := Parse("flow.toml", []byte(threeStages), testTools)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		stage   int
		outcome Outcome
		to      int
		ok      bool
	}{
		{name: "first match wins over always", stage: 0, outcome: OutcomeError, to: 2, ok: true},
		{name: "done", stage: 0, outcome: OutcomeDone, to: 1, ok: true},
		{name: "always catches the rest", stage: 0, outcome: OutcomeMaxIterations, to: 0, ok: true},
		{name: "max_iterations", stage: 1, outcome: OutcomeMaxIterations, to: 0, ok: true},
		{name: "no match ends the run", stage: 1, outcome: OutcomeDone, to: -1, ok: false},
		{name: "no transitions", stage: 2, outcome: OutcomeDone, to: -1, ok: false},
		{name: "invalid outcome only matches always", stage: 1, outcome: 0, to: -1, ok: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			to, ok := bp.Stages[tt.stage].Next(tt.outcome)
			if to != tt.to || ok != tt.ok {
				t.Errorf("Next(%v) = %d, %v; want %d, %v", tt.outcome, to, ok, tt.to, tt.ok)
			}
		})
	}
}

func TestStageAdvertises(t *testing.T) {
	bp, err := Parse("flow.toml", []byte(threeStages), testTools)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		stage string
		tool  string
		want  bool
	}{
		{name: "listed", stage: "a", tool: "shell", want: true},
		{name: "listed second", stage: "a", tool: "read_file", want: true},
		{name: "known but not listed", stage: "a", tool: "write_file", want: false},
		{name: "stage without tools", stage: "b", tool: "shell", want: false},
		{name: "empty name", stage: "a", tool: "", want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, ok := bp.Stage(tt.stage)
			if !ok {
				t.Fatalf("Stage(%q) not found", tt.stage)
			}
			if got := st.Advertises(tt.tool); got != tt.want {
				t.Errorf("Advertises(%q) = %v, want %v", tt.tool, got, tt.want)
			}
		})
	}
	if _, ok := bp.Stage("missing"); ok {
		t.Error(`Stage("missing") found a stage`)
	}
	if got := bp.Stages[0].AvailableTools; !slices.Equal(got, []string{"read_file", "shell"}) {
		t.Errorf("AvailableTools = %v, want sorted [read_file shell]", got)
	}
}

func TestStrings(t *testing.T) {
	tests := []struct {
		name string
		got  fmt.Stringer
		want string
	}{
		{name: "outcome done", got: OutcomeDone, want: "done"},
		{name: "outcome error", got: OutcomeError, want: "error"},
		{name: "outcome max_iterations", got: OutcomeMaxIterations, want: "max_iterations"},
		{name: "outcome zero", got: Outcome(0), want: "Outcome(0)"},
		{name: "on done", got: OnDone, want: "done"},
		{name: "on error", got: OnError, want: "error"},
		{name: "on max_iterations", got: OnMaxIterations, want: "max_iterations"},
		{name: "on always", got: OnAlways, want: "always"},
		{name: "on invalid", got: On(9), want: "On(9)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if s := tt.got.String(); s != tt.want {
				t.Errorf("String() = %q, want %q", s, tt.want)
			}
		})
	}
	for on := OnDone; on <= OnAlways; on++ {
		if parsed, ok := parseOn(on.String()); !ok || parsed != on {
			t.Errorf("parseOn(%q) = %v, %v", on, parsed, ok)
		}
	}
}

// FuzzParse checks that no input makes Parse panic, that failures are
// positioned tomlfile.Errors naming the file, and that every blueprint it
// accepts satisfies the compiled invariants. Run it for a while with:
//
//	go test -run '^$' -fuzz FuzzParse -fuzztime 30s ./blueprint
func FuzzParse(f *testing.F) {
	for _, dir := range []string{"good", "bad"} {
		for _, file := range golden.Corpus(f, dir, "*.toml") {
			data, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(data)
		}
	}
	f.Add([]byte(threeStages))
	f.Fuzz(func(t *testing.T, data []byte) {
		bp, err := Parse("fuzz.toml", data, testTools)
		if err != nil {
			if bp != nil {
				t.Fatal("blueprint returned with an error")
			}
			var errs tomlfile.Errors
			if !errors.As(err, &errs) || len(errs) == 0 {
				t.Fatalf("error %T is not tomlfile.Errors: %v", err, err)
			}
			for _, e := range errs {
				if e.File != "fuzz.toml" || e.Msg == "" {
					t.Errorf("badly formed error %q", e)
				}
			}
			return
		}
		checkInvariants(t, bp)
	})
}

const planner = `name = "planner"
[subagents]
spawnable = ["worker", "critic"]
[[stages]]
name = "split"
available_tools = ["fan_out"]
fan_out = { blueprint = "worker", items_file = "items.txt" }
[[stages]]
name = "review"
available_tools = ["fan_out"]
[stages.fan_out]
items_file = "items.txt"
blueprint = "critic"
`

func TestSpawnRefs(t *testing.T) {
	bp, err := Parse("planner.toml", []byte(planner), testTools)
	if err != nil {
		t.Fatal(err)
	}
	want := []SpawnRef{
		{Key: "worker", Where: "planner.toml:3:14: subagents.spawnable[0]"},
		{Key: "critic", Where: "planner.toml:3:24: subagents.spawnable[1]"},
		{Key: "worker", Where: "planner.toml:7:13: stages[0].fan_out.blueprint"},
		{Key: "critic", Where: "planner.toml:13:1: stages[1].fan_out.blueprint"},
	}
	if !slices.Equal(bp.SpawnRefs, want) {
		t.Errorf("SpawnRefs = %q\nwant %q", bp.SpawnRefs, want)
	}
	if got := bp.SpawnKeys(); !slices.Equal(got, []string{"critic", "worker"}) {
		t.Errorf("SpawnKeys() = %v, want [critic worker]", got)
	}
	// Where is exactly the prefix tomlfile gives an error at the same value.
	bad := strings.Replace(planner, `["worker", "critic"]`, `["worker", "critic", "worker"]`, 1)
	_, err = Parse("planner.toml", []byte(bad), testTools)
	if prefix := "planner.toml:3:34: subagents.spawnable[2]: "; err == nil || !strings.HasPrefix(err.Error(), prefix) {
		t.Errorf("err = %v, want prefix %q", err, prefix)
	}
	minimal, err := Parse("m.toml", []byte("name = \"m\"\n[[stages]]\nname = \"a\"\n"), testTools)
	if err != nil {
		t.Fatal(err)
	}
	if minimal.SpawnRefs != nil || len(minimal.SpawnKeys()) != 0 {
		t.Errorf("a blueprint naming no keys has refs %v, keys %v", minimal.SpawnRefs, minimal.SpawnKeys())
	}
}

func TestMaySpawn(t *testing.T) {
	tests := []struct {
		name      string
		spawnable []string
		key       string
		want      bool
	}{
		{name: "absent list allows any", spawnable: nil, key: "worker", want: true},
		{name: "empty list allows none", spawnable: []string{}, key: "worker", want: false},
		{name: "listed", spawnable: []string{"critic", "worker"}, key: "worker", want: true},
		{name: "listed first", spawnable: []string{"critic", "worker"}, key: "critic", want: true},
		{name: "not listed", spawnable: []string{"critic", "worker"}, key: "planner", want: false},
		{name: "prefix is not a match", spawnable: []string{"worker"}, key: "work", want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sa := Subagents{Spawnable: tt.spawnable}
			if got := sa.MaySpawn(tt.key); got != tt.want {
				t.Errorf("MaySpawn(%q) = %v, want %v", tt.key, got, tt.want)
			}
		})
	}
}

func TestFanOutNotOffered(t *testing.T) {
	src := "name = \"s\"\n[[stages]]\nname = \"a\"\n[stages.fan_out]\nblueprint = \"w\"\nitems_file = \"i.txt\"\n"
	_, err := Parse("s.toml", []byte(src), []string{"read_file"})
	want := `s.toml:4:9: stages[0].fan_out: fan_out tool not available; the host does not offer the fan_out tool (valid tools: read_file)`
	if err == nil || err.Error() != want {
		t.Errorf("err = %v\nwant %s", err, want)
	}
	if !errors.Is(err, ErrFanOutUnavailable) {
		t.Errorf("errors.Is(%v, ErrFanOutUnavailable) = false", err)
	}
}
