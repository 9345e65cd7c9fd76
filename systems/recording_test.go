package systems_test

import (
	"bytes"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/warrenhq/warren/models"
	"github.com/warrenhq/warren/recording"
)

// wallLimit is a model failure a real-time limit decided, as a JS policy left waiting past its
// wall-clock backstop reports it.
type wallLimit struct{}

func (wallLimit) Error() string {
	return "script waited past its 30s wall-clock limit (a host function did not return)"
}
func (wallLimit) RealTime() bool { return true }

var _ interface{ RealTime() bool } = wallLimit{}

// TestModelRealTimeLimitIsRecorded: a model turn that a real-time limit ended is counted, kept in
// the recording, and given back by a replay without the model being asked, so the replay's trace
// is the recorded one even though the limit would not fire again.
func TestModelRealTimeLimitIsRecorded(t *testing.T) {
	var asked atomic.Int32
	model := func(fire bool) models.Model {
		return laneModel{id: "test:waits", turn: func(st *models.State, v *models.View) (models.Reply, error) {
			asked.Add(1)
			if fire && v.Turn == 0 {
				return models.Reply{}, wallLimit{}
			}
			return models.Reply{Text: "done"}, nil
		}}
	}
	var rec bytes.Buffer
	w, err := recording.NewWriter(&rec, recording.Header{})
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, options{record: w})
	h.spawn(h.profile("g", h.blueprint(oneStageBlueprint), model(true), "do it"), 2)
	h.run(100)
	if err := w.Close("finished", "fixed_point"); err != nil {
		t.Fatal(err)
	}
	recorded := h.traceBytes()
	if n := h.host.Run.RealTimeLimits; n != 2 || !strings.Contains(rec.String(), `"kind":"model_limit"`) {
		t.Fatalf("%d real-time limits counted; recording:\n%s", n, rec.String())
	}
	tape, err := recording.Read(bytes.NewReader(rec.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	asked.Store(0)
	r := newHarness(t, options{tape: tape})
	r.spawn(r.profile("g", r.blueprint(oneStageBlueprint), model(false), "do it"), 2)
	r.run(100)
	if got := r.traceBytes(); !bytes.Equal(recorded, got) {
		t.Fatalf("the replay differs:\nrecorded:\n%s\nreplay:\n%s", recorded, got)
	}
	if asked.Load() != 0 || r.host.Run.RealTimeLimits != 2 {
		t.Fatalf("the model was asked %d times for turns the recording answers; %d limits counted", asked.Load(), r.host.Run.RealTimeLimits)
	}
}
