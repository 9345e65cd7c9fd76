package tools

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// fakeTool is a configurable Tool for registry tests: it reports its label and counts calls.
type fakeTool struct {
	name   string
	label  string
	schema string
	inline *bool
	calls  atomic.Int64
	fail   error
}

var _ Tool = (*fakeTool)(nil)

func newFake(name, label string) *fakeTool {
	return &fakeTool{name: name, label: label, schema: `{"type":"object","additionalProperties":false}`}
}

func (f *fakeTool) Spec() Spec {
	return Spec{Name: f.name, Description: "fake " + f.label, Parameters: json.RawMessage(f.schema)}
}

func (f *fakeTool) Execute(_ *ExecContext, _ json.RawMessage) (Result, error) {
	f.calls.Add(1)
	if f.fail != nil {
		return Result{}, f.fail
	}
	return TextResult(f.label), nil
}

// inlineFake adds the Inline interface to fakeTool.
type inlineFake struct{ *fakeTool }

func (i inlineFake) Inline() bool { return *i.inline }

// newWorkdirEC returns a context whose workdir is a fresh "work" folder inside t.TempDir() (not
// yet created, so tests also cover creation on first use), plus that folder's path.
func newWorkdirEC(t *testing.T) (*ExecContext, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "work")
	return NewExecContext(context.Background(), "call-1", 1, AgentRef{ID: 7, Name: "tester"}, dir), dir
}

// run executes a tool through a Handle, like the dispatcher does.
func run(t *testing.T, tool Tool, ec *ExecContext, args string) (Result, error) {
	t.Helper()
	h, err := NewHandle(tool)
	if err != nil {
		t.Fatalf("NewHandle(%T): %v", tool, err)
	}
	return h.Execute(ec, json.RawMessage(args))
}

// mustRun is run that fails the test on error.
func mustRun(t *testing.T, tool Tool, ec *ExecContext, args string) string {
	t.Helper()
	res, err := run(t, tool, ec, args)
	if err != nil {
		t.Fatalf("%s %s: unexpected error: %v", tool.Spec().Name, args, err)
	}
	if res.IsError {
		t.Fatalf("%s %s: unexpected error result: %q", tool.Spec().Name, args, res.Content)
	}
	return res.Content
}

// wantError checks err wraps sentinel (when not nil) and its message contains every fragment.
func wantError(t *testing.T, err, sentinel error, fragments ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("expected an error wrapping %v, got nil", sentinel)
	}
	if sentinel != nil && !errors.Is(err, sentinel) {
		t.Fatalf("error %q does not wrap %v", err, sentinel)
	}
	for _, f := range fragments {
		if !strings.Contains(err.Error(), f) {
			t.Fatalf("error %q does not mention %q", err, f)
		}
	}
}
