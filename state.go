package warren

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/rs/zerolog"

	"github.com/warrenhq/warren/components"
	"github.com/warrenhq/warren/ecs"
	"github.com/warrenhq/warren/internal/leases"
	"github.com/warrenhq/warren/recording"
	"github.com/warrenhq/warren/resources"
	"github.com/warrenhq/warren/state"
	"github.com/warrenhq/warren/systems"
	"github.com/warrenhq/warren/trace"
)

// State directory errors a caller tests with errors.Is (package state's).
var (
	ErrNotState     = state.ErrNotState
	ErrStateVersion = state.ErrVersion
	ErrStateExists  = state.ErrExists
	ErrStateBusy    = state.ErrBusy
	ErrFinished     = state.ErrFinished
	ErrDiverged     = state.ErrDiverged
	ErrStateMoved   = state.ErrMoved
	// ErrStateUnsafePath: a record of the state directory names a path a resume may not use (a
	// file outside the directory not named again on the command line, a path climbing out of it,
	// a link planted in it): the directory was edited, and the resume is refused.
	ErrStateUnsafePath = state.ErrUnsafePath
	// ErrScenarioChanged: the scenario a state directory's run was started from is not what it
	// was (its files changed), so the run cannot be resumed exactly.
	ErrScenarioChanged = errors.New("the scenario changed since the run started")
)

// RunStopped is a Summary.Status of a run with a state directory that an interrupt stopped at a
// tick boundary: host resume goes on with it.
const RunStopped = "stopped"

// DefaultCommitEvery is the least wall time between two commits of a run's state directory.
// A commit makes the trace and the recording durable up to a tick boundary (four fsyncs); what a
// crash loses past the last commit a resume computes again, so the interval bounds only the
// replay's length, never what the trace says.
const DefaultCommitEvery = 50 * time.Millisecond

// StateOptions adjusts how a run keeps its state directory (Options.State).
type StateOptions struct {
	// Dir is the state directory: made for a new run (one that holds a run already is refused).
	Dir string
	// CommitEvery is the least wall time between two commits (0: DefaultCommitEvery; negative:
	// every tick).
	CommitEvery time.Duration
	// SnapshotTicks takes a world snapshot every that many ticks, SnapshotEvery every that much
	// wall time (either or both; neither: every DefaultSnapshotEvery; SnapshotEvery negative and
	// no SnapshotTicks: never). A resume restores the last snapshot and replays only what follows.
	SnapshotTicks uint64
	SnapshotEvery time.Duration
	// RetryOnResume names the side-effecting tools a resume may run again when the host stopped
	// while they ran (idempotent ones); the others are answered as interrupted.
	RetryOnResume []string
	// Sync is how much the state survives: state.SyncFull (the default: a power cut too) or
	// state.SyncProcess (the process's death only, far cheaper).
	Sync string
	// CrashAfterTick and CrashInEffect kill the host with SIGKILL (for durability tests): after
	// the commit of the first tick at or past that one (a wall-clock run's ticks skip), once every
	// side-effecting call that started has returned and no new one starts; or inside the n-th side-effecting call (from 1), once its intent is on disk
	// and before it runs. Zero: never.
	CrashAfterTick *uint64
	CrashInEffect  int
	// CrashInWrite kills the host with SIGKILL inside the n-th write of an exactly-once file tool
	// (write_file, edit_file; from 1), once its new content is in its temporary file and before
	// the rename that makes it the target's (mid-write). Zero: never.
	CrashInWrite int
	// CrashInSnapshot kills the host with SIGKILL inside the n-th world snapshot's write (from 1),
	// once its file is written and before it is indexed. Zero: never.
	CrashInSnapshot int
}

// stateLaunch is how a run with a state directory was launched, kept in its Meta, so that a
// resume launches it again the same way.
type stateLaunch struct {
	// Header is the recording's header (the scenario file, seed, flags, MCP tools).
	Header recording.Header `json:"header"`
	// WorkRoot is the agents' workdirs' root: state.WorkDir, the directory's own, or the absolute
	// path the run was given (host run --workdir), which a resume uses only when given it again.
	WorkRoot      string        `json:"work_root"`
	CommitEvery   time.Duration `json:"commit_every"`
	SnapshotTicks uint64        `json:"snapshot_ticks,omitempty"`
	SnapshotWall  time.Duration `json:"snapshot_wall,omitempty"`
	RetryOnResume []string      `json:"retry_on_resume,omitempty"`
	Sync          string        `json:"sync,omitempty"`
}

