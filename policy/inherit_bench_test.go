package policy

import (
	"fmt"
	"strings"
	"testing"
)

// Deciding a tool other than shell under ceilings that are no stricter allocates nothing.
func TestDecideUnderAllocatesNothing(t *testing.T) {
	r, ceilings := inheritBenchLine(t, 4)
	for _, call := range []Call{{Stage: 1, Tool: "read_file"}, {Stage: 1, Tool: "github__create_issue"}, {Stage: 0, Tool: "mcp__unknown"}} {
		if d := r.DecideUnder(call, ceilings); d.Layer == LayerParent {
			t.Fatalf("premise: an ancestor decides %+v", d)
		}
		if n := testing.AllocsPerRun(100, func() { benchSink = r.DecideUnder(call, ceilings) }); n != 0 {
			t.Errorf("DecideUnder(%s) allocates %v times", call.Tool, n)
		}
	}
}

// inheritBenchLine is the benchmark resolver's agent under n ancestors that are no stricter for
// the tools it is measured with.
func inheritBenchLine(tb testing.TB, n int) (*Resolver, []Ceiling) {
	tb.Helper()
	host := HostLayer{
		Global:       map[string]Verdict{"shell:rm": Deny, "shell:git": Ask, "shell:ls": Allow, "write_file": Ask, "github__create_issue": Ask},
		PerBlueprint: map[string]map[string]Verdict{"coder": {"shell:go": Allow}},
	}
	child := agentSpec{name: "lead/1/1", bp: BlueprintLayer{Name: "coder", Agent: map[string]Verdict{"shell:curl": Deny},
		Stages: []map[string]Verdict{{"write_file": Deny}, {"write_file": Allow}, {}}}}
	ancestors := make([]agentSpec, n)
	for i := range ancestors {
		ancestors[i] = agentSpec{name: fmt.Sprintf("lead%s", strings.Repeat("/1", n-1-i)), stage: i % 2,
			bp: BlueprintLayer{Name: "planner", StageNames: []string{"plan", "build"}, Stages: []map[string]Verdict{{"edit_file": Deny}, nil}}}
	}
	return newLine(tb, host, child, ancestors...)
}

func BenchmarkDecideUnder(b *testing.B) {
	r, ceilings := inheritBenchLine(b, 2)
	call := Call{Stage: 1, Tool: "github__create_issue"}
	if d := r.DecideUnder(call, ceilings); d.Verdict != Ask || d.Layer == LayerParent {
		b.Fatalf("DecideUnder = %+v", d)
	}
	b.ReportAllocs()
	for b.Loop() {
		benchSink = r.DecideUnder(call, ceilings)
	}
}

func BenchmarkDecideUnderParentDecides(b *testing.B) {
	r, ceilings := inheritBenchLine(b, 2)
	call := Call{Stage: 1, Tool: "edit_file"}
	if d := r.DecideUnder(call, ceilings); d.Verdict != Deny || d.Layer != LayerParent {
		b.Fatalf("DecideUnder = %+v", d)
	}
	b.ReportAllocs()
	for b.Loop() {
		benchSink = r.DecideUnder(call, ceilings)
	}
}

func BenchmarkDecideUnderShell(b *testing.B) {
	r, ceilings := inheritBenchLine(b, 2)
	call := Call{Stage: 1, Tool: ShellTool, Keys: []string{"shell:ls", "shell:git status", "shell:>out.txt"}, Parsed: true}
	if d := r.DecideUnder(call, ceilings); d.Verdict != Ask {
		b.Fatalf("DecideUnder = %+v", d)
	}
	b.ReportAllocs()
	for b.Loop() {
		benchSink = r.DecideUnder(call, ceilings)
	}
}

func BenchmarkCoverUnderShell(b *testing.B) {
	r, ceilings := inheritBenchLine(b, 2)
	g := new(Grants)
	g.Grant([]string{"shell:git status", "shell:>out.txt"}, ScopeRun, 1)
	call := Call{Stage: 1, Tool: ShellTool, Keys: []string{"shell:ls", "shell:git status", "shell:>out.txt"}, Parsed: true}
	d := r.DecideUnder(call, ceilings)
	if got := r.CoverUnder(call, d, nil, g, ceilings); got.Verdict != Allow {
		b.Fatalf("CoverUnder = %+v", got)
	}
	b.ReportAllocs()
	for b.Loop() {
		benchSink = r.CoverUnder(call, d, nil, g, ceilings)
	}
}
