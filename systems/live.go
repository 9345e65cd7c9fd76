package systems

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/warrenhq/warren/components"
	"github.com/warrenhq/warren/ecs"
	"github.com/warrenhq/warren/inference"
	"github.com/warrenhq/warren/models"
	"github.com/warrenhq/warren/recording"
	"github.com/warrenhq/warren/resources"
	"github.com/warrenhq/warren/trace"
)

// liveJob is a live model turn waiting in, or sent through, an inference pool: everything a send
// needs, taken when the agent asked, since the agent is parked until the answer comes back.
type liveJob struct {
	entity  ecs.Entity
	agent   string
	group   string
	root    uint64
	turn    uint64
	modelID string
	view    *models.View
	route   *resources.Route
	ctx     context.Context
	state   models.State
	source  rand.PCG
	latency uint64
	// bytes is the request's PromptBytes and prompt its token estimate, for the agent's next
	// estimate and the cost bound.
	bytes, prompt int64
	// reserved is the cost bound counted against the run's budget while the attempt is in flight.
	reserved inference.Cost
	// sentFrom is the pool the attempt in flight went out from.
	sentFrom *inference.Pool
	// dropped counts the messages cut from the conversation sent, to fit the context window;
	// copied says view.Messages is the request's own (pool_admit copies it at the first send).
	dropped int
	copied  bool
}

// ErrContextOverflow is a live turn whose conversation does not fit its model's context window:
// with context_overflow = "fail", or when even the task and the latest turn alone are too long.
var ErrContextOverflow = errors.New("the conversation outgrows the model's context window")

// cutContext applies the model's context rule to v: while the turn's prompt, as the tokens per
// byte the provider last counted for this agent estimate it (every byte a token before any count),
// and its completion cap pass the context window, the oldest whole turn goes (an assistant message
// with the tool results answering it, or a lone user or system message), keeping the task (the
// first message, when it is the user's) and the latest turn. It returns how many messages went and
// the PromptBytes of what is left.
func cutContext(v *models.View, spec models.LiveSpec, known inference.Context) (int, int64, error) {
	bytes := inference.PromptBytes(v, "")
	window := spec.ContextTokens
	if window <= 0 {
		return 0, bytes, nil
	}
	tokens := func(bytes int64) int64 {
		if known.Tokens > 0 && known.Bytes > 0 {
			return (bytes*known.Tokens + known.Bytes - 1) / known.Bytes
		}
		return bytes
	}
	if tokens(bytes)+spec.MaxTokens <= window {
		return 0, bytes, nil
	}
	if spec.ContextOverflow == models.ContextFail {
		return 0, bytes, fmt.Errorf("%w: about %d tokens with max_tokens %d, over context_tokens = %d (context_overflow = %q)",
			ErrContextOverflow, tokens(bytes), spec.MaxTokens, window, models.ContextFail)
	}
	msgs := v.Messages // the agent's conversation: never written here
	start := 0
	if len(msgs) > 0 && msgs[0].Role == models.RoleUser {
		start = 1 // the task stays
	}
	end := start // msgs[start:end] are the turns cut
	for tokens(bytes)+spec.MaxTokens > window {
		next := end + 1
		if next <= len(msgs) && msgs[end].Role == models.RoleAssistant {
			for next < len(msgs) && msgs[next].Role == models.RoleTool {
				next++
			}
		}
		if next >= len(msgs) {
			return 0, bytes, fmt.Errorf("%w: the task and the latest turn alone are about %d tokens with max_tokens %d, over context_tokens = %d",
				ErrContextOverflow, tokens(bytes), spec.MaxTokens, window)
		}
		for i := end; i < next; i++ {
			bytes -= inference.MessageBytes(&msgs[i])
		}
		end = next
	}
	cut := make([]models.Message, 0, len(msgs)-(end-start))
	v.Messages = append(append(cut, msgs[:start]...), msgs[end:]...)
	return end - start, bytes, nil
}

