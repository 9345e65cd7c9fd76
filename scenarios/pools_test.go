package scenarios_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/warrenhq/warren"
	"github.com/warrenhq/warren/components"
	"github.com/warrenhq/warren/internal/fakellm"
	"github.com/warrenhq/warren/internal/testenv"
	"github.com/warrenhq/warren/models"
	"github.com/warrenhq/warren/trace"
)

// liveScenario writes a one-stage scenario of n agents whose model is the openai kind at url,
// with extra TOML (a [host] table with pools, [limits]) appended, and loads it.
func liveScenario(t testing.TB, url string, n int, modelExtra, extra string) *warren.Scenario {
	t.Helper()
	dir := t.TempDir()
	mustWrite(t, filepath.Join(dir, "asker.toml"), `
name = "asker"
description = "Asks once or twice."
[[stages]]
name = "ask"
available_tools = ["write_file"]
max_iterations = 20
`)
	path := filepath.Join(dir, "live.toml")
	mustWrite(t, path, fmt.Sprintf(`
name = "pools"
seed = 3
[blueprints]
asker = "asker.toml"
[models.live]
kind = "openai"
model = "fake-1"
base_url = %q
%s
[[groups]]
name = "askers"
count = %d
blueprint = "asker"
model = "live"
task = "say something, {{ .Name }}"
%s
`, url, modelExtra, n, extra))
	sc, err := warren.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

func startFake(t testing.TB, script fakellm.Script) *fakellm.Server {
	t.Helper()
	srv, err := fakellm.Start(script)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	return srv
}

// events returns the trace's events of kind.
func events(t *testing.T, tr []byte, kind string) []map[string]any {
	t.Helper()
	_, evs, err := trace.ReadAll(bytes.NewReader(tr))
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for _, raw := range evs {
		var e map[string]any
		if err := json.Unmarshal(raw, &e); err != nil {
			t.Fatal(err)
		}
		if e["kind"] == kind {
			out = append(out, e)
		}
	}
	return out
}

// TestPoolRetriesHonourRetryAfter: a 429 with Retry-After is retried by the host after the wait
// the provider asked for (in virtual time, two ticks of one second), every attempt shows in the
// trace and the recording, and the recording replays with the provider gone.
func TestPoolRetriesHonourRetryAfter(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]int{}
	srv := startFake(t, func(n int, req fakellm.Request) fakellm.Reply {
		mu.Lock()
		defer mu.Unlock()
		who := req.Messages[len(req.Messages)-1].Content
		seen[who]++
		if seen[who] == 1 {
			return fakellm.Reply{Status: 429, RetryAfter: "2"}
		}
		return fakellm.Reply{Text: "done", Usage: fakellm.Usage{Prompt: 20, Completion: 3}}
	})
	sc := liveScenario(t, srv.URL, 3, "", `
[[host.inference_pools]]
name = "fake"
models = ["fake-1"]
max_concurrency = 2
retry = { max_attempts = 3, initial_backoff = "1s", max_backoff = "1s" }
`)
	tr, tape := recordRun(t, sc, warren.Options{})
	retries := events(t, tr, "model_retry")
	if len(retries) != 3 {
		t.Fatalf("%d model_retry events, want one per agent", len(retries))
	}
	for _, e := range retries {
		if e["pool"] != "fake" || e["http_status"] != float64(429) || e["wait_ms"] != float64(2000) || e["attempt"] != float64(1) {
			t.Fatalf("retry %v: want pool fake, status 429, the 2000 ms Retry-After asked", e)
		}
	}
	turns := events(t, tr, "model_turn")
	for _, e := range turns {
		if e["attempts"] != float64(2) || e["prompt_tokens"] != float64(20) || e["pool"] != "fake" {
			t.Fatalf("turn %v: want 2 attempts through pool fake, 20 prompt tokens", e)
		}
		retry := retries[0]
		for _, r := range retries {
			if r["agent"] == e["agent"] {
				retry = r
			}
		}
		if got := e["tick"].(float64) - retry["tick"].(float64); got < 2 {
			t.Fatalf("agent %v answered %v ticks after its 429, want the 2 s (2 ticks) it was asked to wait", e["agent"], got)
		}
	}
	if n := len(tape.Models()); n != 6 {
		t.Fatalf("the recording keeps %d attempts, want 6", n)
	}
	srv.Close()
	replayed, sum, err := replayRun(t, tape, "")
	if err != nil || !bytes.Equal(tr, replayed) {
		t.Fatalf("replay: %v\n%s", err, traceDiff(t, tr, replayed))
	}
	if sum.Spend.Tokens.Total() != 69 || sum.Spend.Turns != 3 || sum.Spend.Attempts != 6 {
		t.Fatalf("spend %+v, want 3 turns of 23 tokens over 6 attempts", sum.Spend)
	}
}

