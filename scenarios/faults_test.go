package scenarios_test

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/warrenhq/warren"
)

// TestFaultsReproduce runs the shipped fault scenario: the same faults seed gives the same trace,
// run after run and at one thread or many; --faults-seed draws another pattern, which reruns
// exactly; naming the file's own faults seed changes only the header.
func TestFaultsReproduce(t *testing.T) {
	sc, err := warren.Load(filepath.Join("examples", "faults.toml"))
	if err != nil {
		t.Fatal(err)
	}
	run := func(opt warren.Options) ([]byte, *warren.Summary) {
		t.Helper()
		var tr bytes.Buffer
		opt.Trace = &tr
		sum, err := warren.Run(t.Context(), sc, opt)
		if err != nil {
			t.Fatal(err)
		}
		return tr.Bytes(), sum
	}
	seed := func(n uint64) *uint64 { return &n }
	first, sum := run(warren.Options{})
	if len(sum.Failures) > 0 || sum.FaultsSeed == nil || *sum.FaultsSeed != 2024 {
		t.Fatalf("failures %q, faults seed %v", sum.Failures, sum.FaultsSeed)
	}
	for _, want := range []string{`"fn":"fault","text":"tool_error"`, `"fn":"fault","text":"timeout"`,
		`"error":"injected fault: the model failed (faults.model_error)"`} {
		if !bytes.Contains(first, []byte(want)) {
			t.Errorf("the trace has no %s", want)
		}
	}
	if again, _ := run(warren.Options{}); !bytes.Equal(first, again) {
		t.Fatalf("two runs of one faults seed differ:\n%s", traceDiff(t, first, again))
	}
	other, otherSum := run(warren.Options{FaultsSeed: seed(7)})
	if bytes.Equal(eventsOf(first), eventsOf(other)) || *otherSum.FaultsSeed != 7 {
		t.Fatal("--faults-seed 7 drew the same faults as the file's seed")
	}
	if again, _ := run(warren.Options{FaultsSeed: seed(7)}); !bytes.Equal(other, again) {
		t.Fatalf("--faults-seed 7 does not rerun exactly:\n%s", traceDiff(t, other, again))
	}
	if same, _ := run(warren.Options{FaultsSeed: seed(2024)}); !bytes.Equal(eventsOf(first), eventsOf(same)) ||
		!bytes.Contains(same[:bytes.IndexByte(same, '\n')], []byte(" faults=2024")) {
		t.Fatal("--faults-seed with the file's own seed must change only the header, which says so")
	}
}

// eventsOf is a trace without its header line.
func eventsOf(trace []byte) []byte { return trace[bytes.IndexByte(trace, '\n')+1:] }
