package systems

import (
	"time"

	"github.com/warrenhq/warren/components"
	"github.com/warrenhq/warren/ecs"
	"github.com/warrenhq/warren/inference"
	"github.com/warrenhq/warren/resources"
	"github.com/warrenhq/warren/tools"
)

// InferCollect applies model turns the model lane has finished, in canonical order, exactly as
// infer_dispatch applies inline turns.
type InferCollect struct {
	turnApplier
	// awaiting tells whether a result's agent still waits for it.
	awaiting ecs.Map[components.AwaitingInference]
	tools    *mover
	resolve  *mover
	terminal *mover
	inf      *resources.Inference
}

var _ ecs.System = (*InferCollect)(nil)

func init() {
	Register(Info{ID: IDPrefix + "infer_collect", Order: 40, New: func() ecs.System { return &InferCollect{} }})
}

// Name implements ecs.System.
func (*InferCollect) Name() string { return "infer_collect" }

// Initialize implements ecs.System.
func (s *InferCollect) Initialize(w *ecs.World) (err error) {
	if err := s.turnApplier.resolve(w); err != nil {
		return err
	}
	if s.inf, err = resources.Get[resources.Inference](w); err != nil {
		return err
	}
	s.maps = newAgentMaps(w)
	s.awaiting = ecs.NewMap[components.AwaitingInference](w)
	s.tools = newMover[components.AwaitingInference, components.ReadyForTools](w)
	s.resolve = newMover[components.AwaitingInference, components.ResolveTransition](w)
	s.terminal = newMover[components.AwaitingInference, components.Terminal](w)
	return nil
}

// Update implements ecs.System.
func (s *InferCollect) Update(w *ecs.World) {
	if s.lanes.Model == nil {
		return
	}
	tick := w.Tick()
	now := w.Clock().Now()
	for _, d := range s.lanes.Model.Collect() {
		o, _ := d.Value.(*modelOutcome)
		if o != nil && o.live != nil {
			s.recordLive(tick, o)
		}
		alive := w.Alive(d.Entity) && s.awaiting.Has(d.Entity)
		if o != nil && o.ticket != nil && s.finishLive(tick, now, o, d.Panic, alive) {
			continue // retried: the agent waits on
		}
		if !alive {
			continue // the agent ended while its model call ran
		}
		id := s.maps.identity.Get(d.Entity)
		cur := s.maps.cursor.Get(d.Entity)
		if work := &s.agents.Get(id.Slot).Work; work.Cancel != nil {
			work.Cancel() // the turn is back: its context (infer_dispatch) has served
			work.Ctx, work.Cancel = nil, nil
		}
		out := modelOutcome{panic: d.Panic}
		if d.Panic == "" {
			out = *d.Value.(*modelOutcome)
			_, _, slot := s.profiles.Get(id.Profile).ModelOf(cur.Stage)
			*s.agents.Get(id.Slot).ModelState(slot) = out.state
			s.maps.rng.Get(d.Entity).Source = out.source
		}
		switch s.apply(tick, d.Entity, id, cur, out) {
		case toTools:
			s.tools.add(d.Entity)
		case toResolve:
			s.resolve.add(d.Entity)
		default:
			s.terminal.add(d.Entity)
		}
	}
	w.Touch(s.tools.apply() + s.resolve.apply() + s.terminal.apply())
}

// recordLive writes an attempt at a live model's turn into the recording.
func (s *InferCollect) recordLive(tick uint64, o *modelOutcome) {
	m := *o.live
	toRecordedModel(&m, o)
	s.rec.Writer.Model(tick, m)
	if s.rec.Journal != nil {
		s.rec.Journal.Filed(resources.ModelEffect(m.Agent, m.Turn, m.Attempt))
	}
}

// finishLive ends an attempt at a live turn in the pool that sent it: the budget reservation is
// released, the pool's slot freed and its breaker told. It reports true when the pool retries the
// turn (the agent keeps waiting; the trace says why and for how long). Otherwise an answer is
// charged to the agent, its group, its tree and the run, at the sending pool's prices.
func (s *InferCollect) finishLive(tick uint64, now time.Time, o *modelOutcome, panicked string, alive bool) bool {
	t := o.ticket
	job := t.Value.(*liveJob)
	pool := job.sentFrom
	s.inf.ReservedTokens -= t.Estimate
	s.inf.ReservedCost -= job.reserved
	if panicked != "" {
		o.panic = panicked
	}
	outcome := liveOutcome(o, t)
	if !alive {
		outcome = inference.Outcome{Uncounted: true}
	}
	attempt := t.Attempt
	if pool.Finish(now, t, outcome) {
		id := s.maps.identity.Get(job.entity)
		d := s.agents.Get(id.Slot)
		d.Spend.Attempts++
		s.inf.Charge(job.group, job.root, job.modelID, components.Spend{Attempts: 1})
		p := s.profiles.Get(id.Profile)
		wait := max(t.NotBefore.Sub(now), 0)
		f, _ := attemptFailure(o.err)
		if tools.IsRealTime(o.err) {
			s.run.RealTimeLimits++
		}
		s.run.Trace.ModelRetry(tick, ref(id, d), p.Blueprint.Stages[s.maps.cursor.Get(job.entity).Stage].Name, t.Turn, attempt, pool.Name(), o.err.Error(), f.status, wait.Milliseconds())
		return true
	}
	if !alive || o.err != nil || o.panic != "" {
		return false
	}
	id := s.maps.identity.Get(job.entity)
	d := s.agents.Get(id.Slot)
	u := o.reply.Usage
	o.cost = int64(pool.Config().Prices.Cost(u))
	spend := components.Spend{Tokens: u, Cost: o.cost, Turns: 1, Attempts: 1}
	d.Spend.Add(spend)
	s.inf.Charge(job.group, job.root, job.modelID, spend)
	if !u.IsZero() {
		d.ContextTokens, d.ContextBytes = u.Total(), job.bytes
	}
	return false
}

// Finalize implements ecs.System.
func (*InferCollect) Finalize(*ecs.World) {}
