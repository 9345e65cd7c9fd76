package otelgenai

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

// BenchmarkWriter measures what export adds to each trace event, on the real trace of a
// 200-agent quickstart, one pass over the trace per iteration, in ns/event:
//
//   - plain: the buffered write every event already costs;
//   - tap: Exporter.Tap (what host run uses) on the run's goroutine: finding the kind, parsing
//     the events spans need, queuing them; the builder's work is waited for with the timer
//     stopped;
//   - tap_with_builder: the same with the builder's work (making the spans through the SDK)
//     inside the timer: the cost per event when the builder is the bottleneck, which is also
//     what a run pays once it is 64Ki events ahead of the builder and waits;
//   - writer: Exporter.Writer, written an event at a time, on the run's goroutine;
//   - sampled_out: Tap with OTEL_TRACES_SAMPLER=always_off, which reads nothing.
//
// Spans go through the SDK's BatchSpanProcessor to a real OTLP/HTTP server on loopback that
// reads and drops the requests; the processor drops what its queue cannot hold rather than make
// anyone wait, as in a run.
//
//	go test ./otelgenai/ -run '^$' -bench BenchmarkWriter -benchtime 20x
func BenchmarkWriter(b *testing.B) {
	plainTrace := lines(runPlain(b, "quickstart.toml", 200))
	events := plainTrace[1:]
	sink := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
	}))
	defer sink.Close()

	cases := []struct {
		name    string
		sampler string
		builder bool // the builder's work is timed
		feed    func(x *Exporter, out *bufio.Writer) func([]byte)
	}{
		{"plain", "", false, func(_ *Exporter, out *bufio.Writer) func([]byte) {
			return func(l []byte) { _, _ = out.Write(l) }
		}},
		{"tap", "", false, tapFeed},
		{"tap_with_builder", "", true, tapFeed},
		{"writer", "", false, func(x *Exporter, out *bufio.Writer) func([]byte) {
			w := x.Writer("", out)
			_, _ = w.Write(append(plainTrace[0], '\n'))
			return func(l []byte) { _, _ = w.Write(l) }
		}},
		{"sampled_out", "always_off", false, tapFeed},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			clearOTelEnv(b)
			b.Setenv(EnvEndpoint, sink.URL)
			b.Setenv("OTEL_TRACES_SAMPLER", tc.sampler)
			x, err := FromEnv(zerolog.Nop().WithContext(context.Background()))
			if err != nil || x == nil {
				b.Fatal(x, err)
			}
			withNewline := make([][]byte, len(events))
			for i, l := range events {
				withNewline[i] = append(l[:len(l):len(l)], '\n')
			}
			out := bufio.NewWriterSize(io.Discard, 64<<10)
			b.ReportAllocs()
			b.ResetTimer()
			var elapsed time.Duration
			for range b.N {
				feed := tc.feed(x, out)
				start := time.Now()
				for _, l := range withNewline {
					feed(l)
				}
				if tc.builder {
					x.sync()
				}
				elapsed += time.Since(start)
				b.StopTimer()
				x.sync()
				b.StartTimer()
			}
			b.StopTimer()
			b.ReportMetric(float64(elapsed.Nanoseconds())/float64(b.N*len(events)), "ns/event")
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_ = x.Close(ctx)
		})
	}
}

// tapFeed writes each event to out and hands it to a new run's Tap, as the trace writer does.
func tapFeed(x *Exporter, out *bufio.Writer) func([]byte) {
	tap := x.Tap("", "quickstart", nil)
	return func(l []byte) {
		_, _ = out.Write(l)
		if tap != nil {
			tap(l)
		}
	}
}
