package recording

import (
	"bytes"
	"errors"
	"testing"
)

// TestReadCommitted: the committed part of a recording still being written (no end line) reads
// as a resuming tape that covers its committed ticks and no later one, holds the calls filed in
// them, and answers a call it does not have as missing rather than as a divergence; a committed
// part with an end line, or cut mid-line, is refused.
func TestReadCommitted(t *testing.T) {
	whole := record(t)
	lines := bytes.SplitAfter(whole, []byte("\n"))
	prefix := bytes.Join(lines[:3], nil) // the header, the shell call (filed at tick 4), its report
	tape, err := ReadCommitted(bytes.NewReader(prefix), 5)
	if err != nil {
		t.Fatal(err)
	}
	if !tape.Resuming() || !tape.Covers(4) || tape.Covers(5) {
		t.Errorf("resuming %v, covers 4 %v, covers 5 %v", tape.Resuming(), tape.Covers(4), tape.Covers(5))
	}
	if !tape.Has("a-0", "a-0-t0-c0") || tape.Has("a-1", "a-1-t2-c1") {
		t.Error("the committed tape holds the wrong calls")
	}
	if report, ok := tape.Background("a-0", "a-0-t0-c0"); !ok || report != "done: exit 0" {
		t.Errorf("background report %q %v", report, ok)
	}
	full, err := Read(bytes.NewReader(whole))
	if err != nil {
		t.Fatal(err)
	}
	if full.Resuming() || !full.Covers(1<<40) {
		t.Error("a whole recording is resuming, or does not cover every tick")
	}
	var nilTape *Tape
	if nilTape.Covers(0) || nilTape.Resuming() {
		t.Error("a nil tape covers a tick")
	}
	if _, err := ReadCommitted(bytes.NewReader(whole), 9); !errors.Is(err, ErrBadRecording) {
		t.Errorf("a committed part with its end line: %v", err)
	}
	if _, err := ReadCommitted(bytes.NewReader(prefix[:len(prefix)-5]), 5); !errors.Is(err, ErrBadRecording) {
		t.Errorf("a committed part cut mid-line: %v", err)
	}
}
