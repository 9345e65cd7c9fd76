package systems

import (
	"cmp"
	"slices"

	"github.com/warrenhq/warren/components"
	"github.com/warrenhq/warren/ecs"
	"github.com/warrenhq/warren/models"
	"github.com/warrenhq/warren/tools"
)

// backgroundJob is work a call left running (a background shell command) and the tick its report
// is due in the agent's inbox.
type backgroundJob struct {
	due    uint64
	entity ecs.Entity
	agent  uint64
	callID string
	work   tools.Detached
}

// backgroundJobs are the jobs not delivered yet, in the order their calls were filed.
type backgroundJobs struct{ pending []backgroundJob }

// add records a job; tool results are filed in canonical order, so the list is too.
func (b *backgroundJobs) add(j backgroundJob) { b.pending = append(b.pending, j) }

// Background delivers the reports of background commands. A command sent to the background by
// a call filed at tick t reports into its agent's inbox at the end of tick t+1, whatever the wall
// clock says: the system waits for the command to end (its timeout bounds the wait), as a tick
// waits for its lane jobs in virtual time, so a replay delivers every report at the same tick, in
// the same order (by agent, then call). It runs last in the tick, after reap: a job whose agent
// ended is dropped (reap's sandbox teardown killed the command), and the agent's next turn in a
// stage that accepts messages reads the report.
type Background struct {
	host     *Host
	identity ecs.Map[components.Identity]
	due      []backgroundJob
}

var _ ecs.System = (*Background)(nil)

// Name implements ecs.System.
func (*Background) Name() string { return "background" }

// Initialize implements ecs.System.
func (s *Background) Initialize(w *ecs.World) (err error) {
	if s.host, err = hostOf(w); err != nil {
		return err
	}
	s.identity = ecs.NewMap[components.Identity](w)
	return nil
}

// Update implements ecs.System.
func (s *Background) Update(w *ecs.World) {
	jobs := s.host.background
	if len(jobs.pending) == 0 {
		return
	}
	tick := w.Tick()
	s.due = resetScratch(s.due)
	kept := jobs.pending[:0]
	for _, j := range jobs.pending {
		if j.due <= tick {
			s.due = append(s.due, j)
		} else {
			kept = append(kept, j)
		}
	}
	clear(jobs.pending[len(kept):])
	jobs.pending = kept
	slices.SortStableFunc(s.due, func(a, b backgroundJob) int {
		return cmp.Or(cmp.Compare(a.due, b.due), cmp.Compare(a.agent, b.agent), cmp.Compare(a.callID, b.callID))
	})
	for _, j := range s.due {
		if !w.Alive(j.entity) || s.identity.Get(j.entity).ID != j.agent {
			continue
		}
		id := s.identity.Get(j.entity)
		d := s.host.Agents.Get(id.Slot)
		text := j.work.Report()
		d.Inbox = append(d.Inbox, models.Message{Role: models.RoleUser, Content: text})
		s.host.Trace.Message(tick, ref(id, d), ref(id, d), "background", text)
	}
	w.Touch(len(s.due) + len(jobs.pending))
}

// Finalize implements ecs.System.
func (*Background) Finalize(*ecs.World) {}
