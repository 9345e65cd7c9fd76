package trace

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/warrenhq/warren/internal/version"
)

// TestHeaderFields: the header carries this build's version whatever the Header says, and the
// recording only when there is one; both read back.
func TestHeaderFields(t *testing.T) {
	for _, tc := range []struct {
		name, recording, want string
	}{
		{"no recording", "", `{"format":"warren-trace","version":5,"host_version":"` + version.Warren + `","scenario":"smoke","scenario_hash":"sha256:abc","seed":42,"clock":"virtual","fields":` + string(headerFields) + `}`},
		{"a recording", "runs/smoke.rec", `{"format":"warren-trace","version":5,"host_version":"` + version.Warren + `","scenario":"smoke","scenario_hash":"sha256:abc","seed":42,"clock":"virtual","recording":"runs/smoke.rec","fields":` + string(headerFields) + `}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			h := testHeader
			h.HostVersion = "9.9.9" // ignored: the writer writes its own
			h.Recording = tc.recording
			w, err := NewWriter(&out, h)
			if err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if got := strings.TrimSuffix(out.String(), "\n"); got != tc.want {
				t.Errorf("header\n got: %s\nwant: %s", got, tc.want)
			}
			back, _, err := ReadAll(&out)
			if err != nil {
				t.Fatal(err)
			}
			if back.HostVersion != version.Warren || back.Recording != tc.recording {
				t.Errorf("read back %+v", back)
			}
		})
	}
}

// TestRead: a complete trace reads with no notes; one without its end event, or cut mid-line,
// reads up to its last whole line and says what it lacks; a cut header, or a whole line that is
// not an event, is still an error.
func TestRead(t *testing.T) {
	whole := joinLines(sampleLines(t))
	lines := sampleLines(t)
	tests := []struct {
		name     string
		in       string
		events   int
		complete bool
		cut      string
		notes    []string
	}{
		{"complete", whole, 10, true, "", nil},
		{"complete without its last newline", strings.TrimSuffix(whole, "\n"), 10, true, "", nil},
		{"no end event", joinLines(lines[:10]), 9, false, "", []string{NoteIncomplete}},
		{"cut mid-line", joinLines(lines[:6]) + lines[6][:40], 5, false, lines[6][:40], []string{
			NoteIncomplete, "line 7 was cut mid-line (40 bytes, no newline): read the 5 whole events before it"}},
		{"cut in the end event", joinLines(lines[:10]) + lines[10][:len(lines[10])-1], 9, false, lines[10][:len(lines[10])-1], []string{
			NoteIncomplete, "line 11 was cut mid-line (" + strconv.Itoa(len(lines[10])-1) + " bytes, no newline): read the 9 whole events before it"}},
		{"header only", lines[0] + "\n", 0, false, "", []string{NoteIncomplete}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr, err := Read(strings.NewReader(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if len(tr.Events) != tt.events || tr.Complete != tt.complete || string(tr.Cut) != tt.cut || !slices.Equal(tr.Notes, tt.notes) {
				t.Errorf("read %d events, complete %v, cut %q, notes %q; want %d, %v, %q, %q",
					len(tr.Events), tr.Complete, tr.Cut, tr.Notes, tt.events, tt.complete, tt.cut, tt.notes)
			}
			_, events, err := ReadAll(strings.NewReader(tt.in))
			switch {
			case tt.cut != "" && !errors.Is(err, ErrMalformed):
				t.Errorf("ReadAll of a cut trace = %v, want ErrMalformed", err)
			case tt.cut == "" && (err != nil || len(events) != tt.events):
				t.Errorf("ReadAll: %d events, %v", len(events), err)
			}
		})
	}
	if _, err := Read(strings.NewReader(lines[0][:30])); !errors.Is(err, ErrBadHeader) || !strings.Contains(err.Error(), "line 1 was cut mid-line") {
		t.Errorf("a cut header: %v", err)
	}
	bad := joinLines(lines[:4]) + lines[4][:40] + "\n" + joinLines(lines[5:])
	if _, err := Read(strings.NewReader(bad)); !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), "line 5 is not a JSON object") {
		t.Errorf("a broken line in the middle: %v", err)
	}
}

// TestDiffOfIncompleteTraces: a cut trace is compared up to its last whole line, with notes
// saying what each side lacks; two traces cut at the same place are identical, and the notes
// still say so.
func TestDiffOfIncompleteTraces(t *testing.T) {
	lines := sampleLines(t)
	whole := joinLines(lines)
	cut := joinLines(lines[:6]) + lines[6][:40]
	res, err := DiffTraces(strings.NewReader(whole), strings.NewReader(cut))
	if err != nil {
		t.Fatal(err)
	}
	wantNotes := []string{"got: " + NoteIncomplete, "got: line 7 was cut mid-line (40 bytes, no newline): read the 5 whole events before it"}
	if !slices.Equal(res.Notes, wantNotes) || !strings.HasPrefix(res.Report, "got ends early after line 6: want has 10 events, got has 5\n") {
		t.Errorf("notes %q\nreport:\n%s", res.Notes, res.Report)
	}
	report, err := Diff(strings.NewReader(whole), strings.NewReader(cut))
	if err != nil || !strings.HasPrefix(report, "note: got: trace incomplete: no end event\nnote: got: line 7 was cut") {
		t.Errorf("Diff puts the notes first: %v\n%s", err, report)
	}

	same, err := DiffTraces(strings.NewReader(cut), strings.NewReader(cut))
	if err != nil || same.Report != "" || len(same.Notes) != 4 || same.String() != "" {
		t.Errorf("two traces cut alike: report %q, notes %q, %v", same.Report, same.Notes, err)
	}

	dir := t.TempDir()
	wantPath, gotPath := filepath.Join(dir, "want.jsonl"), filepath.Join(dir, "got.jsonl")
	if err := os.WriteFile(wantPath, []byte(whole), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(gotPath, []byte(cut), 0o644); err != nil {
		t.Fatal(err)
	}
	files, err := CompareFiles(wantPath, gotPath)
	if err != nil || !slices.Equal(files.Notes, wantNotes) || !strings.HasPrefix(files.Report, "--- want "+wantPath+"\n+++ got  "+gotPath+"\ngot ends early") {
		t.Errorf("CompareFiles: %v, notes %q\n%s", err, files.Notes, files.Report)
	}
}

// TestErrIsStickyAndDropsLaterEvents: Err reports the first write error as soon as the writer
// meets it (when its buffer goes out), and from then on events are dropped, the end event too.
func TestErrIsStickyAndDropsLaterEvents(t *testing.T) {
	fw := &failingWriter{}
	w, err := NewWriter(fw, testHeader)
	if err != nil {
		t.Fatal(err)
	}
	if w.Err() != nil {
		t.Fatalf("Err before any write = %v", w.Err())
	}
	a := AgentRef{ID: 1, Name: "a"}
	big := strings.Repeat("x", MaxContentBytes)
	for i := 0; w.Err() == nil; i++ {
		if i > 1000 {
			t.Fatal("no error after 2 MB of events")
		}
		w.ToolResult(uint64(i), a, "s", "c", "t", true, big)
	}
	if !errors.Is(w.Err(), errDiskFull) {
		t.Fatalf("Err = %v, want the write error", w.Err())
	}
	events := w.Events()
	w.End(9, RunFinished, 10, 1, 0, 0, 0, nil)
	if w.Events() != events || fw.calls != 1 {
		t.Errorf("events %d → %d, writes %d: an event was written after the error", events, w.Events(), fw.calls)
	}
	if err := w.Close(); !errors.Is(err, errDiskFull) {
		t.Errorf("Close = %v", err)
	}
	var disabled *Writer
	if disabled.Err() != nil {
		t.Error("a nil Writer has an error")
	}
}
