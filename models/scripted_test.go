package models

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/pelletier/go-toml/v2"
)

// testView returns the view of agent "worker-2" (group "workers", index 2) at a given
// stage and run turn.
func testView(stage string, turn int) *View {
	return &View{
		Agent:     AgentInfo{ID: 7, Name: "worker-2", Group: "workers", Index: 2},
		Stage:     stage,
		Iteration: 1,
		Visit:     3,
		Turn:      turn,
	}
}

func mustScripted(t testing.TB, turns []ScriptedTurn, when WhenExhausted) *Scripted {
	t.Helper()
	s, err := NewScripted("scripted:test", turns, when)
	if err != nil {
		t.Fatalf("NewScripted: %v", err)
	}
	return s
}

func TestNewScriptedRejectsBadScripts(t *testing.T) {
	tests := []struct {
		name  string
		turns []ScriptedTurn
		when  WhenExhausted
		id    string
		want  string // substring of the error
	}{
		{"empty id", nil, ExhaustedFail, "", "model id must not be empty"},
		{"unknown policy", nil, WhenExhausted(9), "m", "when_exhausted(9)"},
		{"repeat nothing", nil, ExhaustedRepeatLast, "m", `"repeat_last" needs at least one turn`},
		{"unclosed text template", []ScriptedTurn{{Text: "hi {{.Name"}}, ExhaustedFail, "m", "turn 1: text: template:"},
		{"unknown field in simple template", []ScriptedTurn{{Text: "ok"}, {Text: "{{.Nmae}}"}}, ExhaustedFail, "m", "turn 2: text: template:"},
		{
			"unknown field in general template",
			[]ScriptedTurn{{Calls: []ScriptedCall{{Tool: "t", Args: map[string]any{"p": `{{printf "%s" .Nmae}}`}}}}},
			ExhaustedFail, "m", "turn 1: calls[0].args.p: template:",
		},
		{
			"bad template deep in args",
			[]ScriptedTurn{{}, {}, {Calls: []ScriptedCall{{Tool: "a"}, {Tool: "b", Args: map[string]any{
				"opts": map[string]any{"paths": []any{"ok", "{{.Name"}},
			}}}}},
			ExhaustedFail, "m", "turn 3: calls[1].args.opts.paths[1]: template:",
		},
		{"empty tool", []ScriptedTurn{{Calls: []ScriptedCall{{Tool: ""}}}}, ExhaustedFail, "m", "turn 1: calls[0].tool: must not be empty"},
		{
			"NaN argument",
			[]ScriptedTurn{{Calls: []ScriptedCall{{Tool: "t", Args: map[string]any{"x": math.NaN()}}}}},
			ExhaustedFail, "m", "turn 1: calls[0].args.x: json: unsupported value: NaN",
		},
		{
			"unsupported struct argument",
			[]ScriptedTurn{{Calls: []ScriptedCall{{Tool: "t", Args: map[string]any{"x": struct{ A int }{1}}}}}},
			ExhaustedFail, "m", "turn 1: calls[0].args.x: unsupported argument type",
		},
		{
			"non-string map keys",
			[]ScriptedTurn{{Calls: []ScriptedCall{{Tool: "t", Args: map[string]any{"x": map[int]any{1: "a"}}}}}},
			ExhaustedFail, "m", "turn 1: calls[0].args.x: unsupported map key type int",
		},
		{"failure with text", []ScriptedTurn{{Error: "boom", Text: "hi"}}, ExhaustedFail, "m", "turn 1: error: a failing turn cannot also have text or calls"},
		{"failure with calls", []ScriptedTurn{{Error: "boom", Calls: []ScriptedCall{{Tool: "t"}}}}, ExhaustedFail, "m", "turn 1: error:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := NewScripted(tt.id, tt.turns, tt.when)
			if !errors.Is(err, ErrInvalidScript) {
				t.Fatalf("NewScripted = %v, %v; want an error wrapping ErrInvalidScript", s, err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not contain %q", err, tt.want)
			}
		})
	}
}

