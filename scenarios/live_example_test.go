package scenarios_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/warrenhq/warren"
	"github.com/warrenhq/warren/internal/golden"
)

// liveRecording and liveTrace are the shipped recording of examples/live.toml, made against the
// fake provider, and the trace recorded with it.
var (
	liveRecording = filepath.Join("examples", "live.rec")
	liveTrace     = filepath.Join("examples", "live.jsonl")
)

// liveNote is what the shipped recording's header says about how it was made.
const liveNote = "recorded against Warren's fake provider (host models serve-fake --rules scenarios/examples/live/fake-rules.toml), not a real model: the machine that made it reaches no provider"

// TestShippedLiveRecording replays the shipped recording of the live example with no provider
// anywhere (OPENAI_BASE_URL points at a closed port) and requires the trace shipped beside it, byte
// for byte: a fresh clone can replay a live-model run offline. With -update it records both again
// against the fake provider, as the README's commands do.
func TestShippedLiveRecording(t *testing.T) {
	if golden.Updating() {
		requireExample(t, "live.toml")
		sc, err := warren.Load(filepath.Join("examples", "live.toml"))
		if err != nil {
			t.Fatal(err)
		}
		var tr, rec bytes.Buffer
		if _, err := warren.Run(t.Context(), sc, warren.Options{Trace: &tr, Record: &rec,
			TraceFile: liveTrace, RecordFile: liveRecording, RecordNote: liveNote}); err != nil {
			t.Fatal(err)
		}
		for path, data := range map[string][]byte{liveTrace: tr.Bytes(), liveRecording: rec.Bytes()} {
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/v1")
	tape, err := warren.ReadRecording(liveRecording)
	if err != nil {
		t.Fatal(err)
	}
	if tape.Header.Note != liveNote {
		t.Fatalf("the recording's header says %q, want how it was made", tape.Header.Note)
	}
	replayed, sum, err := replayRun(t, tape, "")
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(liveTrace)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(want, replayed) {
		t.Fatalf("the shipped recording replays to another trace (go test ./scenarios/ -run TestShippedLiveRecording -update records it again):\n%s", traceDiff(t, want, replayed))
	}
	if sum.Spend.Turns != 15 || sum.Spend.Cost == 0 || len(sum.Failures) != 0 {
		t.Fatalf("summary: %d live turns, cost %d, failures %v", sum.Spend.Turns, sum.Spend.Cost, sum.Failures)
	}
}
