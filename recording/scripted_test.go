package recording

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/pelletier/go-toml/v2"

	"github.com/warrenhq/warren/models"
	"github.com/warrenhq/warren/trace"
)

// liveTurns is a recorded run of two live models: three agents on openai:live (one retried
// after a 429, one whose final attempt failed too, text with newlines, quotes and template
// braces, arguments with nested objects, arrays of tables, nulls and floats) and one on
// openai:other.
var liveTurns = []ModelTurn{
	{Agent: "w-0", Turn: 0, Model: "openai:live", Text: "I write.", Calls: []ModelCall{
		{ID: "call_1", Name: "write_file", Args: json.RawMessage(`{"path":"a.md","content":"line 1\nline 2 \"quoted\" {{.Name}}\n"}`)}}},
	{Agent: "w-0", Turn: 1, Model: "openai:live", Text: "Done.\nAll 'good'."},
	{Agent: "w-1", Turn: 0, Attempt: 1, Model: "openai:live", Err: "429 too many requests", Status: 429, RetryAfterMS: 1000},
	{Agent: "w-1", Turn: 0, Attempt: 2, Model: "openai:live", Text: `tab	and "quotes" and \ backslash`, Calls: []ModelCall{
		{ID: "c0", Name: "plan", Args: json.RawMessage(`{"z":1,"a":{"deep":{"x":[1,2.5,"s"],"y":true},"empty":{}},"items":[{"n":1},{"n":2,"sub":{"k":"v"}}],"gone":null,"mixed":[{"a":1},2],"big":1e999,"name with space":"v"}`)},
		{ID: "c1", Name: "read_file", Args: json.RawMessage(`{}`)},
		{ID: "c2", Name: "odd", Args: json.RawMessage(`"not an object"`)}}},
	{Agent: "w-1", Turn: 1, Model: "openai:live", Text: "ok"},
	{Agent: "w-2", Turn: 0, Attempt: 1, Model: "openai:live", Err: "500 internal error", Status: 500},
	{Agent: "w-2", Turn: 0, Attempt: 2, Model: "openai:live", Err: "500 internal error", Status: 500},
	{Agent: "x-0", Turn: 0, Model: "openai:other", Text: "other {{ braces }}", Calls: []ModelCall{
		{ID: "c", Name: "write_file", Args: json.RawMessage(`{"path":"x.md","content":"x"}`)}}},
}

// writeTape records turns (in the order given) and reads the recording back.
func writeTape(t *testing.T, turns []ModelTurn) *Tape {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, Header{Scenario: "live", ScenarioFile: "/s/live.toml", ScenarioHash: "sha256:abc", Clock: "virtual", Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range turns {
		w.Model(uint64(i), m)
	}
	if err := w.Close("finished", "fixed_point"); err != nil {
		t.Fatal(err)
	}
	tape, err := Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	return tape
}

// compiled decodes one [models.<key>] table of a TOML document strictly, as the scenario loader
// does, and compiles it as the scripted kind.
func compiled(t *testing.T, doc []byte, key string) models.Model {
	t.Helper()
	var all struct {
		Models map[string]map[string]any `toml:"models"`
	}
	if err := toml.Unmarshal(doc, &all); err != nil {
		t.Fatalf("not TOML: %v\n%s", err, doc)
	}
	one, err := toml.Marshal(all.Models[key])
	if err != nil {
		t.Fatal(err)
	}
	var table struct {
		Kind string `toml:"kind"`
		models.ScriptedConfig
	}
	dec := toml.NewDecoder(bytes.NewReader(one))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&table); err != nil {
		t.Fatalf("[models.%s] does not decode: %v\n%s", key, err, doc)
	}
	if table.Kind != "scripted" {
		t.Fatalf("no scripted [models.%s] in\n%s", key, doc)
	}
	m, err := table.ScriptedConfig.Compile(&models.KindEnv{Key: key, Path: "models." + key, ID: "scripted:" + key})
	if err != nil {
		t.Fatalf("[models.%s] does not compile: %v\n%s", key, err, doc)
	}
	return m
}

