package blueprint

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/warrenhq/warren/internal/tomlfile"
	"github.com/warrenhq/warren/sandbox"
)

// describeSandbox renders a Spec for golden files and failure messages: unset settings as "-".
func describeSandbox(s sandbox.Spec) string {
	var parts []string
	if s.Mode != nil {
		parts = append(parts, "mode="+s.Mode.String())
	}
	if s.Network != nil {
		parts = append(parts, fmt.Sprintf("network=%v", *s.Network))
	}
	if s.OnUnavailable != nil {
		parts = append(parts, "on_unavailable="+s.OnUnavailable.String())
	}
	for _, list := range [...]struct {
		key   string
		names []string
	}{{"writable", s.Writable}, {"hidden", s.Hidden}, {"allow_env_vars", s.AllowEnv}} {
		if list.names != nil {
			parts = append(parts, fmt.Sprintf("%s=%v", list.key, list.names))
		}
	}
	if s.Limits != (sandbox.Limits{}) {
		parts = append(parts, fmt.Sprintf("limits=%+v", s.Limits))
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, " ")
}

// parseBoxed parses a blueprint for the sandbox tests, failing t on any problem.
func parseBoxed(t testing.TB, src string) *Blueprint {
	t.Helper()
	bp, err := Parse("boxed.toml", []byte(src), testTools)
	if err != nil {
		t.Fatal(err)
	}
	return bp
}

func TestSandboxTables(t *testing.T) {
	src := `name = "boxed"
[sandbox]
mode = "none"
writable = []
[sandbox.limits]
timeout = "10s"
output_bytes = "16KiB"

[[stages]]
name = "plain"

[[stages]]
name = "tight"
[stages.sandbox]
network = false
hidden = ["/home/"]
limits = { processes = 4 }
`
	bp := parseBoxed(t, src)
	wantBlueprint := sandbox.Spec{Mode: new(sandbox.ModeNone), Writable: []string{},
		Limits: sandbox.Limits{Timeout: 10 * time.Second, OutputBytes: 16 << 10}}
	if !reflect.DeepEqual(bp.Sandbox, wantBlueprint) {
		t.Errorf("Blueprint.Sandbox = %s, want %s", describeSandbox(bp.Sandbox), describeSandbox(wantBlueprint))
	}
	if !reflect.ValueOf(bp.Stages[0].Sandbox).IsZero() {
		t.Errorf("stage without a table: Sandbox = %s", describeSandbox(bp.Stages[0].Sandbox))
	}
	wantStage := sandbox.Spec{Network: new(false), Hidden: []string{"/home"}, Limits: sandbox.Limits{Processes: 4}}
	if !reflect.DeepEqual(bp.Stages[1].Sandbox, wantStage) {
		t.Errorf("Stages[1].Sandbox = %s, want %s", describeSandbox(bp.Stages[1].Sandbox), describeSandbox(wantStage))
	}
	wantAt := map[string]int{ // key -> line
		"sandbox.mode": 3, "sandbox.writable": 4, "sandbox.limits.timeout": 6, "sandbox.limits.output_bytes": 7,
		"stages[1].sandbox.network": 15, "stages[1].sandbox.hidden": 16, "stages[1].sandbox.limits.processes": 17,
	}
	if len(bp.sandboxAt) != len(wantAt) {
		t.Errorf("sandboxAt has %d keys, want %d: %v", len(bp.sandboxAt), len(wantAt), bp.sandboxAt)
	}
	for key, line := range wantAt {
		if at := bp.sandboxAt[key]; at.File != "boxed.toml" || at.Line != line || at.Key != key {
			t.Errorf("sandboxAt[%s] = %+v, want line %d", key, at, line)
		}
	}
	checkInvariants(t, bp)
}