// TestPoolBreakerAndFallback: a pool whose endpoint always fails opens its breaker, and its turns
// go to the fallback pool, whose endpoint answers; the trace says so.
func TestPoolBreakerAndFallback(t *testing.T) {
	broken := startFake(t, func(int, fakellm.Request) fakellm.Reply { return fakellm.Reply{Status: 500} })
	backup := startFake(t, func(int, fakellm.Request) fakellm.Reply {
		return fakellm.Reply{Text: "from the backup", Usage: fakellm.Usage{Prompt: 10, Completion: 2}}
	})
	sc := liveScenario(t, broken.URL, 6, "", fmt.Sprintf(`
[[host.inference_pools]]
name = "main"
models = ["fake-1"]
max_concurrency = 1
fallback = "backup"
retry = { max_attempts = 1 }
breaker = { failures = 2, cooldown = "1m" }
prices = { input = 1.0, output = 2.0 }
[[host.inference_pools]]
name = "backup"
endpoint = %q
`, backup.URL))
	var tr bytes.Buffer
	sum, err := warren.Run(t.Context(), sc, warren.Options{Trace: &tr})
	if err == nil && sum.ByStatus[components.Done] != 6 {
		t.Fatalf("summary %+v", sum)
	}
	if err != nil {
		t.Fatal(err)
	}
	if b := events(t, tr.Bytes(), "pool_breaker"); len(b) == 0 || b[0]["pool"] != "main" || b[0]["state"] != "open" {
		t.Fatalf("breaker events %v", b)
	}
	falls := events(t, tr.Bytes(), "model_fallback")
	if len(falls) != 6 || !strings.Contains(falls[0]["reason"].(string), "every attempt in pool main failed") ||
		!strings.Contains(falls[len(falls)-1]["reason"].(string), "the breaker of pool main is open") {
		t.Fatalf("fallback events %v", falls)
	}
	if len(broken.Requests()) != 2 || len(backup.Requests()) != 6 {
		t.Fatalf("the broken endpoint saw %d requests (want 2: the breaker stops the rest), the backup %d", len(broken.Requests()), len(backup.Requests()))
	}
	for _, e := range events(t, tr.Bytes(), "model_turn") {
		if e["pool"] != "backup" || e["cost_usd"] != nil {
			t.Fatalf("turn %v: want the backup pool, which sets no prices", e)
		}
	}
}

