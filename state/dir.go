package state

import (
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Format and Version identify a state directory in its Meta; Version changes whenever the meaning
// of what the directory holds does, so a host never resumes a directory it would misread.
const (
	Format  = "warren-state"
	Version = 1
)

// The files of a state directory.
const (
	DBFile        = "state.db"
	TraceFile     = "trace.jsonl"
	RecordingFile = "recording.jsonl"
	WorkDir       = "work"
)

// Run statuses, Meta.Status.
const (
	// StatusRunning: a process is running the run, or died running it (host resume goes on).
	StatusRunning = "running"
	// StatusStopped: the run was stopped at a tick boundary (an interrupt) and can be resumed.
	StatusStopped = "stopped"
	// StatusFinished: the run ended; there is nothing to resume.
	StatusFinished = "finished"
)

// Errors a caller tests with errors.Is.
var (
	// ErrNotState: the directory is not a state directory (no state.db, or not one of ours).
	ErrNotState = errors.New("not a Warren state directory")
	// ErrVersion: the directory was written by another state format version or host version.
	ErrVersion = errors.New("the state directory is of another version")
	// ErrExists: Create was given a directory that already holds a run.
	ErrExists = errors.New("the state directory already holds a run")
	// ErrBusy: another process has the directory open.
	ErrBusy = errors.New("the state directory is in use by another process")
	// ErrFinished: the run in the directory has ended; there is nothing to resume.
	ErrFinished = errors.New("the run in the state directory has finished")
	// ErrDiverged: a resume did not write the committed trace or recording again byte for byte.
	ErrDiverged = errors.New("the resumed run diverged from the run it resumes")
	// ErrMoved: the directory is not where its run started it.
	ErrMoved = errors.New("the state directory was moved")
)

// Meta is what a state directory says of its run.
type Meta struct {
	Format  string `json:"format"`
	Version int    `json:"version"`
	// Host is the Warren version that started the run; a resume needs the same one.
	Host string `json:"host"`
	// Scenario and ScenarioHash name the run's scenario and its trace header's hash.
	Scenario     string `json:"scenario"`
	ScenarioHash string `json:"scenario_hash"`
	// Launch is how the run was launched (the root package's own description: the scenario file,
	// seed, flags), kept whole so that a resume launches it the same way.
	Launch json.RawMessage `json:"launch"`
	// Trace is the trace's path: TraceFile, the directory's own, or the absolute path the run was
	// given (host run --trace), which a resume writes only when given it again (Dir.Confine).
	Trace string `json:"trace"`
	// Dir is the directory's own absolute path when the run started: the recording names its
	// files relative to it, so a directory moved elsewhere is refused (ErrMoved).
	Dir string `json:"dir"`
	// Status is StatusRunning, StatusStopped or StatusFinished; End is how a finished run ended
	// (its trace's end status).
	Status string `json:"status"`
	End    string `json:"end,omitempty"`
	// Started is when the run started (wall time: the directory is not a trace).
	Started time.Time `json:"started"`
	// Resumes lists every resume of the run, in order.
	Resumes []Resume `json:"resumes,omitempty"`
}

// Resume is one resume of a run: where it picked up and what it could not carry over.
type Resume struct {
	// At is when (wall time); Ticks how many committed ticks it replayed before going on live.
	At    time.Time `json:"at"`
	Ticks uint64    `json:"ticks"`
	// Interrupted are the side-effecting calls that were running when the run stopped, answered
	// "interrupted: may or may not have happened"; Retried those run again (retry_on_resume);
	// Served counts those whose journaled result was given back.
	Interrupted []string `json:"interrupted,omitempty"`
	Retried     []string `json:"retried,omitempty"`
	Served      int      `json:"served,omitempty"`
	// Snapshot is the tick of the world snapshot it restored (nil: it replayed from the run's
	// start); Ticks then counts the committed ticks replayed after it.
	Snapshot *uint64 `json:"snapshot,omitempty"`
}

// Commit is the last tick boundary at which the run's trace and recording were made durable:
// what a resume replays up to.
type Commit struct {
	// Ticks counts the ticks whose every trace event and recording entry is durable (ticks 0 to
	// Ticks-1; 0: only the files' headers).
	Ticks uint64 `json:"ticks"`
	// TraceBytes and RecordingBytes are the files' lengths then; TraceEvents and Entries the
	// events and entries they held.
	TraceBytes     int64  `json:"trace_bytes"`
	RecordingBytes int64  `json:"recording_bytes"`
	TraceEvents    uint64 `json:"trace_events"`
	Entries        uint64 `json:"entries"`
	// Phases counts the live agents by phase (components' phase names), Finished the agents
	// reaped so far.
	Phases   map[string]int `json:"phases,omitempty"`
	Finished int            `json:"finished"`
}

// Buckets and keys of state.db.
var (
	bucketMeta    = []byte("meta")
	bucketEffects = []byte("effects")
	keyMeta       = []byte("meta")
	keyCommit     = []byte("commit")
)

// Dir is an open state directory. Its methods are safe for concurrent use (the effect journal is
// written from lane workers).
type Dir struct {
	path string
	root *os.Root
	db   *bolt.DB
	// noSync: nothing is synced (SetSync).
	noSync bool
}

// Sync levels, how much of a run's state survives what (SetSync, host run --state-sync).
const (
	// SyncFull syncs every commit, intent and result before it counts: the state survives the
	// machine's death (a power cut, a kernel crash) as it survives the process's.
	SyncFull = "full"
	// SyncProcess syncs nothing: the state survives the process's death (SIGKILL, an OOM kill, a
	// panic), whose writes the kernel still holds, but a power cut may lose the last writes or
	// leave state.db unreadable (a resume then refuses it). Far cheaper where files are made fast.
	SyncProcess = "process"
)

// SetSync sets the directory's sync level (SyncFull, the default, or SyncProcess); the files
// opened after it (Appender) follow it too.
func (d *Dir) SetSync(level string) error {
	if err := CheckSync(level); err != nil {
		return err
	}
	d.noSync = level == SyncProcess
	d.db.NoSync = d.noSync
	return nil
}

// CheckSync checks a sync level ("" is SyncFull).
func CheckSync(level string) error {
	switch level {
	case SyncFull, SyncProcess, "":
		return nil
	}
	return fmt.Errorf("state sync level %q (valid: %s, %s)", level, SyncFull, SyncProcess)
}

// Path is the directory's path.
func (d *Dir) Path() string { return d.path }

// Root is the directory opened as an os.Root: its files are opened through it, so a link
// planted in the directory leads nowhere outside it.
func (d *Dir) Root() *os.Root { return d.root }

// Create makes path a state directory for a new run described by m (Format, Version, Status and
// Started are filled in). A directory that already holds a run is refused (ErrExists); one that
// does not exist is made.
func Create(path string, m Meta) (*Dir, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return nil, fmt.Errorf("state directory %s: %w", path, err)
	}
	if _, err := os.Lstat(filepath.Join(abs, DBFile)); err == nil {
		return nil, fmt.Errorf("%w: %s (see host state inspect %s; go on with host resume %s, or pick another directory)", ErrExists, path, path, path)
	}
	// The database is made under a temporary name and renamed once it holds the run's
	// description: a host killed before that leaves no state.db (only the temporary file, which
	// the next Create replaces), so the directory is never one that neither run nor resume takes.
	// A leftover temporary database is replaced, never opened: it may be a link planted to lead
	// the new database's writes out of the directory. Removed through the root, a link goes, not
	// what it names.
	if root, err := os.OpenRoot(abs); err == nil {
		rerr := root.Remove(newDBFile)
		_ = root.Close()
		if rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
			return nil, fmt.Errorf("state directory %s: %w", path, rerr)
		}
	}
	d, err := open(abs, newDBFile, nil)
	if err != nil {
		return nil, err
	}
	m.Format, m.Version, m.Status, m.Dir = Format, Version, StatusRunning, abs
	if m.Started.IsZero() {
		m.Started = time.Now().UTC()
	}
	err = d.PutMeta(m)
	if err == nil {
		err = d.root.Rename(newDBFile, DBFile)
	}
	if err == nil {
		err = syncDir(abs)
	}
	if err != nil {
		d.Close()
		return nil, fmt.Errorf("state directory %s: %w", path, err)
	}
	return d, nil
}

