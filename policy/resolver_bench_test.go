package policy

import "testing"

// benchResolver is a realistic configuration: a host ceiling with shell keys, a per-blueprint
// section, a three-stage blueprint and launch flags.
func benchResolver(b *testing.B) *Resolver {
	b.Helper()
	r, err := NewResolver(
		HostLayer{
			Global: map[string]Verdict{"shell:rm": Deny, "shell:git": Ask, "shell:ls": Allow, "shell:cat": Allow,
				"write_file": Ask, "github__create_issue": Ask},
			PerBlueprint: map[string]map[string]Verdict{"coder": {"shell:go": Allow, "edit_file": Allow}},
		},
		BlueprintLayer{Name: "coder", Agent: map[string]Verdict{"shell:curl": Deny},
			Stages: []map[string]Verdict{{"write_file": Deny}, {"write_file": Allow, "shell:git push": Deny}, {}}},
		Launch{Allow: []string{"shell:go test"}, Ask: []string{"spawn_agent"}},
	)
	if err != nil {
		b.Fatal(err)
	}
	return r
}

// benchSink keeps the compiler from discarding the decisions.
var benchSink Decision

func benchDecide(b *testing.B, c Call, want Verdict) {
	r := benchResolver(b)
	if d := r.Decide(c); d.Verdict != want {
		b.Fatalf("Decide(%+v) = %+v, want %v", c, d, want)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		benchSink = r.Decide(c)
	}
}

func BenchmarkDecideAllow(b *testing.B) {
	benchDecide(b, Call{Stage: 1, Tool: "read_file"}, Allow)
}

func BenchmarkDecideAsk(b *testing.B) {
	benchDecide(b, Call{Stage: 1, Tool: "github__create_issue"}, Ask)
}

func BenchmarkDecideUnknownTool(b *testing.B) {
	benchDecide(b, Call{Stage: 2, Tool: "someserver__tool"}, Ask)
}

func BenchmarkDecideShell(b *testing.B) {
	benchDecide(b, Call{Stage: 1, Tool: ShellTool, Keys: []string{"shell:ls", "shell:git status", "shell:>out.txt"}, Parsed: true}, Ask)
}

func BenchmarkDecideShellUnparsed(b *testing.B) {
	benchDecide(b, Call{Stage: 1, Tool: ShellTool}, Deny)
}

func BenchmarkCoverShell(b *testing.B) {
	r := benchResolver(b)
	g := new(Grants)
	g.Grant([]string{"shell:git status", "shell:>out.txt"}, ScopeRun, 1)
	c := Call{Stage: 1, Tool: ShellTool, Keys: []string{"shell:ls", "shell:git status", "shell:>out.txt"}, Parsed: true}
	d := r.Decide(c)
	if got := r.Cover(c, d, nil, g); got.Verdict != Allow {
		b.Fatalf("Cover = %+v", got)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		benchSink = r.Cover(c, d, nil, g)
	}
}

func BenchmarkNewResolver(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		benchResolver(b)
	}
}
