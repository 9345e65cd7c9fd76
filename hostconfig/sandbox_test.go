package hostconfig

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/warrenhq/warren/internal/tomlfile"
	"github.com/warrenhq/warren/sandbox"
)

func TestSandboxTable(t *testing.T) {
	defaults := sandbox.Ceiling(sandbox.Spec{})
	tests := []struct {
		name    string
		src     string
		want    sandbox.Spec
		ceiling sandbox.Boundary
	}{
		{name: "no table", src: "", ceiling: defaults},
		{name: "empty table", src: "[sandbox]\n", ceiling: defaults},
		{
			name: "every key",
			src: `[sandbox]
mode = "bwrap"
network = true
on_unavailable = "warn"
writable = ["/srv/cache/", "/var/tmp/../data"]
hidden = ["/root", "/home"]
allow_env_vars = ["TERM", "PATH", "GOPATH"]
[sandbox.limits]
timeout = "1m30s"
cpu_seconds = 120
address_space = "8GiB"
open_files = 4096
processes = 512
output_bytes = 131072
tmp_size = "1GiB"
file_size = 268435456
`,
			want: sandbox.Spec{
				Mode: new(sandbox.ModeBwrap), Network: new(true), OnUnavailable: new(sandbox.FallbackWarn),
				Writable: []string{"/srv/cache", "/var/data"}, Hidden: []string{"/root", "/home"},
				AllowEnv: []string{"GOPATH", "PATH", "TERM"},
				Limits: sandbox.Limits{
					Timeout: 90 * time.Second, CPUSeconds: 120, AddressSpace: 8 << 30, OpenFiles: 4096, Processes: 512, OutputBytes: 128 << 10,
					TmpSize: 1 << 30, FileSize: 256 << 20,
				},
			},
			ceiling: sandbox.Boundary{
				Mode: sandbox.ModeBwrap, Network: true, OnUnavailable: sandbox.FallbackWarn,
				Writable: []string{"/srv/cache", "/var/data"}, Hidden: []string{"/home", "/root"},
				AllowEnv: []string{"GOPATH", "PATH", "TERM"},
				Limits: sandbox.Limits{
					Timeout: 90 * time.Second, CPUSeconds: 120, AddressSpace: 8 << 30, OpenFiles: 4096, Processes: 512, OutputBytes: 128 << 10,
					TmpSize: 1 << 30, FileSize: 256 << 20,
				},
			},
		},
		{
			name: "mode none keeps the default limits",
			src:  "[sandbox]\nmode = \"none\"\n",
			want: sandbox.Spec{Mode: new(sandbox.ModeNone)},
			ceiling: sandbox.Boundary{Mode: sandbox.ModeNone, Limits: sandbox.DefaultLimits(),
				AllowEnv: []string{"HOME", "LANG", "PATH", "TERM"}, Hidden: sandbox.DefaultHidden()},
		},
		{
			name: "empty lists are settings",
			src:  "[sandbox]\nwritable = []\nhidden = []\nallow_env_vars = []\n",
			want: sandbox.Spec{Writable: []string{}, Hidden: []string{}, AllowEnv: []string{}},
			ceiling: sandbox.Boundary{Mode: sandbox.ModeNamespace, Limits: sandbox.DefaultLimits(),
				AllowEnv: []string{}},
		},
		{
			name: "lower bounds",
			src:  "[sandbox.limits]\ntimeout = \"1s\"\ncpu_seconds = 1\naddress_space = \"16MiB\"\nopen_files = 16\nprocesses = 1\noutput_bytes = \"1KiB\"\ntmp_size = \"1MiB\"\nfile_size = 1048576\n",
			want: sandbox.Spec{Limits: sandbox.Limits{Timeout: time.Second, CPUSeconds: 1, AddressSpace: 16 << 20, OpenFiles: 16, Processes: 1, OutputBytes: 1 << 10, TmpSize: 1 << 20, FileSize: 1 << 20}},
			ceiling: sandbox.Boundary{Mode: sandbox.ModeNamespace, AllowEnv: []string{"HOME", "LANG", "PATH", "TERM"},
				Hidden: sandbox.DefaultHidden(), Limits: sandbox.Limits{Timeout: time.Second, CPUSeconds: 1, AddressSpace: 16 << 20, OpenFiles: 16, Processes: 1, OutputBytes: 1 << 10, TmpSize: 1 << 20, FileSize: 1 << 20}},
		},
		{
			name: "upper bounds",
			src:  "[sandbox.limits]\ntimeout = \"1h\"\ncpu_seconds = 86400\naddress_space = \"1TiB\"\nopen_files = 1048576\nprocesses = 65536\noutput_bytes = 67108864\ntmp_size = 1099511627776\nfile_size = \"1TiB\"\n",
			want: sandbox.Spec{Limits: sandbox.Limits{Timeout: time.Hour, CPUSeconds: 86400, AddressSpace: 1 << 40, OpenFiles: 1 << 20, Processes: 65536, OutputBytes: 64 << 20, TmpSize: 1 << 40, FileSize: 1 << 40}},
			ceiling: sandbox.Boundary{Mode: sandbox.ModeNamespace, AllowEnv: []string{"HOME", "LANG", "PATH", "TERM"},
				Hidden: sandbox.DefaultHidden(), Limits: sandbox.Limits{Timeout: time.Hour, CPUSeconds: 86400, AddressSpace: 1 << 40, OpenFiles: 1 << 20, Processes: 65536, OutputBytes: 64 << 20, TmpSize: 1 << 40, FileSize: 1 << 40}},
		},
		{
			name: "inline limits table and one key",
			src:  "[sandbox]\nlimits = { processes = 8 }\n",
			want: sandbox.Spec{Limits: sandbox.Limits{Processes: 8}},
			ceiling: sandbox.Boundary{Mode: sandbox.ModeNamespace, AllowEnv: []string{"HOME", "LANG", "PATH", "TERM"},
				Hidden: sandbox.DefaultHidden(), Limits: sandbox.Limits{Timeout: time.Minute, CPUSeconds: 60, AddressSpace: 4 << 30, OpenFiles: 1024, Processes: 8, OutputBytes: 64 << 10, TmpSize: 256 << 20, FileSize: 1 << 30}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := Load(writeConfig(t, tt.src), knownTools)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(cfg.Sandbox, tt.want) {
				t.Errorf("Sandbox = %s, want %s", describeSpec(cfg.Sandbox), describeSpec(tt.want))
			}
			if got := cfg.SandboxCeiling(); !reflect.DeepEqual(got, tt.ceiling) {
				t.Errorf("SandboxCeiling() = %+v\nwant %+v", got, tt.ceiling)
			}
		})
	}
}

