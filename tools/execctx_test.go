package tools

import (
	"context"
	"encoding"
	"errors"
	"testing"
)

func TestNewExecContextSetsSentinels(t *testing.T) {
	agent := AgentRef{ID: 3, Name: "scout"}
	ec := NewExecContext(nil, "c1", 9, agent, "/w") // a nil ctx is documented to mean Background
	if ec.Ctx == nil || ec.Context() != context.Background() {
		t.Fatal("nil ctx was not replaced by context.Background()")
	}
	if ec.MessageIndex != -1 || ec.ContextPercent != -1 {
		t.Fatalf("sentinels MessageIndex=%d ContextPercent=%d, want -1", ec.MessageIndex, ec.ContextPercent)
	}
	if ec.CallID != "c1" || ec.TurnID != 9 || ec.Agent != agent || ec.Workdir != "/w" {
		t.Fatalf("fields not set: %+v", ec)
	}
	if ec.SafetyMode != SafetyDefault || ec.InPlanMode() || ec.Tasks != nil || ec.Classifier != nil || ec.Writes != nil ||
		ec.SessionID != "" || ec.Intent != "" || ec.Commands != nil || ec.CallTool != nil || ec.ScriptPermit != nil {
		t.Fatal("optional fields are not in their headless state")
	}
}

func TestExecContextNilIsHeadless(t *testing.T) {
	var ec *ExecContext
	if ec.Context() != context.Background() || ec.Cancelled() || ec.InPlanMode() {
		t.Fatal("nil context is not headless")
	}
	if got := ec.CheckpointOrigin(); got != (CheckpointOrigin{MessageIndex: -1}) {
		t.Fatalf("CheckpointOrigin = %+v", got)
	}
	zero := &ExecContext{}
	if zero.Context() != context.Background() || zero.Cancelled() {
		t.Fatal("zero context is not headless")
	}
}

func TestExecContextCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	ec := NewExecContext(ctx, "c", 1, AgentRef{}, "")
	if ec.Cancelled() {
		t.Fatal("cancelled before cancel")
	}
	cancel()
	if !ec.Cancelled() {
		t.Fatal("not cancelled after cancel")
	}
}

func TestExecContextCheckpointOrigin(t *testing.T) {
	ec := NewExecContext(context.Background(), "c7", 5, AgentRef{ID: 1}, "/w")
	if got := ec.CheckpointOrigin(); got != (CheckpointOrigin{MessageIndex: -1, CallID: "c7", TurnID: 5}) {
		t.Fatalf("headless origin = %+v", got)
	}
	ec.SessionID, ec.MessageIndex = "sess", 12
	if got := ec.CheckpointOrigin(); got != (CheckpointOrigin{SessionID: "sess", MessageIndex: 12, CallID: "c7", TurnID: 5}) {
		t.Fatalf("session origin = %+v", got)
	}
}

func TestExecContextInPlanMode(t *testing.T) {
	ec := &ExecContext{}
	if ec.InPlanMode() {
		t.Fatal("plan mode without a plan file")
	}
	ec.PlanFile = "plan.md"
	if !ec.InPlanMode() {
		t.Fatal("no plan mode with a plan file")
	}
}

func TestSafetyModeSpellings(t *testing.T) {
	cases := []struct {
		text string
		mode SafetyMode
	}{{"default", SafetyDefault}, {"read-only", SafetyReadOnly}, {"auto", SafetyAuto}}
	for _, tc := range cases {
		t.Run(tc.text, func(t *testing.T) {
			if tc.mode.String() != tc.text {
				t.Fatalf("String = %q", tc.mode.String())
			}
			got, err := ParseSafetyMode(tc.text)
			if err != nil || got != tc.mode {
				t.Fatalf("Parse = %v, %v", got, err)
			}
			var m SafetyMode
			var _ encoding.TextUnmarshaler = &m
			text, err := tc.mode.MarshalText()
			if err != nil || m.UnmarshalText(text) != nil || m != tc.mode {
				t.Fatalf("text round trip failed: %q %v %v", text, err, m)
			}
		})
	}
}

func TestSafetyModeRejectsMisspellings(t *testing.T) {
	for _, bad := range []string{"", "Default", "readonly", "read_only", "yolo"} {
		t.Run(bad, func(t *testing.T) {
			_, err := ParseSafetyMode(bad)
			wantError(t, err, ErrUnknownValue, "default, read-only or auto")
			var m SafetyMode = SafetyAuto
			if err := m.UnmarshalText([]byte(bad)); !errors.Is(err, ErrUnknownValue) || m != SafetyAuto {
				t.Fatalf("UnmarshalText(%q) = %v, mode %v", bad, err, m)
			}
		})
	}
	if _, err := SafetyMode(9).MarshalText(); !errors.Is(err, ErrUnknownValue) {
		t.Fatal("an out-of-range mode marshalled")
	}
	if SafetyMode(9).String() != "SafetyMode(9)" {
		t.Fatalf("String of an out-of-range mode = %q", SafetyMode(9).String())
	}
}

func TestClassifierDecisionZeroValueAsks(t *testing.T) {
	var v ClassifierVerdict
	if v.Decision != ClassifyAsk || v.Decision.String() != "ask" {
		t.Fatal("an unfilled verdict must escalate to ask")
	}
	if ClassifyAllow.String() != "allow" || ClassifyDeny.String() != "deny" || ClassifierDecision(5).String() != "ClassifierDecision(5)" {
		t.Fatal("decision spellings")
	}
}
