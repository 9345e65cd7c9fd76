package trace

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/rs/zerolog"

	"github.com/warrenhq/warren/internal/version"
)

var testHeader = Header{Scenario: "smoke", ScenarioHash: "sha256:abc", Clock: ClockVirtual, Seed: 42}

// writeSample writes one event of every kind.
func writeSample(t testing.TB, w *Writer) {
	t.Helper()
	a := AgentRef{ID: 1, Name: "worker-0"}
	w.Spawn(0, a, "workers", 0, "coder", "scripted:worker", "read a.txt and review it")
	w.StageEnter(0, a, "plan", 1)
	w.ModelTurn(1, a, "plan", "scripted:planner", 0, "reading", 1, "", nil)
	w.ToolCall(1, a, "plan", "worker-0-t0-c0", "read_file", json.RawMessage(`{"path": "a.txt"}`), []string{"read_file"}, "allow", "default", "read-only tool")
	w.ToolResult(2, a, "plan", "worker-0-t0-c0", "read_file", true, "hello\n")
	w.ModelTurn(3, a, "plan", "scripted:planner", 1, "", 0, "rate limited", nil)
	w.Transition(3, a, "plan", "review", "error", "", "")
	w.Terminal(4, a, "failed", "model error", "review")
	w.Reap(5, a, "failed", 2, 1, 0, nil)
	w.End(5, RunFinished, 6, 1, 2, 1, 0, nil)
}

func TestWriterGolden(t *testing.T) {
	var out bytes.Buffer
	w, err := NewWriter(&out, testHeader)
	if err != nil {
		t.Fatal(err)
	}
	writeSample(t, w)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	want := strings.Join([]string{
		`{"format":"warren-trace","version":5,"host_version":"` + version.Warren + `","scenario":"smoke","scenario_hash":"sha256:abc","seed":42,"clock":"virtual","fields":` + string(headerFields) + `}`,
		`{"tick":0,"seq":1,"agent":1,"name":"worker-0","kind":"spawn","group":"workers","index":0,"blueprint":"coder","model":"scripted:worker","task":"read a.txt and review it"}`,
		`{"tick":0,"seq":2,"agent":1,"name":"worker-0","kind":"stage_enter","stage":"plan","visit":1}`,
		`{"tick":1,"seq":3,"agent":1,"name":"worker-0","kind":"model_turn","stage":"plan","model":"scripted:planner","iteration":0,"text":"reading","calls":1}`,
		`{"tick":1,"seq":4,"agent":1,"name":"worker-0","kind":"tool_call","stage":"plan","call_id":"worker-0-t0-c0","tool":"read_file","args":{"path":"a.txt"},"keys":["read_file"],"verdict":"allow","layer":"default","reason":"read-only tool"}`,
		`{"tick":2,"seq":5,"agent":1,"name":"worker-0","kind":"tool_result","stage":"plan","call_id":"worker-0-t0-c0","tool":"read_file","ok":true,"content":"hello\n"}`,
		`{"tick":3,"seq":6,"agent":1,"name":"worker-0","kind":"model_turn","stage":"plan","model":"scripted:planner","iteration":1,"text":"","calls":0,"error":"rate limited"}`,
		`{"tick":3,"seq":7,"agent":1,"name":"worker-0","kind":"transition","from":"plan","to":"review","on":"error"}`,
		`{"tick":4,"seq":8,"agent":1,"name":"worker-0","kind":"terminal","status":"failed","reason":"model error","stage":"review"}`,
		`{"tick":5,"seq":9,"agent":1,"name":"worker-0","kind":"reap","status":"failed","model_turns":2,"tool_calls":1,"tool_errors":0}`,
		`{"tick":5,"seq":10,"agent":0,"name":"","kind":"end","status":"finished","ticks":6,"agents":1,"events":9,"model_turns":2,"tool_calls":1,"tool_errors":0}`,
	}, "\n") + "\n"
	if out.String() != want {
		t.Errorf("trace bytes differ\n got:\n%s\nwant:\n%s", out.String(), want)
	}
	if w.Events() != 10 {
		t.Errorf("Events() = %d, want 10", w.Events())
	}
	// The shipped golden file must stay in step with the writer.
	report, err := Compare("testdata/sample.jsonl", writeTemp(t, out.Bytes()))
	if err != nil || report != "" {
		t.Errorf("testdata/sample.jsonl differs from the writer's output: %v\n%s", err, report)
	}
}

