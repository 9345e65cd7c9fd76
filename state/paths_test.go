package state

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// TestConfine: the directory's own file is opened inside it whatever form the record gives it
// in; every other relative path is refused; an absolute path elsewhere is used only when the same
// path is given again, and every refusal names the key and the value.
func TestConfine(t *testing.T) {
	d, path := newDir(t)
	outside := filepath.Join(filepath.Dir(path), "victim", "precious.log")
	for _, c := range []struct {
		name, stored, given string
		rel, abs, err       string
	}{
		{"own", "trace.jsonl", "", "trace.jsonl", filepath.Join(path, "trace.jsonl"), ""},
		{"own, absolute", filepath.Join(path, "trace.jsonl"), "", "trace.jsonl", filepath.Join(path, "trace.jsonl"), ""},
		{"own, given the same", "trace.jsonl", filepath.Join(path, "trace.jsonl"), "trace.jsonl", filepath.Join(path, "trace.jsonl"), ""},
		{"own, given another", "trace.jsonl", outside, "", "", "--trace " + outside + " given, but the run in " + path + " keeps it at"},
		{"climbs out", "../victim/precious.log", "", "", "", `the key is "../victim/precious.log" in ` + path + `: a relative path there may only be "trace.jsonl"`},
		{"climbs out, given", "../victim/precious.log", outside, "", "", `the key is "../victim/precious.log"`},
		{"another own file", "state.db", "", "", "", `the key is "state.db"`},
		{"own with a detour", "work/../trace.jsonl/.", "", "trace.jsonl", filepath.Join(path, "trace.jsonl"), ""},
		{"outside, not given", outside, "", "", "", "the key is " + outside + ", outside the state directory " + path + " (the run was given it with --trace); a resume writes there only when told again: add --trace " + outside},
		{"outside, given the same", outside, outside, "", outside, ""},
		{"outside, given another", outside, filepath.Join(path, "trace.jsonl"), "", "", "--trace " + filepath.Join(path, "trace.jsonl") + " given, but the key in " + path + " is " + outside},
		{"outside, unclean", filepath.Dir(outside) + "/./x/../precious.log", outside, "", outside, ""},
		{"inside, another name", filepath.Join(path, "work", "t.jsonl"), "", "", "", "outside the state directory"},
		{"empty", "", "", "", "", "the key is empty"},
		{"NUL", "trace.jsonl\x00", "", "", "", "NUL"},
	} {
		p, err := d.Confine("the key", c.stored, TraceFile, "--trace", c.given)
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.err != "" && (!errors.Is(err, ErrUnsafePath) || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s: %v, want ErrUnsafePath with %q", c.name, err, c.err)
		case c.err == "" && (p.Rel != c.rel || p.Abs != c.abs || p.Inside() != (c.rel != "")):
			t.Errorf("%s: %+v, want rel %q abs %q", c.name, p, c.rel, c.abs)
		}
	}
	if got := StoredPath(path, filepath.Join(path, TraceFile), TraceFile); got != TraceFile {
		t.Errorf("StoredPath of the directory's trace: %q", got)
	}
	if got := StoredPath(path, outside, TraceFile); got != outside {
		t.Errorf("StoredPath of a trace outside: %q", got)
	}
}

// TestOwnDir: the directory's own folder is made through the root; a link planted in its place,
// out of the directory or to another of its folders, is refused, and nothing is made where the
// link leads.
func TestOwnDir(t *testing.T) {
	d, path := newDir(t)
	got, err := d.OwnDir("the work root", WorkDir)
	if err != nil || got != filepath.Join(path, WorkDir) {
		t.Fatalf("OwnDir = %q, %v", got, err)
	}
	if info, err := os.Lstat(got); err != nil || !info.IsDir() {
		t.Fatalf("the folder was not made: %v", err)
	}
	victim := filepath.Join(filepath.Dir(path), "victim")
	if err := os.Mkdir(victim, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(path, "inner"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, target := range map[string]string{"out": victim, "inside": "inner", "climbing": "../victim"} {
		link := "w-" + name
		if err := os.Symlink(target, filepath.Join(path, link)); err != nil {
			t.Fatal(err)
		}
		for _, rel := range []string{link, link + "/sub"} {
			if _, err := d.OwnDir("the work root", rel); !errors.Is(err, ErrUnsafePath) {
				t.Errorf("a link %s -> %s (%s): %v, want ErrUnsafePath", link, target, rel, err)
			}
		}
	}
	if entries, _ := os.ReadDir(victim); len(entries) != 0 {
		t.Errorf("something was made where the link leads: %v", entries)
	}
	if _, err := d.OwnDir("the work root", "../victim"); !errors.Is(err, ErrUnsafePath) {
		t.Errorf("a name climbing out: %v", err)
	}
}

// TestSnapshotIndexEdited: an index entry edited to name another file than its own is refused
// by the listing (ErrUnsafePath, naming the entry and its value), and a later snapshot's clean-up
// removes the file of the key it drops, never the file an edited entry names.
func TestSnapshotIndexEdited(t *testing.T) {
	d, path := newDir(t)
	writeSnap(t, d, 1, []byte("one"))
	precious := filepath.Join(path, "precious")
	if err := os.WriteFile(precious, []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	put := func(done uint64, s Snapshot) {
		raw, _ := json.Marshal(s)
		err := d.db.Update(func(tx *bolt.Tx) error {
			return tx.Bucket(bucketSnapshots).Put(binary.BigEndian.AppendUint64(nil, done), raw)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	snaps, err := d.Snapshots()
	if err != nil || len(snaps) != 1 {
		t.Fatalf("Snapshots = %v, %v", snaps, err)
	}
	s := snaps[0]
	s.File = "../precious"
	put(1, s)
	if _, err := d.Snapshots(); !errors.Is(err, ErrUnsafePath) || !strings.Contains(err.Error(), `snapshots[1] file is "../precious"`) {
		t.Errorf("the listing of an edited entry: %v", err)
	}
	// Two more snapshots drop the first entry: its file goes, the named one stays.
	writeSnap(t, d, 2, []byte("two"))
	writeSnap(t, d, 3, []byte("three"))
	if raw, err := os.ReadFile(precious); err != nil || string(raw) != "keep" {
		t.Errorf("the file the edited entry named: %q, %v", raw, err)
	}
	if _, err := os.Stat(filepath.Join(path, SnapshotDir, SnapshotFile(1))); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the dropped snapshot's own file is still there: %v", err)
	}
}