// newDBFile is the name state.db has until it holds the run's description (Create).
const newDBFile = DBFile + ".new"

// syncDir makes a rename in the directory at abs durable.
func syncDir(abs string) error {
	f, err := os.Open(abs)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// Open opens the state directory at path, checking that it is one (ErrNotState) of this format
// version (ErrVersion). The host version is the caller's to check (Meta.Host).
func Open(path string) (*Dir, Meta, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, Meta{}, err
	}
	info, err := os.Lstat(filepath.Join(abs, DBFile))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, Meta{}, fmt.Errorf("%w: %s has no %s", ErrNotState, path, DBFile)
	case err != nil:
		return nil, Meta{}, err
	case !info.Mode().IsRegular():
		return nil, Meta{}, fmt.Errorf("%w: %s in %s is not a regular file", ErrNotState, DBFile, path)
	}
	d, err := openChecked(abs, DBFile)
	if err != nil {
		return nil, Meta{}, err
	}
	m, err := d.Meta()
	if err != nil {
		d.Close()
		return nil, Meta{}, err
	}
	if m.Format != Format || m.Version != Version {
		d.Close()
		return nil, Meta{}, fmt.Errorf("%w: %s is format %q version %d; this host reads %q version %d", ErrVersion, path, m.Format, m.Version, Format, Version)
	}
	return d, m, nil
}

