package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestRecordAndReplay drives host run --record and host replay through the CLI: a replay of an
// untouched recording is identical (exit 0), an edited scenario stops the replay at the call that
// differs (exit 1), and a recording without a trace, or a cut one, is bad input (exit 2).
func TestRecordAndReplay(t *testing.T) {
	dir := t.TempDir()
	tr, rec := filepath.Join(dir, "t.jsonl"), filepath.Join(dir, "r.jsonl")
	wantCode(t, host(t, "run", example("quickstart.toml"), "--agents", "6", "--trace", tr, "--record", rec), exitOK)

	r := host(t, "replay", rec, "--check")
	wantCode(t, r, exitOK)
	if !strings.Contains(r.stdout, "replay       identical to "+tr) || !strings.Contains(r.stdout, "agents       6: done 6") {
		t.Fatalf("stdout:\n%s", r.stdout)
	}

	src, err := os.ReadFile(example("quickstart.toml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.CopyFS(filepath.Join(dir, "blueprints"), os.DirFS(filepath.Join(examples, "blueprints"))); err != nil {
		t.Fatal(err)
	}
	edited := writeFile(t, dir, "edited.toml", strings.Replace(string(src), "notes/{{.Name}}.md\", content", "notes/{{.Name}}.txt\", content", 1))
	r = host(t, "replay", rec, "--check", "--scenario", edited)
	wantCode(t, r, exitExpect)
	for _, want := range []string{"replay of " + rec + " stopped: replay diverged from the recording at tick 1: agent researchers-0, turn 0, call 1 (researchers-0-t0-c1), tool write_file",
		`recorded: …was here\n","path":"notes/researchers-0.md"}`, `replay:   …was here\n","path":"notes/researchers-0.txt"}`, "header differs"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
		}
	}

	r = host(t, "run", example("quickstart.toml"), "--record", rec)
	wantCode(t, r, exitBadInput)
	if !strings.Contains(r.stderr, "--record "+rec+" needs --trace") {
		t.Fatalf("stderr:\n%s", r.stderr)
	}

	data, err := os.ReadFile(rec)
	if err != nil {
		t.Fatal(err)
	}
	cut := writeFile(t, dir, "cut.jsonl", string(data[:len(data)/2]))
	r = host(t, "replay", cut)
	wantCode(t, r, exitBadInput)
	if !strings.Contains(r.stderr, "not a valid recording") {
		t.Fatalf("stderr:\n%s", r.stderr)
	}
}

// wallScenario writes into dir a copy of the shipped example with its clock made the wall's, at
// 1 ms a tick (with the blueprints it names), and returns its path.
func wallScenario(t *testing.T, dir, example string) string {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(examples, example))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.CopyFS(filepath.Join(dir, "blueprints"), os.DirFS(filepath.Join(examples, "blueprints"))); err != nil {
		t.Fatal(err)
	}
	// A wall-clock tick is 1 ms, so a loaded machine takes many more ticks than virtual time
	// does: a tick limit would end the run by how busy the machine is.
	text := regexp.MustCompile(`(?m)^max_ticks = \d+`).ReplaceAllString(string(src), "max_ticks = 100000000")
	at := strings.Index(text, "\n[")
	return writeFile(t, dir, "wall.toml", text[:at]+"\n\n[clock]\nmode = \"wall\"\ntick = \"1ms\"\n"+text[at:])
}

// TestReplayWallClock: a wall-clock run, whose lane results arrive whenever the machine finishes
// them and whose ticks follow the machine's clock, replays exactly from its recording: the passes,
// the hand-overs and the times are recorded, and the replay steps them in virtual time.
func TestReplayWallClock(t *testing.T) {
	for example, agents := range map[string]string{"on_error.toml": "0", "quickstart.toml": "40"} {
		t.Run(strings.TrimSuffix(example, ".toml"), func(t *testing.T) {
			dir := t.TempDir()
			scenario := wallScenario(t, dir, example)
			for round := range 3 {
				tr, rec := filepath.Join(dir, fmt.Sprintf("t%d.jsonl", round)), filepath.Join(dir, fmt.Sprintf("r%d.jsonl", round))
				args := []string{"run", scenario, "--trace", tr, "--record", rec}
				if agents != "0" {
					args = append(args, "--agents", agents)
				}
				wantCode(t, host(t, args...), exitOK)
				r := host(t, "replay", rec, "--check")
				wantCode(t, r, exitOK)
				if !strings.Contains(r.stdout, "replay       identical to "+tr) || !strings.Contains(r.stdout, "wall clock") {
					t.Fatalf("stdout:\n%s", r.stdout)
				}
			}
		})
	}
}
