package inference_test

import (
	"strings"
	"testing"
	"time"

	"github.com/warrenhq/warren/inference"
	"github.com/warrenhq/warren/models"
)

var t0 = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// events keeps what a pool reported, one line each.
type events struct{ lines []string }

func (e *events) Breaker(p *inference.Pool, s inference.BreakerState, failures int) {
	e.lines = append(e.lines, p.Name()+" "+s.String())
}
func (e *events) FallBack(t *inference.Ticket, from, to *inference.Pool, reason string) {
	e.lines = append(e.lines, "fallback "+from.Name()+" -> "+to.Name()+": "+reason)
}

func fill(p *inference.Pool, n int, estimate int64) []*inference.Ticket {
	ts := make([]*inference.Ticket, n)
	for i := range ts {
		ts[i] = &inference.Ticket{Agent: uint64(i + 1), Estimate: estimate}
		p.Enqueue(ts[i])
	}
	return ts
}

// admit runs Admit at now, sending everything, and returns the agents sent in order.
func admit(p *inference.Pool, now time.Time) []uint64 {
	var sent []uint64
	p.Admit(now, func(t *inference.Ticket) inference.Verdict {
		sent = append(sent, t.Agent)
		return inference.Send
	})
	return sent
}

func TestConcurrencyCapKeepsOrder(t *testing.T) {
	p := inference.New([]inference.Config{{Name: "p", MaxConcurrency: 4}}, nil)[0]
	ts := fill(p, 10, 100)
	if got := admit(p, t0); len(got) != 4 || got[0] != 1 || got[3] != 4 {
		t.Fatalf("first admission sent %v, want agents 1-4", got)
	}
	if got := admit(p, t0); len(got) != 0 {
		t.Fatalf("a full pool sent %v", got)
	}
	p.Finish(t0, ts[1], inference.Outcome{OK: true})
	p.Finish(t0, ts[0], inference.Outcome{OK: true})
	if got := admit(p, t0); len(got) != 2 || got[0] != 5 || got[1] != 6 {
		t.Fatalf("after two came back, sent %v, want 5, 6", got)
	}
	if s := p.Stats(); s.MaxInFlight != 4 || s.Sent != 6 || p.InFlight() != 4 || p.Queued() != 4 {
		t.Fatalf("stats %+v, in flight %d, queued %d", s, p.InFlight(), p.Queued())
	}
	if _, ok := p.NextAt(); ok {
		t.Fatal("a pool waiting on its requests in flight says it waits on time")
	}
}

// TestRateLimitsHoldInEveryMinute sends as fast as the limits allow for ten minutes, answers
// coming back at once, and checks that no 60-second window saw more than the limit while the pool
// kept close to it.
func TestRateLimitsHoldInEveryMinute(t *testing.T) {
	for _, tc := range []struct {
		name     string
		cfg      inference.Config
		estimate int64
		perMin   int // the most sends any minute may see
		pace     int // the sends a minute the limit allows in the long run
	}{
		{"requests per minute", inference.Config{RequestsPerMinute: 120}, 10, 120, 120},
		{"one request a minute", inference.Config{RequestsPerMinute: 1}, 10, 1, 1},
		// Tokens are charged when a turn is sent, a whole estimate even past the bucket: a minute may
		// see the limit and one turn more.
		{"tokens per minute", inference.Config{TokensPerMinute: 6000}, 1000, 7, 6},
		{"both: the tighter decides", inference.Config{RequestsPerMinute: 120, TokensPerMinute: 3000}, 100, 31, 30},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.cfg.Name, tc.cfg.MaxConcurrency = "p", 1000
			p := inference.New([]inference.Config{tc.cfg}, nil)[0]
			fill(p, 100_000, tc.estimate)
			var sends []time.Duration
			for now := t0; now.Before(t0.Add(10 * time.Minute)); now = now.Add(100 * time.Millisecond) {
				var sent []*inference.Ticket
				p.Admit(now, func(tk *inference.Ticket) inference.Verdict {
					sends = append(sends, now.Sub(t0))
					sent = append(sent, tk)
					return inference.Send
				})
				for _, tk := range sent {
					p.Finish(now, tk, inference.Outcome{OK: true, Tokens: tk.Estimate})
				}
			}
			for i := range sends {
				n := 0
				for j := i; j < len(sends) && sends[j]-sends[i] < time.Minute; j++ {
					n++
				}
				if n > tc.perMin {
					t.Fatalf("%d sends in the minute from %v, over %d", n, sends[i], tc.perMin)
				}
			}
			if least := 10 * tc.pace * 9 / 10; len(sends) < least {
				t.Fatalf("%d sends in ten minutes, want at least %d: the pool does not keep up with its limit", len(sends), least)
			}
		})
	}
}