// openChecked is open for a database someone may have edited. bbolt trusts its pages: a forged
// page made it read past its memory map (a fault no recover catches by default) or, through a
// forged freelist, panic in the middle of a later write, either of which killed host resume. So
// the database is first opened read-only and read whole (rebuild), with faults turned into panics
// (debug.SetPanicOnFault) and panics recovered, and copied into a fresh file (bbolt.Compact) that
// replaces it: what the run then reads and writes is a file bbolt wrote itself, and a damaged one
// is ErrNotState naming it, the directory left as it was.
func openChecked(abs, db string) (*Dir, error) {
	if err := rebuild(abs, db); err != nil {
		return nil, err
	}
	return open(abs, db, nil)
}

// Rebuild reads the state directory's database whole and replaces it with a fresh copy of what
// it holds, as Open does first (see openChecked): ErrNotState when it is missing or damaged,
// ErrBusy when another host has it open. host resume runs it in a child process of its own under
// a memory limit, since a forged page can also send bbolt round a cycle of pages, allocating
// without end, which no recover stops.
func Rebuild(path string) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	info, err := os.Lstat(filepath.Join(abs, DBFile))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%w: %s has no %s", ErrNotState, path, DBFile)
	case err != nil:
		return err
	case !info.Mode().IsRegular():
		return fmt.Errorf("%w: %s in %s is not a regular file", ErrNotState, DBFile, path)
	}
	return rebuild(abs, DBFile)
}

// rebuildSuffix names the fresh copy rebuild writes beside the database before it replaces it.
const rebuildSuffix = ".rebuild"

// rebuild reads the database db of the directory abs whole and replaces it with a fresh copy of
// what it holds (see openChecked).
func rebuild(abs, db string) (err error) {
	path := filepath.Join(abs, db)
	damaged := func(why any) error { return fmt.Errorf("%w: %s is damaged: %v", ErrNotState, path, why) }
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			err = damaged(r)
		}
	}()
	root, err := os.OpenRoot(abs)
	if err != nil {
		return fmt.Errorf("state directory: %w", err)
	}
	defer root.Close()
	src, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: 100 * time.Millisecond})
	if err != nil {
		if errors.Is(err, bolt.ErrTimeout) {
			return fmt.Errorf("%w: %s", ErrBusy, abs)
		}
		return damaged(err)
	}
	defer src.Close()
	if err := src.View(walkAll); err != nil {
		return damaged(err)
	}
	fresh := db + rebuildSuffix
	if err := root.Remove(fresh); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("state directory %s: %w", abs, err)
	}
	dst, err := bolt.Open(filepath.Join(abs, fresh), 0o600, &bolt.Options{Timeout: 100 * time.Millisecond})
	if err != nil {
		return fmt.Errorf("state directory %s: %w", abs, err)
	}
	if err := bolt.Compact(dst, src, 0); err != nil {
		_ = dst.Close()
		_ = root.Remove(fresh)
		return damaged(err)
	}
	if err := dst.Close(); err != nil {
		_ = root.Remove(fresh)
		return fmt.Errorf("state directory %s: %w", abs, err)
	}
	if err := src.Close(); err != nil {
		return damaged(err)
	}
	if err := root.Rename(fresh, db); err != nil {
		return fmt.Errorf("state directory %s: %w", abs, err)
	}
	return syncDir(abs)
}

// walkAll reads every bucket, nested bucket, key and value of tx once.
func walkAll(tx *bolt.Tx) error {
	var sum uint32
	return tx.ForEach(func(_ []byte, b *bolt.Bucket) error { return walkBucket(b, &sum) })
}

// walkBucket reads every key and value of b, and of the buckets nested in it, into a checksum
// (so that every byte is read, not only the pages' headers).
func walkBucket(b *bolt.Bucket, sum *uint32) error {
	return b.ForEach(func(k, v []byte) error {
		*sum = crc32.Update(crc32.Update(*sum, crc32.IEEETable, k), crc32.IEEETable, v)
		if v == nil {
			if nested := b.Bucket(k); nested != nil {
				return walkBucket(nested, sum)
			}
		}
		return nil
	})
}