// TestScriptReproducesTheRecordedAnswers: the tables a recording's live turns become, decoded and
// compiled as the scripted kind, give every agent the answers its final attempts gave, turn by
// turn: the same text, the same tools with the same arguments (as JSON values, nulls aside),
// the same failure; and then no more.
func TestScriptReproducesTheRecordedAnswers(t *testing.T) {
	tape := writeTape(t, liveTurns)
	s, err := tape.Script("r.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Models) != 2 || s.Models[0].Key != "live" || s.Models[0].Kind != "openai" || s.Models[0].Agents != 3 ||
		len(s.Models[0].Turns) != 5 || s.Models[1].Key != "other" || len(s.Models[1].Turns) != 1 {
		t.Fatalf("models %+v", s.Models)
	}
	retried := s.Models[0].Turns[2]
	if retried.Agent != "w-1" || retried.Attempts != 2 || !reflect.DeepEqual(retried.Retried, []string{"429 too many requests"}) {
		t.Errorf("the retried turn: %+v", retried)
	}
	wantNotes := []string{
		"agent w-1, turn 0, call 0 (plan): args.big is 1e999, out of range for a TOML number: written as a string",
		"agent w-1, turn 0, call 0 (plan): args.gone is null, which TOML cannot write: left out",
		"agent w-1, turn 0, call 2 (odd): its arguments are not a JSON object, so the script calls the tool with none ({})",
	}
	doc := s.Tables()
	if !bytes.Equal(doc, s.Tables()) {
		t.Fatal("Tables is not deterministic")
	}
	for key, agents := range map[string][]string{"live": {"w-0", "w-1", "w-2"}, "other": {"x-0"}} {
		m := compiled(t, doc, key)
		for i, agent := range agents {
			var st models.State
			var want []ModelTurn // the agent's final attempts, turn by turn
			for _, lt := range liveTurns {
				switch n := len(want); {
				case lt.Agent != agent:
				case n > 0 && want[n-1].Turn == lt.Turn:
					want[n-1] = lt // a later attempt at the same turn
				default:
					want = append(want, lt)
				}
			}
			for turn, w := range want {
				v := &models.View{Agent: models.AgentInfo{Name: agent, Index: i}, Stage: "s", Turn: turn}
				got, err := m.Turn(context.Background(), &st, v)
				if w.Err != "" {
					if !errors.Is(err, models.ErrScriptedFailure) || !strings.HasSuffix(err.Error(), ": "+w.Err) {
						t.Errorf("%s turn %d: %v, want the failure %q", agent, turn, err, w.Err)
					}
					continue
				}
				if err != nil {
					t.Fatalf("%s turn %d: %v", agent, turn, err)
				}
				if got.Text != w.Text || len(got.Calls) != len(w.Calls) {
					t.Fatalf("%s turn %d: %q with %d calls, want %q with %d", agent, turn, got.Text, len(got.Calls), w.Text, len(w.Calls))
				}
				for c := range w.Calls {
					if got.Calls[c].Name != w.Calls[c].Name || !sameArgs(t, w.Calls[c].Args, got.Calls[c].Args) {
						t.Errorf("%s turn %d call %d: %s %s, want %s %s", agent, turn, c, got.Calls[c].Name, got.Calls[c].Args, w.Calls[c].Name, w.Calls[c].Args)
					}
				}
			}
			v := &models.View{Agent: models.AgentInfo{Name: agent, Index: i}, Stage: "s", Turn: len(want)}
			if _, err := m.Turn(context.Background(), &st, v); !errors.Is(err, models.ErrScriptExhausted) {
				t.Errorf("%s after its %d turns: %v, want the script exhausted", agent, len(want), err)
			}
		}
	}
	if got := strings.Join(s.Notes, "\n"); got != strings.Join(wantNotes, "\n") {
		t.Errorf("notes:\n%s\nwant:\n%s", got, strings.Join(wantNotes, "\n"))
	}
}

// sameArgs compares recorded arguments with what the script sends, as JSON values: nulls are
// left out of the script, a number out of float64's range is sent as its text, and arguments
// that are not an object are sent as {}.
func sameArgs(t *testing.T, recorded, sent json.RawMessage) bool {
	t.Helper()
	decode := func(raw json.RawMessage) (any, error) {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		var v any
		err := dec.Decode(&v)
		return numbers(v), err
	}
	want, err := decode(recorded)
	if err != nil {
		return false
	}
	got, err := decode(sent)
	if err != nil {
		t.Fatalf("the script sends arguments that are not JSON: %s", sent)
	}
	obj, ok := want.(map[string]any)
	if !ok {
		return string(sent) == "{}"
	}
	delete(obj, "gone")
	if _, ok := obj["big"]; ok {
		obj["big"] = "1e999"
	}
	return reflect.DeepEqual(obj, got)
}

// numbers turns the json.Numbers of a decoded value into float64, where they fit one.
func numbers(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			v[k] = numbers(e)
		}
	case []any:
		for i, e := range v {
			v[i] = numbers(e)
		}
	case json.Number:
		if f, err := v.Float64(); err == nil {
			return f
		}
		return v.String()
	}
	return v
}

