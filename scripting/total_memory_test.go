package scripting

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
)

// blockingHost is a fakeHost whose callTool tells entered it is in, counts the calls inside at
// once, and returns when the test sends on release.
type blockingHost struct {
	fakeHost
	entered         chan struct{}
	release         chan struct{}
	inside, maxSeen atomic.Int64
}

func (h *blockingHost) CallTool(ctx context.Context, _ string, _ json.RawMessage) (string, error) {
	n := h.inside.Add(1)
	for {
		m := h.maxSeen.Load()
		if n <= m || h.maxSeen.CompareAndSwap(m, n) {
			break
		}
	}
	h.entered <- struct{}{}
	defer h.inside.Add(-1)
	select {
	case <-h.release:
		return "released", nil
	case <-ctx.Done():
		return "", context.Cause(ctx)
	}
}

// TestRunWideMemoryTotal: with a total of three calls' budgets, ten calls run three at a time
// (each holds its max_memory while it runs, so the fourth finds the total reserved and waits), all
// ten finish with the same results as ever, and a call left waiting is ended by its context, not
// stuck.
func TestRunWideMemoryTotal(t *testing.T) {
	const budget = 1 << 20
	e := NewEngine(Limits{MaxMemory: budget, MaxTotalMemory: 3 * budget})
	s := mustCompile(t, "wait.js", tool(`(args, host) => host.callTool("block", {}) + " " + args.n`))
	h := &blockingHost{entered: make(chan struct{}), release: make(chan struct{})}
	results := make([]string, 10)
	var wg sync.WaitGroup
	for i := range results {
		wg.Go(func() {
			out, err := e.Run(context.Background(), s, json.RawMessage(`{"n":`+strconv.Itoa(i)+`}`), h, fixedEnv())
			if err != nil {
				out = err.Error()
			}
			results[i] = out
		})
	}
	for range 3 {
		<-h.entered
	}
	if e.total.TryAcquire(1) {
		t.Fatal("three calls are running and the total still has room")
	}
	// A call that finds the total reserved waits, and its context ends the wait.
	ctx, cancel := context.WithCancel(context.Background())
	waited := make(chan error, 1)
	go func() {
		_, err := e.Run(ctx, s, json.RawMessage(`{"n":99}`), h, fixedEnv())
		waited <- err
	}()
	cancel()
	if err := <-waited; !errors.Is(err, context.Canceled) {
		t.Errorf("a waiting call cancelled: %v, want context.Canceled", err)
	}
	for range 7 {
		h.release <- struct{}{}
		<-h.entered
	}
	for range 3 {
		h.release <- struct{}{}
	}
	wg.Wait()
	if m := h.maxSeen.Load(); m != 3 {
		t.Errorf("%d calls ran at once, want 3", m)
	}
	for i, out := range results {
		if want := "released " + strconv.Itoa(i); out != want {
			t.Errorf("call %d: %q, want %q", i, out, want)
		}
	}
	if !e.total.TryAcquire(3 * budget) {
		t.Error("the calls did not give their reservations back")
	}
}

// TestNestedCallsReserveNothing: a script called through callTool while its caller holds the
// last of the total runs at once (it shares its caller's reservation) instead of waiting for it.
func TestNestedCallsReserveNothing(t *testing.T) {
	const budget = 1 << 20
	e := NewEngine(Limits{MaxMemory: budget, MaxTotalMemory: budget})
	inner := mustCompile(t, "inner.js", tool(`() => "inner ran"`))
	outer := mustCompile(t, "outer.js", tool(`(args, host) => "outer: " + host.callTool("inner", {})`))
	out, err := e.Run(context.Background(), outer, nil, &callingHost{engine: e, inner: inner}, fixedEnv())
	if err != nil || out != "outer: inner ran" {
		t.Fatalf("Run = %q, %v", out, err)
	}
}
