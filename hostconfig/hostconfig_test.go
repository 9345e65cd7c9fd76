package hostconfig

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/warrenhq/warren/internal/golden"
	"github.com/warrenhq/warren/internal/tomlfile"
	"github.com/warrenhq/warren/policy"
)

var knownTools = []string{"edit_file", "list_dir", "read_file", "write_file"}

func TestBadCorpus(t *testing.T) {
	for _, file := range golden.Corpus(t, "bad", "*.toml") {
		name := strings.TrimSuffix(filepath.Base(file), ".toml")
		t.Run(name, func(t *testing.T) {
			cfg, err := Load(file, knownTools)
			if err == nil {
				t.Fatalf("loaded %+v, want an error", cfg)
			}
			golden.Check(t, strings.TrimSuffix(file, ".toml")+".err", err.Error()+"\n")
		})
	}
}

func TestLoadFullConfig(t *testing.T) {
	cfg, err := Load(filepath.Join("testdata", "good", "full.toml"), knownTools)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.ToolPermissions["shell:rm"] != policy.Deny || cfg.ToolPermissions["write_file"] != policy.Ask ||
		cfg.AgentToolPermissions["researcher"]["write_file"] != policy.Allow {
		t.Errorf("permissions %v %v", cfg.ToolPermissions, cfg.AgentToolPermissions)
	}
	if strings.Join(cfg.SafeCommands, ",") != "make test,go test" || cfg.AllowBlueprintPermissions || !cfg.AllowBlueprintSafeCommands {
		t.Errorf("safe commands / security: %+v", cfg)
	}
	if cfg.WritePerCall != 4096 || cfg.WritePerRun != 65536 || cfg.TimeoutTicks != 20 || !cfg.Unattended {
		t.Errorf("budget / interaction: %+v", cfg)
	}
	if want := (SubagentLimits{MaxDepth: 5, MaxChildren: 12, MaxAgents: 5000, Inbox: 9, MaxFanOutItems: 700}); cfg.Subagents != want {
		t.Errorf("subagents %+v, want %+v", cfg.Subagents, want)
	}
	layer := cfg.HostLayer()
	if layer.Global["shell:rm"] != policy.Deny || layer.PerBlueprint["researcher"]["write_file"] != policy.Allow {
		t.Errorf("host layer %+v", layer)
	}
}

func TestDefaults(t *testing.T) {
	cfg := Default()
	if cfg.WritePerCall != DefaultPerCallBytes || cfg.WritePerRun != DefaultPerRunBytes || cfg.TimeoutTicks != DefaultTimeoutTicks ||
		cfg.Unattended || cfg.AllowBlueprintPermissions || len(cfg.ToolPermissions) != 0 {
		t.Fatalf("defaults %+v", cfg)
	}
	want := SubagentLimits{MaxDepth: DefaultMaxDepth, MaxChildren: DefaultMaxChildren, MaxAgents: DefaultMaxAgents, Inbox: DefaultInbox, MaxFanOutItems: DefaultMaxFanOutItems}
	if cfg.Subagents != want || want != (SubagentLimits{MaxDepth: 8, MaxChildren: 256, MaxAgents: 1_000_000, Inbox: 64, MaxFanOutItems: 100_000}) {
		t.Errorf("default subagents %+v", cfg.Subagents)
	}
}

func TestSubagentsPartialAndDefaults(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want SubagentLimits
	}{
		{name: "no table", src: "", want: Default().Subagents},
		{name: "empty table", src: "[subagents]\n", want: Default().Subagents},
		{name: "one key", src: "[subagents]\ninbox = 1\n", want: SubagentLimits{MaxDepth: 8, MaxChildren: 256, MaxAgents: 1_000_000, Inbox: 1, MaxFanOutItems: 100_000}},
		{name: "lower bounds", src: "[subagents]\nmax_depth = 1\nmax_children = 1\nmax_agents = 1\ninbox = 1\nmax_fanout_items = 1\n",
			want: SubagentLimits{MaxDepth: 1, MaxChildren: 1, MaxAgents: 1, Inbox: 1, MaxFanOutItems: 1}},
		{name: "upper bounds", src: "[subagents]\nmax_depth = 64\nmax_children = 1000000\nmax_agents = 100000000\ninbox = 100000\nmax_fanout_items = 10000000\n",
			want: SubagentLimits{MaxDepth: 64, MaxChildren: 1_000_000, MaxAgents: 100_000_000, Inbox: 100_000, MaxFanOutItems: 10_000_000}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "host.toml")
			if err := os.WriteFile(path, []byte(tt.src), 0o644); err != nil {
				t.Fatal(err)
			}
			cfg, err := Load(path, knownTools)
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Subagents != tt.want {
				t.Errorf("Subagents = %+v, want %+v", cfg.Subagents, tt.want)
			}
		})
	}
}

