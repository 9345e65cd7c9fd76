package trace

import (
	"encoding/json"
	"io"
	"testing"
)

func newBenchWriter(b *testing.B) *Writer {
	b.Helper()
	w, err := NewWriter(io.Discard, testHeader)
	if err != nil {
		b.Fatal(err)
	}
	return w
}

func BenchmarkToolCallEvent(b *testing.B) {
	w := newBenchWriter(b)
	a := AgentRef{ID: 12345, Name: "worker-12345"}
	args := json.RawMessage(`{"path":"/work/worker-12345/notes.txt","limit":200}`)
	b.ReportAllocs()
	var tick uint64
	for b.Loop() {
		tick++
		w.ToolCall(tick, a, "gather", "worker-12345-t3-c0", "read_file", args, []string{"read_file"}, "allow", "default", "read-only tool")
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkWriterStep is one agent step: a model turn, its tool call and the result.
func BenchmarkWriterStep(b *testing.B) {
	w := newBenchWriter(b)
	a := AgentRef{ID: 12345, Name: "worker-12345"}
	args := json.RawMessage(`{"command": "go test ./...", "timeout": 60}`)
	b.ReportAllocs()
	var tick uint64
	for b.Loop() {
		tick++
		w.ModelTurn(tick, a, "build", "scripted:builder", 2, "running the tests", 1, "", nil)
		w.ToolCall(tick, a, "build", "worker-12345-t3-c0", "shell", args, []string{"shell:git push", "shell:>out.txt"}, "ask", "stage", "shell defaults to ask")
		w.ToolResult(tick+1, a, "build", "worker-12345-t3-c0", "shell", true, "ok  \tgithub.com/x/y\t0.012s\n")
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
}

func BenchmarkDisabledWriter(b *testing.B) {
	var w *Writer
	a := AgentRef{ID: 1, Name: "a"}
	b.ReportAllocs()
	for b.Loop() {
		w.ToolCall(1, a, "s", "c", "t", nil, nil, "allow", "default", "")
	}
}

// BenchmarkMessageEvent is the hottest sub-agent event: every send_to_agent and every
// child's end reported to its parent.
func BenchmarkMessageEvent(b *testing.B) {
	w := newBenchWriter(b)
	to := AgentRef{ID: 12345, Name: "planner-12/3"}
	from := AgentRef{ID: 12, Name: "planner-12"}
	b.ReportAllocs()
	var tick uint64
	for b.Loop() {
		tick++
		w.Message(tick, to, from, "send", "check the parser's error path before the lexer")
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkFanOutWorker is one fan-out worker's life as the parent's trace sees it.
func BenchmarkFanOutWorker(b *testing.B) {
	w := newBenchWriter(b)
	parent := AgentRef{ID: 12, Name: "planner-12"}
	worker := AgentRef{ID: 12345, Name: "planner-12/3"}
	b.ReportAllocs()
	var tick uint64
	for b.Loop() {
		tick++
		w.SpawnChild(tick, worker, "planners", 3, "coder", "scripted:coder", "src/parser.go", parent, "planner-12-t0-c0", 1, false, 3)
		w.WorkerEnd(tick+1, parent, "planner-12-t0-c0", 3, worker, "done")
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
}

func BenchmarkDisabledWriterKill(b *testing.B) {
	var w *Writer
	a := AgentRef{ID: 1, Name: "a"}
	cascade := []string{"a", "a/1"}
	b.ReportAllocs()
	for b.Loop() {
		w.Kill(1, a, a, "kill_agent", cascade)
	}
}