// TestRateLimitNextAt: a pool its rate limit holds back says when it can send again.
func TestRateLimitNextAt(t *testing.T) {
	p := inference.New([]inference.Config{{Name: "p", MaxConcurrency: 100, RequestsPerMinute: 61}}, nil)[0]
	fill(p, 10, 1)
	if got := admit(p, t0); len(got) != 1 {
		t.Fatalf("sent %d, want the burst of one", len(got))
	}
	at, ok := p.NextAt()
	if !ok || at.Sub(t0) != time.Second {
		t.Fatalf("next at t0+%v (%v), want t0+1s (60 refilled per minute)", at.Sub(t0), ok)
	}
	if got := admit(p, at.Add(-time.Millisecond)); len(got) != 0 {
		t.Fatal("sent before the refill")
	}
	if got := admit(p, at); len(got) != 1 {
		t.Fatalf("sent %d at the refill, want 1", len(got))
	}
}

// TestTokensPerMinuteChargesOverruns: an answer that used more than its estimate is charged the
// difference, so the limit holds over a window even when estimates are low.
func TestTokensPerMinuteChargesOverruns(t *testing.T) {
	next := func(overrun bool) time.Duration {
		p := inference.New([]inference.Config{{Name: "p", MaxConcurrency: 10, TokensPerMinute: 1200}}, nil)[0]
		ts := fill(p, 2, 100)
		admit(p, t0)
		used := int64(100)
		if overrun {
			used = 300
		}
		p.Finish(t0, ts[0], inference.Outcome{OK: true, Tokens: used})
		p.Finish(t0, ts[1], inference.Outcome{OK: true, Tokens: 100})
		fill(p, 1, 100)
		admit(p, t0)
		at, _ := p.NextAt()
		return at.Sub(t0)
	}
	if plain, over := next(false), next(true); over <= plain {
		t.Fatalf("the next send waits %v after an overrun, %v without: the overrun was not charged", over, plain)
	}
}

func TestRetry(t *testing.T) {
	p := inference.New([]inference.Config{{Name: "p", MaxConcurrency: 2,
		Retry: inference.Retry{MaxAttempts: 3, Initial: time.Second, Max: 4 * time.Second, Multiplier: 2}}}, nil)[0]
	ts := fill(p, 3, 1)
	admit(p, t0)
	// A 429 asking for 5s waits 5s, longer than the back-off's 1s.
	if !p.Finish(t0, ts[0], inference.Outcome{Temporary: true, RetryAfter: 5 * time.Second}) {
		t.Fatal("a temporary failure was not retried")
	}
	if got := admit(p, t0); len(got) != 1 || got[0] != 3 {
		t.Fatalf("the freed slot went to %v, want the next in the queue (3) while 1 backs off", got)
	}
	if at, ok := p.NextAt(); !ok || at != t0.Add(5*time.Second) {
		t.Fatalf("next at %v, want t0+5s", at)
	}
	p.Finish(t0, ts[1], inference.Outcome{OK: true})
	if got := admit(p, t0.Add(4*time.Second)); len(got) != 0 {
		t.Fatalf("a retry went out before its Retry-After: %v", got)
	}
	if got := admit(p, t0.Add(5*time.Second)); len(got) != 1 || got[0] != 1 || ts[0].Attempt != 2 {
		t.Fatalf("sent %v (attempt %d), want agent 1's second attempt", got, ts[0].Attempt)
	}
	// Without Retry-After, the back-off: 2s (×jitter in [0.5,1]) before the third attempt.
	now := t0.Add(5 * time.Second)
	if !p.Finish(now, ts[0], inference.Outcome{Temporary: true, Jitter: 0.999999}) {
		t.Fatal("second failure not retried")
	}
	if at, _ := p.NextAt(); at.Sub(now).Round(time.Millisecond) != 2*time.Second {
		t.Fatalf("back-off %v, want 2s", at.Sub(now))
	}
	admit(p, now.Add(2*time.Second))
	if p.Finish(now, ts[0], inference.Outcome{Temporary: true}) {
		t.Fatal("a third failure was retried past max_attempts = 3")
	}
	ts2 := fill(p, 1, 1)
	admit(p, now)
	if p.Finish(now, ts2[0], inference.Outcome{}) {
		t.Fatal("a failure no retry can cure (400) was retried")
	}
}

