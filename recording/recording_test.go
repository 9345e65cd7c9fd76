package recording

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// record writes a small recording: two calls (one finished, one left unfinished), a background
// report, an MCP batch of each kind, a fan-out's items and an answer.
func record(t testing.TB) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, Header{Scenario: "s", ScenarioFile: "/s.toml", Clock: "virtual", Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	w.Begin(3, 1, Call{Agent: "a-0", Turn: 0, Index: 0, ID: "a-0-t0-c0", Tool: "shell", Args: json.RawMessage(`{ "command": "ls" }`)})
	w.Begin(3, 2, Call{Agent: "a-1", Turn: 2, Index: 1, ID: "a-1-t2-c1", Tool: "read_file", Args: json.RawMessage(`{"path":"x"}`)})
	w.Finish(4, 1, 0, Result{OK: true, Content: strings.Repeat("long output ", 400), Notes: []Note{{Fn: "sandbox", Text: "none", OK: true}},
		Detached: true, Ops: []Op{{Fn: "readFile", Request: hashText("x"), Out: json.RawMessage(`"text"`)}}})
	w.Finish(4, 9, 0, Result{OK: true}) // never begun: ignored
	w.Background(5, "a-0", "a-0-t0-c0", "done: exit 0")
	w.MCP(1, 0, false, []MCPEvent{{Server: "demo", Event: "start", Session: 1, Transport: "stdio"}})
	w.MCP(6, 0, true, []MCPEvent{{Server: "demo", Event: "stop", Session: 1, Transport: "stdio", Reason: "run ended"}})
	w.MCP(6, 0, false, nil) // nothing to write
	w.Items(2, Items{Agent: "a-0", CallID: "a-0-t1-c0", File: "items.txt", Items: []string{"one", "two"}})
	w.Answer(Answer{N: 1, Agent: "a-1", Tool: "shell", Answer: "once", Delay: 2, OK: true})
	if err := w.Close("finished", "fixed_point"); err != nil {
		t.Fatal(err)
	}
	w.Background(9, "late", "x", "dropped after Close")
	return buf.Bytes()
}

func TestRoundTrip(t *testing.T) {
	tape, err := Read(bytes.NewReader(record(t)))
	if err != nil {
		t.Fatal(err)
	}
	if tape.Header.Format != Format || tape.Header.Version != Version || tape.Header.Seed != 7 {
		t.Fatalf("header = %+v", tape.Header)
	}
	if tape.End.Status != "finished" || tape.End.Stop != "fixed_point" || tape.End.Entries != 7 || tape.Calls() != 2 {
		t.Fatalf("end = %+v, calls %d", tape.End, tape.Calls())
	}
	// Whitespace in the arguments is not a change of request.
	e, err := tape.Tool(3, Call{Agent: "a-0", ID: "a-0-t0-c0", Tool: "shell", Args: json.RawMessage(`{"command":"ls"}`)})
	if err != nil {
		t.Fatal(err)
	}
	r := e.Result()
	if !r.OK || len(r.Content) != 4800 || !r.Detached || len(r.Notes) != 1 || len(r.Ops) != 1 || string(r.Ops[0].Out) != `"text"` {
		t.Fatalf("result kept whole? %+v", r)
	}
	if tape.Unused() != 1 {
		t.Fatalf("unused = %d, want 1", tape.Unused())
	}
	if u, _ := tape.Tool(3, Call{Agent: "a-1", ID: "a-1-t2-c1", Tool: "read_file", Args: json.RawMessage(`{"path":"x"}`)}); u.Status != StatusUnfinished {
		t.Fatalf("the call never filed is %q, want %q", u.Status, StatusUnfinished)
	}
	if rep, ok := tape.Background("a-0", "a-0-t0-c0"); !ok || rep != "done: exit 0" {
		t.Fatalf("background = %q %v", rep, ok)
	}
	if got := tape.MCP(1, 0, false); len(got) != 1 || got[0].Event != "start" {
		t.Fatalf("mcp at 1 = %+v", got)
	}
	if got := tape.MCP(6, 0, false); len(got) != 0 {
		t.Fatalf("tick 6's first batch = %+v, want none (the stop was written at the end)", got)
	}
	if got := tape.MCP(6, 0, true); len(got) != 1 || got[0].Reason != "run ended" {
		t.Fatalf("closing batch = %+v", got)
	}
	if it, err := tape.Items(2, "a-0", "a-0-t1-c0", "items.txt"); err != nil || len(it.Items) != 2 {
		t.Fatalf("items = %+v, %v", it, err)
	}
	if _, err := tape.Items(2, "a-0", "a-0-t1-c0", "other.txt"); !errors.Is(err, ErrDivergence) {
		t.Fatalf("items of another file: %v", err)
	}
	if a, err := tape.Answer(1, "a-1", "shell"); err != nil || a.Answer != "once" || a.Delay != 2 {
		t.Fatalf("answer = %+v, %v", a, err)
	}
	if _, err := tape.Answer(2, "a-1", "shell"); !errors.Is(err, ErrDivergence) {
		t.Fatalf("an answer past the recorded ones: %v", err)
	}
}

