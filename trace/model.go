package trace

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/rs/zerolog"
)

// Kinds of the events of live model turns and inference pools.
const (
	// KindModelRetry is a failed attempt at a live model turn that will be tried again.
	KindModelRetry = "model_retry"
	// KindModelFallback is a live model turn moved to its pool's fallback pool.
	KindModelFallback = "model_fallback"
	// KindPoolBreaker is a pool's circuit breaker changing state, a world event.
	KindPoolBreaker = "pool_breaker"
)

// LiveTurn is what a model_turn event of a live model adds: the pool that sent its last attempt,
// how many attempts it took, and what the answer cost.
type LiveTurn struct {
	Pool     string
	Attempts uint32
	// Prompt, Completion, CacheRead and CacheWrite are the tokens the provider reported.
	Prompt, Completion, CacheRead, CacheWrite int64
	// Cost is their price in picodollars (0 when the pool sets no prices), written as an exact
	// decimal string of dollars: a trace holds no floats.
	Cost int64
	// Dropped counts the messages cut from the conversation sent, to fit the model's context
	// window (docs/models.md, "Context").
	Dropped int
}

// ModelRetry records a failed attempt (from 1) at an agent's live model turn, in pool, that will
// be sent again after waitMS milliseconds: its error, and the HTTP status when there was one.
func (w *Writer) ModelRetry(tick uint64, a AgentRef, stage string, turn uint64, attempt uint32, pool, err string, status int, waitMS int64) {
	e := w.begin(tick, a, KindModelRetry)
	if e == nil {
		return
	}
	e.Str("stage", stage).Uint64("turn", turn).Uint32("attempt", attempt).Str("pool", pool).Str("error", err)
	if status != 0 {
		e.Int("http_status", status)
	}
	e.Int64("wait_ms", waitMS).Msg("")
}

// ModelFallback records an agent's live model turn moving from one pool to its fallback, and why.
func (w *Writer) ModelFallback(tick uint64, a AgentRef, turn uint64, from, to, reason string) {
	e := w.begin(tick, a, KindModelFallback)
	if e == nil {
		return
	}
	e.Uint64("turn", turn).Str("from", from).Str("to", to).Str("reason", reason).Msg("")
}

// PoolBreaker records a pool's circuit breaker moving to state ("open", "half_open", "closed")
// after failures consecutive failed requests: a world event (agent 0).
func (w *Writer) PoolBreaker(tick uint64, pool, state string, failures int) {
	e := w.begin(tick, AgentRef{}, KindPoolBreaker)
	if e == nil {
		return
	}
	e.Str("pool", pool).Str("state", state).Int("failures", failures).Msg("")
}

// DollarsOf writes picodollars as an exact decimal number of dollars with no trailing zeros
// ("0.000042", "12.5", "0"), the way traces and summaries show money.
func DollarsOf(pico int64) string {
	neg := pico < 0
	if neg {
		pico = -pico
	}
	s := strconv.FormatInt(pico/1e12, 10)
	if frac := pico % 1e12; frac != 0 {
		f := strings.TrimRight(fmt.Sprintf("%012d", frac), "0")
		s += "." + f
	}
	if neg {
		s = "-" + s
	}
	return s
}

// Spent is what an agent's (a reap event's) or the run's (the end event's) live model turns cost,
// written only when they cost something: the tokens the providers reported (prompt and
// completion) and their price in picodollars, as a decimal string of dollars.
type Spent struct {
	Tokens int64
	Cost   int64
}

// append adds the spend's fields to e; nil or zero adds none, so runs without live models keep
// their traces.
func (s *Spent) append(e *zerolog.Event) {
	if s == nil || (s.Tokens == 0 && s.Cost == 0) {
		return
	}
	e.Int64("tokens", s.Tokens)
	if s.Cost != 0 {
		e.Str("cost_usd", DollarsOf(s.Cost))
	}
}
