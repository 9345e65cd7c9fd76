// Package inference is the host's inference pools: how the live model turns of many agents share
// an endpoint without overrunning it. A pool caps the requests in flight, paces requests and
// tokens per minute (golang.org/x/time/rate), retries what a retry may cure (429, 5xx, timeouts)
// honouring the provider's Retry-After, opens a circuit breaker after repeated failures, and hands
// its turns to a fallback pool when it cannot serve them.
//
// A pool is pure bookkeeping on the time it is given: it never reads a clock, sleeps or starts a
// goroutine. The host calls it from the world's goroutine with the world clock's time, so in
// virtual time every admission, back-off and breaker decision is a function of the run's inputs
// and replays exactly; in wall time the same code paces against the machine's clock, which the
// recording of a wall-clock run journals.
//
// The lifecycle of a turn: Enqueue when an agent asks its live model; Admit (each tick) sends the
// tickets the pool can send now; Finish when the answer or failure comes back, which says whether
// and when the ticket is retried. A ticket waiting in a pool costs nothing per tick.
package inference

import (
	"math"
	"time"

	"github.com/warrenhq/warren/models"
)

// DefaultMaxConcurrency is a pool's cap on requests in flight when its config sets none, and the
// cap of the implicit pool a live model gets when no configured pool serves it.
const DefaultMaxConcurrency = 8

// Config is one inference pool: [[inference_pools]] in the host config.
type Config struct {
	// Name identifies the pool in traces, recordings, the summary and fallback references.
	Name string
	// Endpoint, when set, is the base URL its models' requests go to instead of their own.
	Endpoint string
	// APIKeyEnv, when set, names the environment variable holding the pool's key.
	APIKeyEnv string
	// API, when set, is the wire format the endpoint speaks ("openai" or "anthropic"): a model of
	// another kind routed to the pool is an error, and host models check asks in this format.
	API string
	// Models are the provider model names the pool serves: a live model asking one of them goes
	// through this pool. A pool with none serves only as another's fallback.
	Models []string
	// MaxConcurrency caps the pool's requests in flight (DefaultMaxConcurrency when 0).
	MaxConcurrency int
	// RequestsPerMinute and TokensPerMinute pace the pool (0: no limit). Tokens are counted as
	// providers count them when they admit a request: the prompt's estimate plus the completion's
	// cap (see Estimate).
	RequestsPerMinute, TokensPerMinute int64
	// Retry says how failed attempts are retried.
	Retry Retry
	// Breaker says when the pool stops sending.
	Breaker Breaker
	// Fallback names the pool that serves this one's turns while its breaker is open, or once a
	// turn has failed every attempt here ("" for none).
	Fallback string
	// Prices are what the pool's tokens cost, for the summary and max_cost_usd.
	Prices Prices
	// Caps bound each answer the pool's endpoint sends (its bytes, its tool calls, a request's
	// time), tightening the model tables' own (models.Caps.Tighter); zero leaves them as they are.
	Caps models.Caps
	// Implicit marks the pool a live model gets when no configured pool serves it.
	Implicit bool
}

// Retry is a pool's retry policy. Only failures a retry may cure are retried
// (models.ProviderError.Temporary: 429, 408, 409, 5xx, timeouts, no response).
type Retry struct {
	// MaxAttempts is how many times one turn is sent to the pool, the first time included (1: no
	// retries).
	MaxAttempts int
	// Initial is the wait before the first retry; each later one waits Multiplier times longer, up
	// to Max. A Retry-After the provider sends wins when it is longer.
	Initial, Max time.Duration
	Multiplier   float64
}

// DefaultRetry is the retry policy of a pool that sets none.
var DefaultRetry = Retry{MaxAttempts: 3, Initial: time.Second, Max: 30 * time.Second, Multiplier: 2}

// Backoff is the wait before attempt (from 2) of a turn, before Retry-After is considered: the
// exponential step, scaled by jitter in [0.5, 1] (a fraction the caller draws deterministically, so
// that many agents refused at once do not all come back together).
func (r Retry) Backoff(attempt uint32, jitter float64) time.Duration {
	if attempt < 2 {
		return 0
	}
	d := float64(r.Initial) * math.Pow(r.Multiplier, float64(attempt-2))
	if m := float64(r.Max); d > m {
		d = m
	}
	return time.Duration(d * (0.5 + jitter/2))
}

// Breaker is a pool's circuit breaker: after Failures consecutive failed attempts the pool stops
// sending for Cooldown; then one request is let through, and its success closes the breaker again
// while its failure opens it for another Cooldown.
type Breaker struct {
	// Failures is the consecutive failures that open the breaker (0: no breaker).
	Failures int
	// Cooldown is how long it stays open.
	Cooldown time.Duration
}

// DefaultBreaker is the breaker of a pool that sets none.
var DefaultBreaker = Breaker{Failures: 5, Cooldown: 30 * time.Second}

// Prices are a pool's prices in US dollars per million tokens. Prompt tokens read from or written
// to the provider's cache are priced at CacheRead and CacheWrite, the rest of the prompt at Input.
type Prices struct {
	Input, Output, CacheRead, CacheWrite float64
}

// Zero reports whether the pool sets no prices (its turns cost nothing in the summary).
func (p Prices) Zero() bool { return p == Prices{} }

// Cost is an amount of money in picodollars (10⁻¹² US dollars): fine enough that a token priced
// at a hundredth of a dollar per million tokens counts, and an integer so that sums are exact and
// the same in every order.
type Cost int64

// USD is the cost in dollars.
func (c Cost) USD() float64 { return float64(c) / 1e12 }

// CostOf converts dollars to a Cost, rounding to the picodollar.
func CostOf(usd float64) Cost { return Cost(math.Round(usd * 1e12)) }

// perToken is a price per million tokens as picodollars per token.
func perToken(usdPerMillion float64) Cost { return Cost(math.Round(usdPerMillion * 1e6)) }

// Cost is what u costs at these prices.
func (p Prices) Cost(u models.Usage) Cost {
	plain := max(u.Prompt-u.CacheRead-u.CacheWrite, 0)
	return Cost(plain)*perToken(p.Input) + Cost(u.CacheRead)*perToken(p.CacheRead) +
		Cost(u.CacheWrite)*perToken(p.CacheWrite) + Cost(u.Completion)*perToken(p.Output)
}

// Bound is the most a turn estimated at prompt tokens with a completion cap of completion tokens
// can cost: every prompt token at the dearest prompt price, every completion token at Output.
func (p Prices) Bound(prompt, completion int64) Cost {
	dearest := max(p.Input, p.CacheRead, p.CacheWrite)
	return Cost(prompt)*perToken(dearest) + Cost(completion)*perToken(p.Output)
}
