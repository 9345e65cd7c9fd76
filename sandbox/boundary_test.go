package sandbox

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseMode(t *testing.T) {
	for _, m := range []Mode{ModeNone, ModeNamespace, ModeBwrap} {
		got, err := ParseMode(m.String())
		if err != nil || got != m {
			t.Errorf("ParseMode(%q) = %v, %v", m.String(), got, err)
		}
	}
	_, err := ParseMode("docker")
	if !errors.Is(err, ErrUnknownMode) || err.Error() != `unknown sandbox mode "docker"; valid modes: none, namespace, bwrap` {
		t.Errorf("ParseMode(docker) = %v", err)
	}
	if f, err := ParseFallback("warn"); err != nil || f != FallbackWarn || f.String() != "warn" {
		t.Errorf("ParseFallback(warn) = %v, %v", f, err)
	}
	if _, err := ParseFallback("ignore"); !errors.Is(err, ErrUnknownFallback) {
		t.Errorf("ParseFallback(ignore) = %v", err)
	}
}

func TestCeiling(t *testing.T) {
	def := Ceiling(Spec{})
	if def.Mode != ModeNamespace || def.Network || def.OnUnavailable != FallbackError ||
		def.Limits != DefaultLimits() || !slices.Equal(def.AllowEnv, []string{"HOME", "LANG", "PATH", "TERM"}) ||
		!slices.Equal(def.Hidden, DefaultHidden()) {
		t.Errorf("the default ceiling is %+v", def)
	}
	env := []string{"PATH", "CI", "PATH"}
	b := Ceiling(Spec{Mode: new(ModeBwrap), Network: new(true), AllowEnv: env,
		Writable: []string{"/srv/cache/", "/data"}, Limits: Limits{Timeout: 2 * time.Hour, Processes: 8}})
	if b.Mode != ModeBwrap || !b.Network || !slices.Equal(b.AllowEnv, []string{"CI", "PATH"}) ||
		!slices.Equal(b.Writable, []string{"/data", "/srv/cache"}) {
		t.Errorf("ceiling = %+v", b)
	}
	if b.Limits.Timeout != 2*time.Hour || b.Limits.Processes != 8 || b.Limits.OpenFiles != DefaultLimits().OpenFiles {
		t.Errorf("the host's limits replace the defaults, one by one: %+v", b.Limits)
	}
	if !slices.Equal(env, []string{"PATH", "CI", "PATH"}) {
		t.Errorf("Ceiling changed the caller's list: %q", env)
	}
	if none := Ceiling(Spec{Hidden: []string{}}); len(none.Hidden) != 0 {
		t.Errorf("hidden = [] hides %q, want nothing", none.Hidden)
	}
}