func TestBreaker(t *testing.T) {
	ev := &events{}
	p := inference.New([]inference.Config{{Name: "p", MaxConcurrency: 10,
		Retry: inference.Retry{MaxAttempts: 1}, Breaker: inference.Breaker{Failures: 2, Cooldown: 10 * time.Second}}}, ev)[0]
	ts := fill(p, 6, 1)
	admit(p, t0)
	p.Finish(t0, ts[0], inference.Outcome{Temporary: true})
	if p.State() != inference.Closed {
		t.Fatal("one failure opened the breaker")
	}
	p.Finish(t0, ts[1], inference.Outcome{Temporary: true})
	if p.State() != inference.Open {
		t.Fatal("two consecutive failures left it closed")
	}
	fill(p, 3, 1)
	if got := admit(p, t0.Add(9*time.Second)); len(got) != 0 {
		t.Fatalf("an open breaker sent %v", got)
	}
	if at, ok := p.NextAt(); !ok || at != t0.Add(10*time.Second) {
		t.Fatalf("next at %v, want the end of the cooldown", at)
	}
	for _, tk := range ts[2:] { // sent before it opened: they say nothing of the endpoint now
		p.Finish(t0, tk, inference.Outcome{OK: true})
	}
	if p.State() != inference.Open {
		t.Fatal("an answer to a request sent before the breaker opened closed it")
	}
	probe := admit(p, t0.Add(10*time.Second))
	if len(probe) != 1 || p.State() != inference.HalfOpen {
		t.Fatalf("a half-open breaker sent %v, want one probe", probe)
	}
	if got := admit(p, t0.Add(10*time.Second)); len(got) != 0 {
		t.Fatal("a second request went out while the probe was in flight")
	}
	if p.State() != inference.HalfOpen {
		t.Fatal("answers to requests sent before the breaker opened closed it")
	}
}

// TestBreakerProbe: the half-open probe's success closes the breaker, its failure reopens it.
func TestBreakerProbe(t *testing.T) {
	for _, ok := range []bool{true, false} {
		ev := &events{}
		p := inference.New([]inference.Config{{Name: "p", MaxConcurrency: 10,
			Retry: inference.Retry{MaxAttempts: 1}, Breaker: inference.Breaker{Failures: 1, Cooldown: time.Second}}}, ev)[0]
		first := fill(p, 1, 1)
		admit(p, t0)
		p.Finish(t0, first[0], inference.Outcome{Temporary: true})
		rest := fill(p, 3, 1)
		admit(p, t0.Add(time.Second))
		p.Finish(t0.Add(time.Second), rest[0], inference.Outcome{OK: ok, Temporary: !ok})
		want := "p open,p half_open,p closed"
		if !ok {
			want = "p open,p half_open,p open"
		}
		if got := strings.Join(ev.lines, ","); got != want {
			t.Fatalf("probe ok=%v: breaker went %s, want %s", ok, got, want)
		}
	}
}

