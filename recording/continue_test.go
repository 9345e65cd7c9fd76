package recording

import (
	"bytes"
	"encoding/gob"
	"encoding/json"
	"testing"
)

// TestContinueWritesWhatTheWriterWould: a writer imaged between ticks with calls pending, and a
// writer continued from that image on a copy of the bytes written so far, write the same rest:
// the pending calls filed, and the entry count going on.
func TestContinueWritesWhatTheWriterWould(t *testing.T) {
	var buf bytes.Buffer
	w, err := NewWriter(&buf, Header{Scenario: "s", ScenarioFile: "/s.toml", Clock: "virtual", Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	for i, agent := range []uint64{3, 1, 2} {
		w.Begin(uint64(i), agent, Call{Agent: "a", Turn: 1, Index: i, ID: "c", Tool: "shell", Args: json.RawMessage(`{"cmd": "ls"}`)})
	}
	w.Finish(2, 1, 1, Result{OK: true, Content: "done"})
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	var img WriterImage
	var gb bytes.Buffer
	if err := gob.NewEncoder(&gb).Encode(w.Image()); err != nil {
		t.Fatal(err)
	}
	if err := gob.NewDecoder(&gb).Decode(&img); err != nil {
		t.Fatal(err)
	}
	if img.Entries != 1 || len(img.Pending) != 2 || img.Pending[0].Agent != 2 || img.Pending[1].Agent != 3 {
		t.Fatalf("image %+v, want one entry and agents 2 and 3 pending in id order", img)
	}
	rest := bytes.NewBuffer(bytes.Clone(buf.Bytes()))
	c := Continue(rest, &img)
	for _, x := range []*Writer{w, c} {
		x.Finish(4, 3, 0, Result{OK: false, Content: "no"})
		x.Finish(5, 2, 2, Result{OK: true, Content: "yes"})
		x.Background(5, "a", "c", "report")
		if err := x.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	if rest.String() != buf.String() || c.Entries() != w.Entries() || w.Entries() != 4 {
		t.Fatalf("continued writer wrote\n%s\nthe original\n%s", rest, &buf)
	}
}
