package state

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path"
	"slices"
	"strings"

	bolt "go.etcd.io/bbolt"
)

// SnapshotDir is the folder of a state directory that holds its world snapshots, one file each.
// A snapshot is a large blob written once and read once, so it is a file (written to a temporary
// name, synced and renamed), and state.db indexes it with its checksum.
const SnapshotDir = "snapshots"

// KeepSnapshots is how many snapshots a state directory keeps: the last, and the one before it to
// fall back on when the last is damaged.
const KeepSnapshots = 2

var bucketSnapshots = []byte("snapshots")

// ErrSnapshot is wrapped by the errors of a snapshot that cannot be read back: missing, cut
// short, or not matching its checksum.
var ErrSnapshot = errors.New("damaged snapshot")

// Snapshot is one world snapshot's index entry: where the run was when it was taken and how to
// check its file.
type Snapshot struct {
	// Done counts the ticks the world had finished (a commit's Ticks); Tick is the clock's tick at
	// that boundary, where the restored run goes on.
	Done uint64 `json:"done"`
	Tick uint64 `json:"tick"`
	// TraceBytes and RecordingBytes are the files' lengths at the boundary: a restored run appends
	// from there.
	TraceBytes     int64 `json:"trace_bytes"`
	RecordingBytes int64 `json:"recording_bytes"`
	// Agents counts the live agents it holds.
	Agents int `json:"agents"`
	// File is its file in SnapshotDir, Bytes its length and SHA256 its checksum.
	File   string `json:"file"`
	Bytes  int64  `json:"bytes"`
	SHA256 string `json:"sha256"`
}

// SnapshotWriter writes one snapshot's file: Write its payload, then Commit indexes it (or Abort
// drops it). It is used by one goroutine.
type SnapshotWriter struct {
	d    *Dir
	s    Snapshot
	tmp  string
	f    *os.File
	buf  *bufio.Writer
	sum  hash.Hash
	n    int64
	done bool
}

// NewSnapshot starts the file of snapshot s (its Done, Tick and byte offsets set).
func (d *Dir) NewSnapshot(s Snapshot) (*SnapshotWriter, error) {
	if err := d.root.Mkdir(SnapshotDir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return nil, fmt.Errorf("state directory: %w", err)
	}
	s.File = SnapshotFile(s.Done)
	tmp := path.Join(SnapshotDir, ".tmp-"+s.File)
	f, err := d.root.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("state directory: %w", err)
	}
	return &SnapshotWriter{d: d, s: s, tmp: tmp, f: f, buf: bufio.NewWriterSize(f, 1<<20), sum: sha256.New()}, nil
}

// Write appends p to the snapshot's payload.
func (w *SnapshotWriter) Write(p []byte) (int, error) {
	w.sum.Write(p)
	w.n += int64(len(p))
	return w.buf.Write(p)
}

// Commit makes the file durable (at SyncFull), gives it its name, indexes it and removes the
// snapshots past the last KeepSnapshots. A crash before Commit returns leaves the previous
// snapshots as they were (a temporary file at most, removed by the next snapshot).
func (w *SnapshotWriter) Commit() (Snapshot, error) {
	w.done = true
	err := w.buf.Flush()
	if err == nil && !w.d.noSync {
		err = w.f.Sync()
	}
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = w.d.root.Rename(w.tmp, path.Join(SnapshotDir, w.s.File))
	}
	if err != nil {
		_ = w.d.root.Remove(w.tmp)
		return Snapshot{}, fmt.Errorf("snapshot %s: %w", w.s.File, err)
	}
	w.s.Bytes, w.s.SHA256 = w.n, hex.EncodeToString(w.sum.Sum(nil))
	raw, err := json.Marshal(w.s)
	if err != nil {
		return Snapshot{}, err
	}
	var drop []string
	err = w.d.db.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists(bucketSnapshots)
		if err != nil {
			return err
		}
		if err := b.Put(snapshotKey(w.s.Done), raw); err != nil {
			return err
		}
		var keys [][]byte
		if err := b.ForEach(func(k, v []byte) error {
			keys = append(keys, slices.Clone(k))
			return nil
		}); err != nil {
			return err
		}
		for _, k := range keys[:max(len(keys)-KeepSnapshots, 0)] {
			// The file's name comes from the key, never from the entry: an edited entry's file
			// ("../state.db") must not be what is removed.
			if len(k) == 8 {
				drop = append(drop, SnapshotFile(binary.BigEndian.Uint64(k)))
			}
			if err := b.Delete(k); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return Snapshot{}, fmt.Errorf("snapshot %s: indexing: %w", w.s.File, err)
	}
	for _, f := range drop {
		_ = w.d.root.Remove(path.Join(SnapshotDir, f))
	}
	w.d.removeTemporary(w.s.File)
	return w.s, nil
}