func TestDivergence(t *testing.T) {
	tape, err := Read(bytes.NewReader(record(t)))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		call Call
		want []string
	}{
		{"missing call", Call{Agent: "a-0", Turn: 4, Index: 2, ID: "a-0-t4-c2", Tool: "shell", Args: json.RawMessage(`{}`)},
			[]string{"tick 9", "agent a-0, turn 4, call 2 (a-0-t4-c2), tool shell", "the recording has no such call"}},
		{"other arguments", Call{Agent: "a-0", ID: "a-0-t0-c0", Tool: "shell", Args: json.RawMessage(`{"command":"ls -la"}`)},
			[]string{"the arguments differ", `first difference at byte 14`, `recorded: {"command":"ls"}`, `replay:   {"command":"ls -la"}`}},
		{"other tool", Call{Agent: "a-0", ID: "a-0-t0-c0", Tool: "read_file", Args: json.RawMessage(`{"command":"ls"}`)},
			[]string{"the recording's call a-0-t0-c0 is to tool shell"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tape.Tool(9, tc.call)
			var d *DivergenceError
			if !errors.As(err, &d) || !errors.Is(err, ErrDivergence) {
				t.Fatalf("err = %v, want a *DivergenceError", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
		})
	}
}

func TestReadRefuses(t *testing.T) {
	good := record(t)
	lines := strings.SplitAfter(string(good), "\n")
	for _, tc := range []struct {
		name, input, want string
	}{
		{"empty", "", "empty input"},
		{"another format", `{"format":"warren-trace","version":4}` + "\n", `format "warren-trace" version 4`},
		{"cut off", strings.Join(lines[:len(lines)-2], ""), "no end line after line 8: the run that wrote it was cut off"},
		{"cut mid-line", string(good[:len(good)-20]), "line 9 is cut in the middle: the run that wrote it was cut off"},
		{"unknown kind", lines[0] + `{"kind":"tape"}` + "\n" + lines[len(lines)-2], `kind "tape" (valid: tool, background, mcp, items, dynamic, model_limit, model, pass, handed, answer, operator, end)`},
		{"unknown key", lines[0] + `{"kind":"background","tick":1,"agent":"a","call_id":"c","report":"r","extra":1}` + "\n", `line 2: unknown key "extra"; valid keys: agent, call_id, kind, report, tick`},
		{"entry after end", string(good) + lines[1], "follows the end line"},
		{"count mismatch", lines[0] + lines[1] + lines[len(lines)-2], "the end line counts 7 entries, the file has 1"},
		{"twice", lines[0] + lines[1] + lines[1] + `{"kind":"end","entries":2,"status":"x"}` + "\n", "call a-0-t0-c0 of agent a-0 is recorded twice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Read(strings.NewReader(tc.input))
			if !errors.Is(err, ErrBadRecording) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want ErrBadRecording with %q", err, tc.want)
			}
		})
	}
}

