package trace

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/warrenhq/warren/internal/version"
)

var (
	planner = AgentRef{ID: 1, Name: "planner-0"}
	child   = AgentRef{ID: 2, Name: "planner-0/1"}
	grand   = AgentRef{ID: 3, Name: "planner-0/1/1"}
	worker  = AgentRef{ID: 4, Name: "planner-0/2"}
	host    = AgentRef{ID: 0, Name: HostName}
)

// writeSubAgentSample writes one event of every sub-agent kind, in the order a run
// could produce them.
func writeSubAgentSample(t testing.TB, w *Writer) {
	t.Helper()
	w.SpawnChild(1, child, "planners", 0, "researcher", "scripted:researcher", "find where the parser fails", planner, "planner-0-t0-c0", 1, false, -1)
	w.SpawnChild(1, grand, "planners", 0, "scout", "scripted:scout", "", child, "planner-0/1-t0-c0", 2, true, -1)
	w.WaitStart(1, planner, "planner-0-t0-c1", child)
	w.Message(2, child, planner, "send", "look in docs/ first")
	w.Message(2, child, host, "send", "")
	w.Kill(3, child, planner, "kill_agent", []string{"planner-0/1", "planner-0/1/1"})
	w.Message(3, planner, child, "notify", "planner-0/1 ended: killed")
	w.WaitEnd(3, planner, "planner-0-t0-c1", child, "killed")
	w.FanOutStart(4, planner, "planner-0-t1-c0", "coder", 3, 2, "continue", "tool")
	w.SpawnChild(4, worker, "coder", 0, "coder", "scripted:coder", "src/lexer.go", planner, "planner-0-t1-c0", 1, false, 0)
	w.WorkerEnd(6, planner, "planner-0-t1-c0", 0, worker, "done")
	w.Merge(7, planner, "planner-0-t1-c0", 1, 1, 0, 1, 512, true)
	w.Kill(8, planner, host, "run timeout", []string{"planner-0", "planner-0/2"})
}

// subAgentSampleLines are the exact event lines writeSubAgentSample produces.
var subAgentSampleLines = []string{
	`{"tick":1,"seq":1,"agent":2,"name":"planner-0/1","kind":"spawn","group":"planners","index":0,"blueprint":"researcher","model":"scripted:researcher","task":"find where the parser fails","parent":1,"parent_name":"planner-0","depth":1,"detached":false,"call":"planner-0-t0-c0"}`,
	`{"tick":1,"seq":2,"agent":3,"name":"planner-0/1/1","kind":"spawn","group":"planners","index":0,"blueprint":"scout","model":"scripted:scout","task":"","parent":2,"parent_name":"planner-0/1","depth":2,"detached":true,"call":"planner-0/1-t0-c0"}`,
	`{"tick":1,"seq":3,"agent":1,"name":"planner-0","kind":"wait_start","call_id":"planner-0-t0-c1","target":2,"target_name":"planner-0/1"}`,
	`{"tick":2,"seq":4,"agent":2,"name":"planner-0/1","kind":"message","sender":1,"sender_name":"planner-0","via":"send","text":"look in docs/ first"}`,
	`{"tick":2,"seq":5,"agent":2,"name":"planner-0/1","kind":"message","sender":0,"sender_name":"host","via":"send","text":""}`,
	`{"tick":3,"seq":6,"agent":2,"name":"planner-0/1","kind":"kill","killer":1,"killer_name":"planner-0","reason":"kill_agent","cascade":["planner-0/1","planner-0/1/1"]}`,
	`{"tick":3,"seq":7,"agent":1,"name":"planner-0","kind":"message","sender":2,"sender_name":"planner-0/1","via":"notify","text":"planner-0/1 ended: killed"}`,
	`{"tick":3,"seq":8,"agent":1,"name":"planner-0","kind":"wait_end","call_id":"planner-0-t0-c1","target":2,"target_name":"planner-0/1","status":"killed"}`,
	`{"tick":4,"seq":9,"agent":1,"name":"planner-0","kind":"fanout_start","call_id":"planner-0-t1-c0","blueprint":"coder","items":3,"max_workers":2,"on_worker_failure":"continue","mode":"tool"}`,
	`{"tick":4,"seq":10,"agent":4,"name":"planner-0/2","kind":"spawn","group":"coder","index":0,"blueprint":"coder","model":"scripted:coder","task":"src/lexer.go","parent":1,"parent_name":"planner-0","depth":1,"detached":false,"call":"planner-0-t1-c0","item":0}`,
	`{"tick":6,"seq":11,"agent":1,"name":"planner-0","kind":"worker_end","call_id":"planner-0-t1-c0","item":0,"worker":4,"worker_name":"planner-0/2","status":"done"}`,
	`{"tick":7,"seq":12,"agent":1,"name":"planner-0","kind":"merge","call_id":"planner-0-t1-c0","done":1,"failed":1,"killed":0,"not_run":1,"chars":512,"ok":true}`,
	`{"tick":8,"seq":13,"agent":1,"name":"planner-0","kind":"kill","killer":0,"killer_name":"host","reason":"run timeout","cascade":["planner-0","planner-0/2"]}`,
}

