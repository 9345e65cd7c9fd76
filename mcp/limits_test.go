package mcp_test

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/warrenhq/warren/internal/mcpdemo"
	"github.com/warrenhq/warren/mcp"
	"github.com/warrenhq/warren/mcp/mcpconfig"
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

// hostileConfig is an entry for the test server in hostile mode (flood, echo and fillers) over
// transport, with extra hostile-mode flags.
func hostileConfig(t testing.TB, transport string, flags ...string) *mcpconfig.Server {
	t.Helper()
	args := append([]string{"--hostile", "--log-level", "error"}, flags...)
	if transport == "stdio" {
		return &mcpconfig.Server{Name: "kv", Command: mcpserverPath, Args: append([]string{"--transport", "stdio"}, args...),
			Dir: t.TempDir(), File: "host.toml", Line: 3, Key: "mcp_servers[0]"}
	}
	cmd := exec.Command(mcpserverPath, append([]string{"--transport", "http", "--listen", "127.0.0.1:0"}, args...)...)
	cmd.Dir = t.TempDir()
	url, err := mcpdemo.StartHTTP(cmd)
	if err != nil {
		t.Fatalf("the hostile HTTP server: %v", err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return &mcpconfig.Server{Name: "kv", URL: url, File: "host.toml", Line: 9, Key: "mcp_servers[1]"}
}

// readSlack is what reading a server's handshake and a short reply or two adds to the bytes read.
const readSlack = 16 << 10

// TestReplyBound: a reply over max_reply_bytes is an error result naming the bound, read no
// further than the bound allows: an HTTP body is cut at it; a stdio line is skipped to its end
// (so the session, and every other call on it, goes on) unless it runs past 16 times the bound,
// when the server is taken for broken and restarted. A 300 MB reply is never read whole, with
// the entry's bound or the default one.
func TestReplyBound(t *testing.T) {
	const kib = 1 << 10
	tooLarge := func(n int) string {
		return fmt.Sprintf("kv__flood: the server's reply was more than %d bytes (max_reply_bytes) and was discarded", n)
	}
	tests := []struct {
		name      string
		transport string
		bound     int // max_reply_bytes; 0 the default
		bytes     int // the flood's size
		want      string
		// maxRead bounds what may be read of the flood's reply (the handshake and the echo
		// add a little: readSlack).
		maxRead int64
		// restarted: the session broke and the echo after it ran on session 2.
		restarted bool
	}{
		{name: "under the bound", transport: "stdio", bound: 64 * kib, bytes: 60 * kib, want: "", maxRead: 64 * kib},
		{name: "over the bound, skipped", transport: "stdio", bound: 64 * kib, bytes: 200 * kib, want: tooLarge(64 * kib), maxRead: 256 * kib},
		{name: "300 MB", transport: "stdio", bound: 64 * kib, bytes: 300 << 20,
			want:    "server kv sent a reply of more than 1048576 bytes, 16 times max_reply_bytes (65536), without an end; the session was ended, and is restarted on the next call",
			maxRead: 2 << 20, restarted: true},
		{name: "300 MB, default bound", transport: "stdio", bytes: 300 << 20,
			want:    "server kv sent a reply of more than 67108864 bytes, 16 times max_reply_bytes (4194304), without an end; the session was ended, and is restarted on the next call",
			maxRead: 70 << 20, restarted: true},
		{name: "under the bound", transport: "http", bound: 64 * kib, bytes: 60 * kib, want: "", maxRead: 64 * kib},
		{name: "over the bound", transport: "http", bound: 64 * kib, bytes: 200 * kib, want: tooLarge(64 * kib), maxRead: 64*kib + 1},
		{name: "300 MB", transport: "http", bound: 64 * kib, bytes: 300 << 20, want: tooLarge(64 * kib), maxRead: 64*kib + 1},
		{name: "300 MB, default bound", transport: "http", bytes: 300 << 20, want: tooLarge(4 << 20), maxRead: 4<<20 + 1},
	}
	for _, tc := range tests {
		t.Run(tc.transport+"/"+tc.name, func(t *testing.T) {
			cfg := hostileConfig(t, tc.transport)
			cfg.MaxReplyBytes = tc.bound
			m := newManager(t, mcp.Options{}, cfg)
			res := call(t, toolOf(m, "kv", "flood"), fmt.Sprintf(`{"bytes":%d}`, tc.bytes))
			switch {
			case tc.want == "" && (res.IsError || len(res.Content) != tc.bytes):
				t.Fatalf("result %v: %.200s", res.IsError, res.Content)
			case tc.want != "" && (!res.IsError || res.Content != tc.want || res.Notes[0].OK):
				t.Fatalf("result %+v, want the error %q", res, tc.want)
			}
			if got := mustOK(t, call(t, toolOf(m, "kv", "echo"), `{"text":"still here"}`)); got != "still here" {
				t.Fatalf("the next call: %q", got)
			}
			st := m.Stats("kv")
			if st.ReplyBytes > tc.maxRead+readSlack {
				t.Errorf("%d bytes read of the server, want at most %d and a little", st.ReplyBytes, tc.maxRead)
			}
			if restarted := st.Restarts == 1; restarted != tc.restarted || st.Starts != 1+st.Restarts {
				t.Errorf("stats %+v, want restarted %v", st, tc.restarted)
			}
		})
	}
}

// TestToolListBounds: a server's tool list over its entry's bounds is refused at discovery,
// naming the server and the bound, and read no further: 200,000 tools in one page stop at the
// page's bound, in pages of 1,000 at the second page; a tool whose schema is over
// max_tool_schema_bytes refuses the list too.
func TestToolListBounds(t *testing.T) {
	tests := []struct {
		name    string
		flags   []string
		set     func(*mcpconfig.Server)
		want    string
		maxRead int64
	}{
		// Over stdio the page is skipped to its end, unkept, as long as it is under 16 times the
		// bound; over HTTP it is cut at the bound.
		{name: "200,000 tools in one page", flags: []string{"--tools", "200000"},
			want: "server kv: a page of its tool list is more than 4194304 bytes (max_reply_bytes)", maxRead: 16 * 4 << 20},
		{name: "200,000 tools in pages", flags: []string{"--tools", "200000", "--page-size", "1000"},
			want: "server kv lists more than 1000 tools (max_tools)", maxRead: 512 << 10},
		{name: "more tools than the entry's max_tools", flags: []string{"--tools", "2"}, set: func(c *mcpconfig.Server) { c.MaxTools = 3 },
			want: "server kv lists more than 3 tools (max_tools)", maxRead: 64 << 10},
		{name: "a fat schema", flags: []string{"--tools", "1", "--schema-bytes", "100000"},
			want: `server kv's tool "filler_000000": its input schema is 100`, maxRead: 256 << 10},
		{name: "a fat schema under the entry's bound", flags: []string{"--tools", "1", "--schema-bytes", "100000"},
			set: func(c *mcpconfig.Server) { c.MaxToolSchemaBytes = 200 << 10 }, maxRead: 256 << 10},
	}
	for _, transport := range transports {
		for _, tc := range tests {
			t.Run(transport+"/"+tc.name, func(t *testing.T) {
				cfg := hostileConfig(t, transport, tc.flags...)
				if tc.set != nil {
					tc.set(cfg)
				}
				var read atomic.Int64
				infos, err := mcp.DiscoverCounting(context.Background(), cfg, &read)
				if tc.want == "" {
					if err != nil || len(infos) != 3 {
						t.Fatalf("%d tools, %v", len(infos), err)
					}
				} else if !errors.Is(err, mcp.ErrToolListRefused) || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("err = %v, want the list refused: %q", err, tc.want)
				}
				if n := read.Load(); n > tc.maxRead+readSlack {
					t.Errorf("%d bytes read of the server, want at most %d and a little", n, tc.maxRead)
				}
			})
		}
	}
}
