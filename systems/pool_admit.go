package systems

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"

	"github.com/warrenhq/warren/components"
	"github.com/warrenhq/warren/ecs"
	"github.com/warrenhq/warren/inference"
	"github.com/warrenhq/warren/models"
	"github.com/warrenhq/warren/recording"
	"github.com/warrenhq/warren/resources"
	"github.com/warrenhq/warren/trace"
)

// PoolAdmit sends the live model turns waiting in inference pools that the pools can send now:
// each pool in order, its queue in the order agents asked, until its cap in flight, a rate limit or
// its breaker holds the rest back. It runs after infer_collect, so a slot freed by an answer is
// filled in the same tick, and before the tick's barrier, so what it sends runs at once. A turn
// the run's token or cost budget cannot cover is not sent: its agent ends failed. The turns it
// sends run on the model lane; a replay answers them from the recording instead.
type PoolAdmit struct {
	store
	lanes    *resources.Lanes
	rec      *resources.Recording
	inf      *resources.Inference
	maps     agentMaps
	awaiting ecs.Map[components.AwaitingInference]
	terminal *mover
	clock    *ecs.Clock
	world    *ecs.World
	tick     uint64
	pool     *inference.Pool
}

var _ ecs.System = (*PoolAdmit)(nil)

func init() {
	Register(Info{ID: IDPrefix + "pool_admit", Order: 45, New: func() ecs.System { return &PoolAdmit{} }})
}

// Name implements ecs.System.
func (*PoolAdmit) Name() string { return "pool_admit" }

// Initialize implements ecs.System.
func (s *PoolAdmit) Initialize(w *ecs.World) (err error) {
	if s.store, err = resolveStore(w); err != nil {
		return err
	}
	if s.lanes, err = resources.Get[resources.Lanes](w); err != nil {
		return err
	}
	if s.rec, err = resolveRecording(w); err != nil {
		return err
	}
	if s.inf, err = resources.Get[resources.Inference](w); err != nil {
		return err
	}
	s.inf.Events = poolEvents{run: s.run, clock: w.Clock()}
	s.maps = newAgentMaps(w)
	s.awaiting = ecs.NewMap[components.AwaitingInference](w)
	s.terminal = newMover[components.AwaitingInference, components.Terminal](w)
	s.clock, s.world = w.Clock(), w
	return nil
}

// Update implements ecs.System.
func (s *PoolAdmit) Update(w *ecs.World) {
	if len(s.inf.Pools) == 0 {
		return
	}
	s.tick = w.Tick()
	now := s.clock.Now()
	for _, p := range s.inf.Pools {
		if p.Pending() {
			s.pool = p
			p.Admit(now, s.decide)
		}
	}
	s.pool = nil
	w.Touch(s.terminal.apply())
}

// decide sends t, or drops it when its agent is gone or a run budget cannot cover it.
func (s *PoolAdmit) decide(t *inference.Ticket) inference.Verdict {
	job := t.Value.(*liveJob)
	if !s.world.Alive(job.entity) || !s.awaiting.Has(job.entity) || job.ctx.Err() != nil {
		return inference.Drop // killed while it waited: nothing to send
	}
	model := job.route.Model(s.pool)
	maxTokens := model.Spec().MaxTokens
	bound := s.pool.Config().Prices.Bound(job.prompt, maxTokens)
	b := s.inf.Budgets
	switch {
	case b.TokensPerRun > 0 && s.inf.Run.Tokens.Total()+s.inf.ReservedTokens+t.Estimate > b.TokensPerRun:
		s.refuse(job, "token budget: the run has used "+itoa(s.inf.Run.Tokens.Total())+" tokens, turns in flight may use "+
			itoa(s.inf.ReservedTokens)+", and this turn up to "+itoa(t.Estimate)+", past limits.max_tokens_per_run = "+itoa(b.TokensPerRun))
		return inference.Drop
	case b.CostPerRun > 0 && inference.Cost(s.inf.Run.Cost)+s.inf.ReservedCost+bound > b.CostPerRun:
		s.refuse(job, "cost budget: the run has spent $"+trace.DollarsOf(s.inf.Run.Cost)+", turns in flight may spend $"+
			trace.DollarsOf(int64(s.inf.ReservedCost))+", and this turn up to $"+trace.DollarsOf(int64(bound))+", past limits.max_cost_usd = "+trace.DollarsOf(int64(b.CostPerRun)))
		return inference.Drop
	}
	if !job.copied {
		// The conversation is the agent's own until now; the request reads it on a lane worker,
		// while a kill could reap the agent, so the request gets its own copy.
		job.view.Messages = slices.Clone(job.view.Messages)
		job.copied = true
	}
	s.inf.ReservedTokens += t.Estimate
	s.inf.ReservedCost += bound
	job.reserved, job.sentFrom = bound, s.pool
	s.lanes.Model.Submit(s.tick, ecs.Job{Agent: t.Agent, Entity: job.entity, Latency: job.latency,
		Run: s.sendWork(s.tick, t.Attempt+1, t, job, model), Recipe: &liveSend{tick: s.tick, ticket: t}})
	return inference.Send
}