func TestSubAgentEventsGolden(t *testing.T) {
	var out bytes.Buffer
	w, err := NewWriter(&out, testHeader)
	if err != nil {
		t.Fatal(err)
	}
	writeSubAgentSample(t, w)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	wantHeader := `{"format":"warren-trace","version":5,"host_version":"` + version.Warren + `","scenario":"smoke","scenario_hash":"sha256:abc","seed":42,"clock":"virtual","fields":` + string(headerFields) + `}`
	if lines[0] != wantHeader {
		t.Errorf("header\n got: %s\nwant: %s", lines[0], wantHeader)
	}
	got := lines[1:]
	if len(got) != len(subAgentSampleLines) {
		t.Fatalf("%d events, want %d:\n%s", len(got), len(subAgentSampleLines), out.String())
	}
	for i, want := range subAgentSampleLines {
		if got[i] != want {
			t.Errorf("event %d\n got: %s\nwant: %s", i+1, got[i], want)
		}
	}
	// The shipped example of version 3 events must stay in step with the writer.
	report, err := Compare("testdata/subagents.jsonl", writeTemp(t, out.Bytes()))
	if err != nil || report != "" {
		t.Errorf("testdata/subagents.jsonl differs from the writer's output: %v\n%s", err, report)
	}
}

func TestSubAgentEventsOnNilWriterAreNoOps(t *testing.T) {
	var w *Writer
	writeSubAgentSample(t, w) // must not panic
	if w.Events() != 0 || w.Enabled() {
		t.Errorf("nil writer recorded events (Events %d, Enabled %v)", w.Events(), w.Enabled())
	}
}

func TestSubAgentEventsDoNotAllocateWhenOff(t *testing.T) {
	closed, err := NewWriter(&bytes.Buffer{}, testHeader)
	if err != nil {
		t.Fatal(err)
	}
	if err := closed.Close(); err != nil {
		t.Fatal(err)
	}
	cascade := []string{"planner-0/1", "planner-0/1/1"}
	events := []struct {
		name  string
		write func(w *Writer)
	}{
		{"SpawnChild", func(w *Writer) {
			w.SpawnChild(1, child, "g", 0, "b", "m", "t", planner, "c", 1, false, -1)
		}},
		{"Message", func(w *Writer) { w.Message(1, child, planner, "send", "hi") }},
		{"WaitStart", func(w *Writer) { w.WaitStart(1, planner, "c", child) }},
		{"WaitEnd", func(w *Writer) { w.WaitEnd(1, planner, "c", child, "done") }},
		{"Kill", func(w *Writer) { w.Kill(1, child, planner, "r", cascade) }},
		{"FanOutStart", func(w *Writer) { w.FanOutStart(1, planner, "c", "b", 3, 2, "continue", "stage") }},
		{"WorkerEnd", func(w *Writer) { w.WorkerEnd(1, planner, "c", 0, worker, "done") }},
		{"Merge", func(w *Writer) { w.Merge(1, planner, "c", 1, 0, 0, 0, 10, true) }},
	}
	writers := []struct {
		name string
		w    *Writer
	}{{"nil", nil}, {"closed", closed}}
	for _, wr := range writers {
		for _, ev := range events {
			t.Run(wr.name+"/"+ev.name, func(t *testing.T) {
				if n := testing.AllocsPerRun(100, func() { ev.write(wr.w) }); n != 0 {
					t.Errorf("%s on a %s writer: %v allocations per call, want 0", ev.name, wr.name, n)
				}
			})
		}
	}
	if closed.Events() != 0 {
		t.Errorf("closed writer counted %d events", closed.Events())
	}
}