// TestScriptTables pins down how the tables read: a comment naming the agent, turn, stage and
// attempts over every turn, text with newlines as a multi-line literal string, other text as a
// basic string, template braces escaped, arguments as tables with sorted keys (nested objects as
// sub-tables, arrays of objects as arrays of tables), and the same text whatever order the
// recording's lines came in.
func TestScriptTables(t *testing.T) {
	s, err := writeTape(t, liveTurns).Script("r.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	s.Models[0].Turns[0].Stage = "write"
	doc := string(s.Tables())
	for _, want := range []string{
		"# [models.live] was a live model (openai:live): these are the 5 turns its 3 agents had in r.jsonl\n",
		"[models.live]\nkind = \"scripted\"\nwhen_exhausted = \"fail\"",
		"\n  # w-0, turn 0, stage \"write\"\n  [[models.live.turns]]\n  agent = \"w-0\"\n  stage = \"write\"\n  text = \"I write.\"\n" +
			"    [[models.live.turns.calls]]\n    tool = \"write_file\"\n      [models.live.turns.calls.args]\n" +
			"      content = '''\nline 1\nline 2 \"quoted\" {{`{{`}}.Name}}\n'''\n      path = \"a.md\"\n",
		"  text = '''\nDone.\nAll 'good'.'''\n",
		"  # w-1, turn 0, attempt 2 (retried after: 429 too many requests)\n",
		`  text = "tab\tand \"quotes\" and \\ backslash"` + "\n",
		"      [models.live.turns.calls.args]\n      big = \"1e999\"\n      mixed = [{ a = 1 }, 2]\n      \"name with space\" = \"v\"\n      z = 1\n" +
			"        [models.live.turns.calls.args.a]\n        empty = {}\n          [models.live.turns.calls.args.a.deep]\n          x = [1, 2.5, \"s\"]\n          y = true\n" +
			"        [[models.live.turns.calls.args.items]]\n        n = 1\n        [[models.live.turns.calls.args.items]]\n        n = 2\n" +
			"          [models.live.turns.calls.args.items.sub]\n          k = \"v\"\n",
		"    tool = \"read_file\"\n    [[models.live.turns.calls]]\n    tool = \"odd\"\n    # recorded arguments, not a JSON object: \"not an object\"\n",
		"  # w-2, turn 0, attempt 2 (retried after: 500 internal error): the model failed\n  [[models.live.turns]]\n  agent = \"w-2\"\n  error = \"500 internal error\"\n",
		"\n# [models.other] was a live model (openai:other)",
		"text = \"other {{`{{`}} braces }}\"",
		"# [models.other] was a live model (openai:other): these are the 1 turn its 1 agent had in r.jsonl\n",
	} {
		if !strings.Contains(doc, want) {
			t.Errorf("the tables lack\n%s\n--- in ---\n%s", want, doc)
		}
	}
	reversed := append([]ModelTurn(nil), liveTurns...)
	for i, j := 0, len(reversed)-1; i < j; i, j = i+1, j-1 {
		reversed[i], reversed[j] = reversed[j], reversed[i]
	}
	s2, err := writeTape(t, reversed).Script("r.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	s2.Models[0].Turns[0].Stage = "write"
	if string(s2.Tables()) != doc {
		t.Errorf("the order of the recording's lines changed the tables:\n%s", s2.Tables())
	}
}

// TestScriptRefusesWhatIsNotALiveRun: a recording with no live turns, or whose turns name no
// model, is no script.
func TestScriptRefusesWhatIsNotALiveRun(t *testing.T) {
	_, err := writeTape(t, nil).Script("r.jsonl")
	if !errors.Is(err, ErrNoLiveTurns) || !strings.Contains(err.Error(), "its run asked no model of a live kind") {
		t.Errorf("no live turns: %v", err)
	}
	_, err = writeTape(t, []ModelTurn{{Agent: "a", Text: "old"}}).Script("r.jsonl")
	if !errors.Is(err, ErrBadRecording) || !strings.Contains(err.Error(), "agent a's model turn 0 names no model") {
		t.Errorf("no model named: %v", err)
	}
}

// traceOf is a trace of the run liveTurns recorded: its model_turn events, an injected fault
// among them that no live model answered.
func traceOf(hash string) string {
	var head strings.Builder
	w, _ := trace.NewWriter(&head, trace.Header{Scenario: "live", ScenarioHash: hash, Seed: 5, Clock: trace.ClockVirtual})
	_ = w.Close()
	lines := []string{strings.TrimSuffix(head.String(), "\n")}
	seq := 0
	ev := func(name, stage, text string, calls int, errText string) {
		seq++
		e := fmt.Sprintf(`{"tick":1,"seq":%d,"agent":1,"name":%q,"kind":"model_turn","stage":%q,"model":"openai:live","iteration":0,"text":%q,"calls":%d`, seq, name, stage, text, calls)
		if errText != "" {
			e += fmt.Sprintf(`,"error":%q`, errText)
		}
		lines = append(lines, e+"}")
	}
	ev("w-0", "write", "I write.", 1, "")
	ev("w-0", "check", "Done.\nAll 'good'.", 0, "")
	ev("w-1", "write", "", 0, "injected model failure")
	ev("w-1", "retry", `tab	and "quotes" and \ backslash`, 3, "")
	ev("w-1", "retry", "ok", 0, "")
	ev("w-2", "write", "", 0, "something else")
	lines = append(lines, `{"tick":2,"seq":7,"agent":0,"name":"","kind":"end","status":"finished"}`)
	return strings.Join(lines, "\n") + "\n"
}

// TestScriptStagesFromTheTrace: the trace tells each turn's stage, matched by what the turn
// answered, so an injected fault in between is passed over; a turn the trace does not show keeps
// no stage, with a note; a trace of another run is refused.
func TestScriptStagesFromTheTrace(t *testing.T) {
	s, err := writeTape(t, liveTurns).Script("r.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.AddStages(strings.NewReader(traceOf("sha256:abc"))); err != nil {
		t.Fatal(err)
	}
	var stages []string
	for _, turn := range s.Models[0].Turns {
		stages = append(stages, turn.Agent+":"+turn.Stage)
	}
	if got := strings.Join(stages, " "); got != "w-0:write w-0:check w-1:retry w-1:retry w-2:" {
		t.Errorf("stages %s", got)
	}
	notes := strings.Join(s.Notes, "\n")
	for _, agent := range []string{"w-2", "x-0"} {
		if !strings.Contains(notes, "agent "+agent+": its turn 0 has no matching model_turn in the trace, so it and the turns after it assert no stage") {
			t.Errorf("no note on %s's turn:\n%s", agent, notes)
		}
	}
	if !strings.Contains(string(s.Tables()), "  # w-1, turn 1, stage \"retry\"\n  [[models.live.turns]]\n  agent = \"w-1\"\n  stage = \"retry\"\n") {
		t.Errorf("the tables do not assert the stages:\n%s", s.Tables())
	}
	other, _ := writeTape(t, liveTurns).Script("r.jsonl")
	if err := other.AddStages(strings.NewReader(traceOf("sha256:else"))); err == nil || !strings.Contains(err.Error(), "the trace is of another run") {
		t.Errorf("another run's trace: %v", err)
	}
}

// scenarioSrc is a scenario with a live model among other tables, comments and odd spacing.
const scenarioSrc = `# A live scenario.
name = "live"   # its name
seed = 5

[blueprints]
writer = "writer.toml"

# The live model: replaced.
[models.live]
kind = "openai"        # a live kind
model = "fake-1"
system_prompt = """
You write notes.
"""
  [models.live.extra]
  a = 1

# A scripted model stays.
[models.s]
kind = "scripted"
  [[models.s.turns]]
  text = "hi"

[models.other]
kind = "openai"
model = "fake-2"

[[groups]]
name = "writers"
model = "live"
`

// TestScriptSplice: the scenario comes back with its live models' tables (and their
// sub-tables) replaced where they stood, every other byte as it was, and loads with the same
// values but for those models; a scenario without the recorded model, or with it of another
// kind, is refused naming both; one whose model is dotted keys gets the tables at its end.
func TestScriptSplice(t *testing.T) {
	s, err := writeTape(t, liveTurns).Script("r.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.Splice("live.toml", []byte(scenarioSrc))
	if err != nil {
		t.Fatal(err)
	}
	got := string(out)
	head := scenarioSrc[:strings.Index(scenarioSrc, "[models.live]")]
	if !strings.HasPrefix(got, head+"# [models.live] was a live model") {
		t.Fatalf("the text before the live table changed:\n%s", got)
	}
	mid := "\n# A scripted model stays.\n[models.s]\nkind = \"scripted\"\n  [[models.s.turns]]\n  text = \"hi\"\n\n# [models.other] was a live model"
	if !strings.Contains(got, mid) {
		t.Errorf("the text between the live tables changed:\n%s", got)
	}
	if !strings.HasSuffix(got, "\n\n[[groups]]\nname = \"writers\"\nmodel = \"live\"\n") {
		t.Errorf("the text after the live tables changed:\n%s", got)
	}
	for _, gone := range []string{"fake-1", "You write notes", "extra", "fake-2"} {
		if strings.Contains(got, gone) {
			t.Errorf("%q of a live table is still there", gone)
		}
	}
	compiled(t, out, "live")

	_, err = s.Splice("x.toml", []byte("name = \"x\"\n[models.live]\nkind = \"openai\"\n"))
	if err == nil || err.Error() != "x.toml has no [models.other] table, which the recording's turns of model openai:other come from; give the scenario that was recorded (/s/live.toml)" {
		t.Errorf("a missing table: %v", err)
	}
	_, err = s.Splice("x.toml", []byte("[models.live]\nkind = \"js\"\n[models.other]\nkind = \"openai\"\n"))
	if err == nil || !strings.Contains(err.Error(), `x.toml: [models.live] is kind "js", but the recording's turns are of model openai:live (kind "openai")`) {
		t.Errorf("another kind: %v", err)
	}
	_, err = s.Splice("x.toml", []byte("[models.live\n"))
	if err == nil || !strings.HasPrefix(err.Error(), "x.toml is not a TOML file: ") {
		t.Errorf("not TOML: %v", err)
	}

	dotted := "name = \"d\"\n\n[models]\nlive.kind = \"openai\"\nlive.model = \"m\"  # dotted\nother = { kind = \"openai\", model = \"m\" }\nkept = { kind = \"scripted\" }\n"
	out, err = s.Splice("d.toml", []byte(dotted))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(out), "name = \"d\"\n\n[models]\nkept = { kind = \"scripted\" }\n\n# [models.live] was a live model") {
		t.Errorf("dotted keys:\n%s", out)
	}
	compiled(t, out, "other")
}