// TestBudgetsStopBeforeTheOverrun: a run budget stops turns whose worst case could pass it, so
// the tokens spent never exceed it; an agent budget ends the agent with a reason naming it.
func TestBudgetsStopBeforeTheOverrun(t *testing.T) {
	srv := startFake(t, func(n int, req fakellm.Request) fakellm.Reply {
		return fakellm.Reply{ToolCalls: []fakellm.ToolCall{{ID: fmt.Sprintf("c%d", n), Name: "write_file", Arguments: `{"path":"a.md","content":"x"}`}},
			Usage: fakellm.Usage{Prompt: 150, Completion: 50}}
	})
	for _, tc := range []struct {
		name, limits string
		reason       string
		check        func(t *testing.T, s *warren.Summary)
	}{
		{"run tokens", "max_tokens_per_run = 2000", "past limits.max_tokens_per_run = 2000", func(t *testing.T, s *warren.Summary) {
			if s.Spend.Tokens.Total() > 2000 {
				t.Fatalf("spent %d tokens, over the budget", s.Spend.Tokens.Total())
			}
		}},
		{"agent tokens", "max_tokens_per_agent = 1000", "limits.max_tokens_per_agent = 1000", func(t *testing.T, s *warren.Summary) {
			for _, r := range s.Records {
				if r.Spend.Tokens.Total() > 1000 {
					t.Fatalf("%s spent %d tokens", r.Name, r.Spend.Tokens.Total())
				}
			}
		}},
		{"run cost", "max_cost_usd = 0.002", "past limits.max_cost_usd = 0.002", func(t *testing.T, s *warren.Summary) {
			if s.Spend.Cost > int64(2e9) {
				t.Fatalf("spent $%s", warren.Dollars(s.Spend.Cost))
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc := liveScenario(t, srv.URL, 4, "max_tokens = 100", `
[host.tool_permissions]
write_file = "allow"
[[host.inference_pools]]
name = "fake"
models = ["fake-1"]
prices = { input = 1.0, output = 1.0 }
[limits]
`+tc.limits)
			sum, err := warren.Run(t.Context(), sc, warren.Options{})
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, sum)
			failed := 0
			for _, r := range sum.Records {
				if r.Status == components.Failed {
					failed++
					if !strings.Contains(r.Reason, tc.reason) {
						t.Fatalf("%s failed with %q, want the budget named", r.Name, r.Reason)
					}
				}
			}
			if failed != 4 || sum.Spend.Turns == 0 {
				t.Fatalf("%d agents failed after %d turns, want every agent stopped by the budget after some turns", failed, sum.Spend.Turns)
			}
		})
	}
}

// TestBudgetNeedsMaxTokens: a budget over a live model with no cap on its answers is a load error.
func TestBudgetNeedsMaxTokens(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "b.toml")
	mustWrite(t, path, `
name = "b"
[limits]
max_tokens_per_run = 1000
[models.live]
kind = "openai"
model = "m"
base_url = "http://127.0.0.1:1/v1"
[[groups]]
name = "g"
count = 1
blueprint = "bp"
model = "live"
[blueprints]
bp = "bp.toml"
`)
	mustWrite(t, filepath.Join(dir, "bp.toml"), "name = \"bp\"\ndescription = \"x\"\n[[stages]]\nname = \"s\"\n")
	_, err := warren.Load(path)
	if err == nil || !strings.Contains(err.Error(), "b.toml:5") || !strings.Contains(err.Error(), "needs max_tokens") {
		t.Fatalf("err = %v, want the model's line and max_tokens asked for", err)
	}
}

// TestPoolWallClock: under the wall clock a pool paces against the machine's time (a 50 ms
// Retry-After is waited in real time), and the recorded run replays to the same trace.
func TestPoolWallClock(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]int{}
	srv := startFake(t, func(n int, req fakellm.Request) fakellm.Reply {
		mu.Lock()
		defer mu.Unlock()
		who := req.Messages[len(req.Messages)-1].Content
		if seen[who]++; seen[who] == 1 {
			return fakellm.Reply{Status: 503, RetryAfter: "0.05"}
		}
		return fakellm.Reply{Text: "done", Usage: fakellm.Usage{Prompt: 20, Completion: 3}}
	})
	sc := liveScenario(t, srv.URL, 3, "", `
[clock]
mode = "wall"
tick = "10ms"
[[host.inference_pools]]
name = "fake"
models = ["fake-1"]
retry = { max_attempts = 2, initial_backoff = "1ms", max_backoff = "1ms" }
`)
	start := time.Now()
	tr, tape := recordRun(t, sc, warren.Options{})
	if took := time.Since(start); took < 50*time.Millisecond {
		t.Fatalf("the run took %v: the Retry-After of 50 ms was not waited", took)
	}
	if n := len(events(t, tr, "model_retry")); n != 3 {
		t.Fatalf("%d retries, want 3", n)
	}
	srv.Close()
	replayed, _, err := replayRun(t, tape, "")
	if err != nil || !bytes.Equal(tr, replayed) {
		t.Fatalf("replay: %v\n%s", err, traceDiff(t, tr, replayed))
	}
}

