package scenarios_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/warrenhq/warren"
	"github.com/warrenhq/warren/components"
	"github.com/warrenhq/warren/internal/fakellm"
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
