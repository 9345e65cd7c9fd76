package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// reportFixture copies one of package report's fixture directories into a temporary directory.
func reportFixture(t *testing.T, name string) string {
	t.Helper()
	src := filepath.Join("..", "..", "report", "testdata", name)
	dst := t.TempDir()
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	return dst
}

// TestReportOfARun reports on what host run --out writes: the report reads the run directory's
// files as their writers write them.
func TestReportOfARun(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	r := host(t, "run", example("review.toml"), "--out", dir, "--no-progress")
	if r.code != exitOK && r.code != exitExpect {
		t.Fatalf("host run exited %d\n%s", r.code, r.stderr)
	}
	wantCode(t, host(t, "report", dir), exitOK)
	page, err := os.ReadFile(filepath.Join(dir, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<title>Run: review</title>", "Agents by phase", "Stage graph: pipeline", "Visit length by stage (ticks)", "From metrics/run.csv."} {
		if !bytes.Contains(page, []byte(want)) {
			t.Errorf("the report lacks %q", want)
		}
	}
	for _, lack := range []string{"No trace.jsonl", "No timeline.csv", "No graph.json", "No metrics/", "incomplete", "Red edges were taken"} {
		if bytes.Contains(page, []byte(lack)) {
			t.Errorf("the report says %q of a whole run directory", lack)
		}
	}
}

func TestReport(t *testing.T) {
	tests := []struct {
		name    string
		fixture string
		args    func(dir string) []string
		out     func(dir string) string // the file the page should be in ("" for none)
		code    int
		stderr  string
	}{
		{"a run, into the run directory", "review",
			func(dir string) []string { return []string{"report", dir} },
			func(dir string) string { return filepath.Join(dir, "report.html") }, exitOK, ""},
		{"a sweep, elsewhere", "sweep",
			func(dir string) []string {
				return []string{"report", dir, "--out", filepath.Join(dir, "cells", "sweep.html")}
			},
			func(dir string) string { return filepath.Join(dir, "cells", "sweep.html") }, exitOK, ""},
		{"a state directory, with only a trace", "state",
			func(dir string) []string { return []string{"report", dir} },
			func(dir string) string { return filepath.Join(dir, "report.html") }, exitOK, ""},
		{"--out names a directory", "review",
			func(dir string) []string { return []string{"report", dir, "--out", filepath.Join(dir, "metrics")} },
			func(string) string { return "" }, exitBadInput, "metrics is a directory; name the file to write"},
		{"neither a run nor a sweep", "review",
			func(dir string) []string { return []string{"report", filepath.Join(dir, "metrics")} },
			func(string) string { return "" }, exitBadInput, "neither a run directory"},
		{"no such directory", "review",
			func(dir string) []string { return []string{"report", filepath.Join(dir, "nosuch")} },
			func(string) string { return "" }, exitBadInput, "no such file or directory"},
		{"a malformed timeline", "review",
			func(dir string) []string {
				if err := os.WriteFile(filepath.Join(dir, "timeline.csv"), []byte("tick,wall_ms\n0,1\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				return []string{"report", dir}
			},
			func(string) string { return "" }, exitBadInput, "timeline.csv:1: missing column entering"},
		{"an output folder that does not exist", "review",
			func(dir string) []string {
				return []string{"report", dir, "--out", filepath.Join(dir, "no", "such", "r.html")}
			},
			func(string) string { return "" }, exitBadInput, "writing the report"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := reportFixture(t, tt.fixture)
			r := host(t, tt.args(dir)...)
			wantCode(t, r, tt.code)
			if !strings.Contains(r.stderr, tt.stderr) {
				t.Errorf("stderr %q, want it to say %q", r.stderr, tt.stderr)
			}
			out := tt.out(dir)
			if out == "" {
				if _, err := os.Stat(filepath.Join(dir, "report.html")); err == nil {
					t.Error("a failed report left report.html behind")
				}
				return
			}
			page, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.HasPrefix(page, []byte("<!DOCTYPE html>")) || !strings.Contains(r.stdout, "wrote "+out) {
				t.Errorf("stdout %q; page starts %.40q", r.stdout, page)
			}
			// Again: the same page, byte for byte, over the old one.
			wantCode(t, host(t, tt.args(dir)...), exitOK)
			again, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(page, again) {
				t.Error("a second report of the same directory differs")
			}
		})
	}
}