func TestMessageTextTruncation(t *testing.T) {
	tests := []struct {
		name     string
		text     string
		wantText string
	}{
		{"short", "hello", "hello"},
		{"at the limit", strings.Repeat("a", MaxContentBytes), strings.Repeat("a", MaxContentBytes)},
		{"one over", strings.Repeat("a", MaxContentBytes+1), strings.Repeat("a", MaxContentBytes) + " …[truncated 1 bytes]"},
		{"far over", strings.Repeat("m", 5000), strings.Repeat("m", MaxContentBytes) + " …[truncated 2952 bytes]"},
		{
			// "€" is three bytes; the cut must fall before it, not inside it.
			"multi-byte rune across the limit",
			strings.Repeat("a", MaxContentBytes-2) + "€" + "z",
			strings.Repeat("a", MaxContentBytes-2) + " …[truncated 4 bytes]",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			w, err := NewWriter(&out, testHeader)
			if err != nil {
				t.Fatal(err)
			}
			w.Message(1, child, planner, "send", tt.text)
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			var ev struct {
				Kind, Via, Text string
				Sender          uint64
			}
			line := lastLine(t, out.Bytes())
			if err := json.Unmarshal(line, &ev); err != nil {
				t.Fatalf("line is not valid JSON: %v", err)
			}
			if ev.Text != tt.wantText {
				t.Errorf("text = %q…, want %q… (len %d, want %d)", head(ev.Text), head(tt.wantText), len(ev.Text), len(tt.wantText))
			}
			if !utf8.ValidString(ev.Text) || ev.Kind != KindMessage || ev.Via != "send" || ev.Sender != planner.ID {
				t.Errorf("valid UTF-8 %v, kind %q, via %q, sender %d", utf8.ValidString(ev.Text), ev.Kind, ev.Via, ev.Sender)
			}
		})
	}
}

func TestDiffNamesTheKillWhoseCascadeDiffers(t *testing.T) {
	run := func(cascade []string) string {
		var out bytes.Buffer
		w, err := NewWriter(&out, testHeader)
		if err != nil {
			t.Fatal(err)
		}
		w.SpawnChild(1, child, "planners", 0, "researcher", "scripted:researcher", "", planner, "planner-0-t0-c0", 1, false, -1)
		w.SpawnChild(2, grand, "planners", 0, "scout", "scripted:scout", "", child, "planner-0/1-t0-c0", 2, false, -1)
		w.Kill(3, child, planner, "kill_agent", cascade)
		w.Terminal(3, child, "killed", "kill_agent", "research")
		w.End(3, RunFinished, 4, 3, 0, 0, 0, nil)
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		return out.String()
	}
	want := run([]string{"planner-0/1", "planner-0/1/1"})
	got := run([]string{"planner-0/1"})
	lines := strings.Split(want, "\n")
	report, err := Diff(strings.NewReader(want), strings.NewReader(got))
	if err != nil {
		t.Fatal(err)
	}
	wantReport := `first difference at line 4; want has 5 events, got has 5
context (identical on both sides):
  line 2: ` + clip([]byte(lines[1]), maxLineShown) + `
  line 3: ` + clip([]byte(lines[2]), maxLineShown) + `
want: seq 3, tick 3, agent planner-0/1 (id 2), kind kill
got:  seq 3, tick 3, agent planner-0/1 (id 2), kind kill
fields that differ:
- cascade: ["planner-0/1","planner-0/1/1"]
+ cascade: ["planner-0/1"]
after it: no later event differs (seq aside)
`
	if report != wantReport {
		t.Errorf("report:\n%s\nwant:\n%s", report, wantReport)
	}
}
