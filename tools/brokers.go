package tools

import (
	"context"
	"encoding/json"
	"fmt"
)

// This file declares the small shapes through which a tool reaches the host: the auto-mode
// classifier (implemented by a scenario's [[classifier]] rules, and by live models to come) and
// the question a person is asked (answered through the interaction hub, gate.Hub, which parks the
// asking agent as data). Tools depend only on these shapes so that they stay testable without a
// world.

// ClassifyRequest is what the auto-mode classifier judges: one tool call and the user's intent.
type ClassifyRequest struct {
	Agent AgentRef
	Tool  string
	Args  json.RawMessage
	// Keys are the permission keys of the call (the tool's name, or a shell line's keys), sorted.
	Keys   []string
	Intent string
}

// ClassifierDecision is the classifier's verdict. The zero value is ClassifyAsk, so a verdict that
// was never filled in fails safe.
type ClassifierDecision uint8

const (
	// ClassifyAsk escalates to the normal ask flow.
	ClassifyAsk ClassifierDecision = iota
	// ClassifyAllow lets the call proceed without asking.
	ClassifyAllow
	// ClassifyDeny refuses the call.
	ClassifyDeny
)

var classifierDecisionNames = [...]string{ClassifyAsk: "ask", ClassifyAllow: "allow", ClassifyDeny: "deny"}

// String returns "ask", "allow" or "deny", the spelling used in the trace.
func (d ClassifierDecision) String() string {
	if int(d) < len(classifierDecisionNames) {
		return classifierDecisionNames[d]
	}
	return fmt.Sprintf("ClassifierDecision(%d)", uint8(d))
}

// ClassifierVerdict is a decision and the classifier's reason, recorded in the trace.
type ClassifierVerdict struct {
	Decision ClassifierDecision
	Reason   string
}

// AutoClassifier judges calls for SafetyAuto. Implemented by a scenario's scripted [[classifier]]
// rules (Scenario.AutoClassifier); a classifier backed by a live model would implement it too. An
// error, like a missing classifier, makes the gate escalate to ask.
type AutoClassifier interface {
	Classify(ctx context.Context, req ClassifyRequest) (ClassifierVerdict, error)
}

// QuestionKind says what kind of answer a Question wants, so the hub can offer the right prompt
// (a text box, a list, yes/no) and a scripted answer can be checked against it. The zero value is
// QuestionText, the kind that accepts any non-blank answer.
type QuestionKind uint8

const (
	// QuestionText wants free text (ask_user_text).
	QuestionText QuestionKind = iota
	// QuestionChoice wants exactly one of Question.Choices (ask_user_choice).
	QuestionChoice
	// QuestionConfirm wants yes or no (ask_user_confirm).
	QuestionConfirm
)

var questionKindNames = [...]string{QuestionText: "text", QuestionChoice: "choice", QuestionConfirm: "confirm"}

// String returns "text", "choice" or "confirm", the spelling of the trace and of scenarios.
func (k QuestionKind) String() string {
	if int(k) < len(questionKindNames) {
		return questionKindNames[k]
	}
	return fmt.Sprintf("QuestionKind(%d)", uint8(k))
}

// ParseQuestionKind parses "text", "choice" or "confirm"; anything else wraps ErrUnknownValue.
func ParseQuestionKind(s string) (QuestionKind, error) {
	for k, name := range questionKindNames {
		if s == name {
			return QuestionKind(k), nil
		}
	}
	return QuestionText, fmt.Errorf("question kind %q: %w (want text, choice or confirm)", s, ErrUnknownValue)
}

// MarshalText implements encoding.TextMarshaler, so kinds round-trip through the trace and TOML.
func (k QuestionKind) MarshalText() ([]byte, error) {
	if int(k) >= len(questionKindNames) {
		return nil, fmt.Errorf("question kind %d: %w", uint8(k), ErrUnknownValue)
	}
	return []byte(k.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler with ParseQuestionKind's strictness.
func (k *QuestionKind) UnmarshalText(text []byte) error {
	parsed, err := ParseQuestionKind(string(text))
	if err != nil {
		return err
	}
	*k = parsed
	return nil
}

// Question is what an ask-the-user tool puts to a human. An Interactive tool builds it from the
// call's arguments (Kind, Text, Choices); whoever asks stamps Agent and CallID, which the
// arguments cannot know.
type Question struct {
	// Agent is the asking agent.
	Agent AgentRef
	// CallID is the tool call that asks.
	CallID string
	// Kind is the kind of answer wanted.
	Kind QuestionKind
	// Text is the question as the agent wrote it.
	Text string
	// Choices are the allowed answers of a QuestionChoice, in the order the agent gave them;
	// nil for the other kinds.
	Choices []string
}