// describeSpec renders a Spec with its pointers followed, for failure messages.
func describeSpec(s sandbox.Spec) string {
	opt := func(set bool, v any) string {
		if !set {
			return "-"
		}
		return fmt.Sprint(v)
	}
	var mode, network, fallback any
	if s.Mode != nil {
		mode = *s.Mode
	}
	if s.Network != nil {
		network = *s.Network
	}
	if s.OnUnavailable != nil {
		fallback = *s.OnUnavailable
	}
	return fmt.Sprintf("{mode=%s network=%s on_unavailable=%s writable=%#v hidden=%#v env=%#v limits=%+v}",
		opt(s.Mode != nil, mode), opt(s.Network != nil, network), opt(s.OnUnavailable != nil, fallback),
		s.Writable, s.Hidden, s.AllowEnv, s.Limits)
}

func TestSandboxDefault(t *testing.T) {
	cfg := Default()
	if !reflect.ValueOf(cfg.Sandbox).IsZero() {
		t.Errorf("Default().Sandbox = %s, want the zero Spec", describeSpec(cfg.Sandbox))
	}
	want := sandbox.Boundary{Mode: sandbox.ModeNamespace, OnUnavailable: sandbox.FallbackError,
		AllowEnv: []string{"HOME", "LANG", "PATH", "TERM"}, Hidden: sandbox.DefaultHidden(), Limits: sandbox.DefaultLimits()}
	if got := cfg.SandboxCeiling(); !reflect.DeepEqual(got, want) {
		t.Errorf("Default().SandboxCeiling() = %+v, want %+v", got, want)
	}
}

