package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestInteractionSchemas(t *testing.T) {
	cases := []struct {
		tool     Interactive
		valid    []string
		invalid  []string
		required []string
	}{
		{AskUserText{}, []string{`{"question":"Which database?"}`},
			[]string{`{"question":"q","choices":["a","b"]}`, `{}`}, []string{"question"}},
		{AskUserConfirm{}, []string{`{"question":"Delete the branch?"}`},
			[]string{`{"question":""}`, `{"question":"q","extra":1}`}, []string{"question"}},
		{AskUserChoice{},
			[]string{`{"question":"Pick","choices":["a","b"]}`, `{"question":"Pick","choices":["A","a"]}`,
				fmt.Sprintf(`{"question":"Pick","choices":[%s]}`, numberedChoices(MaxChoices))},
			[]string{`{"question":"Pick","choices":["a"]}`, `{"question":"Pick","choices":["a","a"]}`,
				fmt.Sprintf(`{"question":"Pick","choices":[%s]}`, numberedChoices(MaxChoices+1))},
			[]string{"question", "choices"}},
	}
	for _, tc := range cases {
		spec := tc.tool.Spec()
		t.Run(spec.Name, func(t *testing.T) {
			var schema struct {
				Required             []string `json:"required"`
				AdditionalProperties *bool    `json:"additionalProperties"`
			}
			if err := json.Unmarshal(spec.Parameters, &schema); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(schema.Required, tc.required) || schema.AdditionalProperties == nil || *schema.AdditionalProperties {
				t.Fatalf("schema is not strict with required %v: %s", tc.required, spec.Parameters)
			}
			if !strings.Contains(spec.Description, "best judgment") {
				t.Fatalf("description does not tell the model about unattended answers: %q", spec.Description)
			}
			h, err := NewHandle(tc.tool)
			if err != nil {
				t.Fatal(err)
			}
			for _, args := range tc.valid {
				if err := h.Validate(json.RawMessage(args)); err != nil {
					t.Fatalf("Validate(%s) = %v, want nil", args, err)
				}
			}
			for _, args := range tc.invalid {
				wantError(t, h.Validate(json.RawMessage(args)), ErrInvalidArguments)
			}
		})
	}
}

// numberedChoices returns n distinct JSON strings "c1", "c2", ... joined by commas.
func numberedChoices(n int) string {
	quoted := make([]string, n)
	for i := range quoted {
		quoted[i] = fmt.Sprintf(`"c%d"`, i+1)
	}
	return strings.Join(quoted, ",")
}

func TestInteractionQuestion(t *testing.T) {
	cases := []struct {
		name    string
		tool    Interactive
		args    string
		want    Question
		wantErr string // fragment of an ErrInvalidArguments error
	}{
		{name: "text", tool: AskUserText{}, args: `{"question":"Which database?"}`,
			want: Question{Kind: QuestionText, Text: "Which database?"}},
		{name: "confirm", tool: AskUserConfirm{}, args: `{"question":"Delete the branch?"}`,
			want: Question{Kind: QuestionConfirm, Text: "Delete the branch?"}},
		{name: "choice keeps the order", tool: AskUserChoice{}, args: `{"question":"Colour?","choices":["red","Green","blue"]}`,
			want: Question{Kind: QuestionChoice, Text: "Colour?", Choices: []string{"red", "Green", "blue"}}},
		{name: "blank text question", tool: AskUserText{}, args: `{"question":" \n\t"}`, wantErr: "question is blank"},
		{name: "blank confirm question", tool: AskUserConfirm{}, args: `{"question":"  "}`, wantErr: "question is blank"},
		{name: "blank choice question", tool: AskUserChoice{}, args: `{"question":" ","choices":["a","b"]}`, wantErr: "question is blank"},
		{name: "blank choice", tool: AskUserChoice{}, args: `{"question":"Pick","choices":["a","  "]}`, wantErr: "choice 2 is blank"},
		// The direct-call cases below bypass the schema: Question must still refuse them.
		{name: "repeated choice", tool: AskUserChoice{}, args: `{"question":"Pick","choices":["a","b","a"]}`,
			wantErr: `choice 3 repeats choice 1 ("a")`},
		{name: "one choice", tool: AskUserChoice{}, args: `{"question":"Pick","choices":["a"]}`,
			wantErr: "choices must list between 2 and 20 options (got 1)"},
		{name: "too many choices", tool: AskUserChoice{}, args: fmt.Sprintf(`{"question":"Pick","choices":[%s]}`, numberedChoices(21)),
			wantErr: "choices must list between 2 and 20 options (got 21)"},
		{name: "missing choices", tool: AskUserChoice{}, args: `{"question":"Pick"}`,
			wantErr: "choices must list between 2 and 20 options (got 0)"},
		{name: "unknown field", tool: AskUserText{}, args: `{"question":"q","choices":["a","b"]}`, wantErr: "unknown field"},
		{name: "not an object", tool: AskUserConfirm{}, args: `"yes"`, wantErr: "cannot decode the arguments"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			q, err := tc.tool.Question(json.RawMessage(tc.args))
			if tc.wantErr != "" {
				wantError(t, err, ErrInvalidArguments, tc.wantErr)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if q.Kind != tc.want.Kind || q.Text != tc.want.Text || !slices.Equal(q.Choices, tc.want.Choices) ||
				q.Agent != (AgentRef{}) || q.CallID != "" {
				t.Fatalf("Question = %+v, want %+v", q, tc.want)
			}
		})
	}
}

