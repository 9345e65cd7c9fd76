package inference

import (
	"math"
	"time"

	"github.com/gammazero/deque"
)

// Ticket is one live model turn in a pool: waiting to be sent, in flight, or waiting to be retried.
type Ticket struct {
	// Agent is the asking agent's id, for the order of things and for jitter.
	Agent uint64
	// Turn is the agent's model turn (from 0).
	Turn uint64
	// Attempt counts the times the turn was sent, over every pool (1 while the first attempt is in
	// flight); tries counts them in the current pool.
	Attempt uint32
	tries   int
	// Estimate is the tokens the turn may use at most (see Estimate), what the tokens-per-minute
	// limit and budgets count before it is sent.
	Estimate int64
	// NotBefore is when a retried ticket may be sent again.
	NotBefore time.Time
	// Pool is the pool the ticket is in now (a fallback moves it).
	Pool *Pool
	// Value is the host's: what to send when the ticket is admitted.
	Value any
}

// Verdict is what the host says of a ticket the pool could send now.
type Verdict uint8

const (
	// Send: the turn goes out (the host submits it); the pool counts it in flight.
	Send Verdict = iota
	// Drop: the turn will not be sent (its agent is gone, or a budget cannot cover it); the host
	// has dealt with its agent.
	Drop
)

// BreakerState is where a pool's circuit breaker stands.
type BreakerState uint8

const (
	// Closed: the pool sends.
	Closed BreakerState = iota
	// Open: the pool sends nothing until its cooldown ends.
	Open
	// HalfOpen: the cooldown ended, and one request is let through to see.
	HalfOpen
)

// String is "closed", "open" or "half_open", as traces say it.
func (s BreakerState) String() string {
	switch s {
	case Open:
		return "open"
	case HalfOpen:
		return "half_open"
	}
	return "closed"
}

// Stats are what a pool did, for the summary and benchmarks.
type Stats struct {
	// Sent counts attempts sent; Retried the attempts that were retries; FellBack the turns moved
	// to the fallback pool; Dropped the tickets the host dropped.
	Sent, Retried, FellBack, Dropped uint64
	// Failed counts failed attempts; BreakerOpened the times the breaker opened.
	Failed, BreakerOpened uint64
	// MaxInFlight is the most requests the pool had in flight at once.
	MaxInFlight int
	// FullSends counts the sends that left the pool at its cap. BusyPasses counts the admission
	// passes that found turns waiting, and BusyInFlight adds up the requests in flight at the end
	// of each: BusyInFlight / (BusyPasses × cap) is how full the pool stayed while turns waited.
	FullSends, BusyPasses, BusyInFlight uint64
}

// Events receives what a pool decides that a trace should show. Every method is called on the
// goroutine that called Admit or Finish.
type Events interface {
	// Breaker says the breaker moved to state after failures consecutive failures.
	Breaker(p *Pool, state BreakerState, failures int)
	// FallBack says t moves from one pool to another, and why.
	FallBack(t *Ticket, from, to *Pool, reason string)
}

// Pool is one inference pool's state. It is not safe for concurrent use: the host calls it from
// the world's goroutine only.
type Pool struct {
	cfg      Config
	fallback *Pool
	inflight int
	rpm, tpm *meter
	state    BreakerState
	failures int
	until    time.Time // when an open breaker half-opens
	probing  bool      // a half-open breaker's one request is in flight
	queue    deque.Deque[*Ticket]
	retries  []*Ticket // waiting out a back-off, in NotBefore order
	blocked  time.Time // when a rate limit next lets the head through (zero: not blocked by one)
	events   Events
	stats    Stats
}

// New makes the pools of cfgs (whose fallbacks name pools among them; the host config checked
// that they do and that no chain loops), reporting to events (nil: nowhere).
func New(cfgs []Config, events Events) []*Pool {
	pools := make([]*Pool, len(cfgs))
	byName := make(map[string]*Pool, len(cfgs))
	for i, c := range cfgs {
		if c.MaxConcurrency <= 0 {
			c.MaxConcurrency = DefaultMaxConcurrency
		}
		if c.Retry.MaxAttempts <= 0 {
			c.Retry = DefaultRetry
		}
		p := &Pool{cfg: c, events: events}
		if c.RequestsPerMinute > 0 {
			p.rpm = perMinute(c.RequestsPerMinute, 60)
		}
		if c.TokensPerMinute > 0 {
			p.tpm = perMinute(c.TokensPerMinute, 20)
		}
		pools[i], byName[c.Name] = p, p
	}
	for _, p := range pools {
		p.fallback = byName[p.cfg.Fallback]
	}
	return pools
}

