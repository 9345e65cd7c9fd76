package tools

import (
	"context"
	"encoding/json"
	"fmt"
)

// This file declares the small interfaces through which a tool reaches the host. They are
// implemented by later subsystems (the scheduler's notify queue, the trace's progress recorder,
// the host config, the policy gate's classifier, the interaction hub); tools depend only on these
// shapes so that they stay testable without a world.

// Settings is a read-only view of host settings, addressed by dotted key (for example
// "model.endpoint"). Implemented by the host config loader.
type Settings interface {
	// Setting returns the value of key and whether it is set.
	Setting(key string) (string, bool)
}

// ProgressEvent is one progress report from a running call.
type ProgressEvent struct {
	// CallID is the reporting call; ExecContext.ReportProgress fills it when empty.
	CallID string
	// Message says what the call is doing now.
	Message string
	// Current and Total measure progress in the tool's own unit; Total 0 means unknown.
	Current, Total int64
}

// ProgressSink receives per-call progress. Implemented by the tool lanes, which forward events to
// the trace and any live observer. Progress must not block: a slow observer drops events rather
// than stalling the tool.
type ProgressSink interface {
	Progress(ev ProgressEvent)
}

// DetachedNotice is a message from work that outlived its turn (a backgrounded command or
// sub-agent), stamped with where it came from.
type DetachedNotice struct {
	Agent   AgentRef
	CallID  string
	TurnID  uint64
	Message string
}

// Notifier is the turn-independent channel back to the host loop. Implemented by the scheduler's
// wake-up queue. Notify must not block; it returns false when the notice could not be accepted
// (the host is shutting down or the agent is gone).
type Notifier interface {
	Notify(n DetachedNotice) bool
}

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

// AutoClassifier judges calls for SafetyAuto. Implemented by the policy package on top of a model
// back end. An error, like a missing classifier, makes the gate escalate to ask.
type AutoClassifier interface {
	Classify(ctx context.Context, req ClassifyRequest) (ClassifierVerdict, error)
}

// ApprovalRequest asks a human to approve one call.
type ApprovalRequest struct {
	Agent  AgentRef
	CallID string
	Tool   string
	// Keys are the permission keys the call needs (for example "shell:git push"), sorted.
	Keys []string
	// Summary is a one-line description of the call for the prompt.
	Summary string
}

// ApprovalAnswer is a human's answer. The zero value is ApprovalDeny, so an answer that was never
// given refuses.
type ApprovalAnswer uint8

const (
	// ApprovalDeny refuses the call.
	ApprovalDeny ApprovalAnswer = iota
	// ApprovalOnce allows this call only.
	ApprovalOnce
	// ApprovalStage allows the call's keys until the agent enters a different stage.
	ApprovalStage
	// ApprovalRun allows the call's keys for the rest of the run.
	ApprovalRun
)

var approvalAnswerNames = [...]string{ApprovalDeny: "deny", ApprovalOnce: "once", ApprovalStage: "stage", ApprovalRun: "run"}

// String returns "deny", "once", "stage" or "run", the spelling scenarios use for scripted answers.
func (a ApprovalAnswer) String() string {
	if int(a) < len(approvalAnswerNames) {
		return approvalAnswerNames[a]
	}
	return fmt.Sprintf("ApprovalAnswer(%d)", uint8(a))
}

// ParseApprovalAnswer parses "deny", "once", "stage" or "run"; anything else wraps ErrUnknownValue.
func ParseApprovalAnswer(s string) (ApprovalAnswer, error) {
	for a, name := range approvalAnswerNames {
		if s == name {
			return ApprovalAnswer(a), nil
		}
	}
	return ApprovalDeny, fmt.Errorf("approval answer %q: %w (want deny, once, stage or run)", s, ErrUnknownValue)
}

// ApprovalBroker is the inline approval back-channel. Implemented by the interaction hub
// (scripted answers in scenarios, an API in live hosting). RequestApproval parks until answered or
// ctx is done.
type ApprovalBroker interface {
	RequestApproval(ctx context.Context, req ApprovalRequest) (ApprovalAnswer, error)
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

// QuestionBroker is the inline question back-channel. Implemented by the interaction hub.
// Ask parks until answered or ctx is done.
type QuestionBroker interface {
	Ask(ctx context.Context, q Question) (answer string, err error)
}
