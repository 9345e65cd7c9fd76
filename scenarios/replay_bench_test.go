package scenarios_test

import (
	"bytes"
	"context"
	"io"
	"path/filepath"
	"testing"

	"github.com/warrenhq/warren"
	"github.com/warrenhq/warren/recording"
)

// benchmarkRecording runs a shipped example traced (to io.Discard), and traced and recorded, so
// the two rows' ns/op give recording's overhead; the recorded row also reports the recording's
// size per recorded call.
func benchmarkRecording(b *testing.B, example string, agents int) {
	sc, err := warren.Load(filepath.Join("examples", example))
	if err != nil {
		b.Fatal(err)
	}
	b.Run("traced", func(b *testing.B) {
		for b.Loop() {
			if _, err := warren.Run(context.Background(), sc, warren.Options{Agents: agents, Trace: io.Discard}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("recorded", func(b *testing.B) {
		var rec bytes.Buffer
		for b.Loop() {
			rec.Reset()
			if _, err := warren.Run(context.Background(), sc, warren.Options{Agents: agents, Trace: io.Discard, Record: &rec}); err != nil {
				b.Fatal(err)
			}
		}
		tape, err := recording.Read(bytes.NewReader(rec.Bytes())) // the last run's, outside the timing
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(rec.Len())/float64(max(tape.Calls(), 1)), "B/call")
	})
}

func BenchmarkRecordingQuickstart(b *testing.B) { benchmarkRecording(b, "quickstart.toml", 2000) }
func BenchmarkRecordingMCP(b *testing.B)        { benchmarkRecording(b, "mcp.toml", 0) }

// benchmarkReplay runs a shipped example live and replays its recording, so the two rows' ns/op
// give how much faster an offline replay is than the live run.
func benchmarkReplay(b *testing.B, example string, agents int) {
	requireExample(b, example)
	sc, err := warren.Load(filepath.Join("examples", example))
	if err != nil {
		b.Fatal(err)
	}
	var rec bytes.Buffer
	b.Run("live", func(b *testing.B) {
		for b.Loop() {
			rec.Reset()
			if _, err := warren.Run(context.Background(), sc, warren.Options{Agents: agents, Trace: io.Discard, Record: &rec}); err != nil {
				b.Fatal(err)
			}
		}
	})
	tape, err := recording.Read(bytes.NewReader(rec.Bytes()))
	if err != nil {
		b.Fatal(err)
	}
	b.Run("replay", func(b *testing.B) {
		for b.Loop() {
			rsc, opt, err := warren.LoadReplay(tape, "")
			if err != nil {
				b.Fatal(err)
			}
			opt.Trace = io.Discard
			if _, err := warren.Run(context.Background(), rsc, opt); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkReplayMCP(b *testing.B)     { benchmarkReplay(b, "mcp.toml", 0) }
func BenchmarkReplaySandbox(b *testing.B) { benchmarkReplay(b, "sandbox.toml", 0) }
