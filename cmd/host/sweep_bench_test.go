package main

import (
	"fmt"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// BenchmarkSweep100 measures a sweep of 100 small runs (the review example over seeds 1..100,
// each run into its run directory) through the real binary, against the same 100 runs made one
// by one, each a host run --out process of its own, as a shell loop would. One iteration is the
// whole hundred; run it with -benchtime 1x:
//
//	go test ./cmd/host/ -run '^$' -bench BenchmarkSweep100 -benchtime 1x
func BenchmarkSweep100(b *testing.B) {
	bin, repo := buildBinary(b)
	scenario := filepath.Join("scenarios", "examples", "review.toml")
	const runs = 100
	for _, parallel := range []int{1, 2} {
		b.Run(fmt.Sprintf("sweep/parallel-%d", parallel), func(b *testing.B) {
			for b.Loop() {
				out := b.TempDir()
				start := time.Now()
				code, stdout, stderr := runIn(b, bin, repo, nil, "sweep", scenario, "--seeds", "1.."+strconv.Itoa(runs),
					"--parallel", strconv.Itoa(parallel), "--out", filepath.Join(out, "sweep"))
				if code != 0 {
					b.Fatalf("host sweep: exit %d\n%s\n%s", code, stdout, stderr)
				}
				b.ReportMetric(float64(time.Since(start).Milliseconds())/runs, "ms/run")
			}
		})
	}
	b.Run("one-by-one", func(b *testing.B) {
		for b.Loop() {
			out := b.TempDir()
			start := time.Now()
			for seed := 1; seed <= runs; seed++ {
				code, stdout, stderr := runIn(b, bin, repo, nil, "run", scenario, "--seed", strconv.Itoa(seed),
					"--out", filepath.Join(out, strconv.Itoa(seed)))
				if code != 0 {
					b.Fatalf("host run --seed %d: exit %d\n%s\n%s", seed, code, stdout, stderr)
				}
			}
			b.ReportMetric(float64(time.Since(start).Milliseconds())/runs, "ms/run")
		}
	})
}
