package resources

import (
	"slices"
	"testing"
)

// TestResumeDecide: what a resumed run does with a call its committed recording does not have,
// by what the effect journal holds and what the tool may do.
func TestResumeDecide(t *testing.T) {
	r := &Resume{Effects: map[string]ResumedEffect{
		ToolEffect("a", "c1"): {Done: true, Result: []byte(`{"OK":true}`)},
		ToolEffect("a", "c2"): {},
		ToolEffect("a", "c3"): {},
	}}
	for _, c := range []struct {
		name        string
		key         string
		sideEffects bool
		retry       bool
		want        ResumeAction
		wantResult  string
	}{
		{"never journaled: it never ran", ToolEffect("a", "c9"), true, false, RunLive, ""},
		{"returned before the crash", ToolEffect("a", "c1"), true, false, ServeJournaled, `{"OK":true}`},
		{"cut off, side effects", ToolEffect("a", "c2"), true, false, AnswerInterrupted, ""},
		{"cut off, retry_on_resume", ToolEffect("a", "c3"), true, true, RunAgain, ""},
		{"cut off, changes nothing", ToolEffect("a", "c3"), false, false, RunLive, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, result := r.Decide(c.key, c.name, c.sideEffects, c.retry)
			if got != c.want || string(result) != c.wantResult {
				t.Errorf("Decide = %v %q, want %v %q", got, result, c.want, c.wantResult)
			}
		})
	}
	if r.Served != 1 || !slices.Equal(r.Interrupted, []string{"cut off, side effects"}) || !slices.Equal(r.Retried, []string{"cut off, retry_on_resume"}) {
		t.Errorf("the account: served %d, interrupted %v, retried %v", r.Served, r.Interrupted, r.Retried)
	}
	if got, _ := (*Resume)(nil).Decide("k", "w", true, false); got != RunLive {
		t.Errorf("a nil Resume decides %v", got)
	}
	if ModelEffect("a", 2, 1) == ModelEffect("a", 21, 1) || ToolEffect("a", "b") == ToolEffect("ab", "") {
		t.Error("effect keys collide")
	}
}

// TestResumeChecked: a cut-off call whose tool journaled its expected effect is checked before
// retry_on_resume or the interrupted answer is considered, and the check's finding settles it.
func TestResumeChecked(t *testing.T) {
	x := []byte(`{"target":"a.md","next":"sha256:00"}`)
	r := &Resume{Effects: map[string]ResumedEffect{
		ToolEffect("a", "c1"): {Expect: x},
		ToolEffect("a", "c2"): {Done: true, Result: []byte(`{"OK":true}`), Expect: x},
	}}
	if got, raw := r.Decide(ToolEffect("a", "c1"), "c1", true, true); got != CheckEffect || string(raw) != string(x) {
		t.Fatalf("Decide = %v %q, want CheckEffect with the expectation", got, raw)
	}
	if got, _ := r.Decide(ToolEffect("a", "c2"), "c2", true, false); got != ServeJournaled {
		t.Fatalf("a returned call with an expectation: %v, want its result", got)
	}
	for _, c := range []struct {
		happened, unchanged bool
		want                ResumeAction
	}{{true, false, ServeJournaled}, {false, true, RunLive}, {false, false, AnswerInterrupted}} {
		if got := r.Checked("c1", c.happened, c.unchanged); got != c.want {
			t.Errorf("Checked(happened %v, unchanged %v) = %v, want %v", c.happened, c.unchanged, got, c.want)
		}
	}
	if r.Served != 2 || !slices.Equal(r.Interrupted, []string{"c1"}) || len(r.Retried) != 0 {
		t.Errorf("the account: served %d, interrupted %v, retried %v", r.Served, r.Interrupted, r.Retried)
	}
}
