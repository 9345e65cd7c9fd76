package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTraceExport exports a golden trace in each format: what the command prints, the files it
// writes, and its refusal to replace them without --force.
func TestTraceExport(t *testing.T) {
	faults := filepath.Join(goldenTraces, "faults.jsonl")
	data, err := os.ReadFile(faults)
	if err != nil {
		t.Fatal(err)
	}
	events := bytes.Count(data, []byte("\n")) - 1
	calls := bytes.Count(data, []byte(`"kind":"tool_call"`))
	for _, format := range []string{"parquet", "csv"} {
		t.Run(format, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			r := host(t, "trace", "export", faults, "--out", out, "--format", format)
			wantCode(t, r, exitOK)
			for _, want := range []string{
				fmt.Sprintf("exported %s (scenario faults, seed 11): %d events into %s as %s\n", faults, events, out, format),
				fmt.Sprintf("  events               %9d rows  events.%s\n", events, format),
				fmt.Sprintf("  tool_call            %9d rows  tool_call.%s\n", calls, format),
				"  empty: answer, fanout_start, kill, mcp_server, memory, merge, message, model_fallback, model_retry, pool_breaker, prompt, wait_end, wait_start, worker_end\n",
				"25 tables and tables.json: ",
			} {
				if !strings.Contains(r.stdout, want) {
					t.Errorf("stdout does not contain %q:\n%s", want, r.stdout)
				}
			}
			var manifest struct {
				Format string `json:"format"`
				Tables []struct {
					File string `json:"file"`
					Rows int64  `json:"rows"`
				} `json:"tables"`
			}
			data, err := os.ReadFile(filepath.Join(out, "tables.json"))
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(data, &manifest); err != nil {
				t.Fatal(err)
			}
			if manifest.Format != format || len(manifest.Tables) != 25 {
				t.Fatalf("the manifest lists %d %s tables, want 25 %s", len(manifest.Tables), manifest.Format, format)
			}
			for _, tb := range manifest.Tables {
				if _, err := os.Stat(filepath.Join(out, tb.File)); err != nil {
					t.Errorf("the manifest lists %s: %v", tb.File, err)
				}
			}

			again := host(t, "trace", "export", faults, "--out", out, "--format", format)
			wantCode(t, again, exitBadInput)
			if want := "host: files of an earlier export exist: " + out + " holds events." + format + ", answer." + format +
				", end." + format + " and 23 more; --force replaces them, or give another --out\n"; again.stderr != want {
				t.Errorf("stderr:\n%s\nwant:\n%s", again.stderr, want)
			}
			wantCode(t, host(t, "trace", "export", faults, "--out", out, "--format", format, "--force"), exitOK)
		})
	}
}

// TestTraceExportIncomplete checks that a trace a killed run left is exported up to its last
// whole line, with notes saying what it lacks.
func TestTraceExportIncomplete(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(goldenTraces, "faults.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(data, []byte("\n"))
	dir := t.TempDir()
	cut := writeFile(t, dir, "cut.jsonl", string(bytes.Join(lines[:101], nil))+string(lines[101][:30]))
	r := host(t, "trace", "export", cut, "--out", filepath.Join(dir, "out"))
	wantCode(t, r, exitOK)
	want := "note: trace incomplete: no end event\nnote: line 102 was cut mid-line (30 bytes, no newline): read the 100 whole events before it\n" +
		"exported " + cut + " (scenario faults, seed 11): 100 events into "
	if !strings.HasPrefix(r.stdout, want) {
		t.Errorf("stdout:\n%s\nwant it to start with:\n%s", r.stdout, want)
	}
}

// TestTraceExportBadInput checks that what cannot be exported exits 2 with a message naming the
// file and what is valid, and writes nothing.
func TestTraceExportBadInput(t *testing.T) {
	dir := t.TempDir()
	faults := filepath.Join(goldenTraces, "faults.jsonl")
	old := writeFile(t, dir, "old.jsonl", `{"format":"warren-trace","version":4,"scenario":"s","scenario_hash":"sha256:0","seed":1,"clock":"virtual"}`+"\n")
	notTrace := writeFile(t, dir, "scenario.toml", "name = \"x\"\n")
	file := writeFile(t, dir, "taken", "x")
	missing := filepath.Join(dir, "missing.jsonl")
	out := filepath.Join(dir, "out")
	tests := []struct {
		name   string
		args   []string
		stderr string
	}{
		{"a missing trace", []string{missing, "--out", out}, "host: open " + missing + ": no such file or directory\n"},
		{"an unknown format", []string{faults, "--out", out, "--format", "xlsx"}, "host: --format: unknown table format \"xlsx\": valid formats are parquet, csv\n"},
		{"a trace of another version", []string{old, "--out", out}, "host: " + old + ": invalid trace header: line 1: version 4, this build reads version 5\n"},
		{"not a trace", []string{notTrace, "--out", out}, "host: " + notTrace + ": invalid trace header: line 1 is not JSON: name = \"x\"\n"},
		{"an --out that is a file", []string{faults, "--out", file}, "host: not an output folder: " + file + " is a file; give a folder (it is made when missing)\n"},
		{"no --out", []string{faults}, "host: missing flags: --out=DIR\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := host(t, append([]string{"trace", "export"}, tt.args...)...)
			wantCode(t, r, exitBadInput)
			if !strings.HasPrefix(r.stderr, tt.stderr) {
				t.Errorf("stderr:\n%s\nwant it to start with:\n%s", r.stderr, tt.stderr)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("bad input made the output folder")
			}
		})
	}
}

// TestTraceExportInterrupted checks that an export a signal stops exits 3 and leaves nothing.
func TestTraceExportInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	out := filepath.Join(t.TempDir(), "out")
	var stdout, stderr bytes.Buffer
	code := run(&env{stdout: &stdout, stderr: &stderr, ctx: ctx}, []string{"trace", "export", filepath.Join(goldenTraces, "fanout.jsonl"), "--out", out})
	if code != exitIncomplete || stderr.String() != "host: the export was interrupted; nothing was written into "+out+"\n" {
		t.Fatalf("exit %d, stderr %q; want 3 and the interruption", code, stderr.String())
	}
	if entries, _ := os.ReadDir(out); len(entries) != 0 {
		t.Errorf("an interrupted export left %d files", len(entries))
	}
}