// Config returns the pool's configuration, defaults filled in.
func (p *Pool) Config() Config { return p.cfg }

// Name is the pool's name.
func (p *Pool) Name() string { return p.cfg.Name }

// Fallback is the pool this one's turns fall back to (nil: none).
func (p *Pool) Fallback() *Pool { return p.fallback }

// Stats returns what the pool did so far.
func (p *Pool) Stats() Stats { return p.stats }

// InFlight is the pool's requests in flight now.
func (p *Pool) InFlight() int { return p.inflight }

// Queued is the tickets waiting to be sent, retries included.
func (p *Pool) Queued() int { return p.queue.Len() + len(p.retries) }

// State is the breaker's state.
func (p *Pool) State() BreakerState { return p.state }

// Enqueue puts a new turn at the back of the pool's queue.
func (p *Pool) Enqueue(t *Ticket) {
	t.Pool = p
	p.queue.PushBack(t)
}

// Pending reports whether the pool holds tickets not yet sent.
func (p *Pool) Pending() bool { return p.Queued() > 0 }

// Admit sends, in queue order, every ticket the pool can send at now, asking decide about each
// (which submits the ones it lets through). It stops at the first ticket the pool's cap, rate
// limits or breaker hold back, so that turns go out in the order they asked and a long queue costs
// only the tickets sent. Tickets whose back-off ended rejoin the front of the queue first.
func (p *Pool) Admit(now time.Time, decide func(*Ticket) Verdict) {
	p.blocked = time.Time{}
	if p.queue.Len() > 0 || (len(p.retries) > 0 && !p.retries[0].NotBefore.After(now)) {
		p.stats.BusyPasses++
		defer func() { p.stats.BusyInFlight += uint64(p.inflight) }()
	}
	n := 0
	for n < len(p.retries) && !p.retries[n].NotBefore.After(now) {
		n++
	}
	for i := n - 1; i >= 0; i-- {
		p.queue.PushFront(p.retries[i])
	}
	p.retries = append(p.retries[:0], p.retries[n:]...)
	for p.queue.Len() > 0 {
		t := p.queue.Front()
		if p.state == Open && !now.Before(p.until) {
			p.setState(HalfOpen)
		}
		if p.state == Open || (p.state == HalfOpen && p.probing) {
			if p.fallback == nil {
				return
			}
			p.queue.PopFront()
			p.moveTo(t, p.fallback, "the breaker of pool "+p.cfg.Name+" is "+p.state.String())
			continue
		}
		if p.inflight >= p.cfg.MaxConcurrency {
			return
		}
		est := t.Estimate
		if p.tpm != nil {
			est = min(est, int64(p.tpm.burst())) // a turn bigger than the bucket waits for a full one
		}
		if at, ok := p.wait(now, est); !ok {
			p.blocked = at
			return
		}
		p.queue.PopFront()
		if decide(t) == Drop {
			p.stats.Dropped++
			continue
		}
		if p.rpm != nil {
			p.rpm.reserve(now, 1)
		}
		if p.tpm != nil {
			p.tpm.charge(now, t.Estimate) // the whole estimate: past the bucket, the pool goes into debt
		}
		p.send(t)
	}
}

// wait reports whether the rate limits let a request of est tokens through at now, and if not,
// when they will.
func (p *Pool) wait(now time.Time, est int64) (time.Time, bool) {
	at := now
	for _, l := range [...]struct {
		lim *meter
		n   float64
	}{{p.rpm, 1}, {p.tpm, float64(est)}} {
		if l.lim == nil || l.n <= 0 {
			continue
		}
		if have := l.lim.tokensAt(now); have < l.n {
			d := time.Duration(math.Ceil((l.n - have) / float64(l.lim.limit()) * float64(time.Second)))
			if t := now.Add(d); t.After(at) {
				at = t
			}
		}
	}
	return at, !at.After(now)
}

// send counts t in flight.
func (p *Pool) send(t *Ticket) {
	t.Attempt++
	t.tries++
	if t.Attempt > 1 {
		p.stats.Retried++
	}
	p.inflight++
	p.stats.Sent++
	if p.inflight > p.stats.MaxInFlight {
		p.stats.MaxInFlight = p.inflight
	}
	if p.inflight == p.cfg.MaxConcurrency {
		p.stats.FullSends++
	}
	if p.state == HalfOpen {
		p.probing = true
	}
}

