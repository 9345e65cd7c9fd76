package sandbox

import (
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
		writable, hidden []string
		want             []mountOp
	}{
		{"just /tmp and the workdir", nil, nil, []mountOp{
			{tmp, mountPrivateTmp, true}, {work, mountWritable, true}}},
		{"writable, hidden dir and file, missing paths skipped",
			[]string{shared, "/nonexistent-warren"}, []string{secrets, token, "/nonexistent-warren-2"}, []mountOp{
				{secrets, mountHideDir, true}, {token, mountHideFile, false},
				{shared, mountWritable, true}, {tmp, mountPrivateTmp, true}, {work, mountWritable, true}}},
		{"writable inside the workdir or another writable is skipped",
			[]string{inWork, cache, shared}, nil, []mountOp{
				{shared, mountWritable, true}, {tmp, mountPrivateTmp, true}, {work, mountWritable, true}}},
		{"symlinks resolved; hiding wins at the same path",
			[]string{link}, []string{shared}, []mountOp{
				{shared, mountWritable, true}, {shared, mountHideDir, true},
				{tmp, mountPrivateTmp, true}, {work, mountWritable, true}}},
	} {
		got := mountOps(work, Boundary{Writable: tc.writable, Hidden: tc.hidden})
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
	lp := landlockFor(mountOps(work, Boundary{Writable: []string{shared}, Hidden: []string{token}}))
	if !slices.Equal(lp.WritableDirs, []string{"/dev/shm", tmp, shared, work}) || lp.WritableFiles != nil {
		t.Errorf("landlock plan %+v", lp)
	}
}
