package tools

import (
	"encoding/json"
	"fmt"
	"strings"
)

// UnattendedAnswer is the result of an interaction tool when no one can answer: the headless
// Execute path (a tool run outside a world, where no hub parks the call), and the host's answer
// in an unattended run. Proceeding
// with best judgment, and saying so, keeps an unattended agent moving instead of blocking it for
// ever on a person who is not there.
const UnattendedAnswer = "No one is available to answer right now. Proceed with your best judgment and say which assumptions you made."

// Bounds of ask_user_choice's choices, enforced by its schema: fewer than two is not a choice, and
// more than twenty is more than a person reads.
const (
	MinChoices = 2
	MaxChoices = 20
)

// Length bounds (in characters) of a question and of one choice, enforced by the schemas so a
// question stays a prompt rather than a document in the trace.
const (
	maxQuestionLength = 2000
	maxChoiceLength   = 200
)

// init registers the interaction tools as built-ins (see RegisterBuiltin).
func init() {
	RegisterBuiltin(BuiltinInfo{ID: "tools.ask_user_text", New: func() Tool { return AskUserText{} }})
	RegisterBuiltin(BuiltinInfo{ID: "tools.ask_user_choice", New: func() Tool { return AskUserChoice{} }})
	RegisterBuiltin(BuiltinInfo{ID: "tools.ask_user_confirm", New: func() Tool { return AskUserConfirm{} }})
}

var (
	_ Interactive = AskUserText{}
	_ Interactive = AskUserChoice{}
	_ Interactive = AskUserConfirm{}
)

// InteractionTools returns the built-in tools that ask a person (those of Builtins that implement
// Interactive), in name order. The host drops them from what an unattended stage advertises
// unless the stage requires them. It reads the built-in registry, so a new interaction tool is
// listed once its file registers it.
func InteractionTools() []Tool {
	var out []Tool
	for _, t := range Builtins() {
		if _, ok := t.(Interactive); ok {
			out = append(out, t)
		}
	}
	return out
}

// IsInteraction reports whether name is one of the built-in interaction tools, so the host and the
// policy gate can single them out by name without allocating.
func IsInteraction(name string) bool {
	switch name {
	case NameAskUserText, NameAskUserChoice, NameAskUserConfirm:
		return true
	}
	return false
}

var askUserTextSchema = json.RawMessage(fmt.Sprintf(`{
	"type": "object",
	"properties": {
		"question": {"type": "string", "minLength": 1, "maxLength": %d, "description": "The question to put to the user."}
	},
	"required": ["question"],
	"additionalProperties": false
}`, maxQuestionLength))

var askUserChoiceSchema = json.RawMessage(fmt.Sprintf(`{
	"type": "object",
	"properties": {
		"question": {"type": "string", "minLength": 1, "maxLength": %d, "description": "The question to put to the user."},
		"choices": {
			"type": "array",
			"items": {"type": "string", "minLength": 1, "maxLength": %d},
			"minItems": %d,
			"maxItems": %d,
			"uniqueItems": true,
			"description": "The answers the user may pick from, in the order to show them."
		}
	},
	"required": ["question", "choices"],
	"additionalProperties": false
}`, maxQuestionLength, maxChoiceLength, MinChoices, MaxChoices))

var askUserConfirmSchema = json.RawMessage(fmt.Sprintf(`{
	"type": "object",
	"properties": {
		"question": {"type": "string", "minLength": 1, "maxLength": %d, "description": "A yes/no question to put to the user."}
	},
	"required": ["question"],
	"additionalProperties": false
}`, maxQuestionLength))

// unattendedHint ends every interaction tool's description, so a model knows what an unanswered
// question looks like before it meets one.
const unattendedHint = " If no one is available, the result says so: then proceed with your best judgment and state your assumptions."

type askQuestionArgs struct {
	Question string `json:"question"`
}

type askChoiceArgs struct {
	Question string   `json:"question"`
	Choices  []string `json:"choices"`
}

// AskUserText is the ask_user_text tool: a question with a free-text answer.
type AskUserText struct{}

var _ Tool = AskUserText{} // compile-time guard: AskUserText stays a Tool

