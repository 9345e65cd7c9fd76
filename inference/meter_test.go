package inference

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/warrenhq/warren/internal/gobtest"
)

// TestMeterRestoresBitForBit: a rate limit's bucket driven through a seeded run of requests and
// over-estimates (into debt and back), saved at random moments and made again on a fresh bucket
// from its image (through gob, as a snapshot stores it), holds the same tokens to the bit at every
// later time and stays the same through every later reservation; the image stays short, since a
// full bucket forgets what came before.
func TestMeterRestoresBitForBit(t *testing.T) {
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 7))
		limit := int64(1 + rng.IntN(5000))
		orig := perMinute(limit, 20)
		now := time.Unix(1_700_000_000, 0).UTC()
		longest := 0
		for step := range 400 {
			now = now.Add(time.Duration(rng.IntN(3000)) * time.Millisecond)
			if rng.IntN(3) == 0 {
				orig.charge(now, int64(rng.IntN(int(limit)+1))) // an answer past its estimate: debt
			} else {
				orig.reserve(now, 1+rng.IntN(orig.burst()))
			}
			longest = max(longest, len(orig.ops))
			if step%37 != 0 {
				continue
			}
			back := perMinute(limit, 20)
			back.restore(gobtest.RoundTrip(t, orig.image()))
			for _, d := range []time.Duration{0, time.Millisecond, 1500 * time.Millisecond, time.Minute} {
				a, b := orig.tokensAt(now.Add(d)), back.tokensAt(now.Add(d))
				if math.Float64bits(a) != math.Float64bits(b) {
					t.Fatalf("seed %d step %d: restored bucket holds %v tokens at +%v, the original %v", seed, step, b, d, a)
				}
			}
			// The original and its copy go on alike.
			now = now.Add(time.Duration(rng.IntN(5000)) * time.Millisecond)
			n := 1 + rng.IntN(orig.burst())
			orig.reserve(now, n)
			back.reserve(now, n)
			if math.Float64bits(orig.tokensAt(now)) != math.Float64bits(back.tokensAt(now)) {
				t.Fatalf("seed %d step %d: the restored bucket parts ways with the original at the next reservation", seed, step)
			}
		}
		// A minute and a burst bound what the bucket can owe, so the image stays bounded.
		if longest > 4*int(limit)+100 {
			t.Errorf("seed %d: the image grew to %d reservations for a limit of %d a minute", seed, longest, limit)
		}
	}
}
