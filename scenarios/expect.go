package scenarios

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/warrenhq/warren/components"
	"github.com/warrenhq/warren/memory"
)

// Expectation is what a scenario expects of one agent, or of every agent of a group, when the
// run ends. Unset fields are not checked.
type Expectation struct {
	// Where is file:line of the [[expect]] entry; Label its key path ("expect[2]").
	Where, Label string
	Group, Agent string
	Status       *components.StatusKind
	Stage        string
	// Reason, when set, must be contained in the agent's status reason.
	Reason     string
	ModelTurns *int
	// ToolCalls are exact per-agent call counts by tool name.
	ToolCalls []components.ToolCount
	// ToolErrors, when set, is the exact number of the agent's calls that returned an error
	// result (refused by the gate, bad arguments, or failed).
	ToolErrors *int
	// Results each want some call of a tool to have returned a result with a given content
	// and kind ([[expect.results]]).
	Results []ResultExpectation
	// Memory are keys the agent's memory must hold at the end, each with its value's JSON
	// (canonical, as memory keeps it), sorted by key.
	Memory []memory.Entry
}

// ResultExpectation wants some call of Tool to have returned a result containing Contains ("":
// any content) that succeeded or failed as OK says (nil: either). The run watches for it as
// results are filed (components.ResultWatch, under ID), since the records keep counts only.
type ResultExpectation struct {
	ID       int32
	Tool     string
	Contains string
	OK       *bool
}

// want is the ResultWant of the expectation's OK.
func (x *ResultExpectation) want() components.ResultWant {
	switch {
	case x.OK == nil:
		return components.AnyResult
	case *x.OK:
		return components.OKResult
	}
	return components.ErrorResult
}

// StatusCount is an expected number of agents with one status; All means every agent.
type StatusCount struct {
	Status components.StatusKind
	N      int
	All    bool
}

// RunExpectation is what a scenario expects of the run as a whole.
type RunExpectation struct {
	Where      string
	Status     []StatusCount
	ToolCalls  *int
	ToolErrors *int
}

// maxListed bounds how many mismatching agents one failure lists.
const maxListed = 5

// Check evaluates every expectation against the final records (every agent of the run, reaped
// or not) and returns one readable failure per expectation that did not hold, in file order.
func Check(sc *Scenario, records []components.FinalRecord) []string {
	var failures []string
	for i := range sc.Expect {
		if f := checkOne(&sc.Expect[i], records); f != "" {
			failures = append(failures, f)
		}
	}
	if sc.ExpectRun != nil {
		failures = append(failures, checkRun(sc.ExpectRun, records)...)
	}
	return failures
}

func checkOne(e *Expectation, records []components.FinalRecord) string {
	subject := "group " + e.Group
	if e.Agent != "" {
		subject = "agent " + e.Agent
	}
	matched, bad := 0, 0
	var lines []string
	for i := range records {
		r := &records[i]
		if (e.Agent != "" && r.Name != e.Agent) || (e.Group != "" && r.Group != e.Group) {
			continue
		}
		matched++
		if problems := mismatches(e, r); len(problems) > 0 {
			bad++
			if len(lines) < maxListed {
				lines = append(lines, fmt.Sprintf("    %s: %s", r.Name, strings.Join(problems, "; ")))
			}
		}
	}
	head := fmt.Sprintf("%s: %s (%s)", e.Where, e.Label, subject)
	if matched == 0 {
		return head + ": no such agent in this run"
	}
	if bad == 0 {
		return ""
	}
	if bad > len(lines) {
		lines = append(lines, fmt.Sprintf("    ... and %d more", bad-len(lines)))
	}
	return fmt.Sprintf("%s: %d of %d agents differ\n%s", head, bad, matched, strings.Join(lines, "\n"))
}

