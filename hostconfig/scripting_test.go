package hostconfig

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/warrenhq/warren/internal/tomlfile"
	"github.com/warrenhq/warren/policy"
	"github.com/warrenhq/warren/sandbox"
)

func TestLoadScriptingFromFullConfig(t *testing.T) {
	path := filepath.Join("testdata", "good", "full.toml")
	cfg, err := Load(path, knownTools)
	if err != nil {
		t.Fatal(err)
	}
	wantPerms := map[string]policy.ScriptVerdict{
		policy.FnHTTPGet: policy.ScriptAllow, policy.FnWriteFile: policy.ScriptDeny,
		policy.FnShell: policy.ScriptInherit, policy.FnEnv: policy.ScriptAllow,
	}
	if len(cfg.ScriptPermissions) != len(wantPerms) {
		t.Errorf("ScriptPermissions = %v, want %v", cfg.ScriptPermissions, wantPerms)
	}
	for fn, v := range wantPerms {
		if cfg.ScriptPermissions[fn] != v {
			t.Errorf("ScriptPermissions[%s] = %v, want %v", fn, cfg.ScriptPermissions[fn], v)
		}
	}
	want := ScriptingConfig{
		ToolsDir:             filepath.Join("testdata", "good", "scripts"),
		AllowEnv:             []string{"HOME", "LANG"},
		HTTPAllowPrivate:     true,
		CallTimeout:          500 * time.Millisecond,
		MaxCallStack:         1024,
		HTTPTimeout:          3 * time.Second,
		MaxHTTPResponseBytes: 65536,
		MaxMemory:            32 << 20,
	}
	if !sameScripting(cfg.Scripting, want) {
		t.Errorf("Scripting = %+v\nwant %+v", cfg.Scripting, want)
	}
	// The host's table is Layer 3's ceiling as the policy package takes it.
	perms, err := policy.NewScriptPermissions(cfg.ScriptPermissions, nil)
	if err != nil {
		t.Fatal(err)
	}
	if allowed, layer, _ := perms.Decide(policy.FnHTTPGet, nil); !allowed || layer != policy.LayerScriptHost {
		t.Errorf("http_get under the full config: allowed %v, layer %s", allowed, layer)
	}
}

func sameScripting(a, b ScriptingConfig) bool {
	return a.ToolsDir == b.ToolsDir && slices.Equal(a.AllowEnv, b.AllowEnv) && a.HTTPAllowPrivate == b.HTTPAllowPrivate &&
		a.CallTimeout == b.CallTimeout && a.MaxCallStack == b.MaxCallStack && a.HTTPTimeout == b.HTTPTimeout &&
		a.MaxHTTPResponseBytes == b.MaxHTTPResponseBytes && a.MaxMemory == b.MaxMemory
}

func TestScriptingDefaults(t *testing.T) {
	want := ScriptingConfig{CallTimeout: 2 * time.Second, MaxCallStack: 256, HTTPTimeout: 10 * time.Second, MaxHTTPResponseBytes: 1 << 20, MaxMemory: 64 << 20}
	if got := DefaultScripting(); !sameScripting(got, want) {
		t.Errorf("DefaultScripting() = %+v, want %+v", got, want)
	}
	if cfg := Default(); !sameScripting(cfg.Scripting, want) || cfg.ScriptPermissions != nil {
		t.Errorf("Default() scripting %+v, script permissions %v", cfg.Scripting, cfg.ScriptPermissions)
	}
}