func TestNilWriterIsANoOp(t *testing.T) {
	var w *Writer
	if w.Enabled() {
		t.Error("nil writer reports Enabled")
	}
	writeSample(t, w) // must not panic
	if w.Events() != 0 || w.Flush() != nil || w.Close() != nil {
		t.Error("nil writer methods must be no-ops returning zero values")
	}
}

func TestNewWriterRejectsBadInput(t *testing.T) {
	tests := []struct {
		name string
		out  *bytes.Buffer
		h    Header
	}{
		{"empty clock", &bytes.Buffer{}, Header{Scenario: "s"}},
		{"unknown clock", &bytes.Buffer{}, Header{Scenario: "s", Clock: "sundial"}},
		{"nil writer", nil, testHeader},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var err error
			if tt.out == nil {
				_, err = NewWriter(nil, tt.h)
			} else {
				_, err = NewWriter(tt.out, tt.h)
			}
			if !errors.Is(err, ErrBadHeader) {
				t.Errorf("NewWriter error = %v, want ErrBadHeader", err)
			}
		})
	}
}

func TestToolCallArgs(t *testing.T) {
	tests := []struct {
		name string
		args json.RawMessage
		want string
	}{
		{"compact object", json.RawMessage(`{"a":1}`), `{"a":1}`},
		{"multi-line object is compacted", json.RawMessage("{\n  \"a\": [1, 2],\n  \"b\": \"x y\"\n}\n"), `{"a":[1,2],"b":"x y"}`},
		{"empty", nil, `null`},
		{"truncated JSON", json.RawMessage(`{"a":`), `"{\"a\":"`},
		{"two values", json.RawMessage(`{} {}`), `"{} {}"`},
		{"not JSON with a newline", json.RawMessage("rm -rf /\nnow"), `"rm -rf /\nnow"`},
		{"invalid UTF-8", json.RawMessage("{\"a\":\"\xff\"}"), `"{\"a\":\"\ufffd\"}"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			w, _ := NewWriter(&out, testHeader)
			w.ToolCall(1, AgentRef{ID: 1, Name: "a"}, "s", "c", "shell", tt.args, []string{"shell"}, "ask", "stage", "r")
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			line := lastLine(t, out.Bytes())
			var ev struct{ Args json.RawMessage }
			if err := json.Unmarshal(line, &ev); err != nil {
				t.Fatalf("line is not valid JSON: %v\n%s", err, line)
			}
			if string(ev.Args) != tt.want {
				t.Errorf("args = %s, want %s", ev.Args, tt.want)
			}
		})
	}
}

func TestToolResultTruncation(t *testing.T) {
	tests := []struct {
		name        string
		content     string
		wantContent string
	}{
		{"at the limit", strings.Repeat("a", MaxContentBytes), strings.Repeat("a", MaxContentBytes)},
		{"one over", strings.Repeat("a", MaxContentBytes+1), strings.Repeat("a", MaxContentBytes) + " …[truncated 1 bytes]"},
		{"far over", strings.Repeat("b", 10000), strings.Repeat("b", MaxContentBytes) + " …[truncated 7952 bytes]"},
		{
			// "é" is two bytes; the cut must not split it.
			"multi-byte rune across the limit",
			strings.Repeat("a", MaxContentBytes-1) + "é" + "zz",
			strings.Repeat("a", MaxContentBytes-1) + " …[truncated 4 bytes]",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			w, _ := NewWriter(&out, testHeader)
			w.ToolResult(1, AgentRef{ID: 1, Name: "a"}, "s", "c", "shell", false, tt.content)
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			var ev struct {
				Content string
				OK      *bool
			}
			line := lastLine(t, out.Bytes())
			if err := json.Unmarshal(line, &ev); err != nil {
				t.Fatal(err)
			}
			if ev.Content != tt.wantContent {
				t.Errorf("content = %q…, want %q… (len %d, want %d)", head(ev.Content), head(tt.wantContent), len(ev.Content), len(tt.wantContent))
			}
			if !utf8.ValidString(ev.Content) || ev.OK == nil || *ev.OK {
				t.Errorf("content valid UTF-8 = %v, ok = %v", utf8.ValidString(ev.Content), ev.OK)
			}
		})
	}
}

func head(s string) string { return s[max(len(s)-40, 0):] }

func TestWriterAfterClose(t *testing.T) {
	var out bytes.Buffer
	w, _ := NewWriter(&out, testHeader)
	w.StageEnter(0, AgentRef{ID: 1, Name: "a"}, "s", 1)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	size := out.Len()
	w.StageEnter(1, AgentRef{ID: 1, Name: "a"}, "s", 2)
	if w.Enabled() || out.Len() != size || w.Events() != 1 {
		t.Errorf("event written after Close (enabled %v, events %d)", w.Enabled(), w.Events())
	}
	if err := w.Close(); !errors.Is(err, ErrClosed) {
		t.Errorf("second Close = %v, want ErrClosed", err)
	}
	if err := w.Flush(); !errors.Is(err, ErrClosed) {
		t.Errorf("Flush after Close = %v, want ErrClosed", err)
	}
}

// failingWriter fails every write, like a full disk.
// failingWriter takes the header (which NewWriter writes through at once), then fails every
// write.
type failingWriter struct{ calls, header int }

var errDiskFull = errors.New("disk full")

func (f *failingWriter) Write(p []byte) (int, error) {
	if f.header == 0 {
		f.header++
		return len(p), nil
	}
	f.calls++
	return 0, errDiskFull
}

func TestWriterReportsWriteErrors(t *testing.T) {
	fw := &failingWriter{header: 1} // fails from the header on
	w, err := NewWriter(fw, testHeader)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); !errors.Is(err, errDiskFull) {
		t.Fatalf("Flush = %v, want the write error", err)
	}
	w.StageEnter(0, AgentRef{ID: 1, Name: "a"}, "s", 1)
	if err := w.Close(); !errors.Is(err, errDiskFull) {
		t.Errorf("Close = %v, want the sticky write error", err)
	}
	if fw.calls != 1 {
		t.Errorf("underlying writer called %d times after failing, want 1", fw.calls)
	}
}

func TestWriterReportsSuppressedEvents(t *testing.T) {
	var out bytes.Buffer
	w, err := NewWriter(&out, testHeader)
	if err != nil {
		t.Fatal(err)
	}
	old := zerolog.GlobalLevel()
	zerolog.SetGlobalLevel(zerolog.Disabled)
	w.StageEnter(0, AgentRef{ID: 1, Name: "a"}, "s", 1)
	_, newErr := NewWriter(&bytes.Buffer{}, testHeader)
	zerolog.SetGlobalLevel(old)
	if !errors.Is(newErr, ErrSuppressed) {
		t.Errorf("NewWriter while disabled = %v, want ErrSuppressed", newErr)
	}
	if err := w.Close(); !errors.Is(err, ErrSuppressed) {
		t.Errorf("Close = %v, want ErrSuppressed", err)
	}
	if w.Events() != 0 {
		t.Errorf("Events() = %d, want 0 (nothing was written)", w.Events())
	}
}

func TestHashScenario(t *testing.T) {
	got := HashScenario([]byte("abc"))
	want := "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
	if got != want {
		t.Errorf("HashScenario = %s, want %s", got, want)
	}
}

func lastLine(t *testing.T, b []byte) []byte {
	t.Helper()
	lines := bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n"))
	if len(lines) < 2 {
		t.Fatalf("trace has no event line:\n%s", b)
	}
	return lines[len(lines)-1]
}

func TestPromptAndAnswerEvents(t *testing.T) {
	var out bytes.Buffer
	w, err := NewWriter(&out, testHeader)
	if err != nil {
		t.Fatal(err)
	}
	a := AgentRef{ID: 3, Name: "writer-2"}
	w.Prompt(2, a, "draft", "writer-2-t0-c1", "write_file", "approval", []string{"write_file"}, "", 102)
	w.Answer(3, a, "draft", "writer-2-t0-c1", "write_file", "stage", "script", "allow")
	w.Prompt(4, a, "draft", "writer-2-t1-c0", "ask_user_text", "question", nil, "Which color?", 104)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")[1:]
	want := []string{
		`{"tick":2,"seq":1,"agent":3,"name":"writer-2","kind":"prompt","stage":"draft","call_id":"writer-2-t0-c1","tool":"write_file","prompt":"approval","keys":["write_file"],"text":"","deadline":102}`,
		`{"tick":3,"seq":2,"agent":3,"name":"writer-2","kind":"answer","stage":"draft","call_id":"writer-2-t0-c1","tool":"write_file","answer":"stage","by":"script","verdict":"allow"}`,
		`{"tick":4,"seq":3,"agent":3,"name":"writer-2","kind":"prompt","stage":"draft","call_id":"writer-2-t1-c0","tool":"ask_user_text","prompt":"question","keys":[],"text":"Which color?","deadline":104}`,
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("events\n got:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
}

func TestContinueNumbersOnWithoutAHeader(t *testing.T) {
	var buf bytes.Buffer
	w, err := NewWriter(&buf, Header{Scenario: "s", ScenarioHash: "sha256:00", Clock: ClockVirtual, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	a := AgentRef{ID: 1, Name: "a"}
	w.Spawn(0, a, "g", 0, "bp", "m", "task")
	w.StageEnter(0, a, "work", 1)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	rest := bytes.NewBuffer(bytes.Clone(buf.Bytes()))
	c, err := Continue(rest, w.Events())
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range []*Writer{w, c} {
		x.ToolResult(3, a, "work", "c1", "shell", true, "ok")
		x.Terminal(4, a, "done", "", "work")
		if err := x.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	if rest.String() != buf.String() || c.Events() != 4 {
		t.Fatalf("continued trace (%d events)\n%s\nthe original\n%s", c.Events(), rest, &buf)
	}
}

// TestConditionalTransitionAndMemory: a transition a condition chose names it, and a set's
// write is a memory event whose value is the JSON text ("null" when removed).
func TestConditionalTransitionAndMemory(t *testing.T) {
	var out bytes.Buffer
	w, err := NewWriter(&out, testHeader)
	if err != nil {
		t.Fatal(err)
	}
	a := AgentRef{ID: 1, Name: "writer-0"}
	w.Transition(3, a, "review", "work", "done", `result.verdict == "revise"`, "")
	w.Memory(3, a, "review", "notes", `{"n":2}`)
	w.Memory(3, a, "review", "draft", "")
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	want := []string{
		`{"tick":3,"seq":1,"agent":1,"name":"writer-0","kind":"transition","from":"review","to":"work","on":"done","when":"result.verdict == \"revise\""}`,
		`{"tick":3,"seq":2,"agent":1,"name":"writer-0","kind":"memory","stage":"review","key":"notes","value":"{\"n\":2}"}`,
		`{"tick":3,"seq":3,"agent":1,"name":"writer-0","kind":"memory","stage":"review","key":"draft","value":"null"}`,
	}
	if len(lines) < 4 || !slices.Equal(lines[1:4], want) {
		t.Fatalf("events:\n%s\nwant:\n%s", strings.Join(lines[1:], "\n"), strings.Join(want, "\n"))
	}
}
