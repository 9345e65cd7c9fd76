package inference

import (
	"math"
	"time"

	"golang.org/x/time/rate"
)

// meter is a rate limit's token bucket (golang.org/x/time/rate) that can be saved and rebuilt bit
// for bit. The limiter's state is a private float of tokens (in debt after an over-estimate) and
// the time it last moved; no setter restores a float exactly. But a bucket that is full at a time
// has forgotten everything before it (its refill is clamped to the burst), so the meter keeps the
// reservations made since the bucket was last found full, and a fresh limiter that makes them
// again, in order, ends in the same state to the bit: the same float operations on the same
// values.
type meter struct {
	lim *rate.Limiter
	ops []Reservation
}

// Reservation is one reservation a rate limit made: n tokens at At.
type Reservation struct {
	At time.Time
	N  int
}

// perMinute is a token bucket that lets at most limit through in any minute: its burst is a
// 1/parts share of the limit (at least 1) and it refills the rest over the minute, so a full
// bucket plus a minute's refill is the limit (for a limit of 1, one in any half-open minute).
// Requests take a second's share as burst and tokens three seconds' share, so a pool starts at its
// pace and keeps 95 to 98% of its limit in the long run.
func perMinute(limit int64, parts int64) *meter {
	burst := max(limit/parts, 1)
	refill := max(limit-burst, 1)
	return &meter{lim: rate.NewLimiter(rate.Limit(float64(refill)/60), int(min(burst, math.MaxInt32)))}
}

// reserve takes n tokens at now (n at most the burst).
func (m *meter) reserve(now time.Time, n int) {
	if m.lim.TokensAt(now) >= float64(m.lim.Burst()) {
		m.ops = m.ops[:0] // full: what came before no longer matters
	}
	m.lim.ReserveN(now, n)
	m.ops = append(m.ops, Reservation{At: now, N: n})
}

// charge takes n tokens at now, into debt when the bucket holds fewer (a reservation takes at
// most a full bucket, so n is taken a bucket at a time): later sends then wait it out.
func (m *meter) charge(now time.Time, n int64) {
	for b := int64(m.lim.Burst()); n > 0; n -= b {
		m.reserve(now, int(min(n, b)))
	}
}

// tokensAt is the tokens the bucket holds at t (negative: in debt).
func (m *meter) tokensAt(t time.Time) float64 { return m.lim.TokensAt(t) }

// burst is the bucket's size.
func (m *meter) burst() int { return m.lim.Burst() }

// limit is the bucket's refill, in tokens per second.
func (m *meter) limit() rate.Limit { return m.lim.Limit() }

// image is the reservations that make the bucket's state again.
func (m *meter) image() []Reservation { return append([]Reservation(nil), m.ops...) }

// restore makes the reservations of img again on m's fresh bucket.
func (m *meter) restore(img []Reservation) {
	for _, r := range img {
		m.reserve(r.At, r.N)
	}
}