func TestScriptedConsumesTurnsInOrder(t *testing.T) {
	s := mustScripted(t, []ScriptedTurn{
		{Text: "planning", Calls: []ScriptedCall{{Tool: "read_file", Args: map[string]any{"path": "README.md"}}}},
		{Text: "two calls", Calls: []ScriptedCall{{Tool: "ls"}, {Tool: "grep", Args: map[string]any{"pattern": "x", "n": int64(3)}}}},
		{Text: "done"},
	}, ExhaustedFail)
	if s.ID() != "scripted:test" {
		t.Errorf("ID() = %q", s.ID())
	}
	var st State
	want := []Reply{
		{Text: "planning", Calls: []ToolCall{{ID: "worker-2-t0-c0", Name: "read_file", Args: json.RawMessage(`{"path":"README.md"}`)}}},
		{Text: "two calls", Calls: []ToolCall{
			{ID: "worker-2-t1-c0", Name: "ls", Args: json.RawMessage(`{}`)},
			{ID: "worker-2-t1-c1", Name: "grep", Args: json.RawMessage(`{"n":3,"pattern":"x"}`)},
		}},
		{Text: "done"},
	}
	for turn, w := range want {
		got, err := s.Turn(context.Background(), &st, testView("build", turn))
		if err != nil {
			t.Fatalf("turn %d: %v", turn, err)
		}
		assertReply(t, turn, got, w)
		if st.Cursor != int32(turn+1) {
			t.Errorf("after turn %d cursor = %d, want %d", turn, st.Cursor, turn+1)
		}
	}
}

func assertReply(t *testing.T, turn int, got, want Reply) {
	t.Helper()
	if got.Text != want.Text {
		t.Errorf("turn %d text = %q, want %q", turn, got.Text, want.Text)
	}
	if len(got.Calls) != len(want.Calls) {
		t.Fatalf("turn %d has %d calls, want %d: %+v", turn, len(got.Calls), len(want.Calls), got.Calls)
	}
	for i := range want.Calls {
		g, w := got.Calls[i], want.Calls[i]
		if g.ID != w.ID || g.Name != w.Name || !bytes.Equal(g.Args, w.Args) {
			t.Errorf("turn %d call %d = {%s %s %s}, want {%s %s %s}", turn, i, g.ID, g.Name, g.Args, w.ID, w.Name, w.Args)
		}
	}
}

func TestScriptedConstantArgsAreShared(t *testing.T) {
	s := mustScripted(t, []ScriptedTurn{{Calls: []ScriptedCall{{Tool: "t", Args: map[string]any{"a": "b"}}}}}, ExhaustedRepeatLast)
	var st State
	first, _ := s.Turn(context.Background(), &st, testView("s", 0))
	second, _ := s.Turn(context.Background(), &st, testView("s", 1))
	if &first.Calls[0].Args[0] != &second.Calls[0].Args[0] {
		t.Error("constant arguments were re-encoded; want one shared encoding")
	}
}

