package systems

import (
	"cmp"
	"slices"

	"github.com/warrenhq/warren/components"
	"github.com/warrenhq/warren/ecs"
	"github.com/warrenhq/warren/models"
	"github.com/warrenhq/warren/resources"
)

// Background delivers the reports of background commands. A command sent to the background by
// a call filed at tick t reports into its agent's inbox at the end of tick t+1, whatever the wall
// clock says: the system waits for the command to end (its timeout bounds the wait), as a tick
// waits for its lane jobs in virtual time, so a replay delivers every report at the same tick, in
// the same order (by agent, then call). It runs last in the tick, after reap: a job whose agent
// ended is dropped (reap's sandbox teardown killed the command), and the agent's next turn in a
// stage that accepts messages reads the report.
type Background struct {
	store
	jobs     *resources.Background
	rec      *resources.Recording
	identity ecs.Map[components.Identity]
	due      []resources.BackgroundJob
}

var _ ecs.System = (*Background)(nil)

func init() {
	Register(Info{ID: IDPrefix + "background", Order: 110, New: func() ecs.System { return &Background{} }})
}

// Name implements ecs.System.
func (*Background) Name() string { return "background" }

// Initialize implements ecs.System.
func (s *Background) Initialize(w *ecs.World) (err error) {
	if s.store, err = resolveStore(w); err != nil {
		return err
	}
	if s.jobs, err = resources.Get[resources.Background](w); err != nil {
		return err
	}
	if s.rec, err = resolveRecording(w); err != nil {
		return err
	}
	s.identity = ecs.NewMap[components.Identity](w)
	return nil
}

// Update implements ecs.System.
func (s *Background) Update(w *ecs.World) {
	jobs := s.jobs
	if len(jobs.Pending) == 0 {
		return
	}
	tick := w.Tick()
	s.due = resetScratch(s.due)
	kept := jobs.Pending[:0]
	for _, j := range jobs.Pending {
		if j.Due <= tick {
			s.due = append(s.due, j)
		} else {
			kept = append(kept, j)
		}
	}
	clear(jobs.Pending[len(kept):])
	jobs.Pending = kept
	slices.SortStableFunc(s.due, func(a, b resources.BackgroundJob) int {
		return cmp.Or(cmp.Compare(a.Due, b.Due), cmp.Compare(a.Agent, b.Agent), cmp.Compare(a.CallID, b.CallID))
	})
	for _, j := range s.due {
		if !w.Alive(j.Entity) || s.identity.Get(j.Entity).ID != j.Agent {
			continue
		}
		id := s.identity.Get(j.Entity)
		d := s.agents.Get(id.Slot)
		text := j.Work.Report()
		s.rec.Writer.Background(tick, d.Name, j.CallID, text)
		d.Inbox = append(d.Inbox, models.Message{Role: models.RoleUser, Content: text})
		s.run.Trace.Message(tick, ref(id, d), ref(id, d), "background", text)
	}
	w.Touch(len(s.due) + len(jobs.Pending))
}

// Finalize implements ecs.System.
func (*Background) Finalize(*ecs.World) {}