func TestTighten(t *testing.T) {
	host := Ceiling(Spec{Writable: []string{"/a", "/b"}, Hidden: []string{"/root"}, Network: new(true)})
	tests := []struct {
		name  string
		inner Spec
		check func(Boundary) bool
		loose string // a problem the error must name; "" for none
	}{
		{"nothing set keeps the outer boundary", Spec{}, func(b Boundary) bool { return b.Mode == ModeNamespace && b.Network }, ""},
		{"bwrap for namespace", Spec{Mode: new(ModeBwrap)}, func(b Boundary) bool { return b.Mode == ModeBwrap }, ""},
		{"network off", Spec{Network: new(false)}, func(b Boundary) bool { return !b.Network }, ""},
		{"fewer writable paths", Spec{Writable: []string{"/b"}}, func(b Boundary) bool { return slices.Equal(b.Writable, []string{"/b"}) }, ""},
		{"more hidden paths", Spec{Hidden: []string{"/home", "/root"}}, func(b Boundary) bool { return slices.Equal(b.Hidden, []string{"/home", "/root"}) }, ""},
		{"fewer variables", Spec{AllowEnv: []string{"PATH"}}, func(b Boundary) bool { return slices.Equal(b.AllowEnv, []string{"PATH"}) }, ""},
		{"lower limits", Spec{Limits: Limits{Timeout: time.Second, Processes: 4}}, func(b Boundary) bool {
			return b.Limits.Timeout == time.Second && b.Limits.Processes == 4 && b.Limits.CPUSeconds == DefaultLimits().CPUSeconds
		}, ""},
		{"mode none under a namespace host", Spec{Mode: new(ModeNone)}, nil, `mode "none" under a host sandbox of mode "namespace"`},
		{"a writable path the host does not allow", Spec{Writable: []string{"/etc"}}, nil, "writable path /etc, which the outer layer does not allow (allowed: [/a /b])"},
		{"a variable the host does not pass", Spec{AllowEnv: []string{"AWS_SECRET"}}, nil, "allow_env_vars AWS_SECRET"},
		{"a higher limit", Spec{Limits: Limits{Timeout: time.Hour}}, nil, "limits.timeout above the outer layer's"},
		{"smaller /tmp and files", Spec{Limits: Limits{TmpSize: 1 << 20, FileSize: 2 << 20}}, func(b Boundary) bool {
			return b.Limits.TmpSize == 1<<20 && b.Limits.FileSize == 2<<20 && b.Limits.OutputBytes == DefaultLimits().OutputBytes
		}, ""},
		{"a bigger /tmp", Spec{Limits: Limits{TmpSize: 1 << 40}}, nil, "limits.tmp_size above the outer layer's"},
		{"bigger files", Spec{Limits: Limits{FileSize: 1 << 40}}, nil, "limits.file_size above the outer layer's"},
		{"warn under error", Spec{OnUnavailable: new(FallbackWarn)}, nil, `on_unavailable = "warn" where the outer layer says "error"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Tighten(host, tt.inner)
			if tt.loose == "" {
				if err != nil || !tt.check(got) {
					t.Errorf("Tighten = %+v, %v", got, err)
				}
				return
			}
			if !errors.Is(err, ErrLoosens) || !strings.Contains(err.Error(), tt.loose) {
				t.Errorf("error = %v, want ErrLoosens naming %q", err, tt.loose)
			}
			if got.Mode != host.Mode || !slices.Equal(got.Writable, host.Writable) || got.Limits != host.Limits {
				t.Errorf("a loosening returned %+v, want the outer boundary unchanged", got)
			}
		})
	}
	// Network on is a loosening only where the outer layer has it off.
	off, _ := Tighten(host, Spec{Network: new(false)})
	if _, err := Tighten(off, Spec{Network: new(true)}); !errors.Is(err, ErrLoosens) {
		t.Errorf("network back on: %v", err)
	}
	// A host without a sandbox lets a blueprint turn one on.
	none := Ceiling(Spec{Mode: new(ModeNone)})
	if got, err := Tighten(none, Spec{Mode: new(ModeNamespace)}); err != nil || got.Mode != ModeNamespace {
		t.Errorf("namespace under none: %+v, %v", got, err)
	}
}

func TestBoundaryString(t *testing.T) {
	b := Ceiling(Spec{Writable: []string{"/srv"}, Hidden: []string{"/root"}})
	want := "namespace network=off writable=[/srv] hidden=[/root] timeout=1m0s cpu=60s as=4294967296 nofile=1024 nproc=256 output=65536 tmp=268435456 fsize=1073741824"
	if got := b.String(); got != want {
		t.Errorf("String() =\n%s\nwant\n%s", got, want)
	}
	if got := Ceiling(Spec{Mode: new(ModeNone)}).String(); !strings.HasPrefix(got, "none timeout=") {
		t.Errorf("a none boundary reads %q", got)
	}
}

func TestMeet(t *testing.T) {
	parent := Ceiling(Spec{Network: new(false), Writable: []string{"/a"}, Hidden: []string{"/root"},
		AllowEnv: []string{"PATH"}, Limits: Limits{Timeout: time.Second}})
	child := Ceiling(Spec{Mode: new(ModeNone), Network: new(true), Writable: []string{"/a", "/b"},
		Hidden: []string{"/home"}, OnUnavailable: new(FallbackWarn), Limits: Limits{Processes: 4}})
	got := Meet(child, parent)
	if got.Mode != ModeNamespace || got.Network || !slices.Equal(got.Writable, []string{"/a"}) ||
		!slices.Equal(got.Hidden, []string{"/home", "/root"}) || !slices.Equal(got.AllowEnv, []string{"PATH"}) ||
		got.Limits.Timeout != time.Second || got.Limits.Processes != 4 || got.OnUnavailable != FallbackError {
		t.Errorf("Meet = %+v", got)
	}
	// Both containing: the first's mechanism stays.
	if m := Meet(Ceiling(Spec{Mode: new(ModeBwrap)}), Ceiling(Spec{})); m.Mode != ModeBwrap {
		t.Errorf("Meet(bwrap, namespace).Mode = %v", m.Mode)
	}
}
