package state

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// FuzzStateReader gives the readers of a state directory's records (the run description, the
// last commit, a snapshot's index entry, an effect journal entry) whatever bytes an edited
// state.db could hold, through the database as a resume reads it, and checks that none panics,
// that what reads back is sane (no negative length, a snapshot entry naming only its own file),
// and that no record makes Confine place a file anywhere but the directory's own without the
// person resuming naming it. Seeds are the records a real run writes and the hostile values of
// issue 31's review (../victim/precious.log, absolute paths, ../state.db as a snapshot's file,
// negative and huge numbers, wrong types).
//
//	go test ./state/ -run '^$' -fuzz '^FuzzStateReader$' -fuzztime 60s -parallel 1
func FuzzStateReader(f *testing.F) {
	meta := func(m Meta) []byte {
		m.Format, m.Version, m.Host, m.Scenario, m.ScenarioHash = Format, Version, "0.1.0", "quickstart", "sha256:ab"
		m.Launch = json.RawMessage(`{"header":{"format":"warren-recording","scenario_file":"../scenarios/q.toml","trace_file":"trace.jsonl","recording":"recording.jsonl"},"work_root":"work"}`)
		m.Started, m.Status = time.Date(2026, 12, 7, 0, 0, 0, 0, time.UTC), StatusStopped
		raw, _ := json.Marshal(m)
		return raw
	}
	commit, _ := json.Marshal(Commit{Ticks: 12, TraceBytes: 4096, RecordingBytes: 2048, TraceEvents: 40, Entries: 30, Phases: map[string]int{"thinking": 3}, Finished: 2})
	snap := func(s Snapshot) []byte {
		raw, _ := json.Marshal(s)
		return raw
	}
	key := func(done uint64) []byte { return binary.BigEndian.AppendUint64(nil, done) }
	good := Snapshot{Done: 8, Tick: 8, TraceBytes: 1000, RecordingBytes: 500, Agents: 3, File: SnapshotFile(8), Bytes: 3, SHA256: strings.Repeat("ab", 32)}
	effect := []byte(`{"tick":3,"done":true,"result":{"content":"ok"}}`)
	f.Add(meta(Meta{Trace: TraceFile}), commit, key(8), snap(good), effect)
	for _, tr := range []string{"../victim/precious.log", "/tmp/victim/precious.log", "state.db", "work/../../victim", "", "trace.jsonl\x00", "/"} {
		f.Add(meta(Meta{Trace: tr}), commit, key(8), snap(good), effect)
	}
	for _, file := range []string{"../state.db", "../../victim/precious.log", "/etc/passwd", SnapshotFile(7), ""} {
		s := good
		s.File = file
		f.Add(meta(Meta{Trace: TraceFile}), commit, key(8), snap(s), effect)
	}
	bad := good
	bad.Bytes, bad.TraceBytes, bad.SHA256 = -1, -5, "x"
	f.Add([]byte(`{"format":"warren-state","version":1,"trace":7}`), []byte(`{"trace_bytes":-1,"phases":{"x":-3}}`), []byte("short"), snap(bad), []byte(`{"tick":"x"}`))
	f.Add([]byte(`null`), []byte(`{"ticks":18446744073709551616}`), key(0), []byte(`[]`), []byte(`{"result":`))
	f.Add([]byte(strings.Repeat("[", 10000)), []byte(`{}`), key(1<<63), []byte(`{"file":"snapshot-00000000000000000000.gob","done":0,"bytes":9223372036854775807}`), []byte{})

	dir := filepath.Join(f.TempDir(), "state")
	d, err := Create(dir, Meta{Host: "fuzz", Scenario: "s", ScenarioHash: "h", Launch: []byte(`{}`)})
	if err != nil {
		f.Fatal(err)
	}
	defer d.Close()
	d.db.NoSync = true
	f.Fuzz(func(t *testing.T, metaRaw, commitRaw, snapKey, snapRaw, effectRaw []byte) {
		err := d.db.Update(func(tx *bolt.Tx) error {
			_ = tx.DeleteBucket(bucketSnapshots)
			_ = tx.DeleteBucket(bucketEffects)
			if _, err := tx.CreateBucket(bucketEffects); err != nil {
				return err
			}
			mb := tx.Bucket(bucketMeta)
			if err := mb.Put(keyMeta, metaRaw); err != nil {
				return err
			}
			if err := mb.Put(keyCommit, commitRaw); err != nil {
				return err
			}
			if len(snapKey) > 0 && len(snapKey) <= bolt.MaxKeySize {
				b, err := tx.CreateBucket(bucketSnapshots)
				if err != nil {
					return err
				}
				if err := b.Put(snapKey, snapRaw); err != nil {
					return err
				}
			}
			return tx.Bucket(bucketEffects).Put([]byte("call"), effectRaw)
		})
		if err != nil {
			t.Fatal(err)
		}
		if m, err := d.Meta(); err == nil {
			p, err := d.Confine("state.db meta trace", m.Trace, TraceFile, "--trace", "")
			if err == nil && (p.Rel != TraceFile || p.Abs != filepath.Join(dir, TraceFile)) {
				t.Fatalf("the record's trace %q was placed at %+v with no --trace given", m.Trace, p)
			}
			if err != nil && !errors.Is(err, ErrUnsafePath) {
				t.Fatalf("a refusal that does not wrap ErrUnsafePath: %v", err)
			}
			// Given again, the same path is placed where it says, or is the directory's own.
			if p, err := d.Confine("state.db meta trace", m.Trace, TraceFile, "--trace", m.Trace); err == nil && !p.Inside() &&
				(!filepath.IsAbs(m.Trace) || p.Abs != filepath.Clean(m.Trace)) {
				t.Fatalf("the record's trace %q given again was placed at %+v", m.Trace, p)
			}
		} else if !errors.Is(err, ErrNotState) {
			t.Fatalf("a run description that does not read: %v, want ErrNotState", err)
		}
		if c, ok, err := d.LastCommit(); err == nil && ok && (c.TraceBytes < 0 || c.RecordingBytes < 0 || c.Finished < 0) {
			t.Fatalf("a commit read back with a negative length: %+v", c)
		}
		if _, err := d.Effects(); err != nil && !errors.Is(err, ErrNotState) {
			t.Fatalf("an effect that does not read: %v, want ErrNotState", err)
		}
		snaps, err := d.Snapshots()
		if err != nil && !errors.Is(err, ErrSnapshot) && !errors.Is(err, ErrUnsafePath) {
			t.Fatalf("a snapshot entry that does not read: %v", err)
		}
		for _, s := range snaps {
			if s.File != SnapshotFile(s.Done) || s.Bytes < 0 || s.TraceBytes < 0 || s.RecordingBytes < 0 {
				t.Fatalf("a snapshot entry read back naming %q (done %d, bytes %d)", s.File, s.Done, s.Bytes)
			}
			if _, err := d.ReadSnapshot(s); err == nil {
				t.Fatalf("snapshot %+v read with no file written", s)
			}
		}
		if s, err := DecodeSnapshot(snapKey, snapRaw); err == nil && s.File != SnapshotFile(binary.BigEndian.Uint64(snapKey)) {
			t.Fatalf("DecodeSnapshot accepted %q under key %x", s.File, snapKey)
		}
		_, _ = DecodeCommit(commitRaw)
		_ = d.Size()
	})
}