// stateRun is a running run's state directory: its files, its effect journal and its commits.
type stateRun struct {
	dir         *state.Dir
	trace, rec  *state.Appender
	journal     *effectJournal
	every       time.Duration
	crashAfter  *uint64
	resumeTicks uint64
	resume      *resources.Resume
	closed      bool
	// snapTicks and snapWall say when world snapshots are taken (zero: not that way);
	// crashInSnapshot kills the host inside that snapshot's write (StateOptions.CrashInSnapshot).
	snapTicks       uint64
	snapWall        time.Duration
	crashInSnapshot int
	// restored is the snapshot a resume restored (nil: it replayed from the start); reopen opens
	// the same resume from the snapshot before it, for a restored run that did not replay the
	// committed ticks exactly.
	restored *state.Snapshot
	reopen   func() (*Runtime, error)
	// snapshotWait waits for the world snapshot being written, if any; crashing is set once a
	// kill switch fired off the world's goroutine, and stops commits.
	snapshotWait func()
	crashing     atomic.Bool
}

// openState makes the state directory of a new run of sc with opt and fills the options' outputs
// from it: the trace (the directory's, unless opt.TraceFile names one), the recording and the
// workdirs' root. Close it after the run.
func openState(sc *Scenario, opt *Options, seed uint64, hash string) (*stateRun, error) {
	so := opt.State
	abs, err := filepath.Abs(so.Dir)
	if err != nil {
		return nil, err
	}
	if opt.Trace != nil || opt.Record != nil || opt.Replay != nil {
		return nil, errors.New("a run with a state directory writes its trace and recording there: give neither Trace nor Record nor Replay")
	}
	if err := state.CheckSync(so.Sync); err != nil {
		return nil, err
	}
	if opt.TraceFile == "" {
		opt.TraceFile = filepath.Join(abs, state.TraceFile)
	}
	opt.TraceFile = absPath(opt.TraceFile)
	opt.RecordFile, opt.recordName = filepath.Join(abs, state.RecordingFile), state.RecordingFile
	if opt.WorkRoot == "" {
		opt.WorkRoot = filepath.Join(abs, state.WorkDir)
	}
	opt.WorkRoot = absPath(opt.WorkRoot)
	every := so.CommitEvery
	if every == 0 {
		every = DefaultCommitEvery
	}
	snapTicks, snapWall := so.SnapshotTicks, so.SnapshotEvery
	switch {
	case snapWall < 0:
		snapWall = 0
	case snapWall == 0 && snapTicks == 0:
		snapWall = DefaultSnapshotEvery
	}
	launch := stateLaunch{Header: recordingHeader(sc, *opt, seed, hash), WorkRoot: state.StoredPath(abs, opt.WorkRoot, state.WorkDir), CommitEvery: every,
		SnapshotTicks: snapTicks, SnapshotWall: snapWall, RetryOnResume: so.RetryOnResume, Sync: so.Sync}
	raw, err := json.Marshal(launch)
	if err != nil {
		return nil, err
	}
	dir, err := state.Create(abs, state.Meta{Host: Version, Scenario: sc.Name, ScenarioHash: hash, Launch: raw,
		Trace: state.StoredPath(abs, opt.TraceFile, state.TraceFile)})
	if err != nil {
		return nil, err
	}
	s := &stateRun{dir: dir, every: every, crashAfter: so.CrashAfterTick, snapTicks: snapTicks, snapWall: snapWall, crashInSnapshot: so.CrashInSnapshot}
	if launch.WorkRoot == state.WorkDir {
		// A directory made before the run may hold a link where the workdirs go.
		if _, err := dir.OwnDir("the work root", state.WorkDir); err != nil {
			s.Close()
			return nil, err
		}
	}
	if err := dir.SetSync(so.Sync); err != nil {
		s.Close()
		return nil, err
	}
	if err := s.open(0, 0, nil, opt); err != nil {
		s.Close()
		return nil, err
	}
	s.journal = newEffectJournal(dir, so.CrashInEffect, so.CrashInWrite)
	return s, nil
}