// mismatches lists how record r differs from expectation e.
func mismatches(e *Expectation, r *components.FinalRecord) []string {
	var out []string
	if e.Status != nil && r.Status != *e.Status {
		msg := fmt.Sprintf("status is %s, want %s", r.Status, *e.Status)
		if r.Reason != "" {
			msg += " (reason: " + r.Reason + ")"
		}
		out = append(out, msg)
	}
	if e.Stage != "" && r.Stage != e.Stage {
		out = append(out, fmt.Sprintf("final stage is %q, want %q", r.Stage, e.Stage))
	}
	if e.Reason != "" && !strings.Contains(r.Reason, e.Reason) {
		out = append(out, fmt.Sprintf("reason %q does not contain %q", r.Reason, e.Reason))
	}
	if e.ModelTurns != nil && int(r.Counters.ModelTurns) != *e.ModelTurns {
		out = append(out, fmt.Sprintf("model turns %d, want %d", r.Counters.ModelTurns, *e.ModelTurns))
	}
	for _, tc := range e.ToolCalls {
		if got := r.ByTool.Of(tc.Tool); got != tc.N {
			out = append(out, fmt.Sprintf("%s called %d times, want %d", tc.Tool, got, tc.N))
		}
	}
	if e.ToolErrors != nil && int(r.Counters.ToolErrors) != *e.ToolErrors {
		out = append(out, fmt.Sprintf("tool errors %d, want %d", r.Counters.ToolErrors, *e.ToolErrors))
	}
	for _, want := range e.Memory {
		got, ok := recordMemory(r, want.Key)
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("memory.%s is not set, want %s", want.Key, want.JSON))
		case got != want.JSON:
			out = append(out, fmt.Sprintf("memory.%s is %s, want %s", want.Key, got, want.JSON))
		}
	}
	for i := range e.Results {
		x := &e.Results[i]
		if seen, _ := r.Seen(x.ID); !seen.Matched {
			out = append(out, resultMismatch(x, seen))
		}
	}
	return out
}

// recordMemory is the JSON the final memory of r holds under key.
func recordMemory(r *components.FinalRecord, key string) (string, bool) {
	i, ok := slices.BinarySearchFunc(r.Memory, key, func(e memory.Entry, k string) int { return strings.Compare(e.Key, k) })
	if !ok {
		return "", false
	}
	return r.Memory[i].JSON, true
}

// resultMismatch says that no result matched x: "no successful read_file result contains
// "hello" (2 calls; the last failed: "...")".
func resultMismatch(x *ResultExpectation, seen components.ResultSeen) string {
	var b strings.Builder
	b.WriteString("no ")
	switch x.want() {
	case components.OKResult:
		b.WriteString("successful ")
	case components.ErrorResult:
		b.WriteString("failed ")
	}
	b.WriteString(x.Tool + " result")
	if x.Contains != "" {
		b.WriteString(" contains " + strconv.Quote(x.Contains))
	}
	switch seen.Calls {
	case 0:
		b.WriteString(" (" + x.Tool + " was not called)")
		return b.String()
	case 1:
		b.WriteString(" (1 call; it ")
	default:
		fmt.Fprintf(&b, " (%d calls; the last ", seen.Calls)
	}
	if seen.LastError {
		b.WriteString("failed: ")
	} else {
		b.WriteString("succeeded: ")
	}
	b.WriteString(strconv.Quote(seen.Last) + ")")
	return b.String()
}

func checkRun(re *RunExpectation, records []components.FinalRecord) []string {
	counts := make([]int, len(components.StatusNames))
	total, errs := 0, 0
	for i := range records {
		counts[records[i].Status]++
		total += int(records[i].Counters.ToolCalls)
		errs += int(records[i].Counters.ToolErrors)
	}
	var out []string
	for _, sc := range re.Status {
		want := sc.N
		label := fmt.Sprint(want)
		if sc.All {
			want, label = len(records), fmt.Sprintf("all (%d)", len(records))
		}
		if got := counts[sc.Status]; got != want {
			out = append(out, fmt.Sprintf("%s: expect_run.status.%s: %d agents %s, want %s", re.Where, sc.Status, got, sc.Status, label))
		}
	}
	if re.ToolCalls != nil && total != *re.ToolCalls {
		out = append(out, fmt.Sprintf("%s: expect_run.tool_calls: %d tool calls in the run, want %d", re.Where, total, *re.ToolCalls))
	}
	if re.ToolErrors != nil && errs != *re.ToolErrors {
		out = append(out, fmt.Sprintf("%s: expect_run.tool_errors: %d tool errors in the run, want %d", re.Where, errs, *re.ToolErrors))
	}
	return out
}