// writeConfig writes src as host.toml in a fresh folder and returns its path.
func writeConfig(t *testing.T, src string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "host.toml")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestScriptingKeys(t *testing.T) {
	abs := filepath.Join(t.TempDir(), "shared", "..", "tools")
	tests := []struct {
		name  string
		src   string
		check func(t *testing.T, dir string, s ScriptingConfig)
	}{
		{name: "empty table keeps defaults", src: "[scripting]\n", check: func(t *testing.T, _ string, s ScriptingConfig) {
			if !sameScripting(s, DefaultScripting()) {
				t.Errorf("%+v", s)
			}
		}},
		{name: "relative tools_dir is beside the file", src: "[scripting]\ntools_dir = \"tools/js\"\n", check: func(t *testing.T, dir string, s ScriptingConfig) {
			if want := filepath.Join(dir, "tools", "js"); s.ToolsDir != want {
				t.Errorf("ToolsDir = %q, want %q", s.ToolsDir, want)
			}
		}},
		{name: "relative tools_dir may climb", src: "[scripting]\ntools_dir = \"../shared\"\n", check: func(t *testing.T, dir string, s ScriptingConfig) {
			if want := filepath.Join(filepath.Dir(dir), "shared"); s.ToolsDir != want {
				t.Errorf("ToolsDir = %q, want %q", s.ToolsDir, want)
			}
		}},
		{name: "absolute tools_dir is cleaned", src: "[scripting]\ntools_dir = " + quoteTOML(abs) + "\n", check: func(t *testing.T, _ string, s ScriptingConfig) {
			if want := filepath.Clean(abs); s.ToolsDir != want {
				t.Errorf("ToolsDir = %q, want %q", s.ToolsDir, want)
			}
		}},
		{name: "allow_env sorted", src: "[scripting]\nallow_env = [\"TZ\", \"_X1\", \"HOME\"]\n", check: func(t *testing.T, _ string, s ScriptingConfig) {
			if want := []string{"HOME", "TZ", "_X1"}; !slices.Equal(s.AllowEnv, want) {
				t.Errorf("AllowEnv = %v, want %v", s.AllowEnv, want)
			}
		}},
		{name: "lower bounds", src: "[scripting]\ncall_timeout = \"1ms\"\nhttp_timeout = \"1ms\"\nmax_call_stack = 16\nmax_http_response_bytes = 1\nmax_memory = 1048576\n",
			check: func(t *testing.T, _ string, s ScriptingConfig) {
				if s.CallTimeout != time.Millisecond || s.HTTPTimeout != time.Millisecond || s.MaxCallStack != 16 || s.MaxHTTPResponseBytes != 1 || s.MaxMemory != 1<<20 {
					t.Errorf("%+v", s)
				}
			}},
		{name: "upper bounds", src: "[scripting]\ncall_timeout = \"10m\"\nhttp_timeout = \"9m59s\"\nmax_call_stack = 100000\nmax_http_response_bytes = 1073741824\nmax_memory = \"4GiB\"\n",
			check: func(t *testing.T, _ string, s ScriptingConfig) {
				if s.CallTimeout != 10*time.Minute || s.HTTPTimeout != 599*time.Second || s.MaxCallStack != 100_000 || s.MaxHTTPResponseBytes != 1<<30 || s.MaxMemory != 4<<30 {
					t.Errorf("%+v", s)
				}
			}},
		{name: "one key", src: "[scripting]\nhttp_allow_private = true\n", check: func(t *testing.T, _ string, s ScriptingConfig) {
			want := DefaultScripting()
			want.HTTPAllowPrivate = true
			if !sameScripting(s, want) {
				t.Errorf("%+v", s)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeConfig(t, tt.src)
			cfg, err := Load(path, knownTools)
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, filepath.Dir(path), cfg.Scripting)
		})
	}
}

// quoteTOML writes s as a TOML literal string, which keeps Windows backslashes as they are.
func quoteTOML(s string) string { return "'" + s + "'" }

func TestScriptPermissionsTable(t *testing.T) {
	cfg, err := Load(writeConfig(t, "[tool_script_permissions]\nread_file = \"allow\"\nhttp_post = \"allow\"\nlist_dir = \"inherit\"\ncall_tool = \"deny\"\n"), knownTools)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]policy.ScriptVerdict{policy.FnReadFile: policy.ScriptAllow, policy.FnHTTPPost: policy.ScriptAllow, policy.FnListDir: policy.ScriptInherit, policy.FnCallTool: policy.ScriptDeny}
	if len(cfg.ScriptPermissions) != len(want) {
		t.Fatalf("ScriptPermissions = %v, want %v", cfg.ScriptPermissions, want)
	}
	for fn, v := range want {
		if cfg.ScriptPermissions[fn] != v {
			t.Errorf("ScriptPermissions[%s] = %v, want %v", fn, cfg.ScriptPermissions[fn], v)
		}
	}
}