func TestInteractionAnswer(t *testing.T) {
	text := Question{Kind: QuestionText, Text: "Which database?"}
	choice := Question{Kind: QuestionChoice, Text: "Colour?", Choices: []string{"red", "Green", "dark blue"}}
	confirm := Question{Kind: QuestionConfirm, Text: "Proceed?"}
	cases := []struct {
		name     string
		tool     Interactive
		q        Question
		answer   string
		want     string
		wantErrs string // the exact error message; "" means the answer is accepted
	}{
		{"text verbatim", AskUserText{}, text, "  Postgres, version 16\nplease ", "The user answered:   Postgres, version 16\nplease ", ""},
		{"text blank", AskUserText{}, text, " \t\n", "", "invalid answer: the answer is blank"},
		{"text empty", AskUserText{}, text, "", "", "invalid answer: the answer is blank"},
		{"choice exact", AskUserChoice{}, choice, "Green", "The user chose: Green", ""},
		{"choice with a space", AskUserChoice{}, choice, "dark blue", "The user chose: dark blue", ""},
		{"choice wrong case", AskUserChoice{}, choice, "green", "",
			`invalid answer: "green" is not one of the choices ("red", "Green", "dark blue"); the answer must match a choice exactly, case included`},
		{"choice padded", AskUserChoice{}, choice, "red ", "",
			`invalid answer: "red " is not one of the choices ("red", "Green", "dark blue"); the answer must match a choice exactly, case included`},
		{"choice empty", AskUserChoice{}, choice, "", "",
			`invalid answer: "" is not one of the choices ("red", "Green", "dark blue"); the answer must match a choice exactly, case included`},
		{"confirm yes", AskUserConfirm{}, confirm, "yes", "The user answered yes.", ""},
		{"confirm Y", AskUserConfirm{}, confirm, "Y", "The user answered yes.", ""},
		{"confirm TRUE padded", AskUserConfirm{}, confirm, " TRUE\n", "The user answered yes.", ""},
		{"confirm No", AskUserConfirm{}, confirm, "No", "The user answered no.", ""},
		{"confirm n", AskUserConfirm{}, confirm, "n", "The user answered no.", ""},
		{"confirm False", AskUserConfirm{}, confirm, "False", "The user answered no.", ""},
		{"confirm maybe", AskUserConfirm{}, confirm, "maybe", "",
			`invalid answer: "maybe" is not yes or no (accepted, in any case: yes, y, true, no, n, false)`},
		{"confirm yes please", AskUserConfirm{}, confirm, "yes please", "",
			`invalid answer: "yes please" is not yes or no (accepted, in any case: yes, y, true, no, n, false)`},
		{"text tool, choice question", AskUserText{}, choice, "red", "",
			"invalid answer: ask_user_text answers text questions, not choice questions"},
		{"choice tool, confirm question", AskUserChoice{}, confirm, "yes", "",
			"invalid answer: ask_user_choice answers choice questions, not confirm questions"},
		{"confirm tool, text question", AskUserConfirm{}, text, "yes", "",
			"invalid answer: ask_user_confirm answers confirm questions, not text questions"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, err := tc.tool.Answer(tc.q, tc.answer)
			if tc.wantErrs != "" {
				wantError(t, err, ErrInvalidAnswer)
				if err.Error() != tc.wantErrs {
					t.Fatalf("error %q, want %q", err, tc.wantErrs)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(res, TextResult(tc.want)) {
				t.Fatalf("result %+v, want %q", res, tc.want)
			}
		})
	}
}

func TestInteractionExecuteHeadless(t *testing.T) {
	cases := []struct {
		name string
		tool Tool
		args string
	}{
		{"text", AskUserText{}, `{"question":"Which database?"}`},
		{"choice", AskUserChoice{}, `{"question":"Pick","choices":["a","b"]}`},
		{"confirm", AskUserConfirm{}, `{"question":"Proceed?"}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ec := NewExecContext(context.Background(), "call-9", 4, AgentRef{ID: 12, Name: "asker"}, "")
			if got := mustRun(t, tc.tool, ec, tc.args); got != UnattendedAnswer {
				t.Fatalf("result %q, want the unattended answer", got)
			}
		})
	}
}

func TestInteractionExecuteNilContext(t *testing.T) {
	for _, tool := range InteractionTools() {
		args := `{"question":"Proceed?"}`
		if tool.Spec().Name == NameAskUserChoice {
			args = `{"question":"Proceed?","choices":["yes","later"]}`
		}
		res, err := tool.Execute(nil, json.RawMessage(args))
		if err != nil || !reflect.DeepEqual(res, TextResult(UnattendedAnswer)) {
			t.Fatalf("%s with a nil context = %+v, %v; want the unattended answer", tool.Spec().Name, res, err)
		}
	}
}

func TestInteractionExecuteFailures(t *testing.T) {
	_, err := AskUserConfirm{}.Execute(NewExecContext(context.Background(), "c", 1, AgentRef{ID: 1}, ""), json.RawMessage(`{"question":"   "}`))
	wantError(t, err, ErrInvalidArguments, "question is blank")
	_, err = AskUserText{}.Execute(nil, json.RawMessage(`{"question":""}`))
	wantError(t, err, ErrInvalidArguments, "question is blank")
}

func TestInteractionToolSet(t *testing.T) {
	interaction := InteractionTools()
	names := make([]string, len(interaction))
	for i, tool := range interaction {
		names[i] = tool.Spec().Name
		if _, ok := tool.(Interactive); !ok {
			t.Fatalf("%s is not Interactive", names[i])
		}
	}
	if want := []string{NameAskUserChoice, NameAskUserConfirm, NameAskUserText}; !slices.Equal(names, want) {
		t.Fatalf("InteractionTools = %v, want %v", names, want)
	}
	for _, tool := range Builtins() {
		name := tool.Spec().Name
		_, interactive := tool.(Interactive)
		if IsInteraction(name) != interactive || slices.Contains(names, name) != interactive {
			t.Fatalf("%s: IsInteraction %v, Interactive %v, in InteractionTools %v",
				name, IsInteraction(name), interactive, slices.Contains(names, name))
		}
		h, err := NewHandle(tool)
		if err != nil {
			t.Fatal(err)
		}
		if interactive && h.Inline() {
			t.Fatalf("%s parks on a person and must not run inline", name)
		}
	}
	for _, name := range []string{"", "ask_user", "ASK_USER_TEXT", "ask_user_text ", NameWriteFile} {
		if IsInteraction(name) {
			t.Fatalf("IsInteraction(%q) = true", name)
		}
	}
}

func TestQuestionKind(t *testing.T) {
	for _, kind := range []QuestionKind{QuestionText, QuestionChoice, QuestionConfirm} {
		text, err := kind.MarshalText()
		if err != nil {
			t.Fatal(err)
		}
		var back QuestionKind
		if err := back.UnmarshalText(text); err != nil || back != kind || string(text) != kind.String() {
			t.Fatalf("%v round-tripped to %v (%q, %v)", kind, back, text, err)
		}
	}
	if got := []string{QuestionText.String(), QuestionChoice.String(), QuestionConfirm.String()}; !slices.Equal(got, []string{"text", "choice", "confirm"}) {
		t.Fatalf("spellings %v", got)
	}
	if got := QuestionKind(9).String(); got != "QuestionKind(9)" {
		t.Fatalf("unknown kind String = %q", got)
	}
	_, err := QuestionKind(9).MarshalText()
	wantError(t, err, ErrUnknownValue, "question kind 9")
	_, err = ParseQuestionKind("Choice")
	wantError(t, err, ErrUnknownValue, `question kind "Choice"`, "want text, choice or confirm")
	kind := QuestionConfirm
	wantError(t, kind.UnmarshalText([]byte("yesno")), ErrUnknownValue)
	if kind != QuestionConfirm {
		t.Fatal("a failed UnmarshalText changed the kind")
	}
}

func TestUnattendedStandIn(t *testing.T) {
	for _, inner := range InteractionTools() {
		standIn := UnattendedStandIn(inner)
		h, err := NewHandle(standIn)
		if err != nil {
			t.Fatal(err)
		}
		if standIn.Spec().Name != inner.Spec().Name || !h.Inline() {
			t.Fatalf("%s: stand-in spec %q inline %v", inner.Spec().Name, standIn.Spec().Name, h.Inline())
		}
		res, err := standIn.Execute(nil, nil)
		if err != nil || res.Content != UnattendedAnswer || res.IsError {
			t.Fatalf("%s: %+v %v", inner.Spec().Name, res, err)
		}
	}
}