// moveTo hands t to pool to, its tries there starting afresh.
func (p *Pool) moveTo(t *Ticket, to *Pool, reason string) {
	p.stats.FellBack++
	if p.events != nil {
		p.events.FallBack(t, p, to, reason)
	}
	t.tries = 0
	t.NotBefore = time.Time{}
	to.Enqueue(t)
}

// Outcome is how an attempt ended, for Finish.
type Outcome struct {
	// OK marks an answer.
	OK bool
	// Temporary marks a failure a retry may cure (models.ProviderError.Temporary).
	Temporary bool
	// RetryAfter is the wait the provider asked for.
	RetryAfter time.Duration
	// Uncounted marks an attempt that says nothing of the endpoint (its agent was killed, the run
	// cancelled): neither the breaker nor the retry policy look at it.
	Uncounted bool
	// Tokens is what the answer used, when the provider said (prompt and completion): beyond the
	// estimate, it is charged to the tokens-per-minute limit too.
	Tokens int64
	// Jitter is a fraction in [0, 1) the host draws deterministically for this attempt.
	Jitter float64
}

// Finish ends t's attempt at now with o: the slot frees, the breaker counts it, and a failed
// attempt is retried (true: t is queued again, to go out no sooner than t.NotBefore, in this pool
// or its fallback) or given up (false: the failure is the turn's).
func (p *Pool) Finish(now time.Time, t *Ticket, o Outcome) (retried bool) {
	p.inflight--
	wasProbe := p.state == HalfOpen && p.probing
	if wasProbe {
		p.probing = false
	}
	if o.Tokens > t.Estimate && p.tpm != nil {
		p.tpm.charge(now, o.Tokens-t.Estimate)
	}
	switch {
	case o.Uncounted:
		return false
	case o.OK && (wasProbe || p.state == Closed):
		// Only the probe speaks for a half-open breaker; answers to requests sent before the
		// breaker opened say nothing of the endpoint now.
		p.failures = 0
		if wasProbe {
			p.setState(Closed)
		}
		return false
	case o.OK:
		return false
	}
	p.stats.Failed++
	if wasProbe || p.state == Closed {
		p.failures++
		if b := p.cfg.Breaker; b.Failures > 0 && (wasProbe || p.failures >= b.Failures) {
			p.until = now.Add(b.Cooldown)
			p.stats.BreakerOpened++
			p.setState(Open)
		}
	}
	if !o.Temporary {
		return false
	}
	if t.tries < p.cfg.Retry.MaxAttempts {
		wait := max(p.cfg.Retry.Backoff(uint32(t.tries+1), o.Jitter), o.RetryAfter)
		t.NotBefore = now.Add(wait)
		p.retry(t)
		return true
	}
	if p.fallback != nil {
		p.moveTo(t, p.fallback, "every attempt in pool "+p.cfg.Name+" failed")
		return true
	}
	return false
}

// retry queues t to wait out its back-off, keeping the retries in NotBefore order (a stable
// insertion, so equal times keep the order they failed in).
func (p *Pool) retry(t *Ticket) {
	i := len(p.retries)
	for i > 0 && p.retries[i-1].NotBefore.After(t.NotBefore) {
		i--
	}
	p.retries = append(p.retries, nil)
	copy(p.retries[i+1:], p.retries[i:])
	p.retries[i] = t
}

// setState moves the breaker, telling the events.
func (p *Pool) setState(s BreakerState) {
	p.state = s
	if p.events != nil {
		p.events.Breaker(p, s, p.failures)
	}
}

// NextAt is the earliest time after which Admit could send something the pool holds back now: a
// rate limit's refill, the end of a back-off or of the breaker's cooldown. false when nothing
// waits on time (the queue is empty, or it waits for requests in flight to come back).
func (p *Pool) NextAt() (time.Time, bool) {
	var at time.Time
	found := false
	consider := func(t time.Time) {
		if !t.IsZero() && (!found || t.Before(at)) {
			at, found = t, true
		}
	}
	if len(p.retries) > 0 {
		consider(p.retries[0].NotBefore)
	}
	if p.queue.Len() > 0 {
		consider(p.blocked)
		if p.state == Open && p.fallback == nil {
			consider(p.until)
		}
	}
	return at, found
}