// open opens the trace and the recording for appending past their committed lengths; a run
// restored from snap writes them again from its offsets on.
func (s *stateRun) open(traceBytes, recBytes int64, snap *state.Snapshot, opt *Options) error {
	var traceFrom, recFrom int64
	if snap != nil {
		traceFrom, recFrom = snap.TraceBytes, snap.RecordingBytes
	}
	var err error
	if opt.TraceFile == filepath.Join(s.dir.Path(), state.TraceFile) {
		s.trace, err = s.dir.AppenderFrom(state.TraceFile, traceBytes, traceFrom)
	} else {
		s.trace, err = s.dir.OpenAppender(opt.TraceFile, traceBytes, traceFrom)
	}
	if err != nil {
		return fmt.Errorf("trace: %w", err)
	}
	if s.rec, err = s.dir.AppenderFrom(state.RecordingFile, recBytes, recFrom); err != nil {
		return fmt.Errorf("recording: %w", err)
	}
	opt.Trace, opt.Record = s.trace, s.rec
	return nil
}

// Close closes the directory's files and database; it is safe to call more than once.
func (s *stateRun) Close() {
	if s == nil || s.closed {
		return
	}
	s.closed = true
	if s.journal != nil {
		s.journal.close()
	}
	if s.trace != nil {
		_ = s.trace.Close()
	}
	if s.rec != nil {
		_ = s.rec.Close()
	}
	_ = s.dir.Close()
}

// commit makes the trace and the recording durable as they are at the end of tick and records
// the boundary, unless a resume is still replaying committed ticks (nothing new to commit).
func (s *stateRun) commit(w *ecs.World, tw *trace.Writer, rw *recording.Writer, records *components.Records) error {
	tick := w.Tick()
	if tick+1 < s.resumeTicks {
		return nil
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("%w: %w", ErrTrace, err)
	}
	if err := rw.Flush(); err != nil {
		return fmt.Errorf("%w: %w", ErrRecording, err)
	}
	if !s.trace.Caught() || !s.rec.Caught() {
		return nil
	}
	if err := s.trace.Sync(); err != nil {
		return fmt.Errorf("%w: %w", ErrTrace, err)
	}
	if err := s.rec.Sync(); err != nil {
		return fmt.Errorf("%w: %w", ErrRecording, err)
	}
	c := state.Commit{Ticks: tick + 1, TraceBytes: s.trace.Len(), RecordingBytes: s.rec.Len(),
		TraceEvents: tw.Events(), Entries: rw.Entries(), Phases: systems.Phases(w), Finished: records.Len()}
	s.journal.settle()
	return s.dir.Commit(c, s.journal.takeFiled())
}

// replayFailed reports whether a run restored from a snapshot failed before it had written the
// committed trace and recording again: the snapshot did not reproduce the run, and the resume
// goes back to the one before it.
func (s *stateRun) replayFailed(sum *Summary) bool {
	return s != nil && s.restored != nil && sum.Status == trace.RunFailed && (!s.trace.Caught() || !s.rec.Caught())
}

// stateCommit commits the run's state directory at tick boundaries, at most once per CommitEvery
// of wall time: when it commits changes nothing in the world, so the interval may be measured in
// real time. It is the pipeline's last system.
type stateCommit struct {
	state   *stateRun
	trace   *trace.Writer
	rec     *recording.Writer
	records *components.Records
	halt    func(error)
	last    time.Time
}

var _ ecs.System = (*stateCommit)(nil)

func (*stateCommit) Name() string                { return "state_commit" }
func (*stateCommit) Initialize(*ecs.World) error { return nil }
func (c *stateCommit) Update(w *ecs.World) {
	if c.state.crashing.Load() {
		return // the host is being killed: nothing after the kill switch may become durable
	}
	crash := c.state.crashAfter != nil && w.Tick() >= *c.state.crashAfter
	if !crash && c.state.every > 0 && time.Since(c.last) < c.state.every && w.Tick()+1 != c.state.resumeTicks {
		return
	}
	if err := c.state.commit(w, c.trace, c.rec, c.records); err != nil {
		c.halt(err)
		return
	}
	c.last = time.Now()
	if crash {
		c.state.journal.quiesce()
		if c.state.snapshotWait != nil {
			c.state.snapshotWait() // the kill comes after a commit, not inside a snapshot's write
		}
		_ = syscall.Kill(syscall.Getpid(), syscall.SIGKILL)
		select {} // the signal is on its way: the world must not go on to later ticks
	}
}
func (*stateCommit) Finalize(*ecs.World) {}

