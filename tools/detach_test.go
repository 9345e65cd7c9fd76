package tools

import (
	"context"
	"errors"
	"testing"
)

type ctxKey struct{}

// TestDetach: a detached context outlives its call's context but ends with the run's, keeps the
// call's values, and never ends without a run's context above it.
func TestDetach(t *testing.T) {
	why := errors.New("interrupted")
	run, stopRun := context.WithCancelCause(context.Background())
	runCtx := WithRunLifetime(context.WithValue(run, ctxKey{}, "v"))
	call, endCall := context.WithCancel(runCtx)

	d, release := Detach(call)
	defer release()
	endCall()
	if d.Err() != nil {
		t.Fatalf("the end of the call ended the detached work: %v", d.Err())
	}
	if d.Value(ctxKey{}) != "v" {
		t.Error("the detached context lost the call's values")
	}
	stopRun(why)
	<-d.Done()
	if !errors.Is(context.Cause(d), why) {
		t.Errorf("cause %v, want the run's", context.Cause(d))
	}

	loose, release := Detach(context.Background())
	release()
	if loose.Done() != nil {
		t.Error("without a run's context, the detached context can end")
	}

	// release ends the link to the run early; the detached context ends then, its work done.
	run2, stopRun2 := context.WithCancel(context.Background())
	defer stopRun2()
	d2, release2 := Detach(WithRunLifetime(run2))
	release2()
	if d2.Err() == nil {
		t.Error("a released detached context is still live")
	}
}