// TestCheckSandboxCeiling resolves blueprints under host ceilings: CheckSandboxCeiling's report
// and the boundary StageBoundary gives the last stage.
func TestCheckSandboxCeiling(t *testing.T) {
	const header = "name = \"boxed\"\n[sandbox]\n"
	const oneStage = "\n[[stages]]\nname = \"work\"\n"
	namespace := sandbox.Ceiling(sandbox.Spec{Writable: []string{"/srv/cache", "/srv/data"}, Hidden: []string{"/root"}})
	none := sandbox.Ceiling(sandbox.Spec{Mode: new(sandbox.ModeNone)})
	online := sandbox.Ceiling(sandbox.Spec{Network: new(true)})
	warn := sandbox.Ceiling(sandbox.Spec{OnUnavailable: new(sandbox.FallbackWarn)})
	// with returns namespace changed by edit, for the expected boundaries.
	with := func(host sandbox.Boundary, edit func(*sandbox.Boundary)) sandbox.Boundary {
		edit(&host)
		return host
	}
	tests := []struct {
		name string
		host sandbox.Boundary
		src  string
		// want is CheckSandboxCeiling's report ("" for none), without the "boxed.toml:" prefix
		// of each line.
		want string
		// boundary is StageBoundary of the last stage.
		boundary sandbox.Boundary
	}{
		{name: "no table keeps the host", host: namespace, src: "name = \"boxed\"\n" + oneStage, boundary: namespace},
		{name: "host none, blueprint namespace", host: none, src: header + "mode = \"namespace\"\n" + oneStage,
			boundary: with(none, func(b *sandbox.Boundary) { b.Mode = sandbox.ModeNamespace })},
		{name: "host none, blueprint none", host: none, src: header + "mode = \"none\"\n" + oneStage, boundary: none},
		{name: "bwrap may replace namespace", host: namespace, src: header + "mode = \"bwrap\"\n" + oneStage,
			boundary: with(namespace, func(b *sandbox.Boundary) { b.Mode = sandbox.ModeBwrap })},
		{name: "host namespace, blueprint none", host: namespace, src: header + "mode = \"none\"\n" + oneStage,
			want:     `3:1: sandbox.mode: blueprint [sandbox] loosens the host's sandbox: mode "none" under a host sandbox of mode "namespace" (a blueprint can never turn a host sandbox off)`,
			boundary: namespace},
		{name: "network on under off", host: namespace, src: header + "network = true\n" + oneStage,
			want:     `3:1: sandbox.network: blueprint [sandbox] loosens the host's sandbox: network = true where the outer layer has the network off`,
			boundary: namespace},
		{name: "network off under on", host: online, src: header + "network = false\n" + oneStage,
			boundary: with(online, func(b *sandbox.Boundary) { b.Network = false })},
		{name: "writable outside the host's list", host: namespace, src: header + "writable = [\"/srv/cache\", \"/etc\"]\n" + oneStage,
			want:     `3:1: sandbox.writable: blueprint [sandbox] loosens the host's sandbox: writable path /etc, which the outer layer does not allow (allowed: [/srv/cache /srv/data])`,
			boundary: namespace},
		{name: "writable subset", host: namespace, src: header + "writable = [\"/srv/data/\"]\n" + oneStage,
			boundary: with(namespace, func(b *sandbox.Boundary) { b.Writable = []string{"/srv/data"} })},
		{name: "empty writable drops every path", host: namespace, src: header + "writable = []\n" + oneStage,
			boundary: with(namespace, func(b *sandbox.Boundary) { b.Writable = nil })},
		{name: "hidden union", host: namespace, src: header + "hidden = [\"/home\", \"/root\", \"/var/secrets\"]\n" + oneStage,
			boundary: with(namespace, func(b *sandbox.Boundary) { b.Hidden = []string{"/home", "/root", "/var/secrets"} })},
		{name: "variables the host does not pass", host: namespace, src: header + "allow_env_vars = [\"PATH\", \"SECRET\"]\n" + oneStage,
			want:     `3:1: sandbox.allow_env_vars: blueprint [sandbox] loosens the host's sandbox: allow_env_vars SECRET, which the outer layer does not pass (passed: [HOME LANG PATH TERM])`,
			boundary: namespace},
		{name: "fewer variables", host: namespace, src: header + "allow_env_vars = [\"PATH\"]\n" + oneStage,
			boundary: with(namespace, func(b *sandbox.Boundary) { b.AllowEnv = []string{"PATH"} })},
		{name: "warn under error", host: namespace, src: header + "on_unavailable = \"warn\"\n" + oneStage,
			want:     `3:1: sandbox.on_unavailable: blueprint [sandbox] loosens the host's sandbox: on_unavailable = "warn" where the outer layer says "error"`,
			boundary: namespace},
		{name: "error under warn", host: warn, src: header + "on_unavailable = \"error\"\n" + oneStage,
			boundary: with(warn, func(b *sandbox.Boundary) { b.OnUnavailable = sandbox.FallbackError })},
		{name: "limits take the minimum", host: namespace, src: header + "[sandbox.limits]\ntimeout = \"10s\"\ncpu_seconds = 60\nopen_files = 64\n" + oneStage,
			boundary: with(namespace, func(b *sandbox.Boundary) { b.Limits.Timeout, b.Limits.OpenFiles = 10*time.Second, 64 })},
		{name: "limit above the host's", host: namespace, src: header + "[sandbox.limits]\ntimeout = \"10s\"\naddress_space = \"8GiB\"\n" + oneStage,
			want:     `5:1: sandbox.limits.address_space: blueprint [sandbox] loosens the host's sandbox: limits.address_space above the outer layer's`,
			boundary: with(namespace, func(b *sandbox.Boundary) { b.Limits.Timeout = 10 * time.Second })},
		{name: "a loosening key keeps the outer value, the others still tighten", host: namespace,
			src: header + "mode = \"none\"\nnetwork = true\nhidden = [\"/home\"]\n[sandbox.limits]\nprocesses = 8\n" + oneStage,
			want: `3:1: sandbox.mode: blueprint [sandbox] loosens the host's sandbox: mode "none" under a host sandbox of mode "namespace" (a blueprint can never turn a host sandbox off)` + "\n" +
				`4:1: sandbox.network: blueprint [sandbox] loosens the host's sandbox: network = true where the outer layer has the network off`,
			boundary: with(namespace, func(b *sandbox.Boundary) { b.Hidden, b.Limits.Processes = []string{"/home", "/root"}, 8 })},
		{name: "stage tighter than blueprint", host: namespace,
			src: header + "hidden = [\"/home\"]\n[sandbox.limits]\ntimeout = \"30s\"\n" + oneStage +
				"[stages.sandbox]\nhidden = [\"/opt\"]\nwritable = [\"/srv/cache\"]\nlimits.timeout = \"5s\"\n",
			boundary: with(namespace, func(b *sandbox.Boundary) {
				b.Hidden, b.Writable, b.Limits.Timeout = []string{"/home", "/opt", "/root"}, []string{"/srv/cache"}, 5*time.Second
			})},
		{name: "stage looser than blueprint but within the host", host: namespace,
			src:      header + "[sandbox.limits]\ntimeout = \"10s\"\n" + oneStage + "[stages.sandbox]\nlimits.timeout = \"30s\"\n",
			want:     `9:8: stages[0].sandbox.limits.timeout: stage "work" [stages.sandbox] loosens the host's sandbox: limits.timeout above the outer layer's`,
			boundary: with(namespace, func(b *sandbox.Boundary) { b.Limits.Timeout = 10 * time.Second })},
		{name: "stage turns off what the blueprint turned on", host: none,
			src:      header + "mode = \"namespace\"\n" + oneStage + "[stages.sandbox]\nmode = \"none\"\n",
			want:     `8:1: stages[0].sandbox.mode: stage "work" [stages.sandbox] loosens the host's sandbox: mode "none" under a host sandbox of mode "namespace" (a blueprint can never turn a host sandbox off)`,
			boundary: with(none, func(b *sandbox.Boundary) { b.Mode = sandbox.ModeNamespace })},
		{name: "stage reopens the network the blueprint closed", host: online,
			src:      header + "network = false\n" + oneStage + "[stages.sandbox]\nnetwork = true\n",
			want:     `8:1: stages[0].sandbox.network: stage "work" [stages.sandbox] loosens the host's sandbox: network = true where the outer layer has the network off`,
			boundary: with(online, func(b *sandbox.Boundary) { b.Network = false })},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bp := parseBoxed(t, tt.src)
			err := bp.CheckSandboxCeiling(tt.host)
			if tt.want == "" {
				if err != nil {
					t.Errorf("CheckSandboxCeiling = %v", err)
				}
			} else {
				want := "boxed.toml:" + strings.ReplaceAll(tt.want, "\n", "\nboxed.toml:")
				if err == nil || err.Error() != want {
					t.Errorf("CheckSandboxCeiling =\n%v\nwant\n%s", err, want)
				}
				var errs tomlfile.Errors
				if !errors.As(err, &errs) || !errors.Is(err, sandbox.ErrLoosens) {
					t.Errorf("error %T does not wrap tomlfile.Errors and sandbox.ErrLoosens", err)
				}
			}
			if got := bp.StageBoundary(tt.host, len(bp.Stages)-1); !reflect.DeepEqual(got, tt.boundary) {
				t.Errorf("StageBoundary =\n%v\nwant\n%v", got, tt.boundary)
			}
		})
	}
}

