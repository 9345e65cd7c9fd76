package warren

import (
	"bytes"
	"encoding/gob"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	"github.com/warrenhq/warren/components"
	"github.com/warrenhq/warren/ecs"
	"github.com/warrenhq/warren/gate"
	"github.com/warrenhq/warren/internal/agenttree"
	"github.com/warrenhq/warren/internal/leases"
	"github.com/warrenhq/warren/mcp"
	"github.com/warrenhq/warren/models"
	"github.com/warrenhq/warren/recording"
	"github.com/warrenhq/warren/resources"
	"github.com/warrenhq/warren/state"
	"github.com/warrenhq/warren/systems"
	"github.com/warrenhq/warren/tools"
)

// DefaultSnapshotEvery is the least wall time between two world snapshots of a run with a state
// directory: a resume restores the last one and replays only the committed ticks after it. When
// snapshots are taken changes nothing in the world, so the interval may be measured in real time.
const DefaultSnapshotEvery = 30 * time.Second

// snapshotFormat names the payload of a snapshot file; it changes whenever the payload does.
const snapshotFormat = "warren-snapshot/1"

// worldSnapshot is the whole state of a run at a tick boundary, as data: every owner's image
// (docs/decisions.md, "World snapshots").
type worldSnapshot struct {
	Format string
	Host   string
	// RunHash is the run's scenario hash: a snapshot restores only into the run that made it.
	RunHash string
	World   *ecs.WorldImage
	Last    ecs.LastStepImage
	Agents  components.AgentsImage
	Records []components.FinalRecord
	Tree    agenttree.StateImage
	Hub     gate.HubImage
	Answers []int
	Tasks   []tools.TaskList
	Lanes   systems.LanesImage
	// Inference is the live models' pools, routes and spend.
	Inference resources.InferenceImage
	// Servers and Leases are the MCP sessions' state (none without MCP servers).
	Servers []mcp.ServerImage
	Leases  leases.Image
	// TraceEvents and Recording are the writers' state at the boundary.
	TraceEvents    uint64
	Recording      recording.WriterImage
	RealTimeLimits uint64
	// Models are the turns each model made so far (resources.Run.Models).
	Models []resources.ModelCount
}

// snapshotter takes a run's world snapshots at tick boundaries (ecs.Scheduler.SetBoundary): it
// copies the world's state on the world's goroutine and encodes and writes it on its own, so the
// world pauses only for the copy. A snapshot still being written when the next falls due makes
// that one wait for a later boundary; a boundary whose state has no image yet (Imageable) too.
type snapshotter struct {
	r *Runtime
	// everyTicks and everyWall say when one is due (either; zero: that way never).
	everyTicks uint64
	everyWall  time.Duration
	lastTick   uint64
	lastWall   time.Time

	wg      sync.WaitGroup
	mu      sync.Mutex
	writing bool
	// taken counts the snapshots written; deferred says why the last due one was not taken,
	// failed why the last write failed; st is what they cost.
	taken    int
	deferred string
	failed   error
	st       SnapshotStats
}

// stats returns what the snapshots cost so far (once the last write is done).
func (s *snapshotter) stats() SnapshotStats {
	s.wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.st
	st.Taken, st.Why = s.taken, s.deferred
	if s.failed != nil {
		st.Failed = s.failed.Error()
	}
	return st
}

// boundary takes a snapshot when one is due.
func (s *snapshotter) boundary(w *ecs.World) {
	st := s.r.state
	last, _ := s.r.sched.LastStep()
	done := last + 1
	if done < st.resumeTicks {
		return // still replaying committed ticks: the snapshots of them exist or were lost alike
	}
	due := s.everyTicks > 0 && w.Tick()-s.lastTick >= s.everyTicks ||
		s.everyWall > 0 && time.Since(s.lastWall) >= s.everyWall
	if !due {
		return
	}
	s.mu.Lock()
	busy := s.writing
	s.mu.Unlock()
	if busy && st.crashInSnapshot == 0 {
		return
	}
	s.wg.Wait() // only under the durability tests' kill switch, which must reach its snapshot
	start := time.Now()
	snap, err := s.r.image()
	if err != nil {
		if err.Error() != s.deferred {
			s.r.opt.Log.Debug().Err(err).Uint64("tick", w.Tick()).Msg("world snapshot waits for a later tick")
		}
		s.deferred = err.Error()
		s.mu.Lock()
		s.st.Deferred++
		s.mu.Unlock()
		return
	}
	// The files' lengths at the boundary: what is buffered goes to them first (not synced: the
	// next commit does that, and a snapshot past the last commit is never used).
	if err := s.r.trace.Flush(); err != nil {
		return
	}
	if err := s.r.record.Flush(); err != nil {
		return
	}
	idx := state.Snapshot{Done: done, Tick: w.Tick(), TraceBytes: st.trace.Len(), RecordingBytes: st.rec.Len(), Agents: w.Entities()}
	pause := time.Since(start)
	s.lastTick, s.lastWall = w.Tick(), time.Now()
	var crash func()
	s.mu.Lock()
	s.writing = true
	s.st.MaxPause = max(s.st.MaxPause, pause)
	s.st.TotalPause += pause
	s.st.Copied++
	if st.crashInSnapshot == s.taken+1 {
		crash = st.crash
	}
	s.mu.Unlock()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		began := time.Now()
		n, err := writeSnapshot(st.dir, idx, snap, crash)
		s.mu.Lock()
		s.writing = false
		s.st.TotalWrite += time.Since(began)
		if err != nil {
			s.failed = err
		} else {
			s.taken++
			s.st.LastBytes, s.st.LastAgents = n, idx.Agents
		}
		s.mu.Unlock()
		if err != nil {
			s.r.opt.Log.Warn().Err(err).Uint64("tick", idx.Tick).Msg("world snapshot not written; a resume replays from an earlier one")
		}
	}()
}

