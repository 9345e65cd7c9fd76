package inference_test

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/warrenhq/warren/inference"
	"github.com/warrenhq/warren/internal/gobtest"
)

// poolSim drives a pool as the host does: turns join, admissions send what they can, answers come
// back (some failing, temporarily or not, some over their estimate), and keeps what it saw.
type poolSim struct {
	p        *inference.Pool
	inflight []*inference.Ticket
	seen     []string
}

func (s *poolSim) step(rng *rand.Rand, now time.Time, next *uint64) {
	for range rng.IntN(3) {
		*next++
		s.p.Enqueue(&inference.Ticket{Agent: *next, Turn: *next % 3, Estimate: int64(1 + rng.IntN(400)), Value: *next})
	}
	s.p.Admit(now, func(t *inference.Ticket) inference.Verdict {
		s.inflight = append(s.inflight, t)
		s.seen = append(s.seen, fmt.Sprintf("send %d#%d", t.Agent, t.Attempt))
		return inference.Send
	})
	for len(s.inflight) > 0 && rng.IntN(2) == 0 {
		i := rng.IntN(len(s.inflight))
		t := s.inflight[i]
		s.inflight = append(s.inflight[:i], s.inflight[i+1:]...)
		o := inference.Outcome{OK: rng.IntN(4) > 0, Temporary: rng.IntN(2) == 0, Jitter: rng.Float64(), Tokens: int64(rng.IntN(600))}
		if o.OK {
			o.Temporary = false
		}
		retried := s.p.Finish(now, t, o)
		s.seen = append(s.seen, fmt.Sprintf("finish %d ok=%v retried=%v", t.Agent, o.OK, retried))
	}
	at, ok := s.p.NextAt()
	s.seen = append(s.seen, fmt.Sprintf("next %v %v; %d in flight, %d queued, %s", at.UnixNano(), ok, s.p.InFlight(), s.p.Queued(), s.p.State()))
}

// TestPoolImageGoesOnAlike: a pool with both rate limits, retries and a breaker, driven through a
// seeded run and saved mid-way (through gob, as a snapshot stores it), is restored into a fresh
// pool of the same configuration, the tickets in flight made again by the host from their images;
// driven on alike, the restored pool sends, retries, opens its breaker and waits exactly as the
// original does.
func TestPoolImageGoesOnAlike(t *testing.T) {
	cfg := inference.Config{Name: "p", MaxConcurrency: 6, RequestsPerMinute: 90, TokensPerMinute: 9000,
		Retry:   inference.Retry{MaxAttempts: 3, Initial: time.Second, Max: 8 * time.Second, Multiplier: 2},
		Breaker: inference.Breaker{Failures: 4, Cooldown: 5 * time.Second}}
	var opened, waited, retried int
	for seed := range uint64(12) {
		src := rand.NewPCG(seed, 3)
		rng := rand.New(src)
		orig := &poolSim{p: inference.New([]inference.Config{cfg}, nil)[0]}
		now, next := t0, uint64(0)
		cut := 20 + rng.IntN(60)
		for range cut {
			now = now.Add(time.Duration(rng.IntN(1500)) * time.Millisecond)
			orig.step(rng, now, &next)
		}
		img, err := orig.p.Image(func(t *inference.Ticket) (any, error) { return t.Value, nil })
		if err != nil {
			t.Fatal(err)
		}
		img = gobtest.RoundTrip(t, img)
		back := &poolSim{p: inference.New([]inference.Config{cfg}, nil)[0]}
		if err := back.p.Restore(&img, func(_ *inference.Ticket, v any) (any, error) { return v, nil }); err != nil {
			t.Fatal(err)
		}
		for _, tk := range orig.inflight {
			ti := tk.Image(tk.Value)
			back.inflight = append(back.inflight, ti.Ticket(back.p, tk.Value))
		}
		if back.p.Stats() != orig.p.Stats() {
			t.Fatalf("seed %d: restored stats %+v, the original %+v", seed, back.p.Stats(), orig.p.Stats())
		}
		orig.seen, back.seen = nil, nil
		srcB := *src // the same draws from here on, for the original and the restored pool
		rngB := rand.New(&srcB)
		nowB, nextB := now, next
		for range 80 {
			now = now.Add(time.Duration(rng.IntN(1500)) * time.Millisecond)
			orig.step(rng, now, &next)
			nowB = nowB.Add(time.Duration(rngB.IntN(1500)) * time.Millisecond)
			back.step(rngB, nowB, &nextB)
		}
		if !reflect.DeepEqual(orig.seen, back.seen) {
			for i := range min(len(orig.seen), len(back.seen)) {
				if orig.seen[i] != back.seen[i] {
					t.Fatalf("seed %d, cut at step %d: at event %d the original %q, the restored %q", seed, cut, i, orig.seen[i], back.seen[i])
				}
			}
			t.Fatalf("seed %d: %d events against %d", seed, len(orig.seen), len(back.seen))
		}
		for _, e := range orig.seen {
			switch {
			case strings.HasSuffix(e, ", open"):
				opened++
			case strings.Contains(e, " true; "):
				waited++
			case strings.HasSuffix(e, "retried=true"):
				retried++
			}
		}
	}
	if opened == 0 || waited == 0 || retried == 0 {
		t.Fatalf("after the restores the breaker opened %d times, a pool waited on time %d times, turns were retried %d times: the run does not test them", opened, waited, retried)
	}
}

// TestPoolRestoreRefuses: an image restored into a pool of another name, or one in use, is
// refused with ErrPoolImage.
func TestPoolRestoreRefuses(t *testing.T) {
	p := inference.New([]inference.Config{{Name: "p", MaxConcurrency: 2}}, nil)[0]
	fill(p, 3, 1)
	admit(p, t0)
	img, err := p.Image(func(t *inference.Ticket) (any, error) { return nil, nil })
	if err != nil {
		t.Fatal(err)
	}
	other := inference.New([]inference.Config{{Name: "q", MaxConcurrency: 2}}, nil)[0]
	keep := func(_ *inference.Ticket, v any) (any, error) { return v, nil }
	if err := other.Restore(&img, keep); err == nil {
		t.Error("an image restored into another pool was taken")
	}
	if err := p.Restore(&img, keep); err == nil {
		t.Error("an image restored into a pool in use was taken")
	}
}