// queueLive parks an agent's live model turn in its model's pool. It returns false, having dealt
// with the agent, when the turn cannot be asked at all (the model cannot be routed, or the
// agent's token budget cannot cover the turn's worst case).
func (s *InferDispatch) queueLive(tick uint64, e ecs.Entity, id *components.Identity, cur *components.Cursor, p *components.Profile, d *components.AgentData, lm models.Live, modelID string, slot uint8, latency uint64) destination {
	route, err := s.inf.Route(modelID, lm)
	if err != nil {
		return s.apply(tick, e, id, cur, modelOutcome{err: err})
	}
	view := &models.View{}
	job := &liveJob{entity: e, agent: d.Name, group: p.Group, root: d.Root, turn: uint64(cur.Turn), modelID: modelID,
		view: view, route: route, state: *d.ModelState(slot), source: s.maps.rng.Get(e).Source, latency: latency}
	buildView(view, id, p, d, cur, rand.New(&job.source))
	// view.Messages is the agent's own conversation until the turn is sent (pool_admit copies it
	// then): a parked agent's conversation does not change, and a queued turn then costs no copy.
	if view.System, err = p.Blueprint.SystemFor(int(cur.Stage), view); err != nil {
		return s.apply(tick, e, id, cur, modelOutcome{err: fmt.Errorf("the stage's prompt: %w", err)})
	}
	known := inference.Context{Tokens: d.ContextTokens, Bytes: d.ContextBytes}
	dropped, bytes, err := cutContext(view, route.Spec, known)
	if err != nil {
		return s.apply(tick, e, id, cur, modelOutcome{err: err})
	}
	job.dropped, job.copied, job.bytes = dropped, dropped > 0, bytes
	job.prompt = min(known.Prompt(job.bytes), job.bytes) // both bound it; a cut makes the first loose
	estimate := inference.Estimate(job.prompt, route.Spec.MaxTokens)
	if limit := s.inf.Budgets.TokensPerAgent; limit > 0 && d.Spend.Tokens.Total()+estimate > limit {
		terminate(s.run.Trace, tick, id, d, s.maps.status.Get(e), p.Blueprint.Stages[cur.Stage].Name, components.Failed,
			"token budget: the next turn may use up to "+strconv.FormatInt(estimate, 10)+" tokens and the agent has used "+
				strconv.FormatInt(d.Spend.Tokens.Total(), 10)+" of limits.max_tokens_per_agent = "+strconv.FormatInt(limit, 10))
		return toTerminal
	}
	// The turn's context is the run's, cancelled as well when the agent is killed (kill.go cancels
	// d.Work) and once infer_collect has the answer back.
	ctx, cancel := context.WithCancel(s.run.Context)
	d.Work.Ctx, d.Work.Cancel = ctx, cancel
	job.ctx = ctx
	route.Pool.Enqueue(&inference.Ticket{Agent: id.ID, Turn: job.turn, Estimate: estimate, Value: job})
	return toAwait
}

// liveOutcome classifies a finished attempt for its pool.
func liveOutcome(o *modelOutcome, t *inference.Ticket) inference.Outcome {
	out := inference.Outcome{Jitter: jitter(t.Agent, t.Turn, t.Attempt)}
	switch {
	case o.panic != "":
		out.Uncounted = true
	case o.err == nil:
		out.OK = true
		out.Tokens = o.reply.Usage.Total()
	case errors.Is(o.err, context.Canceled):
		out.Uncounted = true
	default:
		f, ok := attemptFailure(o.err)
		if !ok {
			out.Uncounted = true // the host's own failure (a request it could not build) says nothing of the endpoint
			break
		}
		out.Temporary, out.RetryAfter = f.Temporary(), f.retryAfter
	}
	return out
}

// attemptFailure is what a failed attempt tells the retry policy and the recording, from a
// provider's error (models.ProviderError) or a replayed one; false for any other error.
func attemptFailure(err error) (recordedFailure, bool) {
	var pe *models.ProviderError
	if errors.As(err, &pe) {
		return recordedFailure{msg: pe.Error(), status: pe.Status, retryAfter: pe.RetryAfter, timeout: pe.Timeout}, true
	}
	var rf *recordedFailure
	if errors.As(err, &rf) {
		return *rf, true
	}
	return recordedFailure{}, false
}

