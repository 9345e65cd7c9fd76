package hostconfig

import (
	"errors"
	"path/filepath"
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
	_, err = Load(filepath.Join("testdata", "absent.toml"), knownTools)
	if err == nil || !strings.Contains(err.Error(), "absent.toml") {
		t.Errorf("missing file: %v", err)
	}
}