func TestOutsideRecordAndPlay(t *testing.T) {
	rec := &Recorder{}
	var out string
	if err := rec.Do("readFile", "notes.md", &out, func() error { out = "hello"; return nil }); err != nil || out != "hello" {
		t.Fatal(err, out)
	}
	if err := rec.Do("httpGet", "GET http://x", &out, func() error { return errors.New("connection refused") }); err == nil {
		t.Fatal("the live error must come back")
	}
	if v, err := rec.Secret("env", "TOKEN", func() (string, error) { return "s3cret", nil }); v != "s3cret" || err != nil {
		t.Fatal(v, err)
	}
	ops := rec.Ops()
	raw, _ := json.Marshal(ops)
	if strings.Contains(string(raw), "s3cret") || strings.Contains(string(raw), "notes.md") {
		t.Fatalf("a recorded op keeps a secret or a request in clear: %s", raw)
	}

	play := &Player{Call: Call{Agent: "a", ID: "a-t0-c0", Tool: "word_count"}, Ops: ops}
	out = ""
	if err := play.Do("readFile", "notes.md", &out, func() error { t.Fatal("a replay must not call live"); return nil }); err != nil || out != "hello" {
		t.Fatal(err, out)
	}
	if err := play.Do("httpGet", "GET http://x", &out, nil); err == nil || err.Error() != "connection refused" {
		t.Fatalf("recorded error = %v", err)
	}
	if _, err := play.Secret("env", "TOKEN", func() (string, error) { return "x-changed-x", nil }); !errors.Is(err, ErrDivergence) ||
		strings.Contains(err.Error(), "x-changed-x") || strings.Contains(err.Error(), "s3cret") {
		t.Fatalf("a changed secret: %v", err)
	}
	if !errors.Is(play.Err(), ErrDivergence) {
		t.Fatalf("Err does not report the divergence: %v", play.Err())
	}
	play = &Player{Ops: ops, Call: Call{Agent: "a"}}
	if err := play.Do("readFile", "other.md", &out, nil); err == nil || !strings.Contains(err.Error(), "request 1 of the call (readFile) asks something else") {
		t.Fatalf("another request: %v", err)
	}
	if err := play.Do("readFile", "notes.md", &out, nil); err != play.Err() {
		t.Fatalf("a call that left its recording must fail every later request the same way: %v", err)
	}
	play = &Player{Ops: ops, Call: Call{Agent: "a"}, next: 1}
	if err := play.Do("listDir", ".", &out, nil); err == nil || !strings.Contains(err.Error(), "request 2 of the call is listDir; the recording's is httpGet") {
		t.Fatalf("another function: %v", err)
	}
	play = &Player{Ops: ops, Call: Call{Agent: "a"}, next: len(ops)}
	if err := play.Do("readFile", "x", &out, nil); err == nil || !strings.Contains(err.Error(), "request 4 of the call (readFile) is not in the recording, which has 3") {
		t.Fatalf("one request too many: %v", err)
	}
}

func TestWriteErrorIsSticky(t *testing.T) {
	if _, err := NewWriter(failing{}, Header{}); err == nil {
		t.Fatal("the header is written at once: its failure must be reported")
	}
	w, err := NewWriter(&failAfter{n: 1}, Header{})
	if err != nil {
		t.Fatal(err)
	}
	w.Background(1, "a", "c", strings.Repeat("x", 70<<10))
	if w.Err() == nil || w.Close("x", "") == nil {
		t.Fatal("a failed write must be reported")
	}
}

// failAfter accepts n writes, then fails.
type failAfter struct{ n int }

func (f *failAfter) Write(p []byte) (int, error) {
	if f.n == 0 {
		return 0, errors.New("disk full")
	}
	f.n--
	return len(p), nil
}

type failing struct{}

func (failing) Write([]byte) (int, error) { return 0, errors.New("disk full") }