// liveSend is what a live send waiting for a model-lane slot was made from: its tick and its
// ticket (whose Value is its liveJob), for a snapshot of the lane.
type liveSend struct {
	tick   uint64
	ticket *inference.Ticket
}

// sendWork is the work of attempt of t's turn, sent at tick from job.sentFrom: the recorded or
// journaled answer when the run replays or resumes one, else the model asked (under the effect
// journal when the run has a state directory).
func (s *PoolAdmit) sendWork(tick uint64, attempt uint32, t *inference.Ticket, job *liveJob, model models.Live) func() any {
	var asked *recording.ModelTurn
	var answered *modelOutcome
	if s.rec.Tape != nil || s.rec.Writer != nil {
		asked = &recording.ModelTurn{Agent: job.agent, Turn: job.turn, Attempt: attempt, Model: job.modelID, Pool: job.sentFrom.Name(),
			Request: liveRequest(s.rec.Tape, job.modelID, model, job.view)}
		if s.rec.Tape != nil {
			m, err := s.rec.Tape.Model(tick, job.agent, job.turn, attempt, asked.Request)
			switch {
			case err == nil:
				answered = fromRecordedModel(m)
			case s.rec.Tape.Resuming():
				answered = s.resumed(job, attempt)
			default:
				s.rec.Fail(err)
				answered = &modelOutcome{err: err}
			}
			if s.rec.Writer == nil {
				asked = nil // a replay records nothing; a resumed run records what it replays
			}
		}
	}
	var journal resources.EffectJournal
	key := resources.ModelEffect(job.agent, job.turn, attempt)
	if answered == nil && asked != nil {
		journal = s.rec.Journal
	}
	pool := job.sentFrom.Name()
	ctx, runCtx := job.ctx, s.run.Context
	return func() any {
		var out modelOutcome
		switch {
		case answered != nil:
			out = *answered
		case journal != nil:
			// A live request spends money: journaled as an intent before it goes and with its
			// answer after, so that a resume gives back an answer the run paid for.
			if err := journal.Intent(key, tick, nil); err != nil {
				out = modelOutcome{err: fmt.Errorf("the request was not sent: the state directory could not journal it: %w", err)}
				break
			}
			st := job.state
			out = callModel(ctx, model, &st, job.view)
			var raw []byte
			if runCtx.Err() == nil {
				m := *asked
				toRecordedModel(&m, &out)
				raw, _ = json.Marshal(m)
			}
			journal.Done(key, tick, raw)
		default:
			st := job.state
			out = callModel(ctx, model, &st, job.view)
		}
		out.state, out.source, out.live, out.ticket, out.pool = job.state, job.source, asked, t, pool
		return &out
	}
}

// resumed is the outcome of an attempt a resumed run's committed recording does not have: the
// journaled answer when the run before the crash got one, else nil (the attempt is sent: a
// request that was in flight is sent again, since asking a model changes nothing but the bill).
func (s *PoolAdmit) resumed(job *liveJob, attempt uint32) *modelOutcome {
	action, journaled := s.rec.Resume.Decide(resources.ModelEffect(job.agent, job.turn, attempt),
		fmt.Sprintf("%s model turn %d attempt %d", job.agent, job.turn, attempt), true, true)
	if action != resources.ServeJournaled {
		return nil
	}
	var m recording.ModelTurn
	if err := json.Unmarshal(journaled, &m); err != nil {
		err = fmt.Errorf("the effect journal's answer to %s's model turn %d does not read: %w", job.agent, job.turn, err)
		s.rec.Fail(err)
		return &modelOutcome{err: err}
	}
	return fromRecordedModel(m)
}

// refuse ends the agent of a turn no budget can cover.
func (s *PoolAdmit) refuse(job *liveJob, reason string) {
	e := job.entity
	id := s.maps.identity.Get(e)
	d := s.agents.Get(id.Slot)
	p := s.profiles.Get(id.Profile)
	if d.Work.Cancel != nil {
		d.Work.Cancel()
		d.Work.Ctx, d.Work.Cancel = nil, nil
	}
	terminate(s.run.Trace, s.tick, id, d, s.maps.status.Get(e), p.Blueprint.Stages[s.maps.cursor.Get(e).Stage].Name, components.Failed, reason)
	s.terminal.add(e)
}

// Finalize implements ecs.System.
func (*PoolAdmit) Finalize(*ecs.World) {}

// itoa is strconv.FormatInt in base 10, for reasons.
func itoa(n int64) string { return strconv.FormatInt(n, 10) }