// TestHashCoversSubagents: a change to [subagents] changes the config hash recorded in traces.
func TestHashCoversSubagents(t *testing.T) {
	dir := t.TempDir()
	hashes := map[string]bool{}
	for i, src := range []string{"[subagents]\nmax_depth = 4\n", "[subagents]\nmax_depth = 5\n"} {
		path := filepath.Join(dir, "host"+strconv.Itoa(i)+".toml")
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		cfg, err := Load(path, knownTools)
		if err != nil {
			t.Fatal(err)
		}
		hashes[cfg.Hash] = true
	}
	if len(hashes) != 2 {
		t.Errorf("configs differing in [subagents] share a hash: %v", hashes)
	}
}

// compileUnderHost decodes src as a scenario file at path (the part of its shape that matters
// here: its name and its [host] table) and compiles the table the way the scenario loader does.
func compileUnderHost(t *testing.T, path, src string) (*Config, tomlfile.Errors) {
	t.Helper()
	var f struct {
		Name string `toml:"name"`
		Host *File  `toml:"host"`
	}
	doc, err := tomlfile.Decode(path, []byte(src), &f)
	if err != nil {
		t.Fatal(err)
	}
	return Compile(doc, "host", f.Host, knownTools)
}

// TestCompileUnderHost checks the [subagents] table inside a scenario's [host] table: values are
// compiled and errors carry the host. prefix at the right position.
func TestCompileUnderHost(t *testing.T) {
	src := "name = \"s\"\n[host.subagents]\nmax_depth = 3\ninbox = 0\nmax_fanout_items = 10\n"
	cfg, errs := compileUnderHost(t, "scenario.toml", src)
	want := "scenario.toml:4:1: host.subagents.inbox: out of range: 0; valid: 1 to 100000 (pending messages per agent inbox)"
	if errs.Error() != want {
		t.Errorf("errors = %v\nwant %s", errs, want)
	}
	if !errors.Is(errs.Err(), ErrOutOfRange) {
		t.Errorf("errors.Is(%v, ErrOutOfRange) = false", errs)
	}
	if got := cfg.Subagents; got.MaxDepth != 3 || got.MaxFanOutItems != 10 || got.Inbox != DefaultInbox || got.MaxChildren != DefaultMaxChildren {
		t.Errorf("Subagents = %+v", got)
	}
}

func TestErrorsWrapSentinels(t *testing.T) {
	_, err := Load(filepath.Join("testdata", "bad", "misspelled_verdict.toml"), knownTools)
	if !errors.Is(err, policy.ErrBadVerdict) {
		t.Errorf("misspelled verdict: %v", err)
	}
	_, err = Load(filepath.Join("testdata", "bad", "unknown_tool.toml"), knownTools)
	if !errors.Is(err, policy.ErrUnknownName) {
		t.Errorf("unknown tool: %v", err)
	}
	_, err = Load(filepath.Join("testdata", "bad", "unknown_key.toml"), knownTools)
	if !errors.Is(err, tomlfile.ErrUnknownKey) {
		t.Errorf("unknown key: %v", err)
	}
	for _, file := range []string{"subagents_too_small", "subagents_too_large"} {
		_, err = Load(filepath.Join("testdata", "bad", file+".toml"), knownTools)
		if !errors.Is(err, ErrOutOfRange) {
			t.Errorf("%s: %v", file, err)
		}
	}
	_, err = Load(filepath.Join("testdata", "bad", "subagents_wrong_type.toml"), knownTools)
	if !errors.Is(err, tomlfile.ErrType) {
		t.Errorf("subagents wrong type: %v", err)
	}
	_, err = Load(filepath.Join("testdata", "bad", "subagents_unknown_key.toml"), knownTools)
	if !errors.Is(err, tomlfile.ErrUnknownKey) {
		t.Errorf("subagents unknown key: %v", err)
	}
	_, err = Load(filepath.Join("testdata", "absent.toml"), knownTools)
	if err == nil || !strings.Contains(err.Error(), "absent.toml") {
		t.Errorf("missing file: %v", err)
	}
}
