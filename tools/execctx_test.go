package tools

import (
	"context"
	"encoding"
	"errors"
	"testing"
)

type recordingProgress struct{ events []ProgressEvent }

func (r *recordingProgress) Progress(ev ProgressEvent) { r.events = append(r.events, ev) }

type recordingNotifier struct {
	accept  bool
	notices []DetachedNotice
}

func (r *recordingNotifier) Notify(n DetachedNotice) bool {
	r.notices = append(r.notices, n)
	return r.accept
}

var (
	_ ProgressSink = (*recordingProgress)(nil)
	_ Notifier     = (*recordingNotifier)(nil)
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
	if ec.SafetyMode != SafetyDefault || ec.InPlanMode() || ec.Tasks != nil || ec.Approvals != nil ||
		ec.Questions != nil || ec.Classifier != nil || ec.Notify != nil || ec.Progress != nil || ec.Writes != nil {
		t.Fatal("optional fields are not in their headless state")
	}
}

func TestExecContextNilIsHeadless(t *testing.T) {
	var ec *ExecContext
	if ec.Context() != context.Background() || ec.Cancelled() || ec.Backgrounded() || ec.InPlanMode() {
		t.Fatal("nil context is not headless")
	}
	ec.ReportProgress(ProgressEvent{Message: "dropped"})
	if ec.NotifyDetached("x") {
		t.Fatal("NotifyDetached on nil context reported delivery")
	}
	if got := ec.CheckpointOrigin(); got != (CheckpointOrigin{MessageIndex: -1}) {
		t.Fatalf("CheckpointOrigin = %+v", got)
	}
	zero := &ExecContext{}
	if zero.Context() != context.Background() || zero.Cancelled() || zero.Backgrounded() {
		t.Fatal("zero context is not headless")
	}
	zero.ReportProgress(ProgressEvent{Message: "dropped"})
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

func TestExecContextBackgrounded(t *testing.T) {
	signal := make(chan struct{})
	ec := &ExecContext{Background: signal}
	if ec.Backgrounded() {
		t.Fatal("backgrounded before the signal")
	}
	close(signal)
	if first, again := ec.Backgrounded(), ec.Backgrounded(); !first || !again {
		t.Fatal("the signal is not seen (repeatedly) once closed")
	}
}

func TestExecContextReportProgressStampsCallID(t *testing.T) {
	sink := &recordingProgress{}
	ec := &ExecContext{CallID: "call-9", Progress: sink}
	ec.ReportProgress(ProgressEvent{Message: "half", Current: 1, Total: 2})
	ec.ReportProgress(ProgressEvent{CallID: "other", Message: "kept"})
	if len(sink.events) != 2 || sink.events[0].CallID != "call-9" || sink.events[1].CallID != "other" {
		t.Fatalf("events = %+v", sink.events)
	}
	if sink.events[0].Current != 1 || sink.events[0].Total != 2 {
		t.Fatalf("event fields lost: %+v", sink.events[0])
	}
}

func TestExecContextNotifyDetached(t *testing.T) {
	cases := []struct {
		name   string
		accept bool
	}{{"accepted", true}, {"refused", false}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			n := &recordingNotifier{accept: tc.accept}
			ec := &ExecContext{Notify: n, Agent: AgentRef{ID: 4, Name: "bg"}, CallID: "c4", TurnID: 2}
			if got := ec.NotifyDetached("finished"); got != tc.accept {
				t.Fatalf("NotifyDetached = %v, want %v", got, tc.accept)
			}
			want := DetachedNotice{Agent: AgentRef{ID: 4, Name: "bg"}, CallID: "c4", TurnID: 2, Message: "finished"}
			if len(n.notices) != 1 || n.notices[0].Message != want.Message || n.notices[0].Agent != want.Agent ||
				n.notices[0].CallID != want.CallID || n.notices[0].TurnID != want.TurnID {
				t.Fatalf("notices = %+v, want [%+v]", n.notices, want)
			}
		})
	}
	if (&ExecContext{}).NotifyDetached("x") {
		t.Fatal("NotifyDetached without a notifier reported delivery")
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

func TestPlanLevelSpellings(t *testing.T) {
	for _, l := range []PlanLevel{PlanAsk, PlanAllow, PlanDeny} {
		got, err := ParsePlanLevel(l.String())
		if err != nil || got != l {
			t.Fatalf("round trip of %v = %v, %v", l, got, err)
		}
	}
	if _, err := ParsePlanLevel("always"); !errors.Is(err, ErrUnknownValue) {
		t.Fatalf("ParsePlanLevel(always) = %v", err)
	}
	if PlanLevel(7).String() != "PlanLevel(7)" {
		t.Fatal("out-of-range level String")
	}
	var zero PlanPermissions
	if zero.MemoryWrites != PlanAsk || zero.KnownSafeBuilds != PlanAsk {
		t.Fatal("zero PlanPermissions must ask (fail safe)")
	}
}

func TestApprovalAnswerSpellings(t *testing.T) {
	for _, a := range []ApprovalAnswer{ApprovalDeny, ApprovalOnce, ApprovalStage, ApprovalRun} {
		got, err := ParseApprovalAnswer(a.String())
		if err != nil || got != a {
			t.Fatalf("round trip of %v = %v, %v", a, got, err)
		}
	}
	if _, err := ParseApprovalAnswer("forever"); !errors.Is(err, ErrUnknownValue) {
		t.Fatalf("ParseApprovalAnswer(forever) = %v", err)
	}
	if ApprovalAnswer(0) != ApprovalDeny || ApprovalAnswer(9).String() != "ApprovalAnswer(9)" {
		t.Fatal("zero answer must deny; out-of-range String")
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