// Abort drops the snapshot's file.
func (w *SnapshotWriter) Abort() {
	if w.done {
		return
	}
	w.done = true
	_ = w.f.Close()
	_ = w.d.root.Remove(w.tmp)
}

// removeTemporary removes temporary snapshot files a crash left, but keep's.
func (d *Dir) removeTemporary(keep string) {
	f, err := d.root.Open(SnapshotDir)
	if err != nil {
		return
	}
	names, _ := f.Readdirnames(-1)
	f.Close()
	for _, n := range names {
		if strings.HasPrefix(n, ".tmp-") && n != ".tmp-"+keep {
			_ = d.root.Remove(path.Join(SnapshotDir, n))
		}
	}
}

func snapshotKey(done uint64) []byte { return binary.BigEndian.AppendUint64(nil, done) }

// SnapshotFile is the name in SnapshotDir of the file of the snapshot taken after done ticks: the
// only name an index entry may give (DecodeSnapshot).
func SnapshotFile(done uint64) string { return fmt.Sprintf("snapshot-%020d.gob", done) }

// DecodeSnapshot reads the index entry raw stored under key: it must be a snapshot entry whose
// Done is the key's and whose File is SnapshotFile(Done) (ErrUnsafePath otherwise: the entry was
// edited to name another file), with lengths and a checksum that can be those of a file
// (ErrSnapshot otherwise).
func DecodeSnapshot(key, raw []byte) (Snapshot, error) {
	var s Snapshot
	if len(key) != 8 {
		return s, fmt.Errorf("%w: state.db snapshots has a key %q, not a tick count", ErrSnapshot, key)
	}
	done := binary.BigEndian.Uint64(key)
	if err := json.Unmarshal(raw, &s); err != nil {
		return s, fmt.Errorf("%w: the index entry of snapshot %d does not read: %v", ErrSnapshot, done, err)
	}
	switch want := SnapshotFile(done); {
	case s.File != want:
		return s, fmt.Errorf("%w: state.db snapshots[%d] file is %q; the file of that snapshot can only be %q", ErrUnsafePath, done, s.File, want)
	case s.Done != done:
		return s, fmt.Errorf("%w: state.db snapshots[%d] says done %d", ErrSnapshot, done, s.Done)
	case s.Bytes < 0 || s.TraceBytes < 0 || s.RecordingBytes < 0 || s.Agents < 0:
		return s, fmt.Errorf("%w: state.db snapshots[%d] has a negative length or count", ErrSnapshot, done)
	case len(s.SHA256) != sha256.Size*2:
		return s, fmt.Errorf("%w: state.db snapshots[%d] sha256 %q is not a SHA-256", ErrSnapshot, done, s.SHA256)
	}
	return s, nil
}

// Snapshots lists the indexed snapshots, the last first.
func (d *Dir) Snapshots() ([]Snapshot, error) {
	var out []Snapshot
	err := d.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketSnapshots)
		if b == nil {
			return nil
		}
		return b.ForEach(func(k, v []byte) error {
			s, err := DecodeSnapshot(k, v)
			if err != nil {
				return err
			}
			out = append(out, s)
			return nil
		})
	})
	slices.Reverse(out)
	return out, err
}

// ReadSnapshot returns s's payload once its length and checksum are checked (ErrSnapshot when
// they do not match, or the file is missing).
func (d *Dir) ReadSnapshot(s Snapshot) ([]byte, error) {
	if s.File != SnapshotFile(s.Done) {
		return nil, fmt.Errorf("%w: snapshot %d names the file %q; it can only be %q", ErrUnsafePath, s.Done, s.File, SnapshotFile(s.Done))
	}
	f, err := d.root.Open(path.Join(SnapshotDir, s.File))
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrSnapshot, s.File, err)
	}
	defer f.Close()
	var buf bytes.Buffer
	// No more than the index says, and a byte to tell a longer file: a file planted in its place
	// is not read whole, whatever its size.
	if _, err := io.Copy(&buf, io.LimitReader(f, max(s.Bytes, 0)+1)); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrSnapshot, s.File, err)
	}
	sum := sha256.Sum256(buf.Bytes())
	if int64(buf.Len()) != s.Bytes || hex.EncodeToString(sum[:]) != s.SHA256 {
		return nil, fmt.Errorf("%w: %s is %d bytes with checksum %x; its index says %d bytes with %s", ErrSnapshot, s.File, buf.Len(), sum[:6], s.Bytes, s.SHA256[:min(12, len(s.SHA256))])
	}
	return buf.Bytes(), nil
}
