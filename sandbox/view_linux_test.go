package sandbox

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

func TestSearchable(t *testing.T) {
	const me, mine, other, others = 4242, 4343, 5151, 5252
	for _, tc := range []struct {
		name     string
		mode     uint32
		uid, gid int
		want     bool
	}{
		{"owner with x", 0o700, me, others, true},
		{"owner without x, whatever the others have", 0o611, me, mine, false},
		{"the group with x", 0o710, other, mine, true},
		{"the group without x, whatever the others have", 0o701, other, mine, false},
		{"others with x", 0o701, other, others, true},
		{"group x that an ACL entry might grant", 0o710, other, others, true},
		{"closed to everyone else", 0o700, other, others, false},
	} {
		st := &unix.Stat_t{Mode: unix.S_IFDIR | tc.mode, Uid: me, Gid: mine}
		if got := searchable(st, tc.uid, tc.gid); got != tc.want {
			t.Errorf("%s: searchable(%o by %d:%d) = %v, want %v", tc.name, tc.mode, tc.uid, tc.gid, got, tc.want)
		}
	}
}

// TestViewFor: on the host's folders (outside /tmp, which the view replaces), a hidden path
// under a folder the command's uid cannot search is left out of the view, one under a hidden
// folder (fresh inside) is kept, and a workdir or writable path out of reach is an error naming
// the folder in the way.
func TestViewFor(t *testing.T) {
	base, err := os.MkdirTemp("/var/tmp", "warren-view-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	base = resolved(base)
	at := func(rel string) string { return filepath.Join(base, rel) }
	for _, dir := range []string{"open/secret", "closed/secret", "closed/work", "open/work"} {
		if err := os.MkdirAll(at(dir), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(at("closed"), 0o700); err != nil {
		t.Fatal(err)
	}
	// Neither the folders' owner nor in their group: a root host's CommandUID.
	caps := syntheticCaps(func(c *Capabilities) { c.CommandUID, c.CommandGID = os.Getuid()+1, os.Getgid()+1 })
	paths := func(ops []mountOp, kind mountKind) []string {
		var out []string
		for _, op := range ops {
			if op.Kind == kind && within(op.Path, base) {
				out = append(out, op.Path)
			}
		}
		return out
	}
	for _, tc := range []struct {
		name               string
		workdir            string
		writable, hidden   []string
		wantHidden         []string
		wantErr, wantNamed string
	}{
		{"hidden under a closed folder is left out", at("open/work"), nil,
			[]string{at("closed/secret"), at("open/secret")}, []string{at("open/secret")}, "", ""},
		{"hidden under a hidden folder is kept", at("open/work"), nil,
			[]string{at("closed"), at("closed/secret")}, []string{at("closed"), at("closed/secret")}, "", ""},
		{"a workdir out of reach", at("closed/work"), nil, nil, nil, at("closed/work"), at("closed")},
		{"a writable path out of reach", at("open/work"), []string{at("closed/secret")}, nil, nil, at("closed/secret"), at("closed")},
	} {
		spec := launchSpec{workdir: tc.workdir, caps: caps, boundary: Boundary{Mode: ModeNamespace, Writable: tc.writable, Hidden: tc.hidden}}
		ops, err := viewFor(spec)
		if tc.wantErr != "" {
			if !errors.Is(err, ErrSetup) || !strings.Contains(err.Error(), tc.wantErr+" is out of reach") || !strings.Contains(err.Error(), tc.wantNamed+" is not searchable") {
				t.Errorf("%s: error %v, want ErrSetup naming %s and %s", tc.name, err, tc.wantErr, tc.wantNamed)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := paths(ops, mountHideDir); !slices.Equal(got, tc.wantHidden) {
			t.Errorf("%s: hidden %v, want %v", tc.name, got, tc.wantHidden)
		}
		if got := paths(ops, mountWritable); !slices.Equal(got, []string{tc.workdir}) {
			t.Errorf("%s: writable %v, want the workdir", tc.name, got)
		}
	}
	// The host's own uid owns the folders: nothing is out of its reach.
	own := syntheticCaps(func(c *Capabilities) { c.CommandUID, c.CommandGID = os.Getuid(), os.Getgid() })
	ops, err := viewFor(launchSpec{workdir: at("closed/work"), caps: own, boundary: Boundary{Hidden: []string{at("closed/secret")}}})
	if err != nil || !slices.Equal(paths(ops, mountHideDir), []string{at("closed/secret")}) {
		t.Errorf("the owner's view: %v, %v", ops, err)
	}
}

// TestHostSkeleton: the skeleton binds each entry of / whole, leaves out what the view mounts
// itself, and splits entry by entry only the folders on the way to a covered path that holds a
// host mount.
func TestHostSkeleton(t *testing.T) {
	dir := workRootOutsideTmp(t)
	for _, sub := range []string{"hidden", "other"} {
		if err := os.Mkdir(filepath.Join(dir, sub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("other", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	view := []mountOp{{Path: resolved("/tmp"), Kind: mountPrivateTmp, IsDir: true}, {Path: filepath.Join(dir, "hidden"), Kind: mountHideDir, IsDir: true}}
	kinds := func(mounts []string) map[string]mountOp {
		got := map[string]mountOp{}
		for _, op := range hostSkeleton(view, mounts) {
			got[op.Path] = op
		}
		return got
	}
	split := kinds([]string{"/", "/proc", "/dev", filepath.Join(dir, "hidden", "m")})
	for path, want := range map[string]mountKind{
		"/etc": mountHostRO, filepath.Join(dir, "other"): mountHostRO, filepath.Join(dir, "link"): mountSymlink,
	} {
		if split[path].Kind != want {
			t.Errorf("%s: %+v, want %s", path, split[path], want)
		}
	}
	if split[filepath.Join(dir, "link")].Target != "other" {
		t.Errorf("the symlink's target: %+v", split[filepath.Join(dir, "link")])
	}
	for _, path := range []string{"/", "/var", "/var/tmp", dir, filepath.Join(dir, "hidden"), resolved("/tmp"), "/dev", "/proc"} {
		if op, ok := split[path]; ok {
			t.Errorf("%s is in the skeleton (%+v): it is split or the view's own", path, op)
		}
	}
	// Without a host mount under the hidden folder, /var is bound whole.
	if whole := kinds([]string{"/", "/proc", "/dev"}); whole["/var"].Kind != mountHostRO || len(whole) > len(split) {
		t.Errorf("/var: %+v, want it bound whole (%d entries, split: %d)", whole["/var"], len(whole), len(split))
	}
}

func TestUnescapeMountField(t *testing.T) {
	for in, want := range map[string]string{`/plain`: "/plain", `/a\040b`: "/a b", `/t\011\012\134x`: "/t\t\n\\x", `/odd\04`: `/odd\04`} {
		if got := unescapeMountField(in); got != want {
			t.Errorf("unescapeMountField(%q) = %q, want %q", in, got, want)
		}
	}
}