// Spec describes ask_user_text.
func (AskUserText) Spec() Spec {
	return Spec{
		Name: NameAskUserText,
		Description: "Ask the user a question and wait for a free-text answer. Use it for information or decisions only the user has. " +
			"The result is the user's answer." + unattendedHint,
		Parameters: askUserTextSchema,
	}
}

// Question builds a QuestionText from {question}.
func (AskUserText) Question(args json.RawMessage) (Question, error) {
	return plainQuestion(NameAskUserText, QuestionText, args)
}

// Answer accepts any answer that is not blank and returns "The user answered: <answer>", the
// answer verbatim.
func (AskUserText) Answer(q Question, answer string) (Result, error) {
	if err := checkKind(NameAskUserText, QuestionText, q); err != nil {
		return Result{}, err
	}
	if strings.TrimSpace(answer) == "" {
		return Result{}, fmt.Errorf("%w: the answer is blank", ErrInvalidAnswer)
	}
	return TextResult("The user answered: " + answer), nil
}

// Execute is the headless path; see Interactive.
func (t AskUserText) Execute(ec *ExecContext, args json.RawMessage) (Result, error) {
	return askHeadless(ec, t, args)
}

// AskUserChoice is the ask_user_choice tool: a question answered by picking one of 2-20 choices.
type AskUserChoice struct{}

var _ Tool = AskUserChoice{} // compile-time guard: AskUserChoice stays a Tool

// Spec describes ask_user_choice.
func (AskUserChoice) Spec() Spec {
	return Spec{
		Name: NameAskUserChoice,
		Description: fmt.Sprintf("Ask the user to pick one of %d to %d distinct choices. ", MinChoices, MaxChoices) +
			"The result names the choice the user picked, exactly as you wrote it." + unattendedHint,
		Parameters: askUserChoiceSchema,
	}
}

// Question builds a QuestionChoice from {question, choices}. Besides what the schema checks, a
// choice that is only whitespace is refused: nobody could tell it from another.
func (AskUserChoice) Question(args json.RawMessage) (Question, error) {
	var a askChoiceArgs
	if err := decodeArguments(NameAskUserChoice, args, &a); err != nil {
		return Question{}, err
	}
	if err := checkQuestionText(a.Question); err != nil {
		return Question{}, err
	}
	if n := len(a.Choices); n < MinChoices || n > MaxChoices {
		return Question{}, fmt.Errorf("%w: choices must list between %d and %d options (got %d)", ErrInvalidArguments, MinChoices, MaxChoices, n)
	}
	for i, c := range a.Choices {
		if strings.TrimSpace(c) == "" {
			return Question{}, fmt.Errorf("%w: choice %d is blank", ErrInvalidArguments, i+1)
		}
		for j, earlier := range a.Choices[:i] {
			if c == earlier {
				return Question{}, fmt.Errorf("%w: choice %d repeats choice %d (%q)", ErrInvalidArguments, i+1, j+1, c)
			}
		}
	}
	return Question{Kind: QuestionChoice, Text: a.Question, Choices: a.Choices}, nil
}

// Answer accepts exactly one of q.Choices (case and whitespace included) and returns "The user
// chose: <choice>".
func (AskUserChoice) Answer(q Question, answer string) (Result, error) {
	if err := checkKind(NameAskUserChoice, QuestionChoice, q); err != nil {
		return Result{}, err
	}
	for _, c := range q.Choices {
		if answer == c {
			return TextResult("The user chose: " + c), nil
		}
	}
	var sb strings.Builder
	for i, c := range q.Choices {
		if i > 0 {
			sb.WriteString(", ")
		}
		fmt.Fprintf(&sb, "%q", c)
	}
	return Result{}, fmt.Errorf("%w: %q is not one of the choices (%s); the answer must match a choice exactly, case included",
		ErrInvalidAnswer, answer, sb.String())
}

// Execute is the headless path; see Interactive.
func (t AskUserChoice) Execute(ec *ExecContext, args json.RawMessage) (Result, error) {
	return askHeadless(ec, t, args)
}

// AskUserConfirm is the ask_user_confirm tool: a yes/no question.
type AskUserConfirm struct{}