func TestStageBoundaryPerStage(t *testing.T) {
	src := `name = "boxed"
[sandbox]
hidden = ["/home"]
[sandbox.limits]
timeout = "30s"

[[stages]]
name = "gather"

[[stages]]
name = "review"
[stages.sandbox]
writable = []
limits.timeout = "5s"
`
	host := sandbox.Ceiling(sandbox.Spec{Writable: []string{"/srv/cache"}, Hidden: []string{}})
	bp := parseBoxed(t, src)
	blueprintLevel := host
	blueprintLevel.Hidden, blueprintLevel.Limits.Timeout = []string{"/home"}, 30*time.Second
	review := blueprintLevel
	review.Writable, review.Limits.Timeout = nil, 5*time.Second
	tests := []struct {
		name  string
		stage int
		want  sandbox.Boundary
	}{
		{name: "stage without a table", stage: 0, want: blueprintLevel},
		{name: "stage with a table", stage: 1, want: review},
		{name: "index past the stages", stage: 2, want: blueprintLevel},
		{name: "negative index", stage: -1, want: blueprintLevel},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := bp.StageBoundary(host, tt.stage); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("StageBoundary(%d) =\n%v\nwant\n%v", tt.stage, got, tt.want)
			}
		})
	}
	if !slices.Equal(host.Writable, []string{"/srv/cache"}) || len(host.Hidden) != 0 {
		t.Errorf("StageBoundary changed the host's boundary: %v", host)
	}
}