func TestSandboxErrors(t *testing.T) {
	tests := []struct {
		name     string
		src      string
		want     string
		sentinel error
	}{
		{name: "unknown mode", src: "[sandbox]\nmode = \"docker\"\n",
			want:     `2:1: sandbox.mode: unknown sandbox mode "docker"; valid modes: none, namespace, bwrap`,
			sentinel: sandbox.ErrUnknownMode},
		{name: "mode is case-sensitive", src: "[sandbox]\nmode = \"Namespace\"\n",
			want:     `2:1: sandbox.mode: unknown sandbox mode "Namespace"; valid modes: none, namespace, bwrap`,
			sentinel: sandbox.ErrUnknownMode},
		{name: "bad fallback", src: "[sandbox]\non_unavailable = \"ignore\"\n",
			want:     `2:1: sandbox.on_unavailable: unknown on_unavailable value "ignore"; valid: error, warn`,
			sentinel: sandbox.ErrUnknownFallback},
		{name: "relative writable", src: "[sandbox]\nwritable = [\"cache\"]\n",
			want:     `2:13: sandbox.writable[0]: "cache" is not absolute; write an absolute host path such as "/srv/cache"`,
			sentinel: ErrNotAbsolute},
		{name: "empty hidden", src: "[sandbox]\nhidden = [\"/root\", \"\"]\n",
			want:     `2:20: sandbox.hidden[1]: "" is not absolute; write an absolute host path such as "/root/.ssh"`,
			sentinel: ErrNotAbsolute},
		{name: "duplicate path after cleaning", src: "[sandbox]\nhidden = [\"/root\", \"/root/\"]\n",
			want:     `2:20: sandbox.hidden[1]: duplicate path "/root/": /root is already listed at hidden[0]; list each path once`,
			sentinel: ErrDuplicatePath},
		{name: "bad variable name", src: "[sandbox]\nallow_env_vars = [\"MY-VAR\"]\n",
			want:     `2:19: sandbox.allow_env_vars[0]: invalid environment variable name "MY-VAR"; a variable name is letters, digits and '_', not starting with a digit`,
			sentinel: ErrBadEnvName},
		{name: "variable listed twice", src: "[sandbox]\nallow_env_vars = [\"PATH\", \"PATH\"]\n",
			want:     `2:27: sandbox.allow_env_vars[1]: invalid environment variable name "PATH": listed twice (first at allow_env_vars[0]); list each variable once`,
			sentinel: ErrBadEnvName},
		{name: "timeout not a duration", src: "[sandbox.limits]\ntimeout = \"60\"\n",
			want:     `2:1: sandbox.limits.timeout: invalid duration "60"; write a Go duration such as "60s", "500ms" or "1m30s" (the wall time one command may run)`,
			sentinel: ErrBadDuration},
		{name: "timeout too short", src: "[sandbox.limits]\ntimeout = \"999ms\"\n",
			want:     `2:1: sandbox.limits.timeout: out of range: "999ms"; valid: 1s to 1h (the wall time one command may run)`,
			sentinel: ErrOutOfRange},
		{name: "negative timeout", src: "[sandbox.limits]\ntimeout = \"-5s\"\n",
			want:     `2:1: sandbox.limits.timeout: out of range: "-5s"; valid: 1s to 1h (the wall time one command may run)`,
			sentinel: ErrOutOfRange},
		{name: "negative count", src: "[sandbox.limits]\nprocesses = -1\n",
			want:     `2:1: sandbox.limits.processes: out of range: -1; valid: 1 to 65536 (the processes the command may have at once)`,
			sentinel: ErrOutOfRange},
		{name: "size in decimal units", src: "[sandbox.limits]\naddress_space = \"4GB\"\n",
			want:     `2:1: sandbox.limits.address_space: invalid size "4GB"; ` + sizeRule,
			sentinel: ErrBadSize},
		{name: "size as a bare number string", src: "[sandbox.limits]\noutput_bytes = \"4096\"\n",
			want:     `2:1: sandbox.limits.output_bytes: invalid size "4096"; ` + sizeRule,
			sentinel: ErrBadSize},
		{name: "size too small", src: "[sandbox.limits]\naddress_space = \"15MiB\"\n",
			want:     `2:1: sandbox.limits.address_space: out of range: "15MiB"; valid: 16MiB to 1TiB (the address space of each of the command's processes)`,
			sentinel: ErrOutOfRange},
		{name: "size overflowing 64 bits", src: "[sandbox.limits]\noutput_bytes = \"99999999999999999999KiB\"\n",
			want:     `2:1: sandbox.limits.output_bytes: out of range: "99999999999999999999KiB"; valid: 1KiB to 64MiB (the command output kept for the result)`,
			sentinel: ErrOutOfRange},
		{name: "negative size", src: "[sandbox.limits]\noutput_bytes = -1024\n",
			want:     `2:1: sandbox.limits.output_bytes: out of range: -1024; valid: 1KiB to 64MiB (the command output kept for the result)`,
			sentinel: ErrOutOfRange},
		{name: "size as a float", src: "[sandbox.limits]\naddress_space = 1.5\n",
			want:     `2:1: sandbox.limits.address_space: invalid value type: expected integer or string, got float; ` + sizeRule,
			sentinel: tomlfile.ErrType},
		{name: "size as a table", src: "[sandbox.limits.output_bytes]\nkib = 4\n",
			want:     `1:17: sandbox.limits.output_bytes: invalid value type: expected integer or string, got table; ` + sizeRule,
			sentinel: tomlfile.ErrType},
		{name: "network as a string", src: "[sandbox]\nnetwork = \"off\"\n",
			want:     `2:11: sandbox.network: expected boolean, got string`,
			sentinel: tomlfile.ErrType},
		{name: "unknown key", src: "[sandbox]\nnet = false\n",
			want:     `2:1: sandbox.net: unknown key; valid keys here: allow_env_vars, hidden, limits, mode, network, on_unavailable, writable`,
			sentinel: tomlfile.ErrUnknownKey},
		{name: "unknown limits key", src: "[sandbox.limits]\nmemory = \"1GiB\"\n",
			want:     `2:1: sandbox.limits.memory: unknown key; valid keys here: address_space, cpu_seconds, file_size, open_files, output_bytes, processes, timeout, tmp_size`,
			sentinel: tomlfile.ErrUnknownKey},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeConfig(t, tt.src)
			cfg, err := Load(path, knownTools)
			if err == nil {
				t.Fatalf("loaded %s, want an error", describeSpec(cfg.Sandbox))
			}
			if got := strings.TrimPrefix(err.Error(), path+":"); got != tt.want {
				t.Errorf("error\n%s\nwant\n%s", got, tt.want)
			}
			if !errors.Is(err, tt.sentinel) {
				t.Errorf("errors.Is(%v, %v) = false", err, tt.sentinel)
			}
		})
	}
}