// finish makes the end of a run durable and marks the directory: finished (nothing left to
// resume), or stopped (an interrupt: host resume goes on from the last commit).
func (s *stateRun) finish(sum *Summary) {
	if s.resume != nil {
		r := s.resume
		_ = s.dir.UpdateMeta(func(m *state.Meta) {
			res := state.Resume{At: time.Now().UTC(), Ticks: s.resumeTicks,
				Interrupted: r.Interrupted, Retried: r.Retried, Served: r.Served}
			if s.restored != nil {
				res.Snapshot, res.Ticks = &s.restored.Tick, s.resumeTicks-s.restored.Done
			}
			m.Resumes = append(m.Resumes, res)
		})
	}
	switch sum.Status {
	case trace.RunFinished, trace.RunTickLimit:
		_ = s.trace.Sync()
		_ = s.rec.Sync()
		_ = s.dir.UpdateMeta(func(m *state.Meta) { m.Status, m.End = state.StatusFinished, sum.Status })
	case trace.RunInterrupted:
		_ = s.dir.UpdateMeta(func(m *state.Meta) { m.Status = state.StatusStopped })
		sum.Status = RunStopped
	}
}

// crash kills the host from off the world's goroutine (a durability test's kill switch) as the
// tick kill switch does: once the side-effecting calls that started have returned, with no new one
// started and nothing committed after it.
func (s *stateRun) crash() {
	s.crashing.Store(true)
	s.journal.quiesce()
	_ = syscall.Kill(syscall.Getpid(), syscall.SIGKILL)
	select {} // the signal is on its way
}

// errCrashing is what a call whose intent was not written gets while the host waits to be killed.
var errCrashing = errors.New("the host is being killed (a durability test's kill switch)")

// effectJournal is the run's resources.EffectJournal over its state directory. Intents are group
// committed: a worker about to run a call notes its intent, and the first one to find no write
// in progress writes every intent noted so far in one synced transaction while the others wait,
// so the workers running at once share a sync. An intent is noted only as its call starts, so a
// call waiting in its lane's queue is never taken for one that may have run. Results are written by a background writer in the
// same way, and nobody waits for them: a result lost to a crash leaves its call "may or may not
// have happened", the safe side.
type effectJournal struct {
	dir *state.Dir
	// filed are the keys filed since the last commit (world goroutine).
	filed []string

	mu sync.Mutex
	// pending are the intents noted and not yet written; group is the wait they share.
	pending []string
	group   *intentGroup
	// writing serialises the intents' transactions.
	writing sync.Mutex
	// results are the results to write; wake wakes their writer; drained is signalled when it
	// has written all there is (busy: it is writing a batch); stopping ends it.
	results  []effectResult
	wake     chan struct{}
	drained  *sync.Cond
	busy     bool
	stopping bool
	// crashIn kills the host inside that intent (from 1); intents counts them, inflight the
	// calls whose intent is on disk and whose result is not handed over yet; stopped keeps new
	// intents from being written, for a crash.
	crashIn int64
	intents atomic.Int64
	// crashInWrite kills the host inside that exactly-once write (from 1), writes counting them.
	crashInWrite int64
	writes       atomic.Int64
	inflight     sync.WaitGroup
	stopped      bool
}

// intentGroup is the intents written in one transaction: done closes when it is on disk, err
// says whether it failed.
type intentGroup struct {
	keys   []string
	tick   []uint64
	expect [][]byte
	done   chan struct{}
	err    error
}

// effectResult is one result waiting for the writer.
type effectResult struct {
	key    string
	tick   uint64
	result []byte
}

var _ resources.EffectJournal = (*effectJournal)(nil)

