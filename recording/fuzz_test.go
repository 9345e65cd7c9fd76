package recording

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// tampered are the hostile recordings in testdata/tampered, each with what its refusal says:
// the line and the field, and what would be valid.
var tampered = map[string]string{
	"truncated-line.rec": `line 2: not JSON at byte`,
	"wrong-type.rec":     `line 2: turn: a JSON string, want a whole number from 0 to 18446744073709551615`,
	"huge-number.rec":    `line 2: tick: a JSON number 1e30, want a whole number from 0 to 18446744073709551615`,
	"negative-index.rec": `line 2: index: -1; valid: the call's place in its turn, from 0`,
	"duplicate-key.rec":  `line 2: turn: the key is written twice in one object (as "turn" and "turn")`,
	"missing-header.rec": `line 1 is format "" version 0; this host reads "warren-recording" versions 1 to 2`,
	"absurd-length.rec":  `line 2: entries: a JSON number 18446744073709551616, want a whole number from 0 to 18446744073709551615`,
	"absurd-agents.rec":  `line 1: agents: 4294967296; valid: 0 (the scenario's own counts) to 10000000`,
	"raw-mismatch.rec":   `line 2: calls: raw: not the arguments args holds (args {"a":1}, raw compacted {"a":2})`,
	"answer-zero.rec":    `line 2: answer 0 out of order (want 1)`,
}

// TestTamperedFiles: each hostile recording is refused with ErrBadRecording, naming the file,
// the line and the field.
func TestTamperedFiles(t *testing.T) {
	for name, want := range tampered {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join("testdata", "tampered", name)
			_, err := ReadFile(path)
			if !errors.Is(err, ErrBadRecording) || !strings.Contains(err.Error(), path+": ") || !strings.Contains(err.Error(), want) {
				t.Fatalf("err = %v\nwant ErrBadRecording naming %s and saying %q", err, path, want)
			}
		})
	}
}

// FuzzRecordingReader: whatever bytes a recording holds, reading it (whole, or as a resumed run's
// committed part) never panics: it is a Tape every method of which answers without panicking, or
// an error wrapping ErrBadRecording that names the line. Its seeds are the tampered files, a
// recording of every entry kind and the shipped live recording.
func FuzzRecordingReader(f *testing.F) {
	seeds, err := filepath.Glob(filepath.Join("testdata", "tampered", "*.rec"))
	if err != nil || len(seeds) < len(tampered) {
		f.Fatalf("the tampered seeds: %v (%d)", err, len(seeds))
	}
	for _, p := range seeds {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	// Whole recordings, kept short: the fuzzer minimizes every input it finds new coverage with,
	// and a long one takes it most of a minute. The shipped live recording's first entries (live
	// model turns, their calls, tool entries) with its end line counted again, and an entry of
	// every other kind.
	live, err := os.ReadFile(filepath.Join("..", "scenarios", "examples", "live.rec"))
	if err != nil {
		f.Fatal(err)
	}
	lines := bytes.SplitAfter(live, []byte("\n"))
	f.Add(append(bytes.Join(lines[:9], nil), []byte(`{"kind":"end","entries":8,"status":"finished","stop":"fixed_point"}`+"\n")...))
	f.Add(bytes.ReplaceAll(record(f), []byte(strings.Repeat("long output ", 400)), []byte("output")))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, committed := range []bool{false, true} {
			var tape *Tape
			var err error
			if committed {
				tape, err = ReadCommitted(bytes.NewReader(data), 3)
			} else {
				tape, err = Read(bytes.NewReader(data))
			}
			if err != nil {
				if !errors.Is(err, ErrBadRecording) {
					t.Fatalf("an error that is not ErrBadRecording: %v", err)
				}
				if !strings.Contains(err.Error(), "line ") && !strings.Contains(err.Error(), "empty input") {
					t.Fatalf("an error that names no line: %v", err)
				}
				continue
			}
			exercise(t, tape)
		}
	})
}

// exercise asks a tape everything a replay asks it, with the keys its own entries hold.
func exercise(t *testing.T, tape *Tape) {
	for _, e := range tape.tools {
		c := Call{Agent: e.Agent, Turn: e.Turn, Index: e.Index, ID: e.ID, Tool: e.Tool, Args: e.Args}
		if _, err := tape.Tool(e.Tick, c); err != nil {
			_ = err.Error()
		}
		if _, err := tape.Tool(e.Tick, Call{Agent: e.Agent, ID: e.ID, Tool: e.Tool + "x"}); err != nil {
			_ = err.Error()
		}
		tape.Background(e.Agent, e.ID)
		_, _ = tape.Items(e.Tick, e.Agent, e.ID, "items.txt")
		tape.Dynamic(e.Agent, e.Turn)
		tape.ModelLimit(e.Agent, e.Turn)
		if len(e.Ops) > 0 {
			p := &Player{Call: c, Ops: e.Ops}
			for _, op := range e.Ops {
				var out any
				_ = p.Do(op.Fn, "x", &out, nil)
			}
		}
	}
	for _, m := range tape.Models() {
		if _, err := tape.Model(0, m.Agent, m.Turn, m.Attempt, m.Request); err != nil {
			t.Fatalf("a recorded model turn does not answer: %v", err)
		}
		_, _ = tape.Model(0, m.Agent, m.Turn, m.Attempt+1, "other")
	}
	for n := uint64(0); n <= uint64(len(tape.answers))+1; n++ {
		_, _ = tape.Answer(n, "a", "t")
	}
	for _, p := range tape.Passes {
		tape.MCP(p.Tick, 0, false)
		tape.Covers(p.Tick)
	}
	_ = tape.Calls() + tape.Unused()
	if s, err := tape.Script(""); err == nil {
		_ = s.Tables()
	}
}