// wait waits for the snapshot being written, if any.
func (s *snapshotter) wait() {
	if s != nil {
		s.wg.Wait()
	}
}

// writeSnapshot encodes snap into the state directory's snapshot file of idx; crash (if set)
// kills the host once the file is written and before it is indexed (a durability test's kill
// switch).
func writeSnapshot(d *state.Dir, idx state.Snapshot, snap *worldSnapshot, crash func()) (int64, error) {
	if err := snap.World.Encode(); err != nil {
		return 0, fmt.Errorf("snapshot at tick %d: %w", idx.Tick, err)
	}
	w, err := d.NewSnapshot(idx)
	if err != nil {
		return 0, err
	}
	if err := gob.NewEncoder(w).Encode(snap); err != nil {
		w.Abort()
		return 0, fmt.Errorf("snapshot at tick %d: %w", idx.Tick, err)
	}
	if crash != nil {
		crash()
	}
	written, err := w.Commit()
	return written.Bytes, err
}

// errNotImageable wraps the reasons a boundary's state has no image yet.
var errNotImageable = systems.ErrNotImageable

// image copies the run's state at a tick boundary. Every part shares nothing with the world, so
// the world goes on while it is encoded.
func (r *Runtime) image() (*worldSnapshot, error) {
	w := r.world
	servers, err := r.servers.Image()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errNotImageable, err)
	}
	inf, err := r.set.Inference.Image(systems.TicketValueImage)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errNotImageable, err)
	}
	bg, err := resources.Get[resources.Background](w)
	if err != nil {
		return nil, err
	}
	if len(bg.Pending) > 0 {
		return nil, fmt.Errorf("%w: background commands are running", errNotImageable)
	}
	kept, ok := r.answerer.(gate.KeptAnswerer)
	if !ok {
		return nil, fmt.Errorf("%w: the run's answerer keeps no image", errNotImageable)
	}
	lanes, err := systems.ImageLanes(w)
	if err != nil {
		return nil, err
	}
	tree, err := r.installed.Tree.Image()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errNotImageable, err)
	}
	agents := r.set.Agents.Image()
	for i := range agents.Data {
		a := &agents.Data[i]
		if a.Dynamic != nil {
			return nil, fmt.Errorf("%w: agent %s's dynamic tools have no image yet", errNotImageable, a.Name)
		}
		for _, res := range a.Work.Results {
			if res.Detached {
				return nil, fmt.Errorf("%w: agent %s has background work running", errNotImageable, a.Name)
			}
		}
	}
	world, err := w.Image(systems.ComponentCodecs()...)
	if err != nil {
		return nil, err
	}
	return &worldSnapshot{
		Format: snapshotFormat, Host: Version, RunHash: r.hash,
		World: world, Last: r.sched.Image(), Agents: agents, Records: r.records.Image(), Tree: tree,
		Hub: r.set.Hub.Image(), Answers: kept.AnswererImage(), Tasks: r.set.Tasks.Image(), Lanes: lanes,
		Servers: servers, Leases: r.installed.Leases.Image(), Inference: inf,
		TraceEvents: r.trace.Events(), Recording: r.record.Image(), RealTimeLimits: r.set.Run.RealTimeLimits,
		Models: r.set.Run.ModelUses(),
	}, nil
}

// readSnapshot decodes a snapshot's payload.
func readSnapshot(raw []byte) (*worldSnapshot, error) {
	var snap worldSnapshot
	if err := gob.NewDecoder(bytes.NewReader(raw)).Decode(&snap); err != nil {
		return nil, fmt.Errorf("%w: %v", state.ErrSnapshot, err)
	}
	if snap.Format != snapshotFormat || snap.Host != Version {
		return nil, fmt.Errorf("%w: it is %s by Warren %s; this host reads %s by %s", state.ErrSnapshot, snap.Format, snap.Host, snapshotFormat, Version)
	}
	return &snap, nil
}