// TestPoolLimitsHoldAtScale: 10⁴ agents share one pool. With a cap of 16, the server never serves
// more than 16 requests at once and does serve 16 (the pool stays full while turns wait); with a
// requests-per-minute limit, no 60-tick window (a virtual minute) sees more requests than it.
func TestPoolLimitsHoldAtScale(t *testing.T) {
	skipUnderRace(t)
	if testing.Short() {
		t.Skip("10⁴ live turns over loopback; -short skips it")
	}
	agents := 10_000
	if testenv.Race {
		agents = 1_000 // the property holds at this size too; the plain run checks the full one
	}
	t.Run("cap", func(t *testing.T) {
		// The first 16 requests are held until all 16 are in, so the server sees the pool's cap
		// however loaded the machine is; a pool that sent fewer at once fails the wait.
		full := make(chan struct{})
		var arrived atomic.Int32
		srv := startFake(t, func(n int, _ fakellm.Request) fakellm.Reply {
			if n <= 16 {
				if arrived.Add(1) == 16 {
					close(full)
				}
				select {
				case <-full:
				case <-time.After(20 * time.Second):
					return fakellm.Reply{Status: 400} // fails the turn: the pool never had 16 out
				}
			}
			return fakellm.Reply{Text: "ok", Delay: time.Millisecond, Usage: fakellm.Usage{Prompt: 10, Completion: 1}}
		})
		sc := liveScenario(t, srv.URL, agents, "", `
[[host.inference_pools]]
name = "shared"
models = ["fake-1"]
max_concurrency = 16
`)
		sum, err := warren.Run(t.Context(), sc, warren.Options{})
		if err != nil || sum.ByStatus[components.Done] != agents {
			t.Fatalf("run: %v, %d done", err, sum.ByStatus[components.Done])
		}
		if got := srv.MaxInFlight(); got != 16 {
			t.Fatalf("the server served up to %d requests at once, want the pool's cap, 16", got)
		}
		st := sum.Pools[0].Stats
		if st.Sent != uint64(agents) || st.MaxInFlight != 16 || st.FullSends < uint64(agents/16*9/10) {
			t.Fatalf("pool %+v: want every send of a tick to fill the pool", st)
		}
	})
	t.Run("requests per minute", func(t *testing.T) {
		srv := startFake(t, func(int, fakellm.Request) fakellm.Reply {
			return fakellm.Reply{Text: "ok", Usage: fakellm.Usage{Prompt: 10, Completion: 1}}
		})
		const rpm = 1200
		sc := liveScenario(t, srv.URL, agents, "", fmt.Sprintf(`
[[host.inference_pools]]
name = "paced"
models = ["fake-1"]
max_concurrency = 64
requests_per_minute = %d
`, rpm))
		var tr bytes.Buffer
		sum, err := warren.Run(t.Context(), sc, warren.Options{Trace: &tr})
		if err != nil || sum.ByStatus[components.Done] != agents {
			t.Fatalf("run: %v, %d done", err, sum.ByStatus[components.Done])
		}
		// A turn is sent one tick (the model latency) before its answer: count sends per tick.
		sent := map[int]int{}
		last := 0
		for _, e := range events(t, tr.Bytes(), "model_turn") {
			tick := int(e["tick"].(float64)) - 1
			sent[tick]++
			last = max(last, tick)
		}
		window := 0
		for tick := 0; tick <= last; tick++ {
			window += sent[tick] - sent[tick-60]
			if window > rpm {
				t.Fatalf("the 60 ticks up to %d saw %d requests, over requests_per_minute = %d", tick, window, rpm)
			}
		}
		if minutes := float64(last) / 60; minutes > float64(agents)/rpm*1.1+1 {
			t.Fatalf("%d turns took %.1f virtual minutes: the pool fell well behind its limit", agents, minutes)
		}
	})
}

