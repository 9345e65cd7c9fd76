package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestScriptMemoryTotalKeepsTheTrace: the scripts example at 40 agents under a run-wide script
// memory total of one call's budget ([scripting] max_total_memory = max_memory: the calls run one
// at a time) writes the trace the default writes, event for event: a call waits for room before
// its budget starts, so the total changes no result and no tick.
func TestScriptMemoryTotalKeepsTheTrace(t *testing.T) {
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(examples)); err != nil {
		t.Fatal(err)
	}
	scenario := filepath.Join(dir, "scripts.toml")
	src, err := os.ReadFile(scenario)
	if err != nil {
		t.Fatal(err)
	}
	capped := filepath.Join(dir, "scripts_capped.toml")
	if err := os.WriteFile(capped, append(src, []byte("\n[host.scripting]\nmax_memory = \"64MiB\"\nmax_total_memory = \"64MiB\"\n")...), 0o644); err != nil {
		t.Fatal(err)
	}
	traces := map[string][]byte{}
	for name, file := range map[string]string{"default": scenario, "capped": capped} {
		out := filepath.Join(dir, name+".jsonl")
		if r := host(t, "run", file, "--agents", "40", "--trace", out, "--no-progress"); r.code != 0 {
			t.Fatalf("%s: exit %d\n%s\n%s", name, r.code, r.stdout, r.stderr)
		}
		raw, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		traces[name] = raw[bytes.IndexByte(raw, '\n')+1:] // the header names the file and its hash
	}
	if !bytes.Equal(traces["default"], traces["capped"]) {
		t.Errorf("the capped run's trace differs at %s", firstDiffLine(traces["default"], traces["capped"]))
	}
	if n := bytes.Count(traces["default"], []byte(`"kind":"tool_result"`)); n < 80 {
		t.Errorf("only %d tool results: the run made too few script calls to show anything", n)
	}
}