// restoreBeforeInstall gives the stores the world's resources are made from the snapshot's
// state: the agents, the final records, the checklists, the open prompts and the answerer's uses.
// root is the run's work root: every workdir the snapshot gives lies under it.
func (r *Runtime) restoreBeforeInstall(snap *worldSnapshot, root string) error {
	if snap.RunHash != r.hash {
		return fmt.Errorf("%w: it was taken of run %s, not %s", state.ErrSnapshot, snap.RunHash, r.hash)
	}
	if err := checkSnapshotWorkdirs(&snap.Agents, root); err != nil {
		return err
	}
	r.set.Agents = &components.Agents{}
	if err := r.set.Agents.RestoreAgents(&snap.Agents, nil); err != nil {
		return err
	}
	*r.records = *components.RestoreRecords(snap.Records)
	r.set.Tasks = tools.RestoreTaskBroker(snap.Tasks)
	if err := r.set.Hub.Restore(&snap.Hub); err != nil {
		return err
	}
	kept, ok := r.answerer.(gate.KeptAnswerer)
	if !ok {
		return errors.New("snapshot: the run's answerer keeps no image")
	}
	if err := kept.RestoreAnswerer(snap.Answers); err != nil {
		return err
	}
	r.set.Run.RealTimeLimits = snap.RealTimeLimits
	r.set.Run.RestoreModelUses(snap.Models)
	return nil
}

// restoreWorld gives the initialized world the snapshot's entities, agent tree, sub-agent
// profiles, lanes and last step, in place of spawning the groups: groups are the profile store's
// first entries, in order, and every sub-agent profile is made again from its origin.
func (r *Runtime) restoreWorld(snap *worldSnapshot, groups []*components.Profile) error {
	w := r.world
	for _, p := range groups {
		if p != nil {
			r.set.Profiles.Add(p)
		}
	}
	if err := w.Restore(snap.World, systems.ComponentCodecs()...); err != nil {
		return err
	}
	tree, err := agenttree.Restore(&snap.Tree, func(pi agenttree.ProfileIndex) (*components.Profile, error) {
		o := pi.Origin
		if !o.Child {
			return nil, fmt.Errorf("profile %d has no origin", pi.Index)
		}
		p, err := r.set.Spawning.Offspring.Profile(r.set.Profiles.Get(o.Parent), o.Stage, o.Key)
		if err != nil {
			return nil, err
		}
		p.Origin = o
		if i := r.set.Profiles.Add(p); i != pi.Index {
			return nil, fmt.Errorf("profile %d made again at %d", pi.Index, i)
		}
		return p, nil
	})
	if err != nil {
		return err
	}
	*r.installed.Tree = *tree
	value, err := systems.RestoreTicketValue(w)
	if err != nil {
		return err
	}
	if err := r.set.Inference.Restore(&snap.Inference, r.liveModel, value); err != nil {
		return err
	}
	if err := systems.RestoreLanes(w, &snap.Lanes); err != nil {
		return err
	}
	r.sched.Restore(snap.Last)
	r.installed.Leases.Restore(snap.Leases)
	return r.servers.Restore(snap.Servers)
}

// liveModel is the live model whose id is id, from the profiles that name it.
func (r *Runtime) liveModel(id string) (models.Live, error) {
	ps := r.set.Profiles
	for i := range ps.Len() {
		p := ps.Get(uint32(i))
		for _, m := range p.Models() {
			if lm, ok := m.(models.Live); ok && m.ID() == id {
				return lm, nil
			}
		}
	}
	return nil, fmt.Errorf("no profile runs model %s", id)
}

// checkSnapshotWorkdirs refuses a snapshot that gives an agent a workdir outside the run's work
// root: every workdir a run makes lies under it (a group's template is a name inside it, a
// sub-agent's a folder of its parent's), so one elsewhere means the snapshot was edited, and
// restoring it would have the agent's file tools write there. The snapshot is input like the
// rest of the state directory (its checksum is in state.db, which anyone who can write the
// directory can edit as well).
func checkSnapshotWorkdirs(agents *components.AgentsImage, root string) error {
	for i := range agents.Data {
		wd := agents.Data[i].Workdir
		if wd == "" {
			continue
		}
		rel, err := filepath.Rel(root, wd)
		if !filepath.IsAbs(wd) || err != nil || !filepath.IsLocal(rel) {
			return fmt.Errorf("%w: the world snapshot gives agent %s the workdir %q, outside the run's work root %s", state.ErrUnsafePath, agents.Data[i].Name, wd, root)
		}
	}
	return nil
}