// TestLiveTimeoutAndKill: a request that hangs past the model's timeout is a real-time limit,
// retried by its pool and recorded; under the wall clock, a live child whose request hangs is
// killed by its parent's kill_agent, its request cancelled at the server at once (no waiting out
// the timeout). (In virtual time a tick's requests finish before the next tick, so a kill finds
// the answer in and drops it.)
func TestLiveTimeoutAndKill(t *testing.T) {
	t.Run("timeout", func(t *testing.T) {
		var calls atomic.Int32
		srv := startFake(t, func(int, fakellm.Request) fakellm.Reply {
			if calls.Add(1) == 1 {
				return fakellm.Reply{Hang: true}
			}
			return fakellm.Reply{Text: "late but here"}
		})
		// The hung request waits out the whole timeout; the retry's answer must come inside it
		// on a loaded machine too (100 ms did not, in CI).
		sc := liveScenario(t, srv.URL, 1, `timeout = "3s"`, "")
		tr, tape := recordRun(t, sc, warren.Options{})
		retries := events(t, tr, "model_retry")
		if len(retries) != 1 || !strings.Contains(retries[0]["error"].(string), "no answer in time") {
			t.Fatalf("retries %v, want the timed-out attempt retried", retries)
		}
		srv.Close()
		replayed, sum, err := replayRun(t, tape, "")
		if err != nil || !bytes.Equal(tr, replayed) || sum.RealTimeLimits != 1 {
			t.Fatalf("replay: %v (real-time limits %d)\n%s", err, sum.RealTimeLimits, traceDiff(t, tr, replayed))
		}
	})
	t.Run("kill", func(t *testing.T) {
		srv := startFake(t, func(int, fakellm.Request) fakellm.Reply { return fakellm.Reply{Hang: true} })
		dir := t.TempDir()
		mustWrite(t, filepath.Join(dir, "boss.toml"), `
name = "boss"
description = "Spawns a live child, then kills it."
[[stages]]
name = "run"
available_tools = ["spawn_agent", "kill_agent", "demo__slow"]
max_iterations = 10
`)
		path := filepath.Join(dir, "kill.toml")
		mustWrite(t, path, fmt.Sprintf(`
name = "kill-live"
[clock]
mode = "wall"
tick = "10ms"
[host.tool_permissions]
demo__slow = "allow"
[[host.mcp_servers]]
name = "demo"
command = "@demo"
args = ["--name", "demo", "--log-level", "warn"]
tools = ["slow"]
[blueprints]
boss = "boss.toml"
[spawn.boss]
model = "live"
[models.live]
kind = "openai"
model = "fake-1"
base_url = %q
timeout = "1h"
[models.root]
kind = "scripted"
  [[models.root.turns]]
    [[models.root.turns.calls]]
    tool = "spawn_agent"
    args = { blueprint = "boss", task = "hang" }
  [[models.root.turns]]
    [[models.root.turns.calls]]
    tool = "demo__slow"
    args = { ms = 1500 }
  [[models.root.turns]]
    [[models.root.turns.calls]]
    tool = "kill_agent"
    args = { id = "{{.Name}}/1" }
  [[models.root.turns]]
  text = "done"
[[groups]]
name = "root"
blueprint = "boss"
model = "root"
count = 1
`, srv.URL))
		sc, err := warren.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		sum, err := warren.Run(t.Context(), sc, warren.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if took := time.Since(start); took > 30*time.Second {
			t.Fatalf("the run took %v: the killed child's request was not cancelled", took)
		}
		var child components.FinalRecord
		for _, r := range sum.Records {
			if r.Parent != 0 {
				child = r
			}
		}
		if child.Status != components.Killed || sum.ByStatus[components.Done] != 1 || srv.InFlight() != 0 || len(srv.Requests()) != 1 {
			t.Fatalf("child %+v, done %d, still in flight at the server %d, requests %d", child, sum.ByStatus[components.Done], srv.InFlight(), len(srv.Requests()))
		}
	})
}

// TestAnthropicScenario runs a whole scenario on the anthropic kind through a pool, against the
// fake's Messages API half: tool use, cache reads and writes counted in the summary, the key in no
// trace, recording or log, and the recording replayed with the provider gone.
func TestAnthropicScenario(t *testing.T) {
	srv := startFake(t, func(n int, req fakellm.Request) fakellm.Reply {
		if req.Wire != fakellm.WireAnthropic || !req.Authorized {
			return fakellm.Reply{Status: 400}
		}
		if last := req.Messages[len(req.Messages)-1]; strings.Contains(last.Content, "Wrote") {
			return fakellm.Reply{Text: "Written.", Usage: fakellm.Usage{Prompt: 300, Completion: 4, Cached: 200}}
		}
		return fakellm.Reply{ToolCalls: []fakellm.ToolCall{{ID: "toolu_1", Name: "write_file", Arguments: `{"path":"a.md","content":"hi"}`}},
			Usage: fakellm.Usage{Prompt: 250, Completion: 20, CacheWrite: 200}}
	})
	t.Setenv("WARREN_TEST_CLAUDE_KEY", "sk-ant-secret-7")
	dir := t.TempDir()
	mustWrite(t, filepath.Join(dir, "w.toml"), "name = \"w\"\ndescription = \"Writes.\"\n[[stages]]\nname = \"write\"\navailable_tools = [\"write_file\"]\n")
	path := filepath.Join(dir, "claude.toml")
	mustWrite(t, path, fmt.Sprintf(`
name = "claude"
[blueprints]
w = "w.toml"
[host.tool_permissions]
write_file = "allow"
[[host.inference_pools]]
name = "anthropic"
api = "anthropic"
models = ["fake-claude"]
prices = { input = 3.0, output = 15.0, cache_read = 0.3, cache_write = 3.75 }
[models.claude]
kind = "anthropic"
model = "fake-claude"
base_url = %q
api_key_env = "WARREN_TEST_CLAUDE_KEY"
[[groups]]
name = "writers"
count = 2
blueprint = "w"
model = "claude"
task = "write a.md, {{.Name}}"
`, srv.AnthropicURL))
	sc, err := warren.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	var rec bytes.Buffer
	tr, tape := recordRun(t, sc, warren.Options{Record: &rec, Log: zerolog.New(&logs).Level(zerolog.DebugLevel)})
	for name, out := range map[string][]byte{"trace": tr, "recording": rec.Bytes(), "log": logs.Bytes()} {
		if bytes.Contains(out, []byte("sk-ant-secret-7")) {
			t.Fatalf("the key reached the %s", name)
		}
	}
	srv.Close()
	replayed, sum, err := replayRun(t, tape, "")
	if err != nil || !bytes.Equal(tr, replayed) {
		t.Fatalf("replay: %v\n%s", err, traceDiff(t, tr, replayed))
	}
	want := models.Usage{Prompt: 1100, Completion: 48, CacheRead: 400, CacheWrite: 400}
	if sum.ByStatus[components.Done] != 2 || sum.Spend.Tokens != want || sum.Spend.Cost == 0 {
		t.Fatalf("done %d, spend %+v, want tokens %+v", sum.ByStatus[components.Done], sum.Spend, want)
	}
}