// open opens the directory and its database, the file db in it, taking the database's lock (a
// second process gets ErrBusy at once rather than waiting), and runs check (nil: none) on it
// before anything writes to it.
func open(abs, db string, check func(*bolt.DB) error) (*Dir, error) {
	root, err := os.OpenRoot(abs)
	if err != nil {
		return nil, fmt.Errorf("state directory: %w", err)
	}
	bdb, err := bolt.Open(filepath.Join(abs, db), 0o600, &bolt.Options{Timeout: 100 * time.Millisecond})
	if err != nil {
		_ = root.Close()
		if errors.Is(err, bolt.ErrTimeout) {
			return nil, fmt.Errorf("%w: %s", ErrBusy, abs)
		}
		return nil, fmt.Errorf("%w: %s: %v", ErrNotState, filepath.Join(abs, db), err)
	}
	if check != nil {
		if err := check(bdb); err != nil {
			_ = bdb.Close()
			_ = root.Close()
			return nil, err
		}
	}
	err = bdb.Update(func(tx *bolt.Tx) error {
		for _, b := range [][]byte{bucketMeta, bucketEffects} {
			if _, err := tx.CreateBucketIfNotExists(b); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		_ = bdb.Close()
		_ = root.Close()
		return nil, fmt.Errorf("state directory %s: %w", abs, err)
	}
	return &Dir{path: abs, root: root, db: bdb}, nil
}

// Close closes the database and the directory.
func (d *Dir) Close() error {
	if d == nil {
		return nil
	}
	err := d.db.Close()
	if rerr := d.root.Close(); err == nil {
		err = rerr
	}
	return err
}

// Meta reads the run's description.
func (d *Dir) Meta() (Meta, error) {
	var m Meta
	err := d.db.View(func(tx *bolt.Tx) error {
		raw := tx.Bucket(bucketMeta).Get(keyMeta)
		if raw == nil {
			return fmt.Errorf("%w: %s holds no run description", ErrNotState, d.path)
		}
		var err error
		if m, err = DecodeMeta(raw); err != nil {
			return fmt.Errorf("%s: %w", d.path, err)
		}
		return nil
	})
	return m, err
}

// DecodeMeta reads a run description as state.db keeps it (ErrNotState when it does not read).
// What it names is checked where it is used (Dir.Confine).
func DecodeMeta(raw []byte) (Meta, error) {
	var m Meta
	if err := json.Unmarshal(raw, &m); err != nil {
		return Meta{}, fmt.Errorf("%w: state.db meta: the run description does not read: %v", ErrNotState, err)
	}
	return m, nil
}

// DecodeCommit reads a commit as state.db keeps it (ErrNotState when it does not read, or gives
// a negative length or count).
func DecodeCommit(raw []byte) (Commit, error) {
	var c Commit
	if err := json.Unmarshal(raw, &c); err != nil {
		return Commit{}, fmt.Errorf("%w: state.db commit does not read: %v", ErrNotState, err)
	}
	if c.TraceBytes < 0 || c.RecordingBytes < 0 || c.Finished < 0 {
		return Commit{}, fmt.Errorf("%w: state.db commit has a negative length or count (trace_bytes %d, recording_bytes %d, finished %d)", ErrNotState, c.TraceBytes, c.RecordingBytes, c.Finished)
	}
	for p, n := range c.Phases {
		if n < 0 {
			return Commit{}, fmt.Errorf("%w: state.db commit counts %d agents in phase %q", ErrNotState, n, p)
		}
	}
	return c, nil
}

// PutMeta writes the run's description.
func (d *Dir) PutMeta(m Meta) error {
	raw, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return d.db.Update(func(tx *bolt.Tx) error { return tx.Bucket(bucketMeta).Put(keyMeta, raw) })
}

// UpdateMeta changes the run's description with fn, in one transaction.
func (d *Dir) UpdateMeta(fn func(*Meta)) error {
	m, err := d.Meta()
	if err != nil {
		return err
	}
	fn(&m)
	return d.PutMeta(m)
}

// LastCommit reads the last commit; false when the run never committed a tick.
func (d *Dir) LastCommit() (Commit, bool, error) {
	var c Commit
	found := false
	err := d.db.View(func(tx *bolt.Tx) error {
		raw := tx.Bucket(bucketMeta).Get(keyCommit)
		if raw == nil {
			return nil
		}
		found = true
		var err error
		c, err = DecodeCommit(raw)
		return err
	})
	return c, found, err
}

// Size is the bytes the directory's own files take (its database, trace, recording and
// snapshots; not the workdirs).
func (d *Dir) Size() int64 {
	var n int64
	for _, name := range []string{DBFile, TraceFile, RecordingFile} {
		if info, err := d.root.Lstat(name); err == nil && info.Mode().IsRegular() {
			n += info.Size()
		}
	}
	snaps, _ := d.Snapshots()
	for _, s := range snaps {
		n += s.Bytes
	}
	return n
}
