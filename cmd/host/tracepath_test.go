package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTraceInsideTheWorkdirRoot: a kept workdir root is the agents' to shape, and an agent of an
// earlier run may have planted a link where the next trace goes, or on the way to it; a --trace
// inside --workdir is refused before anything is created or truncated, whichever way the path
// reaches the root.
func TestTraceInsideTheWorkdirRoot(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(t.TempDir(), "precious")
	const content = "host data the trace must never truncate\n"
	if err := os.WriteFile(victim, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	work := filepath.Join(dir, "work")
	agent := filepath.Join(work, "g", "g-0")
	if err := os.MkdirAll(agent, 0o755); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{
		filepath.Join(agent, "trace.jsonl"): victim,               // a link in the trace's place
		filepath.Join(agent, "out"):         filepath.Dir(victim), // a link on the way to it
		filepath.Join(dir, "into-work"):     agent,                // the operator's own link into the root
	} {
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct{ name, trace string }{
		{"a link in the trace's place", filepath.Join(agent, "trace.jsonl")},
		{"a link on the way", filepath.Join(agent, "out", "precious")},
		{"a relative path", filepath.Join(work, ".", "g", "..", "g", "g-0", "trace.jsonl")},
		{"through a link into the root", filepath.Join(dir, "into-work", "new.jsonl")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := host(t, "run", example("on_error.toml"), "--workdir", work, "--trace", tc.trace)
			wantCode(t, r, exitBadInput)
			if !strings.Contains(r.stderr, "lies inside --workdir") {
				t.Errorf("stderr:\n%s", r.stderr)
			}
			if got, err := os.ReadFile(victim); err != nil || string(got) != content {
				t.Fatalf("the host file is %q, %v", got, err)
			}
			if _, err := os.Lstat(filepath.Join(agent, "new.jsonl")); err == nil {
				t.Fatal("a trace was created inside the workdir root")
			}
		})
	}
	out := filepath.Join(dir, "trace.jsonl") // beside the root, not in it
	wantCode(t, host(t, "run", example("on_error.toml"), "--workdir", work, "--trace", out), exitOK)
	if info, err := os.Stat(out); err != nil || info.Size() == 0 {
		t.Fatalf("the trace beside the root: %v, %v", info, err)
	}
}
