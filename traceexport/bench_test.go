package traceexport_test

import (
	"bytes"
	"context"
	"path/filepath"
	"sync"
	"testing"

	"github.com/warrenhq/warren"
	"github.com/warrenhq/warren/table"
	"github.com/warrenhq/warren/traceexport"
)

// benchAgents is how many agents the benchmark's quickstart run has: 23,001 events, 5 MB.
const benchAgents = 1000

// quickstart is the trace of the quickstart scenario at benchAgents agents, run once through the
// root API, as host run --agents would.
var quickstart = sync.OnceValues(func() ([]byte, error) {
	sc, err := warren.Load(filepath.Join("..", "scenarios", "examples", "quickstart.toml"))
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if _, err := warren.Run(context.Background(), sc, warren.Options{Agents: benchAgents, Trace: &buf}); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
})

// BenchmarkExport exports the quickstart's trace at 1,000 agents in each format, into one folder
// again and again (Force), and reports the events exported per second and the size of the
// export (every table and the manifest) over the size of the JSON Lines trace.
func BenchmarkExport(b *testing.B) {
	data, err := quickstart()
	if err != nil {
		b.Fatal(err)
	}
	for _, f := range table.Formats() {
		b.Run(string(f), func(b *testing.B) {
			dir := b.TempDir()
			b.SetBytes(int64(len(data)))
			var st traceexport.Stats
			for b.Loop() {
				if st, err = traceexport.Export(context.Background(), bytes.NewReader(data), dir, traceexport.Options{Format: f, Force: true}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(st.Events)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
			b.ReportMetric(float64(st.OutputBytes())/float64(len(data)), "out/jsonl")
		})
	}
}
