package scenarios_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/warrenhq/warren/components"
	"github.com/warrenhq/warren/scenarios"
)

// rec builds a final record of group g for scenarios.Check tests.
func rec(name, group string, status components.StatusKind, stage, reason string, turns uint32, calls ...components.ToolCount) components.FinalRecord {
	r := components.FinalRecord{Name: name, Group: group, Status: status, Stage: stage, Reason: reason,
		Counters: components.Counters{ModelTurns: turns}}
	for _, c := range calls {
		for range c.N {
			r.ByTool.Add(c.Tool)
			r.Counters.ToolCalls++
		}
	}
	return r
}

func statusOf(k components.StatusKind) *components.StatusKind { return &k }

func intOf(n int) *int { return &n }

// twoWorkers is a small run: two done workers and one failed reviewer.
var twoWorkers = []components.FinalRecord{
	rec("w-0", "workers", components.Done, "report", "", 3, components.ToolCount{Tool: "write_file", N: 2}),
	rec("w-1", "workers", components.Done, "report", "", 3, components.ToolCount{Tool: "write_file", N: 2}),
	rec("r-0", "reviewers", components.Failed, "review", "scripted model failure: overloaded", 1),
}

func TestCheckExpectations(t *testing.T) {
	const where = "s.toml:9"
	tests := []struct {
		name    string
		expect  scenarios.Expectation
		records []components.FinalRecord
		want    []string
	}{
		{
			name:    "group holds",
			expect:  scenarios.Expectation{Group: "workers", Status: statusOf(components.Done), Stage: "report", ModelTurns: intOf(3), ToolCalls: []components.ToolCount{{Tool: "write_file", N: 2}}},
			records: twoWorkers,
		},
		{
			name:    "agent holds, other agents of any group are not checked",
			expect:  scenarios.Expectation{Agent: "r-0", Status: statusOf(components.Failed), Reason: "overloaded"},
			records: twoWorkers,
		},
		{
			name:    "unset fields are not checked",
			expect:  scenarios.Expectation{Group: "reviewers"},
			records: twoWorkers,
		},
		{
			name:    "status mismatch shows the reason",
			expect:  scenarios.Expectation{Group: "reviewers", Status: statusOf(components.Done)},
			records: twoWorkers,
			want: []string{where + `: expect[0] (group reviewers): 1 of 1 agents differ
    r-0: status is failed, want done (reason: scripted model failure: overloaded)`},
		},
		{
			name:    "status mismatch without a reason",
			expect:  scenarios.Expectation{Agent: "w-1", Status: statusOf(components.Failed)},
			records: twoWorkers,
			want: []string{where + `: expect[0] (agent w-1): 1 of 1 agents differ
    w-1: status is done, want failed`},
		},
		{
			name:    "stage mismatch",
			expect:  scenarios.Expectation{Group: "workers", Stage: "gather"},
			records: twoWorkers,
			want: []string{where + `: expect[0] (group workers): 2 of 2 agents differ
    w-0: final stage is "report", want "gather"
    w-1: final stage is "report", want "gather"`},
		},
		{
			name:    "reason must be contained",
			expect:  scenarios.Expectation{Agent: "r-0", Reason: "timeout"},
			records: twoWorkers,
			want: []string{where + `: expect[0] (agent r-0): 1 of 1 agents differ
    r-0: reason "scripted model failure: overloaded" does not contain "timeout"`},
		},
		{
			name:    "model turns mismatch",
			expect:  scenarios.Expectation{Group: "workers", ModelTurns: intOf(4)},
			records: twoWorkers,
			want: []string{where + `: expect[0] (group workers): 2 of 2 agents differ
    w-0: model turns 3, want 4
    w-1: model turns 3, want 4`},
		},
		{
			name:    "tool calls mismatch, including a tool never called",
			expect:  scenarios.Expectation{Agent: "w-0", ToolCalls: []components.ToolCount{{Tool: "read_file", N: 1}, {Tool: "write_file", N: 1}}},
			records: twoWorkers,
			want: []string{where + `: expect[0] (agent w-0): 1 of 1 agents differ
    w-0: read_file called 0 times, want 1; write_file called 2 times, want 1`},
		},
		{
			name:    "zero calls of an uncalled tool holds",
			expect:  scenarios.Expectation{Agent: "r-0", ToolCalls: []components.ToolCount{{Tool: "write_file", N: 0}}},
			records: twoWorkers,
		},
		{
			name:    "every mismatch of an agent on one line",
			expect:  scenarios.Expectation{Agent: "w-0", Status: statusOf(components.Killed), Stage: "gather", Reason: "x", ModelTurns: intOf(1)},
			records: twoWorkers,
			want: []string{where + `: expect[0] (agent w-0): 1 of 1 agents differ
    w-0: status is done, want killed; final stage is "report", want "gather"; reason "" does not contain "x"; model turns 3, want 1`},
		},
		{
			name:    "only the differing agents of a group are listed",
			expect:  scenarios.Expectation{Group: "workers", ModelTurns: intOf(3)},
			records: append(slices.Clone(twoWorkers), rec("w-2", "workers", components.Done, "report", "", 2)),
			want: []string{where + `: expect[0] (group workers): 1 of 3 agents differ
    w-2: model turns 2, want 3`},
		},
		{
			name:    "no such agent",
			expect:  scenarios.Expectation{Agent: "w-9", Status: statusOf(components.Done)},
			records: twoWorkers,
			want:    []string{where + ": expect[0] (agent w-9): no such agent in this run"},
		},
		{
			name:    "a group with no agents in the run",
			expect:  scenarios.Expectation{Group: "editors", Status: statusOf(components.Done)},
			records: twoWorkers,
			want:    []string{where + ": expect[0] (group editors): no such agent in this run"},
		},
		{
			name:    "an empty run",
			expect:  scenarios.Expectation{Group: "workers"},
			records: nil,
			want:    []string{where + ": expect[0] (group workers): no such agent in this run"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := tt.expect
			e.Where, e.Label = where, "expect[0]"
			got := scenarios.Check(&scenarios.Scenario{Expect: []scenarios.Expectation{e}}, tt.records)
			if !slices.Equal(got, tt.want) {
				t.Errorf("scenarios.Check =\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

// manyFailed returns n failed agents of group "g", named g-0 ... g-(n-1).
func manyFailed(n int) []components.FinalRecord {
	out := make([]components.FinalRecord, n)
	for i := range out {
		out[i] = rec(fmt.Sprintf("g-%d", i), "g", components.Failed, "s", "", 1)
	}
	return out
}

// TestCheckListsAtMostFive lists the first five differing agents of a group and counts the rest.
func TestCheckListsAtMostFive(t *testing.T) {
	tests := []struct {
		name   string
		agents int
		want   string
	}{
		{"five are all listed", 5, `w: expect[0] (group g): 5 of 5 agents differ
    g-0: status is failed, want done
    g-1: status is failed, want done
    g-2: status is failed, want done
    g-3: status is failed, want done
    g-4: status is failed, want done`},
		{"six list five and one more", 6, `w: expect[0] (group g): 6 of 6 agents differ
    g-0: status is failed, want done
    g-1: status is failed, want done
    g-2: status is failed, want done
    g-3: status is failed, want done
    g-4: status is failed, want done
    ... and 1 more`},
		{"a thousand list five and the rest", 1000, `w: expect[0] (group g): 1000 of 1000 agents differ
    g-0: status is failed, want done
    g-1: status is failed, want done
    g-2: status is failed, want done
    g-3: status is failed, want done
    g-4: status is failed, want done
    ... and 995 more`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sc := &scenarios.Scenario{Expect: []scenarios.Expectation{{Where: "w", Label: "expect[0]", Group: "g", Status: statusOf(components.Done)}}}
			got := scenarios.Check(sc, manyFailed(tt.agents))
			if len(got) != 1 || got[0] != tt.want {
				t.Errorf("scenarios.Check =\n%s\nwant:\n%s", strings.Join(got, "\n"), tt.want)
			}
		})
	}
}

func TestCheckRun(t *testing.T) {
	const where = "s.toml:30"
	tests := []struct {
		name string
		run  scenarios.RunExpectation
		want []string
	}{
		{
			name: "counts hold",
			run:  scenarios.RunExpectation{Status: []scenarios.StatusCount{{Status: components.Done, N: 2}, {Status: components.Failed, N: 1}, {Status: components.Killed, N: 0}}, ToolCalls: intOf(4)},
		},
		{
			name: "zero of a status no agent has holds",
			run:  scenarios.RunExpectation{Status: []scenarios.StatusCount{{Status: components.Active, N: 0}}},
		},
		{
			name: "all fails when one agent differs",
			run:  scenarios.RunExpectation{Status: []scenarios.StatusCount{{Status: components.Done, All: true}}},
			want: []string{where + ": expect_run.status.done: 2 agents done, want all (3)"},
		},
		{
			name: "a count mismatch",
			run:  scenarios.RunExpectation{Status: []scenarios.StatusCount{{Status: components.Failed, N: 0}, {Status: components.Done, N: 3}}},
			want: []string{
				where + ": expect_run.status.failed: 1 agents failed, want 0",
				where + ": expect_run.status.done: 2 agents done, want 3",
			},
		},
		{
			name: "tool call total mismatch",
			run:  scenarios.RunExpectation{ToolCalls: intOf(5)},
			want: []string{where + ": expect_run.tool_calls: 4 tool calls in the run, want 5"},
		},
		{
			name: "no tool errors holds",
			run:  scenarios.RunExpectation{ToolErrors: intOf(0)},
		},
		{
			name: "tool error total mismatch",
			run:  scenarios.RunExpectation{ToolErrors: intOf(2)},
			want: []string{where + ": expect_run.tool_errors: 0 tool errors in the run, want 2"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			re := tt.run
			re.Where = where
			got := scenarios.Check(&scenarios.Scenario{ExpectRun: &re}, twoWorkers)
			if !slices.Equal(got, tt.want) {
				t.Errorf("scenarios.Check =\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

// TestCheckRunAllOfEveryAgent: "all" counts every agent, and holds when each has the status.
func TestCheckRunAllOfEveryAgent(t *testing.T) {
	re := &scenarios.RunExpectation{Where: "w", Status: []scenarios.StatusCount{{Status: components.Failed, All: true}, {Status: components.Done, N: 0}}}
	if got := scenarios.Check(&scenarios.Scenario{ExpectRun: re}, manyFailed(7)); len(got) != 0 {
		t.Errorf("scenarios.Check = %q, want no failures", got)
	}
	got := scenarios.Check(&scenarios.Scenario{ExpectRun: re}, append(manyFailed(7), rec("d", "g", components.Done, "s", "", 1)))
	want := []string{"w: expect_run.status.failed: 7 agents failed, want all (8)", "w: expect_run.status.done: 1 agents done, want 0"}
	if !slices.Equal(got, want) {
		t.Errorf("scenarios.Check = %q, want %q", got, want)
	}
}

// TestCheckOrder reports agent expectations in file order, then the run expectation.
func TestCheckOrder(t *testing.T) {
	sc := &scenarios.Scenario{
		Expect: []scenarios.Expectation{
			{Where: "s:1", Label: "expect[0]", Agent: "w-0", Stage: "x"},
			{Where: "s:5", Label: "expect[1]", Agent: "w-0", Stage: "report"},
			{Where: "s:9", Label: "expect[2]", Agent: "nobody"},
		},
		ExpectRun: &scenarios.RunExpectation{Where: "s:12", ToolCalls: intOf(0)},
	}
	got := scenarios.Check(sc, twoWorkers)
	want := []string{
		"s:1: expect[0] (agent w-0): 1 of 1 agents differ\n    w-0: final stage is \"report\", want \"x\"",
		"s:9: expect[2] (agent nobody): no such agent in this run",
		"s:12: expect_run.tool_calls: 4 tool calls in the run, want 0",
	}
	if !slices.Equal(got, want) {
		t.Errorf("scenarios.Check =\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// readers is a run whose records carry tool errors and what their results showed of two
// watches: 0 (read_file returned "hello", matched for r-0) and 1 (read_file's results, none of
// which matched for r-0; r-1 called nothing); r-1's write_file result is watch 2's.
func readers() []components.FinalRecord {
	r0 := rec("r-0", "readers", components.Done, "read", "", 3, components.ToolCount{Tool: "read_file", N: 2})
	r0.Counters.ToolErrors = 1
	r0.Results = []components.ResultSeen{{ID: 0, Matched: true, Calls: 1}, {ID: 1, Calls: 2, Last: "open notes.md: no such file", LastError: true}}
	r1 := rec("r-1", "readers", components.Done, "read", "", 1, components.ToolCount{Tool: "write_file", N: 1})
	r1.Results = []components.ResultSeen{{ID: 2, Calls: 1, Last: "wrote 5 bytes"}}
	return []components.FinalRecord{r0, r1}
}

func boolOf(b bool) *bool { return &b }

// TestCheckToolErrorsAndResults: tool_errors is an exact count per agent, and a result
// expectation holds when the run saw a matching result; a failure says what was wanted and what
// the calls of the tool returned instead.
func TestCheckToolErrorsAndResults(t *testing.T) {
	const where = "s.toml:14"
	tests := []struct {
		name   string
		expect scenarios.Expectation
		want   []string
	}{
		{name: "tool errors hold", expect: scenarios.Expectation{Agent: "r-0", ToolErrors: intOf(1)}},
		{name: "tool errors differ", expect: scenarios.Expectation{Group: "readers", ToolErrors: intOf(1)},
			want: []string{where + `: expect[0] (group readers): 1 of 2 agents differ
    r-1: tool errors 0, want 1`}},
		{name: "a matched result holds", expect: scenarios.Expectation{Agent: "r-0",
			Results: []scenarios.ResultExpectation{{ID: 0, Tool: "read_file", Contains: "hello"}}}},
		{name: "no matching result among several calls", expect: scenarios.Expectation{Agent: "r-0",
			Results: []scenarios.ResultExpectation{{ID: 1, Tool: "read_file", Contains: "draft", OK: boolOf(true)}}},
			want: []string{where + `: expect[0] (agent r-0): 1 of 1 agents differ
    r-0: no successful read_file result contains "draft" (2 calls; the last failed: "open notes.md: no such file")`}},
		{name: "the tool was never called", expect: scenarios.Expectation{Group: "readers",
			Results: []scenarios.ResultExpectation{{ID: 0, Tool: "read_file"}}},
			want: []string{where + `: expect[0] (group readers): 1 of 2 agents differ
    r-1: no read_file result (read_file was not called)`}},
		{name: "one call that succeeded where a failure was wanted", expect: scenarios.Expectation{Agent: "r-1",
			Results: []scenarios.ResultExpectation{{ID: 2, Tool: "write_file", OK: boolOf(false)}}},
			want: []string{where + `: expect[0] (agent r-1): 1 of 1 agents differ
    r-1: no failed write_file result (1 call; it succeeded: "wrote 5 bytes")`}},
		{name: "every mismatch on one line", expect: scenarios.Expectation{Agent: "r-1", ToolErrors: intOf(3),
			Results: []scenarios.ResultExpectation{{ID: 0, Tool: "read_file"}, {ID: 2, Tool: "write_file", Contains: "6 bytes"}}},
			want: []string{where + `: expect[0] (agent r-1): 1 of 1 agents differ
    r-1: tool errors 0, want 3; no read_file result (read_file was not called); no write_file result contains "6 bytes" (1 call; it succeeded: "wrote 5 bytes")`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := tt.expect
			e.Where, e.Label = where, "expect[0]"
			got := scenarios.Check(&scenarios.Scenario{Expect: []scenarios.Expectation{e}}, readers())
			if !slices.Equal(got, tt.want) {
				t.Errorf("scenarios.Check =\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}