func newEffectJournal(dir *state.Dir, crashIn, crashInWrite int) *effectJournal {
	j := &effectJournal{dir: dir, crashIn: int64(crashIn), crashInWrite: int64(crashInWrite), wake: make(chan struct{}, 1)}
	j.drained = sync.NewCond(&j.mu)
	go j.writeResults()
	return j
}

func (j *effectJournal) Intent(key string, tick uint64, expect []byte) error {
	j.mu.Lock()
	if j.group == nil {
		j.group = &intentGroup{done: make(chan struct{})}
	}
	g := j.group
	g.keys, g.tick, g.expect = append(g.keys, key), append(g.tick, tick), append(g.expect, expect)
	j.mu.Unlock()
	return j.wait(g)
}

// wait returns once g's intents are on disk, writing them itself when no one else has yet.
// Every intent written counts as a call in flight until its Done: its call will run, whether its
// worker has started yet or not.
func (j *effectJournal) wait(g *intentGroup) error {
	j.writing.Lock()
	select {
	case <-g.done:
	default:
		j.mu.Lock()
		stopped := j.stopped
		if j.group == g {
			j.group = nil // later intents form the next group
		}
		j.mu.Unlock()
		if stopped {
			// The host is about to be killed: these calls never run, and their workers are free
			// for the calls whose intents are on disk, which the kill waits for.
			j.writing.Unlock()
			return errCrashing
		}
		effects := make([]state.KeyedEffect, len(g.keys))
		for i, k := range g.keys {
			effects[i] = state.KeyedEffect{Key: k, Effect: state.Effect{Tick: g.tick[i], Expect: g.expect[i]}}
		}
		if g.err = j.dir.PutEffects(effects); g.err == nil {
			j.inflight.Add(len(g.keys))
		}
		close(g.done)
	}
	j.writing.Unlock()
	if g.err != nil {
		return g.err
	}
	if n := j.intents.Add(1); n == j.crashIn {
		_ = syscall.Kill(syscall.Getpid(), syscall.SIGKILL)
		select {}
	}
	return nil
}

// Applying implements resources.EffectJournal: the kill switch inside an exactly-once write
// (StateOptions.CrashInWrite). The write's intent is on disk, so the call counts as in flight.
func (j *effectJournal) Applying() {
	if n := j.writes.Add(1); n == j.crashInWrite {
		_ = syscall.Kill(syscall.Getpid(), syscall.SIGKILL)
		select {}
	}
}

