package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
)

// BenchmarkValidate measures argument validation of a typical call (the per-call cost of the
// schema gate).
func BenchmarkValidate(b *testing.B) {
	h, err := NewHandle(ReadFile{})
	if err != nil {
		b.Fatal(err)
	}
	args := json.RawMessage(`{"path":"src/main.go","offset":120,"limit":40}`)
	b.ReportAllocs()
	for b.Loop() {
		if err := h.Validate(args); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkScopedLookup resolves a base tool through three scopes of shadowing tools: the
// worst-case name resolution a stage-scoped agent pays per call.
func BenchmarkScopedLookup(b *testing.B) {
	base := NewRegistry()
	if err := RegisterBuiltins(base); err != nil {
		b.Fatal(err)
	}
	s := NewScoped(base)
	for depth := range 3 {
		id := s.PushScope()
		for i := range 8 {
			if _, err := s.RegisterInScope(id, newFake(fmt.Sprintf("scoped_%d_%d", depth, i), "x")); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := s.Lookup(NameReadFile); !ok {
			b.Fatal("not found")
		}
	}
}

// BenchmarkTodoAdd runs todo_add through its Handle (validation included), as the inline
// dispatch path does, spreading calls over agents the way a populated world would.
func BenchmarkTodoAdd(b *testing.B) {
	h, err := NewHandle(TodoAdd{})
	if err != nil {
		b.Fatal(err)
	}
	broker := NewTaskBroker()
	ec := NewExecContext(context.Background(), "call", 1, AgentRef{}, "")
	ec.Tasks = broker
	args := json.RawMessage(`{"text":"write the report"}`)
	const perAgent = MaxTasksPerAgent
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if i%perAgent == 0 {
			broker.Release(ec.Agent.ID)
			ec.Agent.ID++
		}
		i++
		if _, err := h.Execute(ec, args); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWriteBudgetCharge charges one shared run budget from every P, as the lane workers of
// one agent do: the cost every write_file and edit_file call pays before touching the disk.
func BenchmarkWriteBudgetCharge(b *testing.B) {
	budget := NewWriteBudget(1<<20, 1<<62)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := budget.Charge(512); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkAskChoiceRoundTrip builds a choice question from its arguments and answers it: the
// host's per-question work on the hub path.
func BenchmarkAskChoiceRoundTrip(b *testing.B) {
	tool := AskUserChoice{}
	args := json.RawMessage(`{"question":"Which branch should I merge into?","choices":["main","develop","release/1.4"]}`)
	b.ReportAllocs()
	for b.Loop() {
		q, err := tool.Question(args)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := tool.Answer(q, "develop"); err != nil {
			b.Fatal(err)
		}
	}
}
