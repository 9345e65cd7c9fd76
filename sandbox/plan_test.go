package sandbox

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestCappedOutput(t *testing.T) {
	for _, tc := range []struct {
		name        string
		max         uint64
		writes      []string
		want        string
		wantDropped uint64
	}{
		{"under the cap", 10, []string{"abc", "def"}, "abcdef", 0},
		{"one write across the cap", 4, []string{"abcdef"}, "abcd", 2},
		{"writes past a full cap", 3, []string{"ab", "cd", "ef"}, "abc", 3},
		{"zero keeps nothing", 0, []string{"abc"}, "", 3},
		{"unlimited", math.MaxUint64, []string{"abc"}, "abc", 0},
	} {
		c := &cappedOutput{max: tc.max}
		for _, w := range tc.writes {
			if n, err := c.Write([]byte(w)); n != len(w) || err != nil {
				t.Errorf("%s: Write = %d, %v", tc.name, n, err)
			}
		}
		if string(c.kept) != tc.want || c.dropped != tc.wantDropped {
			t.Errorf("%s: kept %q dropped %d, want %q %d", tc.name, c.kept, c.dropped, tc.want, tc.wantDropped)
		}
	}
}

func TestMountOps(t *testing.T) {
	base := t.TempDir()
	dir := func(rel string) string {
		p := filepath.Join(base, rel)
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	work, cache, shared, secrets := dir("work"), dir("srv/cache"), dir("srv"), dir("home/.ssh")
	inWork := dir("work/build")
	token := filepath.Join(base, "home/token")
	if err := os.WriteFile(token, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(base, "link-to-srv")
	if err := os.Symlink(shared, link); err != nil {
		t.Fatal(err)
	}
	tmp := resolved("/tmp")
	for _, tc := range []struct {
		name             string
		root             string
		writable, hidden []string
		want             []mountOp
	}{
		{"just /tmp and the workdir", "", nil, nil, []mountOp{
			{tmp, mountPrivateTmp, true, ""}, {work, mountWritable, true, ""}}},
		{"writable, hidden dir and file, missing paths skipped", "",
			[]string{shared, "/nonexistent-warren"}, []string{secrets, token, "/nonexistent-warren-2"}, []mountOp{
				{secrets, mountHideDir, true, ""}, {token, mountHideFile, false, ""},
				{shared, mountWritable, true, ""}, {tmp, mountPrivateTmp, true, ""}, {work, mountWritable, true, ""}}},
		{"writable inside the workdir or another writable is skipped", "",
			[]string{inWork, cache, shared}, nil, []mountOp{
				{shared, mountWritable, true, ""}, {tmp, mountPrivateTmp, true, ""}, {work, mountWritable, true, ""}}},
		{"symlinks resolved; hiding wins at the same path", "",
			[]string{link}, []string{shared}, []mountOp{
				{shared, mountWritable, true, ""}, {shared, mountHideDir, true, ""},
				{tmp, mountPrivateTmp, true, ""}, {work, mountWritable, true, ""}}},
		{"the work root covered, the workdir and a writable path in it bound back", base,
			[]string{shared}, nil, []mountOp{
				{base, mountHideDir, true, ""}, {shared, mountWritable, true, ""},
				{tmp, mountPrivateTmp, true, ""}, {work, mountWritable, true, ""}}},
		{"a work root that is the workdir covers nothing", work, nil, nil, []mountOp{
			{tmp, mountPrivateTmp, true, ""}, {work, mountWritable, true, ""}}},
		{"a work root inside the workdir covers nothing", inWork, nil, nil, []mountOp{
			{tmp, mountPrivateTmp, true, ""}, {work, mountWritable, true, ""}}},
	} {
		got := mountOps(work, tc.root, Boundary{Writable: tc.writable, Hidden: tc.hidden})
		want := slices.Clone(tc.want)
		slices.SortStableFunc(want, func(a, b mountOp) int {
			if c := strings.Compare(a.Path, b.Path); c != 0 {
				return c
			}
			return kindOrder(a.Kind) - kindOrder(b.Kind)
		})
		if !slices.Equal(got, want) {
			t.Errorf("%s:\n got %v\nwant %v", tc.name, got, want)
		}
	}
	lp := landlockFor(mountOps(work, "", Boundary{Writable: []string{shared}, Hidden: []string{token}}))
	if !slices.Equal(lp.WritableDirs, []string{"/dev/shm", tmp, shared, work}) || lp.WritableFiles != nil {
		t.Errorf("landlock plan %+v", lp)
	}
}

func TestHiddenInWritable(t *testing.T) {
	base := resolved(t.TempDir())
	for _, dir := range []string{"work/conf", "srv/cache/conf", "srv/cache2", "etc"} {
		if err := os.MkdirAll(filepath.Join(base, dir), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(base, "link-to-cache")
	if err := os.Symlink(filepath.Join(base, "srv/cache"), link); err != nil {
		t.Fatal(err)
	}
	at := func(rel string) string { return filepath.Join(base, rel) }
	work := at("work")
	for _, tc := range []struct {
		name             string
		writable, hidden []string
		want             []string // substrings of an ErrHiddenInWritable error; none: no error
	}{
		{"hidden outside every writable path", []string{at("srv/cache")}, []string{at("etc"), at("srv/cache2/x")}, nil},
		{"a writable path inside a hidden one", []string{at("srv/cache")}, []string{at("srv")}, nil},
		{"hidden inside the workdir", nil, []string{at("work/conf/secret")},
			[]string{"hidden path " + at("work/conf/secret"), "the workdir " + work}},
		{"hidden inside a writable path", []string{at("srv/cache")}, []string{at("srv/cache/conf/secret")},
			[]string{"hidden path " + at("srv/cache/conf/secret"), "writable path " + at("srv/cache")}},
		{"hidden is a writable path", []string{at("srv/cache")}, []string{at("srv/cache")}, []string{"writable path"}},
		{"hidden inside a writable path reached through a symlink", []string{link}, []string{at("srv/cache/conf")},
			[]string{"writable path " + link}},
		{"hidden through a symlink into a writable path", []string{at("srv/cache")}, []string{filepath.Join(link, "conf")},
			[]string{"hidden path " + filepath.Join(link, "conf")}},
		{"hidden whose parent was already moved away", []string{at("srv/cache")}, []string{at("srv/cache/gone/secret")},
			[]string{"hidden path " + at("srv/cache/gone/secret")}},
	} {
		err := hiddenInWritable(work, Boundary{Writable: tc.writable, Hidden: tc.hidden})
		if tc.want == nil {
			if err != nil {
				t.Errorf("%s: %v", tc.name, err)
			}
			continue
		}
		if !errors.Is(err, ErrHiddenInWritable) {
			t.Errorf("%s: error %v, want ErrHiddenInWritable", tc.name, err)
			continue
		}
		for _, s := range tc.want {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("%s: error %q lacks %q", tc.name, err, s)
			}
		}
	}
}

func TestResolvedPrefix(t *testing.T) {
	base := resolved(t.TempDir())
	if err := os.Symlink(base, filepath.Join(base, "self")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ path, want string }{
		{base, base},
		{filepath.Join(base, "self", "missing", "x"), filepath.Join(base, "missing", "x")},
		{"/nonexistent-warren/a", "/nonexistent-warren/a"},
	} {
		if got := resolvedPrefix(tc.path); got != tc.want {
			t.Errorf("resolvedPrefix(%s) = %s, want %s", tc.path, got, tc.want)
		}
	}
}

func TestSandboxEnvNeverPassesShellCode(t *testing.T) {
	t.Setenv("BASH_ENV", "/tmp/evil.sh")
	t.Setenv("ENV", "/tmp/evil.sh")
	t.Setenv("SHELLOPTS", "xtrace")
	t.Setenv("PS4", "$(rm -rf x)")
	t.Setenv("BASH_FUNC_ls%%", "() { rm -rf x; }")
	t.Setenv("WARREN_TEST_PLAIN", "kept")
	got := sandboxEnv([]string{"BASH_ENV", "BASH_FUNC_ls%%", "ENV", "PS4", "SHELLOPTS", "WARREN_TEST_PLAIN"})
	if want := []string{"WARREN_TEST_PLAIN=kept"}; !slices.Equal(got, want) {
		t.Errorf("sandboxEnv = %q, want %q: bash runs code from the others", got, want)
	}
}
