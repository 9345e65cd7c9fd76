package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// validateBlueprint is a one-stage blueprint; HEADER and TRANSITIONS are the test's.
const validateBlueprint = `name = "poller"
HEADER
[[stages]]
name = "poll"
available_tools = ["read_file"]
TRANSITIONS
`

// validateScenario runs the poller with a scripted model whose turns are TURNS.
const validateScenario = `name = "validate"
LIMITS
[blueprints]
poller = "poller.toml"

[models.m]
kind = "scripted"
TURNS

[[groups]]
name = "pollers"
blueprint = "poller"
model = "m"
count = 1
`

const alwaysLoop = "  [[stages.transitions]]\n  on = \"always\"\n  to = \"poll\""

// TestValidateReportsWhatCouldNeverRun: host validate refuses, at the file, line and key of the
// mistake, a stage graph an agent could never leave, a scripted turn asserting a stage no
// blueprint of its model has, a scripted call of a tool that does not exist or that the turn's
// stage does not offer, and a limit of 0; each with exit code 2. What can run validates.
func TestValidateReportsWhatCouldNeverRun(t *testing.T) {
	readNotes := "  [[models.m.turns]]\n  stage = \"poll\"\n    [[models.m.turns.calls]]\n    tool = \"read_file\"\n    args = { path = \"notes.md\" }"
	tests := []struct {
		name                               string
		header, transitions, limits, turns string
		// wantFile is "blueprint" or "scenario": where the problem is reported; want is the
		// rest of the line after "file:".
		wantFile, want string
	}{
		{name: "a valid poller", turns: readNotes},
		{name: "an always self-loop", transitions: alwaysLoop, turns: readNotes,
			wantFile: "blueprint", want: "6:12: stages[0].transitions[0]: stage graph has no end: every outcome of stage \"poll\""},
		{name: "an always self-loop with endless = true", header: "endless = true", transitions: alwaysLoop, turns: readNotes},
		{name: "a turn in a stage the blueprint does not have", turns: "  [[models.m.turns]]\n  stage = \"pol\"\n  text = \"x\"",
			wantFile: "scenario", want: "9:3: models.m.turns[0].stage: unknown stage \"pol\""},
		{name: "a call of a tool that does not exist", turns: "  [[models.m.turns]]\n    [[models.m.turns.calls]]\n    tool = \"read_files\"",
			wantFile: "scenario", want: "10:5: models.m.turns[0].calls[0].tool: unknown tool \"read_files\""},
		{name: "a call of a tool the turn's stage does not offer", turns: "  [[models.m.turns]]\n  stage = \"poll\"\n    [[models.m.turns.calls]]\n    tool = \"write_file\"",
			wantFile: "scenario", want: "11:5: models.m.turns[0].calls[0].tool: tool \"write_file\" is not offered by stage \"poll\""},
		{name: "a tick limit of 0", limits: "[limits]\nmax_ticks = 0\n", turns: readNotes,
			wantFile: "scenario", want: "3:1: limits.max_ticks: 0 is not \"no limit\""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			bp := writeFile(t, dir, "poller.toml", strings.NewReplacer("HEADER", tt.header, "TRANSITIONS", tt.transitions).Replace(validateBlueprint))
			sc := writeFile(t, dir, "validate.toml", strings.NewReplacer("LIMITS", tt.limits, "TURNS", tt.turns).Replace(validateScenario))
			r := host(t, "validate", sc)
			if tt.want == "" {
				wantCode(t, r, exitOK)
				return
			}
			wantCode(t, r, exitBadInput)
			file := sc
			if tt.wantFile == "blueprint" {
				file = bp
			}
			if want := file + ":" + tt.want; !strings.Contains(r.stderr, want) {
				t.Errorf("stderr does not contain %q:\n%s", want, r.stderr)
			}
			if strings.Count(strings.TrimSpace(r.stderr), "\n") != 1 && tt.wantFile == "scenario" {
				t.Errorf("want the one problem, got:\n%s", r.stderr)
			}
		})
	}
}

// TestValidateTestdataScenarios: every scenario the repository's own tests run validates, the
// agreement test's (which calls tools its stages do not offer, on purpose, and says so in its
// expectations) included.
func TestValidateTestdataScenarios(t *testing.T) {
	files := []string{filepath.Join("testdata", "agree", "agree.toml")}
	for _, dir := range []string{"permissions", "scripts", "bench"} {
		found, err := filepath.Glob(filepath.Join("..", "..", "scenarios", "testdata", dir, "*.toml"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range found {
			if data, err := os.ReadFile(f); err == nil && strings.Contains(string(data), "[[groups]]") {
				files = append(files, f) // a scenario, not one of its blueprints
			}
		}
	}
	r := host(t, append([]string{"validate"}, files...)...)
	wantCode(t, r, exitOK)
}

// TestValidateGraph: --graph prints the shipped review pipeline's stage graph after the ok
// line, in the format asked for, with the conditions on its edges; a bad format is refused.
func TestValidateGraph(t *testing.T) {
	sc := filepath.Join("..", "..", "scenarios", "examples", "review.toml")
	for format, want := range map[string][]string{
		"dot":     {"digraph \"pipeline\" {", `s2 -> end_done [label="done when tools.grade?.verdict == \"approve\"; set rounds, verdict"];`, "s2 -> s1 [label=\"done; set missing, rounds\"];"},
		"mermaid": {"flowchart LR", `s0[["plan"]]`, `s2 -->|"done when (memory.rounds ?? 0) + 1 #gt;= 3; set rounds, verdict"| end_failed`},
	} {
		r := host(t, "validate", sc, "--graph", format)
		wantCode(t, r, exitOK)
		if !strings.HasPrefix(r.stdout, sc+": ok (scenario review") {
			t.Errorf("%s: stdout starts %q", format, r.stdout[:min(len(r.stdout), 80)])
		}
		for _, w := range want {
			if !strings.Contains(r.stdout, w) {
				t.Errorf("%s: stdout lacks %q:\n%s", format, w, r.stdout)
			}
		}
	}
	r := host(t, "validate", sc, "--graph", "svg")
	if r.code == exitOK || !strings.Contains(r.stderr, "dot") {
		t.Errorf("--graph svg: code %d, stderr %q", r.code, r.stderr)
	}
}