// TestSandboxSettingsCoverSpec guards sandboxSettings against a setting added to sandbox.Spec:
// every field of the Spec and of its Limits must be set by exactly one setting, or the
// per-setting path of tightenLayer would drop it.
func TestSandboxSettingsCoverSpec(t *testing.T) {
	full := sandbox.Spec{
		Mode: new(sandbox.ModeBwrap), Network: new(true), OnUnavailable: new(sandbox.FallbackWarn),
		Writable: []string{"/w"}, Hidden: []string{"/h"}, AllowEnv: []string{"PATH"},
		Limits: sandbox.Limits{Timeout: 1, CPUSeconds: 1, AddressSpace: 1, OpenFiles: 1, Processes: 1, OutputBytes: 1, TmpSize: 1, FileSize: 1},
	}
	fields := func(v reflect.Value) []string {
		var set []string
		for i := range v.NumField() {
			if f := v.Field(i); f.Kind() == reflect.Struct {
				for j := range f.NumField() {
					if !f.Field(j).IsZero() {
						set = append(set, v.Type().Field(i).Name+"."+f.Type().Field(j).Name)
					}
				}
			} else if !f.IsZero() {
				set = append(set, v.Type().Field(i).Name)
			}
		}
		return set
	}
	want := fields(reflect.ValueOf(full))
	if n := len(want); n != reflect.TypeFor[sandbox.Spec]().NumField()-1+reflect.TypeFor[sandbox.Limits]().NumField() {
		t.Fatalf("the full Spec sets %d fields (%v); set every field of sandbox.Spec and sandbox.Limits", n, want)
	}
	var covered []string
	for _, s := range sandboxSettings {
		only, ok := s.only(full)
		got := fields(reflect.ValueOf(only))
		if !ok || len(got) != 1 {
			t.Errorf("setting %s sets %v, want exactly one field", s.key, got)
		}
		covered = append(covered, got...)
	}
	slices.Sort(covered)
	slices.Sort(want)
	if !slices.Equal(covered, want) {
		t.Errorf("settings cover %v, want %v", covered, want)
	}
	// Tightening by each setting in turn is tightening by the whole Spec.
	host := sandbox.Ceiling(sandbox.Spec{Network: new(true), OnUnavailable: new(sandbox.FallbackWarn), Writable: []string{"/w", "/x"}})
	layer := sandbox.Spec{Mode: new(sandbox.ModeBwrap), Network: new(false), Writable: []string{"/x"}, Hidden: []string{"/h"},
		AllowEnv: []string{"PATH"}, Limits: sandbox.Limits{Timeout: time.Second, OutputBytes: 1 << 10, TmpSize: 1 << 20, FileSize: 1 << 20}}
	whole, err := sandbox.Tighten(host, layer)
	if err != nil {
		t.Fatal(err)
	}
	stepwise := host
	for _, s := range sandboxSettings {
		if only, ok := s.only(layer); ok {
			if stepwise, err = sandbox.Tighten(stepwise, only); err != nil {
				t.Fatalf("%s: %v", s.key, err)
			}
		}
	}
	if !reflect.DeepEqual(whole, stepwise) {
		t.Errorf("stepwise %v, whole %v", stepwise, whole)
	}
}