func (j *effectJournal) Done(key string, tick uint64, result []byte) {
	defer j.inflight.Done()
	if result == nil {
		return // the intent stands alone: may or may not have happened
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.stopping {
		return // the run is over: what is not written now is interrupted, the safe side
	}
	j.results = append(j.results, effectResult{key, tick, result})
	select {
	case j.wake <- struct{}{}:
	default:
	}
}

// writeResults writes the results as they come, each batch in one transaction.
func (j *effectJournal) writeResults() {
	for range j.wake {
		j.mu.Lock()
		batch := j.results
		j.results, j.busy = nil, len(batch) > 0
		j.mu.Unlock()
		if len(batch) > 0 {
			effects := make([]state.KeyedEffect, len(batch))
			for i, r := range batch {
				effects[i] = state.KeyedEffect{Key: r.key, Effect: state.Effect{Tick: r.tick, Done: true, Result: r.result}}
			}
			_ = j.dir.PutEffects(effects) // a result not written leaves its call interrupted
		}
		j.mu.Lock()
		j.busy = false
		if len(j.results) == 0 {
			j.drained.Broadcast()
		}
		j.mu.Unlock()
	}
}

// settle waits until every result handed to Done is written, so that a commit's deletions come
// after the writes of the keys they delete.
func (j *effectJournal) settle() {
	j.mu.Lock()
	for j.busy || len(j.results) > 0 {
		j.drained.Wait()
	}
	j.mu.Unlock()
}

// close ends the results' writer once it has written what it holds.
func (j *effectJournal) close() {
	j.settle()
	j.mu.Lock()
	if !j.stopping {
		j.stopping = true
		close(j.wake)
	}
	j.mu.Unlock()
}

func (j *effectJournal) Filed(key string) { j.filed = append(j.filed, key) }

// Keep implements resources.EffectJournal. It does not count as a call in flight, and the kill
// switch's quiesce lets it through: the calls it waits for may still cause what is kept.
func (j *effectJournal) Keep(key string, tick uint64, payload []byte) error {
	return j.dir.PutEffects([]state.KeyedEffect{{Key: key, Effect: state.Effect{Tick: tick, Expect: payload}}})
}

func (j *effectJournal) takeFiled() []string {
	f := j.filed
	j.filed = nil
	return f
}

// quiesce stops new side-effecting calls from starting and waits for those running to hand over
// their results and for the results to be written, so that a crash after it cuts no call off.
func (j *effectJournal) quiesce() {
	j.mu.Lock()
	j.stopped = true
	j.mu.Unlock()
	j.writing.Lock() // no group is being written now, and none will be
	j.writing.Unlock()
	j.inflight.Wait()
	j.settle()
}

// CheckState reads a state directory's database whole and rebuilds it (state.Rebuild), as
// OpenResume and InspectState do first: host resume runs it in a child process under a memory
// limit before either, so that a forged database that would make the reader allocate without end
// fails that child, not the host.
func CheckState(dir string) error { return state.Rebuild(dir) }

// ResumeOptions adjusts a resume (Resume): what Options lets a caller set for a run and a resume
// does not take from the directory.
type ResumeOptions struct {
	// Events, Log and Progress are Options'.
	Events   func(line []byte)
	Log      zerolog.Logger
	Progress func(finished, total int)
	// CrashAfterTick, CrashInEffect, CrashInWrite and CrashInSnapshot are StateOptions'.
	CrashAfterTick  *uint64
	CrashInEffect   int
	CrashInWrite    int
	CrashInSnapshot int
	// NoSnapshot replays from the run's start even when the directory holds a snapshot.
	NoSnapshot bool
	// Trace and WorkRoot are the trace and the workdirs' root the run was given (host run
	// --trace, --workdir) when they lie outside the directory: the directory's record of them is
	// input that anyone who can write the directory can edit, so a resume writes outside it only
	// where the caller names the same place again (state.Dir.Confine). Scenario, when set, is
	// the scenario file the caller expects the run to be of: a record naming another is refused.
	Trace, WorkRoot, Scenario string
}

// Resume goes on with the run in the state directory dir, which died or was stopped: it loads
// the run's scenario as the run was launched (refused with ErrScenarioChanged when its files
// changed), restores the last world snapshot taken at or before the last commit (or none: the
// run's start), replays the committed ticks after it from the directory's recording, checking
// that they write the committed trace and recording again byte for byte (ErrDiverged), then runs
// on live to the end. A snapshot that does not read, does not restore or does not replay the
// committed ticks exactly gives way to the one before it, and the last to the run's start. A call that was running when the host stopped is given its journaled result when it had
// returned, run again when its tool is retry_on_resume or changes nothing, and otherwise answered
// as interrupted. A finished run is refused with ErrFinished; a directory of another version
// with ErrStateVersion.
func Resume(ctx context.Context, dir string, ro ResumeOptions) (*Summary, error) {
	r, err := OpenResume(dir, ro)
	if err != nil {
		return nil, err
	}
	return r.Run(ctx)
}

// OpenResume is Resume's first half: the resumed run built and ready to run (Runtime.Run), so
// that a caller sees its scenario first.
func OpenResume(dir string, ro ResumeOptions) (*Runtime, error) {
	return openResume(dir, ro, 0)
}

// openResume opens the resumed run from the from-th usable snapshot on (last first), falling
// back to the one after it when one does not restore.
func openResume(dir string, ro ResumeOptions, from int) (*Runtime, error) {
	r, next, err := openResumeAt(dir, ro, from)
	if err != nil && next > 0 && !errors.Is(err, state.ErrUnsafePath) {
		ro.Log.Warn().Err(err).Msg("the world snapshot does not restore; resuming from an earlier one")
		return openResume(dir, ro, next)
	}
	return r, err
}

// openResumeAt is OpenResume restoring the first usable snapshot from the from-th; next is the
// index of the one after it (0 when none was used).
func openResumeAt(dir string, ro ResumeOptions, from int) (_ *Runtime, next int, err error) {
	d, meta, err := state.Open(dir)
	if err != nil {
		return nil, 0, err
	}
	s := &stateRun{dir: d}
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	switch {
	case meta.Host != Version:
		return nil, 0, fmt.Errorf("%w: the run in %s was started by Warren %s; this is %s, which may run it differently: resume it with that version", ErrStateVersion, dir, meta.Host, Version)
	case meta.Status == state.StatusFinished:
		return nil, 0, fmt.Errorf("%w: %s ended %s; its trace is %s", ErrFinished, dir, meta.End, meta.Trace)
	case meta.Dir != d.Path():
		return nil, 0, fmt.Errorf("%w: %s was made at %s, and its recording names the scenario and the trace relative to that place: move it back to resume it", ErrStateMoved, d.Path(), meta.Dir)
	}
	var launch stateLaunch
	if err := json.Unmarshal(meta.Launch, &launch); err != nil {
		return nil, 0, fmt.Errorf("%w: %s: the run's launch does not read: %v", ErrNotState, dir, err)
	}
	places, err := confineResume(d, meta, launch, ro)
	if err != nil {
		return nil, 0, err
	}
	commit, _, err := d.LastCommit()
	if err != nil {
		return nil, 0, err
	}
	effects, err := d.Effects()
	if err != nil {
		return nil, 0, err
	}
	tape, err := committedTape(d, launch.Header, commit, places)
	if err != nil {
		return nil, 0, err
	}
	if err := checkResumeScenario(dir, &tape.Header, ro.Scenario); err != nil {
		return nil, 0, err
	}
	sc, opt, err := LoadReplay(tape, "")
	if err != nil {
		return nil, 0, err
	}
	if hash := launchHash(sc, opt); hash != meta.ScenarioHash {
		return nil, 0, fmt.Errorf("%w: %s was run from %s with hash %s; it now hashes to %s: a resume must run the same scenario", ErrScenarioChanged, dir, launch.Header.ScenarioFile, meta.ScenarioHash, hash)
	}
	opt.Events, opt.Log, opt.Progress = ro.Events, ro.Log, ro.Progress
	opt.WorkRoot, opt.TraceFile, opt.RecordNote = places.work.Abs, places.trace.Abs, launch.Header.Note
	opt.RecordFile, opt.recordName = filepath.Join(d.Path(), state.RecordingFile), state.RecordingFile
	s.every, s.crashAfter, s.resumeTicks = launch.CommitEvery, ro.CrashAfterTick, commit.Ticks
	s.snapTicks, s.snapWall, s.crashInSnapshot = launch.SnapshotTicks, launch.SnapshotWall, ro.CrashInSnapshot
	s.journal = newEffectJournal(d, ro.CrashInEffect, ro.CrashInWrite)
	retry := map[string]bool{}
	for _, t := range launch.RetryOnResume {
		retry[t] = true
	}
	s.resume = &resources.Resume{Effects: map[string]resources.ResumedEffect{}, Retry: func(tool string) bool { return retry[tool] }}
	for k, e := range effects {
		s.resume.Effects[k] = resources.ResumedEffect{Done: e.Done, Result: e.Result, Expect: e.Expect}
	}
	if err := d.SetSync(launch.Sync); err != nil {
		return nil, 0, err
	}
	snap, idx, next, err := usableSnapshot(d, commit, from, ro, places)
	if err != nil {
		return nil, 0, err
	}
	if err := s.open(commit.TraceBytes, commit.RecordingBytes, idx, &opt); err != nil {
		return nil, 0, err
	}
	if err := d.UpdateMeta(func(m *state.Meta) { m.Status = state.StatusRunning }); err != nil {
		return nil, 0, err
	}
	opt.resumed, opt.snapshot, s.restored = s, snap, idx
	s.reopen = func() (*Runtime, error) { return openResume(dir, ro, next) }
	r, err := New(sc, opt)
	return r, next, err
}

// usableSnapshot reads the first snapshot, from the from-th of those taken at or before the last
// commit (last first), that reads back whole; next is the index after it (0: none was found, and
// the run replays from its start). A damaged index or snapshot is set aside; an index edited to
// name another file is an error (state.ErrUnsafePath).
func usableSnapshot(d *state.Dir, c state.Commit, from int, ro ResumeOptions, places resumePlaces) (*worldSnapshot, *state.Snapshot, int, error) {
	if ro.NoSnapshot {
		return nil, nil, 0, nil
	}
	all, err := d.Snapshots()
	if errors.Is(err, state.ErrUnsafePath) {
		return nil, nil, 0, err
	}
	if err != nil {
		ro.Log.Warn().Err(err).Msg("the snapshot index does not read; resuming from the run's start")
		return nil, nil, 0, nil
	}
	var usable []state.Snapshot
	for _, sn := range all {
		if sn.Done <= c.Ticks && sn.TraceBytes <= c.TraceBytes && sn.RecordingBytes <= c.RecordingBytes {
			usable = append(usable, sn)
		}
	}
	for i := from; i < len(usable); i++ {
		raw, err := d.ReadSnapshot(usable[i])
		if err == nil {
			var snap *worldSnapshot
			if snap, err = readSnapshot(raw); err == nil {
				// Refused here, before the resume writes anything, as well as by the restore.
				if err := checkSnapshotWorkdirs(&snap.Agents, resolvedRoot(places.work.Abs)); err != nil {
					return nil, nil, 0, err
				}
				return snap, &usable[i], i + 1, nil
			}
		}
		ro.Log.Warn().Err(err).Uint64("tick", usable[i].Tick).Msg("world snapshot unusable; trying an earlier one")
	}
	return nil, nil, 0, nil
}

// committedTape reads the committed part of the directory's recording, whose header must name
// the places confineResume checked.
func committedTape(d *state.Dir, h recording.Header, c state.Commit, places resumePlaces) (*recording.Tape, error) {
	f, err := d.Root().Open(state.RecordingFile)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotState, err)
	}
	defer f.Close()
	var tape *recording.Tape
	if c.RecordingBytes == 0 {
		// Not even the header was committed: the run died before its first commit.
		h.Format, h.Version = recording.Format, recording.Version
		raw, _ := json.Marshal(h)
		tape, err = recording.ReadCommitted(bytes.NewReader(append(raw, '\n')), 0)
	} else {
		tape, err = recording.ReadCommitted(io.LimitReader(f, c.RecordingBytes), c.Ticks)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(d.Path(), state.RecordingFile), err)
	}
	if err := checkResumeHeader(d, &tape.Header, places); err != nil {
		return nil, err
	}
	// The header's files are relative to the recording's folder, the state directory.
	for _, p := range []*string{&tape.Header.ScenarioFile, &tape.Header.ConfigFile, &tape.Header.TraceFile} {
		if *p != "" && !filepath.IsAbs(*p) {
			*p = filepath.Join(d.Path(), filepath.FromSlash(*p))
		}
	}
	return tape, nil
}