var _ Tool = AskUserConfirm{} // compile-time guard: AskUserConfirm stays a Tool

// Spec describes ask_user_confirm.
func (AskUserConfirm) Spec() Spec {
	return Spec{
		Name: NameAskUserConfirm,
		Description: "Ask the user a yes/no question, for example before an action that is hard to undo. " +
			"The result says whether the user answered yes or no." + unattendedHint,
		Parameters: askUserConfirmSchema,
	}
}

// Question builds a QuestionConfirm from {question}.
func (AskUserConfirm) Question(args json.RawMessage) (Question, error) {
	return plainQuestion(NameAskUserConfirm, QuestionConfirm, args)
}

// Answer accepts yes, y or true ("The user answered yes.") and no, n or false ("The user answered
// no."), in any case and with surrounding whitespace ignored.
func (AskUserConfirm) Answer(q Question, answer string) (Result, error) {
	if err := checkKind(NameAskUserConfirm, QuestionConfirm, q); err != nil {
		return Result{}, err
	}
	word := strings.TrimSpace(answer)
	for _, yes := range [...]string{"yes", "y", "true"} {
		if strings.EqualFold(word, yes) {
			return TextResult("The user answered yes."), nil
		}
	}
	for _, no := range [...]string{"no", "n", "false"} {
		if strings.EqualFold(word, no) {
			return TextResult("The user answered no."), nil
		}
	}
	return Result{}, fmt.Errorf("%w: %q is not yes or no (accepted, in any case: yes, y, true, no, n, false)", ErrInvalidAnswer, answer)
}

// Execute is the headless path; see Interactive.
func (t AskUserConfirm) Execute(ec *ExecContext, args json.RawMessage) (Result, error) {
	return askHeadless(ec, t, args)
}

// plainQuestion builds a question whose only argument is its text.
func plainQuestion(tool string, kind QuestionKind, args json.RawMessage) (Question, error) {
	var a askQuestionArgs
	if err := decodeArguments(tool, args, &a); err != nil {
		return Question{}, err
	}
	if err := checkQuestionText(a.Question); err != nil {
		return Question{}, err
	}
	return Question{Kind: kind, Text: a.Question}, nil
}

// checkQuestionText refuses a question a person could not read as one.
func checkQuestionText(text string) error {
	if strings.TrimSpace(text) == "" {
		return fmt.Errorf("%w: question is blank", ErrInvalidArguments)
	}
	return nil
}

// checkKind refuses to answer a question another tool built: its answer rules would not apply.
func checkKind(tool string, want QuestionKind, q Question) error {
	if q.Kind != want {
		return fmt.Errorf("%w: %s answers %s questions, not %s questions", ErrInvalidAnswer, tool, want, q.Kind)
	}
	return nil
}

// askHeadless is Execute for every interaction tool: the question is checked (bad arguments are
// an error as on the hub's path), and with nobody to ask the answer is the unattended one. Inside
// a world the host never calls it: the hub parks the agent and Answer formats the reply.
func askHeadless(_ *ExecContext, tool Interactive, args json.RawMessage) (Result, error) {
	if _, err := tool.Question(args); err != nil {
		return Result{}, err
	}
	return TextResult(UnattendedAnswer), nil
}

// unattendedStandIn replaces an interaction tool in an unattended run's stage scope: nobody is
// there to answer, so the call gets UnattendedAnswer at once instead of waiting for ever.
type unattendedStandIn struct{ inner Tool }

var (
	_ Tool   = unattendedStandIn{}
	_ Inline = unattendedStandIn{}
)

// UnattendedStandIn returns the tool that shadows interaction tool t in an unattended run where
// the stage does not require t: same name and schema, answered at once with UnattendedAnswer.
func UnattendedStandIn(t Tool) Tool { return unattendedStandIn{inner: t} }

// Spec implements Tool: the interaction tool's own spec.
func (u unattendedStandIn) Spec() Spec { return u.inner.Spec() }

// Inline implements Inline: the answer is a constant.
func (unattendedStandIn) Inline() bool { return true }

// Execute implements Tool.
func (unattendedStandIn) Execute(*ExecContext, json.RawMessage) (Result, error) {
	return TextResult(UnattendedAnswer), nil
}
