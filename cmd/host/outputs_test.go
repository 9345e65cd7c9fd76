package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warrenhq/warren"
)

// copyTree copies the files under src into dst, so a test can offer a run's inputs as outputs
// without risking the shipped ones.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestTraceNamingAnInputIsRefused: host run refuses, with exit 2 and before creating anything, a
// --trace that names a file the run reads, however the path reaches it (as typed, through a link,
// a hard link, another spelling), and the file is left as it was.
func TestTraceNamingAnInputIsRefused(t *testing.T) {
	dir := t.TempDir()
	copyTree(t, filepath.Join(examples, "gossip"), filepath.Join(dir, "gossip"))
	copyTree(t, filepath.Join(examples, "scripted"), filepath.Join(dir, "scripted"))
	copyTree(t, runData("hosttools"), filepath.Join(dir, "hosttools"))
	for _, name := range []string{"gossip.toml", "scripts.toml"} {
		data, err := os.ReadFile(example(name))
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, dir, name, string(data))
	}
	if err := os.Symlink("gossip.toml", filepath.Join(dir, "link.toml")); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(filepath.Join(dir, "gossip.toml"), filepath.Join(dir, "hard.toml")); err != nil {
		t.Fatal(err)
	}
	in := func(rel string) string { return filepath.Join(dir, rel) }
	hostConfig := in(filepath.Join("hosttools", "host", "host.toml"))
	tests := []struct {
		name   string
		args   []string
		trace  string // the --trace path, which must be left as it was
		victim string // the input it names
		names  string // how the refusal names the input
	}{
		{"the scenario", []string{"run", in("gossip.toml")}, in("gossip.toml"), in("gossip.toml"), "the scenario"},
		{"the scenario, spelt another way", []string{"run", in("gossip.toml")}, in("gossip/../gossip.toml"), in("gossip.toml"), "the scenario"},
		{"the scenario through a link", []string{"run", in("gossip.toml")}, in("link.toml"), in("gossip.toml"), "the scenario"},
		{"the scenario through a hard link", []string{"run", in("gossip.toml")}, in("hard.toml"), in("gossip.toml"), "the scenario"},
		{"a blueprint", []string{"run", in("gossip.toml")}, in("gossip/voter.toml"), in("gossip/voter.toml"), `blueprint "voter"`},
		{"a policy file", []string{"run", in("gossip.toml")}, in("gossip/voter.js"), in("gossip/voter.js"), `the policy of model "voter"`},
		{"a script tool", []string{"run", in("scripts.toml")}, in("scripted/tools/roll_dice.js"), in("scripted/tools/roll_dice.js"), `script tool "roll_dice"`},
		{"the --config file", []string{"run", in("hosttools/shout.toml"), "--config", hostConfig}, hostConfig, hostConfig, "the host config"},
		{"a --config tools_dir script", []string{"run", in("hosttools/shout.toml"), "--config", hostConfig}, in("hosttools/host/tools/shout.js"), in("hosttools/host/tools/shout.js"), `script tool "shout"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before, err := os.ReadFile(tt.victim)
			if err != nil {
				t.Fatal(err)
			}
			r := host(t, append(tt.args, "--trace", tt.trace)...)
			wantCode(t, r, exitBadInput)
			want := "host: --trace " + tt.trace + " names " + tt.names + " ("
			if !strings.HasPrefix(r.stderr, want) || !strings.Contains(r.stderr, "which the run reads: writing it there would overwrite it; give a path that no input of the run has\n") {
				t.Errorf("stderr:\n%s\nwant it to start with %q", r.stderr, want)
			}
			if r.stdout != "" {
				t.Errorf("the run went ahead:\n%s", r.stdout)
			}
			if after, err := os.ReadFile(tt.victim); err != nil || string(after) != string(before) {
				t.Errorf("%s changed (%v)", tt.victim, err)
			}
		})
	}
	// A path beside the inputs is fine.
	out := in("gossip.jsonl")
	wantCode(t, host(t, "run", in("scripts.toml"), "--trace", out), exitOK)
}

// TestCheckOutputs: outputs may not name an input nor each other (the future --record beside
// --trace); unset outputs are skipped.
func TestCheckOutputs(t *testing.T) {
	dir := t.TempDir()
	scenario := writeFile(t, dir, "s.toml", "name = \"s\"\n")
	inputs := []warren.Input{{Path: scenario, What: "the scenario"}}
	if err := checkOutputs(inputs, output{"--trace", filepath.Join(dir, "t.jsonl")}, output{"--record", ""}); err != nil {
		t.Errorf("distinct outputs: %v", err)
	}
	err := checkOutputs(inputs, output{"--trace", filepath.Join(dir, "t.jsonl")}, output{"--record", dir + "/./t.jsonl"})
	if err == nil || !strings.Contains(err.Error(), "--record "+dir+"/./t.jsonl"+" names the same file as --trace "+filepath.Join(dir, "t.jsonl")+": give each output a path of its own") {
		t.Errorf("two outputs on one file: %v", err)
	}
	rel, err := filepath.Rel(mustGetwd(t), scenario)
	if err != nil {
		t.Fatal(err)
	}
	if err := checkOutputs(inputs, output{"--record", rel}); err == nil || !strings.Contains(err.Error(), "names the scenario ("+scenario+")") {
		t.Errorf("a relative path to the scenario: %v", err)
	}
}

func mustGetwd(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return wd
}