func TestFallback(t *testing.T) {
	ev := &events{}
	pools := inference.New([]inference.Config{
		{Name: "main", MaxConcurrency: 4, Fallback: "backup", Retry: inference.Retry{MaxAttempts: 2, Initial: time.Second, Max: time.Second, Multiplier: 1},
			Breaker: inference.Breaker{Failures: 3, Cooldown: time.Minute}},
		{Name: "backup", MaxConcurrency: 4},
	}, ev)
	main, backup := pools[0], pools[1]
	ts := fill(main, 1, 1)
	admit(main, t0)
	main.Finish(t0, ts[0], inference.Outcome{Temporary: true})
	admit(main, t0.Add(time.Second))
	if !main.Finish(t0.Add(time.Second), ts[0], inference.Outcome{Temporary: true}) || ts[0].Pool != backup || backup.Queued() != 1 {
		t.Fatalf("a turn that failed every attempt did not move to the fallback (pool %s)", ts[0].Pool.Name())
	}
	if got := admit(backup, t0.Add(time.Second)); len(got) != 1 || ts[0].Attempt != 3 {
		t.Fatalf("the fallback sent %v, attempt %d, want the turn's third attempt", got, ts[0].Attempt)
	}
	// A third failure opens main's breaker: what waits there moves to the fallback.
	more := fill(main, 2, 1)
	admit(main, t0.Add(time.Second))
	main.Finish(t0.Add(time.Second), more[0], inference.Outcome{})
	fill(main, 2, 1)
	if got := admit(main, t0.Add(2*time.Second)); len(got) != 0 || main.State() != inference.Open || backup.Queued() != 2 {
		t.Fatalf("sent %v, state %v, backup queue %d", got, main.State(), backup.Queued())
	}
	if !strings.Contains(strings.Join(ev.lines, "\n"), "fallback main -> backup: the breaker of pool main is open") {
		t.Fatalf("events %q", ev.lines)
	}
}

func TestDrop(t *testing.T) {
	p := inference.New([]inference.Config{{Name: "p", MaxConcurrency: 2}}, nil)[0]
	fill(p, 4, 1)
	var sent []uint64
	p.Admit(t0, func(tk *inference.Ticket) inference.Verdict {
		if tk.Agent%2 == 1 {
			return inference.Drop
		}
		sent = append(sent, tk.Agent)
		return inference.Send
	})
	if len(sent) != 2 || sent[0] != 2 || sent[1] != 4 || p.Stats().Dropped != 2 || p.InFlight() != 2 {
		t.Fatalf("sent %v, stats %+v", sent, p.Stats())
	}
}

func TestCost(t *testing.T) {
	prices := inference.Prices{Input: 0.15, Output: 0.60, CacheRead: 0.075, CacheWrite: 0.1875}
	u := models.Usage{Prompt: 1_000_000, Completion: 500_000, CacheRead: 200_000, CacheWrite: 100_000}
	// 700k plain × 0.15 + 200k × 0.075 + 100k × 0.1875 + 500k × 0.60 per million
	want := inference.CostOf(0.105 + 0.015 + 0.01875 + 0.30)
	if got := prices.Cost(u); got != want {
		t.Fatalf("cost %v, want %v", got.USD(), want.USD())
	}
	if b := prices.Bound(1000, 100); b != inference.CostOf(1000*0.1875/1e6+100*0.60/1e6) {
		t.Fatalf("bound %v", b.USD())
	}
}

func TestEstimate(t *testing.T) {
	v := &models.View{System: "be brief", Messages: []models.Message{{Role: models.RoleUser, Content: "count the files"}},
		Tools: []models.ToolInfo{{Name: "list_dir", Description: "Lists.", Parameters: []byte(`{"type":"object"}`)}}}
	b := inference.PromptBytes(v, "sys")
	if want := int64(3 + 8 + 8 + 15 + 8 + 8 + 6 + 17 + 8); b != want {
		t.Fatalf("bytes %d, want %d", b, want)
	}
	c := inference.Context{}
	if c.Prompt(b) != b {
		t.Fatal("a first turn is estimated by its bytes")
	}
	c = inference.Context{Tokens: 40, Bytes: b}
	if got := c.Prompt(b + 100); got != 140 {
		t.Fatalf("after a turn: %d, want the 40 counted + 100 bytes added", got)
	}
	if inference.Estimate(140, 256) != 396 {
		t.Fatal("estimate adds the completion cap")
	}
}
