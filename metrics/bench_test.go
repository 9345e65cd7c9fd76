package metrics

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/warrenhq/warren/trace"
)

// BenchmarkCollector measures what computing the metrics live costs a run: a Collector observing
// every event of a golden trace (as warren.Options.Events would feed it), then its Tables, per
// event. gossip.jsonl is 200 agents of 28 events each, mostly tool calls and results with their
// arguments and contents: the events a run writes most.
func BenchmarkCollector(b *testing.B) {
	for _, name := range []string{"gossip", "quickstart", "fanout"} {
		b.Run(name, func(b *testing.B) {
			data, err := os.ReadFile(filepath.Join("..", "scenarios", "testdata", "golden", name+".jsonl"))
			if err != nil {
				b.Fatal(err)
			}
			h, events, err := trace.ReadAll(bytes.NewReader(data))
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				c := NewCollector(h)
				for _, line := range events {
					if err := c.Observe(line); err != nil {
						b.Fatal(err)
					}
				}
				c.Tables(nil)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(events)), "ns/event")
		})
	}
}
