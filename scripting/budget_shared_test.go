package scripting

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// callingHost is a fakeHost whose callTool runs another script on the same engine, under the
// context the calling script's host function was given, as the host's call_tool does.
type callingHost struct {
	fakeHost
	engine *Engine
	inner  *Script
}

func (h *callingHost) CallTool(ctx context.Context, _ string, args json.RawMessage) (string, error) {
	return h.engine.Run(ctx, h.inner, args, &fakeHost{}, fixedEnv())
}

// TestCalledScriptSharesItsCallersBudget: a script that another calls through callTool builds
// on its caller's memory budget (what both build counts against one max_memory), and what it
// built still counts when its caller goes on; the same calls each alone fit.
func TestCalledScriptSharesItsCallersBudget(t *testing.T) {
	const budget = 8 << 20 // a character a built-in builds costs 2 bytes: a million of them 2 MB
	engine := NewEngine(Limits{MaxMemory: budget})
	inner := mustCompile(t, "inner.js", `defineTool({name: "inner", description: "builds", parameters: {type: "object"},
  run: function (args) { return String("i".repeat(args.n).length); }});`)
	outer := mustCompile(t, "outer.js", `defineTool({name: "outer", description: "builds and calls", parameters: {type: "object"},
  run: function (args, host) {
    var before = "o".repeat(args.before).length;
    var called;
    try { called = host.callTool("inner", {n: args.inner}); } catch (e) { return "inner failed: " + e.message; }
    var after = "a".repeat(args.after).length;
    return before + " " + called + " " + after;
  }});`)
	host := &callingHost{engine: engine, inner: inner}
	tests := []struct {
		name, args string
		want       string // the result, or a substring of the error
		fails      bool
	}{
		{"each part alone fits", `{"before": 1000, "inner": 1500000, "after": 1000}`, "1000 1500000 1000", false},
		// 6 MB before, then the called script's 3 MB passes the shared 8 MiB.
		{"the called script runs out", `{"before": 3000000, "inner": 1500000, "after": 1}`, "inner failed: inner.js", false},
		// 2 MB before and 3 MB called fit; 3.4 MB more after does not, as the called 3 MB count
		// (without them the caller would have built 5.4 MB of its 8 MiB).
		{"the caller runs out after", `{"before": 1000000, "inner": 1500000, "after": 1700000}`, "memory budget", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := engine.Run(context.Background(), outer, json.RawMessage(tt.args), host, fixedEnv())
			switch {
			case tt.fails && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("Run = %q, %v; want an error containing %q", out, err, tt.want)
			case !tt.fails && err != nil:
				t.Fatalf("Run: %v", err)
			case !tt.fails && !strings.HasPrefix(out, tt.want):
				t.Fatalf("Run = %q, want it to start %q", out, tt.want)
			}
			if strings.HasPrefix(tt.want, "inner failed") && !strings.Contains(out, budgetMessage) {
				t.Errorf("the called script failed for another reason: %q", out)
			}
		})
	}
	// The called script alone, outside any caller, has the whole budget.
	if out, err := engine.Run(context.Background(), inner, json.RawMessage(`{"n": 3000000}`), &fakeHost{}, fixedEnv()); err != nil || out != "3000000" {
		t.Fatalf("inner alone = %q, %v; want 3000000", out, err)
	}
}
