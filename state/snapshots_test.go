package state

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// writeSnap writes one snapshot of payload after done ticks and returns its index entry.
func writeSnap(t *testing.T, d *Dir, done uint64, payload []byte) Snapshot {
	t.Helper()
	w, err := d.NewSnapshot(Snapshot{Done: done, Tick: done, TraceBytes: int64(done) * 10})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(payload); err != nil {
		t.Fatal(err)
	}
	s, err := w.Commit()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestSnapshotsKeepTheLastTwo: snapshots read back as written, listed last first; only the last
// KeepSnapshots are kept (files and index entries); an aborted one and a crash's temporary file
// leave nothing behind.
func TestSnapshotsKeepTheLastTwo(t *testing.T) {
	d, path := newDir(t)
	for done := uint64(1); done <= 4; done++ {
		writeSnap(t, d, done, bytes.Repeat([]byte{byte(done)}, int(done)*1000))
	}
	w, err := d.NewSnapshot(Snapshot{Done: 9})
	if err != nil {
		t.Fatal(err)
	}
	_, _ = w.Write([]byte("never indexed"))
	w.Abort()
	// A crash inside a write leaves its temporary file; the next snapshot removes it.
	if err := os.WriteFile(filepath.Join(path, SnapshotDir, ".tmp-snapshot-00000000000000000007.gob"), []byte("cut"), 0o600); err != nil {
		t.Fatal(err)
	}
	writeSnap(t, d, 5, []byte("five"))
	list, err := d.Snapshots()
	if err != nil {
		t.Fatal(err)
	}
	var done []uint64
	for _, s := range list {
		done = append(done, s.Done)
	}
	if !slices.Equal(done, []uint64{5, 4}) {
		t.Fatalf("snapshots kept after 1 to 5: %v, want [5 4]", done)
	}
	names, _ := filepath.Glob(filepath.Join(path, SnapshotDir, "*"))
	hidden, _ := filepath.Glob(filepath.Join(path, SnapshotDir, ".*"))
	if len(names) != 2 || len(hidden) != 0 {
		t.Fatalf("files in %s: %v %v, want the two kept snapshots only", SnapshotDir, names, hidden)
	}
	raw, err := d.ReadSnapshot(list[1])
	if err != nil || !bytes.Equal(raw, bytes.Repeat([]byte{4}, 4000)) || list[1].TraceBytes != 40 || list[1].Bytes != 4000 {
		t.Fatalf("snapshot 4 reads back %d bytes (%v), index %+v", len(raw), err, list[1])
	}
}

// TestSnapshotDamage: a snapshot whose file changed, was cut short or is gone is refused with
// ErrSnapshot; the others still read.
func TestSnapshotDamage(t *testing.T) {
	d, path := newDir(t)
	good := writeSnap(t, d, 1, []byte("the first snapshot"))
	bad := writeSnap(t, d, 2, []byte("the second snapshot"))
	file := filepath.Join(path, SnapshotDir, bad.File)
	for name, damage := range map[string]func() error{
		"changed": func() error { return os.WriteFile(file, []byte("the second snapsh0t"), 0o600) },
		"cut":     func() error { return os.Truncate(file, 5) },
		"gone":    func() error { return os.Remove(file) },
	} {
		if err := damage(); err != nil {
			t.Fatal(err)
		}
		if _, err := d.ReadSnapshot(bad); !errors.Is(err, ErrSnapshot) {
			t.Errorf("%s: ReadSnapshot = %v, want ErrSnapshot", name, err)
		}
	}
	if raw, err := d.ReadSnapshot(good); err != nil || string(raw) != "the first snapshot" {
		t.Errorf("the undamaged snapshot reads %q, %v", raw, err)
	}
	// An index entry naming another file than its own (one outside the folder, another
	// snapshot's) is an edited directory: refused, not set aside as damage.
	for _, name := range []string{"../state.db", "/etc/passwd", bad.File, SnapshotFile(1) + "/"} {
		escape := good
		escape.File = name
		if _, err := d.ReadSnapshot(escape); !errors.Is(err, ErrUnsafePath) {
			t.Errorf("a snapshot named %s: %v, want ErrUnsafePath", name, err)
		}
	}
}