// StateInfo is what a state directory holds (host state inspect).
type StateInfo struct {
	state.Meta
	// Commit is the last commit (Committed false: none yet).
	Commit    state.Commit
	Committed bool
	// Effects counts the journaled calls not yet filed at the last commit, EffectsDone those of
	// them that had returned.
	Effects, EffectsDone int
	// Size is the bytes of the directory's own files.
	Size int64
	// Snapshots are the world snapshots kept, the last first.
	Snapshots []state.Snapshot
}

// InspectState reads what the state directory dir holds, changing nothing. It fails while a host
// has the directory open (ErrStateBusy).
func InspectState(dir string) (*StateInfo, error) {
	d, meta, err := state.Open(dir)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	info := &StateInfo{Meta: meta, Size: d.Size()}
	if info.Trace == state.TraceFile {
		info.Trace = filepath.Join(d.Path(), state.TraceFile) // shown as a path, as the run named it
	}
	if info.Commit, info.Committed, err = d.LastCommit(); err != nil {
		return nil, err
	}
	if info.Snapshots, err = d.Snapshots(); err != nil {
		return nil, err
	}
	effects, err := d.Effects()
	if err != nil {
		return nil, err
	}
	for k, e := range effects {
		if leases.IsEffectKey(k) {
			continue // a batch of MCP session events (leases.EffectKey), not a call
		}
		info.Effects++
		if e.Done {
			info.EffectsDone++
		}
	}
	return info, nil
}