// TestSandboxKeysAreTableKeys: every setting's key is a key the table accepts, so the positions
// CheckSandboxCeiling reports are found.
func TestSandboxKeysAreTableKeys(t *testing.T) {
	var src strings.Builder
	src.WriteString("name = \"boxed\"\n[[stages]]\nname = \"work\"\n[stages.sandbox]\n")
	values := map[string]string{"mode": `"none"`, "network": "true", "on_unavailable": `"warn"`, "writable": `["/w"]`,
		"hidden": `["/h"]`, "allow_env_vars": `["X"]`, "limits.timeout": `"1h"`, "limits.cpu_seconds": "86400",
		"limits.address_space": `"1TiB"`, "limits.open_files": "1048576", "limits.processes": "65536", "limits.output_bytes": `"64MiB"`,
		"limits.tmp_size": `"1TiB"`, "limits.file_size": `"1TiB"`}
	for _, s := range sandboxSettings {
		fmt.Fprintf(&src, "%s = %s\n", s.key, values[s.key])
	}
	bp := parseBoxed(t, src.String())
	for _, s := range sandboxSettings {
		if _, ok := bp.sandboxAt["stages[0].sandbox."+s.key]; !ok {
			t.Errorf("no position recorded for %s", s.key)
		}
	}
	// Everything this stage asks is looser than the default ceiling.
	var errs tomlfile.Errors
	if err := bp.CheckSandboxCeiling(sandbox.Ceiling(sandbox.Spec{})); !errors.As(err, &errs) {
		t.Fatalf("CheckSandboxCeiling = %v", err)
	}
	for _, e := range errs {
		if e.Line < 5 || !strings.HasPrefix(e.Key, "stages[0].sandbox.") {
			t.Errorf("problem not positioned at its key: %v", e)
		}
	}
}

// BenchmarkStageBoundary resolves the boundary of a stage with its own table, what the host does
// when an agent enters a stage.
func BenchmarkStageBoundary(b *testing.B) {
	bp := parseBoxed(b, "name = \"boxed\"\n[sandbox]\nhidden = [\"/home\"]\n[sandbox.limits]\ntimeout = \"30s\"\n"+
		"[[stages]]\nname = \"plain\"\n[[stages]]\nname = \"tight\"\n[stages.sandbox]\nnetwork = false\nlimits.timeout = \"5s\"\n")
	host := sandbox.Ceiling(sandbox.Spec{Writable: []string{"/srv/cache"}, Hidden: []string{"/root"}})
	for _, bc := range []struct {
		name  string
		stage int
	}{{"stage without a table", 0}, {"stage with a table", 1}} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				if bp.StageBoundary(host, bc.stage).Mode != sandbox.ModeNamespace {
					b.Fatal("wrong mode")
				}
			}
		})
	}
}

// BenchmarkStageBoundaryNoTables is the common case: a blueprint that says nothing about the
// sandbox runs every stage under the host's ceiling.
func BenchmarkStageBoundaryNoTables(b *testing.B) {
	bp := parseBoxed(b, "name = \"boxed\"\n[[stages]]\nname = \"work\"\n")
	host := sandbox.Ceiling(sandbox.Spec{})
	for b.Loop() {
		if bp.StageBoundary(host, 0).Mode != sandbox.ModeNamespace {
			b.Fatal("wrong mode")
		}
	}
}