// TestCompileScriptingUnderHost: inside a scenario's [host] table, a relative tools_dir is beside
// the scenario file and errors carry the host. prefix.
func TestCompileScriptingUnderHost(t *testing.T) {
	scenario := filepath.Join("suite", "nightly", "scenario.toml")
	src := "name = \"s\"\n[host.scripting]\ntools_dir = \"tools\"\nmax_call_stack = 8\n[host.tool_script_permissions]\nenv = \"inherit\"\nhttp_get = \"allow\"\n"
	cfg, errs := compileUnderHost(t, scenario, src)
	want := scenario + ":4:1: host.scripting.max_call_stack: out of range: 8; valid: 16 to 100000 (the deepest call stack a script may build)\n" +
		scenario + ":6:1: host.tool_script_permissions.env: invalid script permission: inherit is not valid for env, which has no built-in tool of the same name to inherit from; valid: allow, deny"
	if errs.Error() != want {
		t.Errorf("errors =\n%v\nwant\n%s", errs, want)
	}
	if !errors.Is(errs.Err(), ErrOutOfRange) || !errors.Is(errs.Err(), policy.ErrBadScriptVerdict) {
		t.Errorf("errors do not wrap their sentinels: %v", errs)
	}
	if want := filepath.Join("suite", "nightly", "tools"); cfg.Scripting.ToolsDir != want {
		t.Errorf("ToolsDir = %q, want %q (beside the scenario)", cfg.Scripting.ToolsDir, want)
	}
	if cfg.ScriptPermissions[policy.FnHTTPGet] != policy.ScriptAllow || cfg.Scripting.MaxCallStack != DefaultScriptMaxCallStack {
		t.Errorf("valid keys were not kept: %v %+v", cfg.ScriptPermissions, cfg.Scripting)
	}
}

// TestHashCoversScripting: a change to the script tables changes the config hash in traces.
func TestHashCoversScripting(t *testing.T) {
	hashes := map[string]bool{}
	for _, src := range []string{"[scripting]\ncall_timeout = \"2s\"\n", "[scripting]\ncall_timeout = \"3s\"\n", "[tool_script_permissions]\nenv = \"deny\"\n"} {
		cfg, err := Load(writeConfig(t, src), knownTools)
		if err != nil {
			t.Fatal(err)
		}
		hashes[cfg.Hash] = true
	}
	if len(hashes) != 3 {
		t.Errorf("configs differing in script settings share a hash: %v", hashes)
	}
}

// TestCorpusWrapsSentinels: every problem of the script and sandbox corpus files wraps the
// sentinel its kind promises, so callers can tell them apart with errors.Is.
func TestCorpusWrapsSentinels(t *testing.T) {
	tests := []struct {
		file      string
		sentinels []error
	}{
		{"script_permissions_values", []error{policy.ErrBadScriptVerdict, policy.ErrUnknownScriptFunc}},
		{"script_permissions_not_table", []error{tomlfile.ErrType}},
		{"scripting_values", []error{ErrEmptyPath, ErrBadEnvName, ErrBadDuration, ErrOutOfRange}},
		{"scripting_limits_edges", []error{ErrOutOfRange}},
		{"scripting_wrong_type", []error{tomlfile.ErrType}},
		{"scripting_unknown_key", []error{tomlfile.ErrUnknownKey}},
		{"sandbox_values", []error{sandbox.ErrUnknownMode, sandbox.ErrUnknownFallback, ErrNotAbsolute, ErrDuplicatePath, ErrBadEnvName, ErrBadDuration, ErrBadSize, ErrOutOfRange}},
		{"sandbox_limits_edges", []error{ErrOutOfRange}},
		{"sandbox_limits_edges_high", []error{ErrOutOfRange}},
		{"sandbox_unknown_key", []error{tomlfile.ErrUnknownKey}},
		{"sandbox_wrong_type", []error{tomlfile.ErrType}},
		{"sandbox_size_wrong_type", []error{tomlfile.ErrType}},
		{"sandbox_not_table", []error{tomlfile.ErrType}},
		{"sandbox_hidden_in_writable", []error{ErrHiddenInWritable}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			_, err := Load(filepath.Join("testdata", "bad", tt.file+".toml"), knownTools)
			for _, sentinel := range tt.sentinels {
				if !errors.Is(err, sentinel) {
					t.Errorf("errors.Is(%v, %v) = false", err, sentinel)
				}
			}
		})
	}
}