// TestSandboxUnderHost: a scenario's [host.sandbox] compiles the same, its problems keyed under
// host.
func TestSandboxUnderHost(t *testing.T) {
	src := "name = \"s\"\n[host.sandbox]\nmode = \"bwrap\"\nwritable = [\"tmp\"]\n[host.sandbox.limits]\nopen_files = 8\nprocesses = 4\n"
	cfg, errs := compileUnderHost(t, "scenario.toml", src)
	want := "scenario.toml:4:13: host.sandbox.writable[0]: \"tmp\" is not absolute; write an absolute host path such as \"/srv/cache\"\n" +
		"scenario.toml:6:1: host.sandbox.limits.open_files: out of range: 8; valid: 16 to 1048576 (the open files of each of the command's processes)"
	if errs.Error() != want {
		t.Errorf("errors =\n%v\nwant\n%s", errs, want)
	}
	if cfg.Sandbox.Mode == nil || *cfg.Sandbox.Mode != sandbox.ModeBwrap || cfg.Sandbox.Limits.Processes != 4 || len(cfg.Sandbox.Writable) != 0 {
		t.Errorf("Sandbox = %s", describeSpec(cfg.Sandbox))
	}
}

// TestCompileSandbox: the exported compiler blueprints use positions a table at any path.
func TestCompileSandbox(t *testing.T) {
	src := "[[stages]]\nname = \"a\"\n[[stages]]\nname = \"b\"\n[stages.sandbox]\nnetwork = false\nmode = \"off\"\n"
	var f struct {
		Stages []struct {
			Name    string       `toml:"name"`
			Sandbox SandboxTable `toml:"sandbox"`
		} `toml:"stages"`
	}
	doc, err := tomlfile.Decode("bp.toml", []byte(src), &f)
	if err != nil {
		t.Fatal(err)
	}
	spec, errs := CompileSandbox(doc, "stages[1].sandbox", &f.Stages[1].Sandbox)
	want := `bp.toml:7:1: stages[1].sandbox.mode: unknown sandbox mode "off"; valid modes: none, namespace, bwrap`
	if errs.Error() != want {
		t.Errorf("errors = %v, want %s", errs, want)
	}
	if spec.Network == nil || *spec.Network || spec.Mode != nil {
		t.Errorf("spec = %s, want network off and no mode", describeSpec(spec))
	}
	if spec, errs := CompileSandbox(doc, "stages[0].sandbox", &f.Stages[0].Sandbox); len(errs) != 0 || !reflect.ValueOf(spec).IsZero() {
		t.Errorf("an absent table: %s, %v", describeSpec(spec), errs)
	}
}

