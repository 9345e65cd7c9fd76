package mcp_test

import (
	"sync"
	"testing"
	"time"

	"github.com/warrenhq/warren/mcp"
	"github.com/warrenhq/warren/tools"
)

// TestCallTimeoutCountsOnlyTheServer: call_timeout bounds the server's answer, from the moment
// the request goes out, never the time a call waits for a free slot of the session behind other
// agents' calls: that wait is the host's queueing (how many workers, how loaded the machine), and
// a limit that counted it would let the machine decide a virtual-time trace. Six calls of 800 ms
// through one slot take 4.8 s between them, far past the 3 s call_timeout, and every one succeeds.
func TestCallTimeoutCountsOnlyTheServer(t *testing.T) {
	for _, transport := range transports {
		t.Run(transport, func(t *testing.T) {
			cfg := configFor(t, transport, "kv")
			cfg.CallTimeout = 3 * time.Second
			cfg.MaxConcurrency = 1
			m := newManager(t, mcp.Options{}, cfg)
			slow := toolOf(m, "kv", "slow")
			const callers = 6
			results := make([]tools.Result, callers)
			var wg sync.WaitGroup
			for i := range callers {
				wg.Go(func() { results[i] = call(t, slow, `{"ms":800}`) })
			}
			wg.Wait()
			for i, res := range results {
				if res.IsError || res.Content != "slept 800 ms" || len(res.Notes) != 1 {
					t.Errorf("call %d: %+v, want \"slept 800 ms\" with no real-time note", i, res)
				}
			}
			if st := m.Stats("kv"); st.Calls != callers || st.Starts != 1 {
				t.Errorf("stats %+v", st)
			}
		})
	}
}