func TestScriptedTemplates(t *testing.T) {
	tests := []struct {
		name     string
		text     string
		args     map[string]any
		wantText string
		wantArgs string
	}{
		{
			name:     "every field",
			text:     "{{.Name}} {{.Index}} {{.Group}} {{.Stage}} {{.Turn}} {{.Iteration}} {{.Visit}}",
			wantText: "worker-2 2 workers review 5 1 3",
		},
		{
			name:     "trim markers",
			text:     "a {{- .Name -}} b",
			wantText: "aworker-2b",
		},
		{
			name:     "general template",
			text:     `{{printf "%03d" .Index}}{{if eq .Stage "review"}}!{{end}}`,
			wantText: "002!",
		},
		{
			name: "nested args mix constants and templates",
			args: map[string]any{
				"path":  "/work/{{.Name}}/{{.Turn}}.txt",
				"flags": []any{"-n", "{{.Index}}", int64(4), true},
				"opts":  map[string]any{"z": 1.5, "a": map[string]any{"who": "{{.Group}}"}, "k": nil},
				"const": map[string]any{"y": "b", "x": []any{"a"}},
			},
			wantArgs: `{"const":{"x":["a"],"y":"b"},"flags":["-n","2",4,true],"opts":{"a":{"who":"workers"},"k":null,"z":1.5},"path":"/work/worker-2/5.txt"}`,
		},
		{
			name:     "rendered strings are escaped like encoding/json",
			args:     map[string]any{"s": "{{.Name}} \"q\" <&> é \n\u2028"},
			wantArgs: `{"s":"worker-2 \"q\" \u003c\u0026\u003e é \n\u2028"}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			turn := ScriptedTurn{Text: tt.text}
			if tt.args != nil {
				turn.Calls = []ScriptedCall{{Tool: "t", Args: tt.args}}
			}
			s := mustScripted(t, []ScriptedTurn{turn}, ExhaustedFail)
			got, err := s.Turn(context.Background(), &State{}, testView("review", 5))
			if err != nil {
				t.Fatal(err)
			}
			if got.Text != tt.wantText {
				t.Errorf("text = %q, want %q", got.Text, tt.wantText)
			}
			if tt.args == nil {
				return
			}
			if string(got.Calls[0].Args) != tt.wantArgs {
				t.Errorf("args = %s\nwant   %s", got.Calls[0].Args, tt.wantArgs)
			}
			if !json.Valid(got.Calls[0].Args) {
				t.Errorf("args are not valid JSON: %s", got.Calls[0].Args)
			}
		})
	}
}

// The reflection-free renderer must print exactly what text/template prints.
func TestSimpleTemplatesMatchTextTemplate(t *testing.T) {
	sources := []string{
		"{{.Name}}",
		"pre {{.Index}}-{{.Group}}/{{.Stage}} t{{.Turn}} i{{.Iteration}} v{{.Visit}} post",
		"{{- .Name}} \n {{.Visit -}} \n x",
		"{{/* comment */}}{{.Turn}}",
	}
	data := templateData{Name: "ágent <1>", Index: -4, Group: "g", Stage: "s", Turn: 1234567, Iteration: 0, Visit: 10}
	for _, src := range sources {
		t.Run(src, func(t *testing.T) {
			tmpl, err := compileTemplate(src)
			if err != nil {
				t.Fatal(err)
			}
			if tmpl.segments == nil {
				t.Fatalf("%q did not take the segment path", src)
			}
			var got bytes.Buffer
			if err := tmpl.render(&got, &data); err != nil {
				t.Fatal(err)
			}
			general, err := compileTemplate(src + "{{if false}}{{end}}") // forces the general path
			if err != nil || general.general == nil {
				t.Fatalf("general form: %v", err)
			}
			var want bytes.Buffer
			if err := general.render(&want, &data); err != nil {
				t.Fatal(err)
			}
			if got.String() != want.String() {
				t.Errorf("segment render = %q, text/template = %q", got.String(), want.String())
			}
		})
	}
}

func TestAppendJSONStringMatchesEncodingJSON(t *testing.T) {
	inputs := []string{"", "plain", `"quoted"`, `back\slash`, "<a&b>", "tab\t nl\n", "\x00\x1f\x7f", "é ü 日本", "\u2028\u2029", "bad \xff utf8"}
	for _, in := range inputs {
		var got bytes.Buffer
		appendJSONString(&got, []byte(in))
		want, _ := json.Marshal(in)
		if got.String() != string(want) {
			t.Errorf("appendJSONString(%q) = %s, want %s", in, got.String(), want)
		}
	}
}

func TestScriptedRenderErrorNamesTurnAndPath(t *testing.T) {
	s := mustScripted(t, []ScriptedTurn{{}, {Calls: []ScriptedCall{{Tool: "t", Args: map[string]any{
		"p": "{{if .Name}}{{index .Name 99}}{{end}}",
	}}}}}, ExhaustedFail)
	st := State{Cursor: 1}
	_, err := s.Turn(context.Background(), &st, testView("s", 1))
	if err == nil || !strings.HasPrefix(err.Error(), "turn 2: calls[0].args.p: template:") {
		t.Fatalf("error = %v, want one naming turn 2 and calls[0].args.p", err)
	}
}

func TestScriptedStageAssertion(t *testing.T) {
	s := mustScripted(t, []ScriptedTurn{{Stage: "plan", Text: "ok"}, {Stage: "plan", Text: "again"}}, ExhaustedFail)
	var st State
	if got, err := s.Turn(context.Background(), &st, testView("plan", 0)); err != nil || got.Text != "ok" {
		t.Fatalf("matching stage: %+v, %v", got, err)
	}
	_, err := s.Turn(context.Background(), &st, testView("build", 1))
	if !errors.Is(err, ErrStageMismatch) {
		t.Fatalf("error = %v, want ErrStageMismatch", err)
	}
	want := `turn 2: scripted turn stage mismatch: the turn expects stage "plan" but agent "worker-2" is in stage "build"`
	if err.Error() != want {
		t.Errorf("error = %q\nwant    %q", err, want)
	}
	if st.Cursor != 2 {
		t.Errorf("cursor = %d, want 2 (a mismatched turn is consumed)", st.Cursor)
	}
}

func TestScriptedFailureTurn(t *testing.T) {
	s := mustScripted(t, []ScriptedTurn{{Error: "rate limited"}, {Text: "recovered"}}, ExhaustedFail)
	var st State
	_, err := s.Turn(context.Background(), &st, testView("s", 0))
	if !errors.Is(err, ErrScriptedFailure) || err.Error() != "scripted model failure: rate limited" {
		t.Fatalf("error = %v, want the scripted failure", err)
	}
	if got, err := s.Turn(context.Background(), &st, testView("s", 1)); err != nil || got.Text != "recovered" {
		t.Errorf("turn after failure = %+v, %v", got, err)
	}
}

func TestScriptedExhaustion(t *testing.T) {
	turns := []ScriptedTurn{
		{Text: "one"},
		{Text: "turn {{.Turn}}", Calls: []ScriptedCall{{Tool: "t", Args: map[string]any{"n": "{{.Turn}}"}}}},
	}
	t.Run("fail", func(t *testing.T) {
		s := mustScripted(t, turns, ExhaustedFail)
		st := State{Cursor: 2}
		for range 2 {
			_, err := s.Turn(context.Background(), &st, testView("s", 2))
			if !errors.Is(err, ErrScriptExhausted) || err.Error() != "scripted model ran out of turns after 2" {
				t.Fatalf("error = %v, want exhaustion after 2", err)
			}
		}
		if st.Cursor != 2 {
			t.Errorf("cursor = %d, want it to stay at 2", st.Cursor)
		}
	})
	t.Run("finish", func(t *testing.T) {
		s := mustScripted(t, turns, ExhaustedFinish)
		st := State{Cursor: 2}
		got, err := s.Turn(context.Background(), &st, testView("s", 2))
		if err != nil || got.Text != "" || len(got.Calls) != 0 {
			t.Fatalf("reply = %+v, %v; want an empty reply", got, err)
		}
	})
	t.Run("repeat last", func(t *testing.T) {
		s := mustScripted(t, turns, ExhaustedRepeatLast)
		st := State{Cursor: 2}
		for turn := 7; turn < 10; turn++ {
			got, err := s.Turn(context.Background(), &st, testView("s", turn))
			if err != nil {
				t.Fatal(err)
			}
			wantText := fmt.Sprintf("turn %d", turn)
			wantArgs := fmt.Sprintf(`{"n":"%d"}`, turn)
			if got.Text != wantText || string(got.Calls[0].Args) != wantArgs {
				t.Errorf("turn %d = %q %s, want %q %s", turn, got.Text, got.Calls[0].Args, wantText, wantArgs)
			}
		}
		if st.Cursor != 2 {
			t.Errorf("cursor = %d, want it to stay at 2", st.Cursor)
		}
	})
	t.Run("empty script fails at once", func(t *testing.T) {
		s := mustScripted(t, nil, ExhaustedFail)
		_, err := s.Turn(context.Background(), &State{}, testView("s", 0))
		if !errors.Is(err, ErrScriptExhausted) || !strings.HasSuffix(err.Error(), "after 0") {
			t.Errorf("error = %v", err)
		}
	})
}

func TestScriptedRejectsBadCalls(t *testing.T) {
	s := mustScripted(t, []ScriptedTurn{{Text: "x"}}, ExhaustedFail)
	if _, err := s.Turn(context.Background(), nil, testView("s", 0)); err == nil {
		t.Error("nil state: want an error")
	}
	if _, err := s.Turn(context.Background(), &State{}, nil); err == nil {
		t.Error("nil view: want an error")
	}
	if _, err := s.Turn(context.Background(), &State{Cursor: -1}, testView("s", 0)); err == nil || !strings.Contains(err.Error(), "cursor -1") {
		t.Errorf("negative cursor: error = %v", err)
	}
}

// Scripts come from TOML; the decoded types (int64, float64, dates, arrays of tables)
// must all encode.
func TestScriptedArgsFromTOML(t *testing.T) {
	src := `
path = "/w/{{.Name}}"
count = 3
ratio = 0.25
ok = true
day = 2024-05-01
list = [1, "two", {three = "{{.Index}}"}]
[[items]]
name = "a"
[[items]]
name = "{{.Stage}}"
`
	var args map[string]any
	if err := toml.Unmarshal([]byte(src), &args); err != nil {
		t.Fatal(err)
	}
	s := mustScripted(t, []ScriptedTurn{{Calls: []ScriptedCall{{Tool: "t", Args: args}}}}, ExhaustedFail)
	got, err := s.Turn(context.Background(), &State{}, testView("s1", 0))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"count":3,"day":"2024-05-01","items":[{"name":"a"},{"name":"s1"}],"list":[1,"two",{"three":"2"}],"ok":true,"path":"/w/worker-2","ratio":0.25}`
	if string(got.Calls[0].Args) != want {
		t.Errorf("args = %s\nwant   %s", got.Calls[0].Args, want)
	}
}

// One Scripted value serves every agent of a blueprint from many goroutines.
func TestScriptedConcurrentAgents(t *testing.T) {
	s := mustScripted(t, []ScriptedTurn{
		{Text: "{{.Name}}", Calls: []ScriptedCall{{Tool: "t", Args: map[string]any{"who": "{{.Name}}", "n": "{{.Turn}}"}}}},
		{Text: "done {{.Index}}"},
	}, ExhaustedFinish)
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for a := range 64 {
		wg.Go(func() {
			var st State
			name := fmt.Sprintf("a%d", a)
			for turn := range 3 {
				v := &View{Agent: AgentInfo{Name: name, Index: a}, Turn: turn}
				got, err := s.Turn(context.Background(), &st, v)
				if err != nil {
					errs <- err
					return
				}
				switch turn {
				case 0:
					want := fmt.Sprintf(`{"n":"0","who":"%s"}`, name)
					if got.Text != name || string(got.Calls[0].Args) != want || got.Calls[0].ID != name+"-t0-c0" {
						errs <- fmt.Errorf("agent %s turn 0 = %+v", name, got)
					}
				case 1:
					if got.Text != fmt.Sprintf("done %d", a) {
						errs <- fmt.Errorf("agent %s turn 1 = %q", name, got.Text)
					}
				case 2:
					if got.Text != "" || got.Calls != nil {
						errs <- fmt.Errorf("agent %s after the script = %+v", name, got)
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestScriptedManyCallIDs(t *testing.T) {
	calls := make([]ScriptedCall, 20)
	for i := range calls {
		calls[i] = ScriptedCall{Tool: "t"}
	}
	s := mustScripted(t, []ScriptedTurn{{Calls: calls}}, ExhaustedFail)
	got, err := s.Turn(context.Background(), &State{}, testView("s", 12))
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range got.Calls {
		if want := fmt.Sprintf("%s-t%d-c%d", "worker-2", 12, i); c.ID != want {
			t.Errorf("call %d id = %q, want %q", i, c.ID, want)
		}
	}
}

func TestScriptedTemplatedErrorFailsOnlySomeAgents(t *testing.T) {
	s := mustScripted(t, []ScriptedTurn{{
		Text:  "did {{.Task}}",
		Error: `{{if eq (mod .Index 3) 2}}item {{.Index}} is malformed{{end}}`,
	}}, ExhaustedFinish)
	for _, tc := range []struct {
		name    string
		index   int
		failure string
	}{
		{"index 0 works", 0, ""},
		{"index 2 fails", 2, "scripted model failure: item 2 is malformed"},
		{"index 4 works", 4, ""},
		{"index 5 fails", 5, "scripted model failure: item 5 is malformed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := testView("work", 0)
			v.Agent.Index = tc.index
			v.Messages = []Message{{Role: RoleUser, Content: "parent task"}, {Role: RoleAssistant, Content: "ok"}, {Role: RoleUser, Content: "item-x"}}
			reply, err := s.Turn(context.Background(), &State{}, v)
			if tc.failure != "" {
				if err == nil || err.Error() != tc.failure || !errors.Is(err, ErrScriptedFailure) {
					t.Fatalf("err = %v, want %q wrapping ErrScriptedFailure", err, tc.failure)
				}
				return
			}
			if err != nil || reply.Text != "did item-x" {
				t.Fatalf("reply %+v, err %v; want the text with .Task = the latest user message", reply, err)
			}
		})
	}
}

func TestScriptedRepeatAndArithmetic(t *testing.T) {
	s := mustScripted(t, []ScriptedTurn{
		{Repeat: 3, Calls: []ScriptedCall{{Tool: "spawn_agent", Args: map[string]any{"task": "part {{add .Iteration 1}}"}}}},
		{Text: `{{range seq 1 3}}{{.}};{{end}} {{sub 10 4}} {{mul 6 7}}`},
	}, ExhaustedFail)
	st := &State{}
	for i := range 3 {
		v := testView("plan", i)
		v.Iteration = i
		reply, err := s.Turn(context.Background(), st, v)
		if err != nil {
			t.Fatalf("turn %d: %v", i, err)
		}
		if want := fmt.Sprintf(`{"task":"part %d"}`, i+1); len(reply.Calls) != 1 || string(reply.Calls[0].Args) != want {
			t.Fatalf("turn %d: calls %+v, want args %s", i, reply.Calls, want)
		}
	}
	reply, err := s.Turn(context.Background(), st, testView("plan", 3))
	if err != nil || reply.Text != "1;2;3; 6 42" {
		t.Fatalf("fourth turn %q, %v; want the turn after the repeated one", reply.Text, err)
	}
	if _, err := s.Turn(context.Background(), st, testView("plan", 4)); !errors.Is(err, ErrScriptExhausted) || !strings.Contains(err.Error(), "after 4") {
		t.Fatalf("fifth turn: %v, want exhaustion after 4 turns", err)
	}
}

func TestScriptedRejectsBadRepeatAndFunctions(t *testing.T) {
	for _, tc := range []struct {
		name string
		turn ScriptedTurn
		want string
	}{
		{"negative repeat", ScriptedTurn{Text: "x", Repeat: -1}, "repeat: -1 is out of range"},
		{"constant error with text", ScriptedTurn{Text: "x", Error: "boom"}, "cannot also have text or calls"},
		{"mod by zero", ScriptedTurn{Text: "{{mod .Index 0}}"}, "mod by zero"},
		{"unknown function", ScriptedTurn{Text: "{{pow 2 3}}"}, `function "pow" not defined`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewScripted("scripted:test", []ScriptedTurn{tc.turn}, ExhaustedFail)
			if err == nil || !errors.Is(err, ErrInvalidScript) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want ErrInvalidScript mentioning %q", err, tc.want)
			}
		})
	}
}

// agentView is the view of the agent called name (group "workers") at stage "s" and run turn.
func agentView(name string, index, turn int) *View {
	return &View{Agent: AgentInfo{Name: name, Group: "workers", Index: index}, Stage: "s", Turn: turn}
}

// Turns with an agent key go to that agent alone: each agent walks the turns naming no agent and
// its own, in file order, with a cursor of its own; an agent no turn names walks the shared
// turns; each runs out after its own sequence, and the message says whose.
func TestScriptedAgentTurns(t *testing.T) {
	toml := `
[[turns]]
text = "hello {{.Name}}"
[[turns]]
agent = "workers-0"
stage = "s"
text = "mine"
  [[turns.calls]]
  tool = "write_file"
  args = { path = "a.md" }
[[turns]]
agent = "workers-1"
error = "overloaded"
[[turns]]
agent = "workers-1"
text = "again"
repeat = 2
[[turns]]
text = "bye"
`
	var cfg ScriptedConfig
	if err := toml2(toml, &cfg); err != nil {
		t.Fatal(err)
	}
	m, err := cfg.Compile(&KindEnv{Key: "w", Path: "models.w", ID: "scripted:w"})
	if err != nil {
		t.Fatal(err)
	}
	type step struct {
		text, call, err string
	}
	want := map[string][]step{
		"workers-0": {{text: "hello workers-0"}, {text: "mine", call: `write_file {"path":"a.md"}`}, {text: "bye"}},
		"workers-1": {{text: "hello workers-1"}, {err: "scripted model failure: overloaded"}, {text: "again"}, {text: "again"}, {text: "bye"}},
		"workers-2": {{text: "hello workers-2"}, {text: "bye"}},
	}
	exhausted := map[string]string{
		"workers-0": `scripted model ran out of turns after 3 (agent "workers-0"'s turns and those that name no agent)`,
		"workers-1": `scripted model ran out of turns after 5 (agent "workers-1"'s turns and those that name no agent)`,
		"workers-2": "scripted model ran out of turns after 2 (the turns that name no agent: no turn names this agent)",
	}
	// Interleaved, as a run would ask them: every agent's cursor is its own.
	states := map[string]*State{}
	for turn := range 6 {
		for i, name := range []string{"workers-0", "workers-1", "workers-2"} {
			if states[name] == nil {
				states[name] = &State{}
			}
			got, err := m.Turn(context.Background(), states[name], agentView(name, i, turn))
			if turn >= len(want[name]) {
				if !errors.Is(err, ErrScriptExhausted) || err.Error() != exhausted[name] {
					t.Errorf("%s, turn %d: %v, want %q", name, turn, err, exhausted[name])
				}
				continue
			}
			w := want[name][turn]
			if w.err != "" {
				if err == nil || err.Error() != w.err {
					t.Errorf("%s, turn %d: error %v, want %q", name, turn, err, w.err)
				}
				continue
			}
			if err != nil {
				t.Fatalf("%s, turn %d: %v", name, turn, err)
			}
			call := ""
			if len(got.Calls) == 1 {
				call = got.Calls[0].Name + " " + string(got.Calls[0].Args)
			}
			if got.Text != w.text || call != w.call || len(got.Calls) > 1 {
				t.Errorf("%s, turn %d: %q %q, want %q %q", name, turn, got.Text, call, w.text, w.call)
			}
		}
	}
	// The plan lists every turn once, at its key in the file, whoever it is for.
	var keys []string
	for _, pt := range m.(Planned).Plan() {
		keys = append(keys, pt.Key+"@"+pt.Stage)
	}
	if got := strings.Join(keys, " "); got != "turns[0]@ turns[1]@s turns[2]@ turns[3]@ turns[4]@" {
		t.Errorf("plan = %s", got)
	}
}

// toml2 decodes a scripted table strictly, as the scenario loader does.
func toml2(src string, v any) error {
	dec := toml.NewDecoder(strings.NewReader(src))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// A stage assertion of an agent's own turn names the turn's place in the file; with
// repeat_last, an agent repeats the last turn of its own sequence, and one with no turns at all
// (every turn names another agent) fails as an exhausted script instead of repeating nothing.
func TestScriptedAgentTurnsStageAndRepeatLast(t *testing.T) {
	s := mustScripted(t, []ScriptedTurn{
		{Agent: "a", Text: "a1"},
		{Agent: "b", Stage: "plan", Text: "b1"},
		{Agent: "a", Text: "a2"},
	}, ExhaustedRepeatLast)
	var a, b, c State
	for turn, want := range []string{"a1", "a2", "a2", "a2"} {
		got, err := s.Turn(context.Background(), &a, agentView("a", 0, turn))
		if err != nil || got.Text != want {
			t.Fatalf("a, turn %d: %q, %v; want %q", turn, got.Text, err, want)
		}
	}
	_, err := s.Turn(context.Background(), &b, agentView("b", 1, 0))
	if !errors.Is(err, ErrStageMismatch) || !strings.HasPrefix(err.Error(), `turn 2: `) || !strings.Contains(err.Error(), `agent "b" is in stage "s"`) {
		t.Errorf("b: %v, want the stage mismatch of turn 2", err)
	}
	if _, err := s.Turn(context.Background(), &c, agentView("c", 2, 0)); !errors.Is(err, ErrScriptExhausted) || !strings.Contains(err.Error(), "after 0") {
		t.Errorf("c: %v, want exhaustion after 0", err)
	}
}

// The agent key is a name: a template or a name with stray spaces is refused when the script
// compiles, by NewScripted (naming the turn) and by the kind's Compile (at the key).
func TestScriptedRejectsBadAgent(t *testing.T) {
	for _, tc := range []struct{ agent, want string }{
		{"worker-{{.Index}}", `"worker-{{.Index}}" is a template; agent takes an agent's name as written`},
		{" worker-1", `" worker-1": an agent's name has no leading or trailing space`},
		{"worker-1\n", `"worker-1\n": an agent's name has no leading or trailing space and no control characters`},
		{"   ", `"   ": an agent's name has no leading or trailing space`},
	} {
		turns := []ScriptedTurn{{Text: "ok"}, {Agent: tc.agent, Text: "x"}}
		_, err := NewScripted("scripted:test", turns, ExhaustedFail)
		if !errors.Is(err, ErrInvalidScript) || !strings.Contains(err.Error(), "turn 2: agent: "+tc.want) {
			t.Errorf("agent %q: NewScripted: %v, want ErrInvalidScript with %q", tc.agent, err, tc.want)
		}
		_, err = (&ScriptedConfig{Turns: turns}).Compile(&KindEnv{ID: "scripted:w"})
		var ke KeyErrors
		if !errors.As(err, &ke) || len(ke) != 1 || ke[0].Key != "turns[1].agent" || !strings.Contains(ke[0].Err.Error(), tc.want) {
			t.Errorf("agent %q: Compile: %v, want a KeyError at turns[1].agent", tc.agent, err)
		}
	}
}