func TestParseSize(t *testing.T) {
	tests := []struct {
		in   string
		want uint64
		ok   bool
	}{
		{"64KiB", 64 << 10, true},
		{"16MiB", 16 << 20, true},
		{"4GiB", 4 << 30, true},
		{"1TiB", 1 << 40, true},
		{"0KiB", 0, true},
		{"007MiB", 7 << 20, true},
		{"16777215TiB", 16777215 << 40, true},
		{"16777216TiB", math.MaxUint64, true},
		{"99999999999999999999KiB", math.MaxUint64, true},
		{"KiB", 0, false},
		{"4", 0, false},
		{"4 GiB", 0, false},
		{"4gib", 0, false},
		{"4GB", 0, false},
		{"-4KiB", 0, false},
		{"1.5GiB", 0, false},
		{"+4KiB", 0, false},
		{"", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, ok := parseSize(tt.in)
			if got != tt.want || ok != tt.ok {
				t.Errorf("parseSize(%q) = %d, %v; want %d, %v", tt.in, got, ok, tt.want, tt.ok)
			}
		})
	}
}

// TestSandboxInFullConfig: the corpus's complete config carries a [sandbox] too.
func TestSandboxInFullConfig(t *testing.T) {
	cfg, err := Load(filepath.Join("testdata", "good", "full.toml"), knownTools)
	if err != nil {
		t.Fatal(err)
	}
	b := cfg.SandboxCeiling()
	if b.Mode != sandbox.ModeNamespace || b.Network || !slices.Equal(b.Writable, []string{"/srv/cache"}) ||
		!slices.Equal(b.Hidden, []string{"/home", "/root"}) || b.Limits.Timeout != 30*time.Second || b.Limits.AddressSpace != 2<<30 {
		t.Errorf("SandboxCeiling() = %v", b)
	}
}