// jitter is a fraction in [0, 1) for an attempt, the same in every run: a hash of who asked what.
func jitter(agent, turn uint64, attempt uint32) float64 {
	x := agent*0x9e3779b97f4a7c15 ^ turn*0xbf58476d1ce4e5b9 ^ uint64(attempt)*0x94d049bb133111eb
	x ^= x >> 31
	x *= 0xd6e8feb96a66a4d5
	x ^= x >> 29
	return float64(x>>11) / (1 << 53)
}

// recordedFailure is a failed attempt given back by a replay, with what the retry policy decided
// on when it was recorded.
type recordedFailure struct {
	msg        string
	status     int
	retryAfter time.Duration
	timeout    bool
}

func (f *recordedFailure) Error() string   { return f.msg }
func (f *recordedFailure) Temporary() bool { return models.Temporary(f.status, f.timeout) }
func (f *recordedFailure) RealTime() bool  { return f.timeout }

// fromRecordedModel is a recorded attempt as the outcome of a turn.
func fromRecordedModel(m recording.ModelTurn) *modelOutcome {
	out := &modelOutcome{reply: models.Reply{Text: m.Text}}
	for _, c := range m.Calls {
		out.reply.Calls = append(out.reply.Calls, models.ToolCall{ID: c.ID, Name: c.Name, Args: c.Args})
	}
	if u := m.Usage; u != nil {
		out.reply.Usage = models.Usage{Prompt: u.Prompt, Completion: u.Completion, CacheRead: u.CacheRead, CacheWrite: u.CacheWrite}
	}
	if m.Err != "" {
		out.err = &recordedFailure{msg: m.Err, status: m.Status, retryAfter: time.Duration(m.RetryAfterMS) * time.Millisecond, timeout: m.Timeout}
	}
	return out
}

// toRecordedModel fills what an attempt answered into its recording entry.
func toRecordedModel(m *recording.ModelTurn, o *modelOutcome) {
	m.Text = o.reply.Text
	for _, c := range o.reply.Calls {
		m.Calls = append(m.Calls, recording.ModelCall{ID: c.ID, Name: c.Name, Args: c.Args})
	}
	if u := o.reply.Usage; !u.IsZero() {
		m.Usage = &recording.Usage{Prompt: u.Prompt, Completion: u.Completion, CacheRead: u.CacheRead, CacheWrite: u.CacheWrite}
	}
	if o.err == nil {
		return
	}
	m.Err = o.err.Error()
	if f, ok := attemptFailure(o.err); ok {
		m.Status, m.RetryAfterMS, m.Timeout = f.status, f.retryAfter.Milliseconds(), f.timeout
	}
}

// liveTrace is what a live turn's model_turn event adds.
func liveTrace(o *modelOutcome) *trace.LiveTurn {
	if o.ticket == nil {
		return nil
	}
	u := o.reply.Usage
	return &trace.LiveTurn{Pool: o.pool, Attempts: o.ticket.Attempt, Prompt: u.Prompt, Completion: u.Completion,
		CacheRead: u.CacheRead, CacheWrite: u.CacheWrite, Cost: o.cost, Dropped: o.ticket.Value.(*liveJob).dropped}
}

// poolEvents writes what pools decide into the trace.
type poolEvents struct {
	run   *resources.Run
	clock *ecs.Clock
}

var _ inference.Events = poolEvents{}

// Breaker implements inference.Events.
func (e poolEvents) Breaker(p *inference.Pool, state inference.BreakerState, failures int) {
	e.run.Trace.PoolBreaker(e.clock.Tick(), p.Name(), state.String(), failures)
}

// FallBack implements inference.Events.
func (e poolEvents) FallBack(t *inference.Ticket, from, to *inference.Pool, reason string) {
	job := t.Value.(*liveJob)
	e.run.Trace.ModelFallback(e.clock.Tick(), trace.AgentRef{ID: t.Agent, Name: job.agent}, t.Turn, from.Name(), to.Name(), reason)
}
