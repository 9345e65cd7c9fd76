package openai_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/warrenhq/warren/models"
	"github.com/warrenhq/warren/models/openai"
)

// hostile is a provider on loopback that sends more than any cap allows: it writes what its
// answer function writes until the client stops reading, and counts the bytes that went out, so
// a test can tell how much of a 400 MB answer or an endless stream the host took.
type hostile struct {
	*httptest.Server
	written atomic.Int64
	done    chan struct{}
}

// countingWriter counts what the handler wrote; a failed write (the client hung up) ends the
// answer.
type countingWriter struct {
	w http.ResponseWriter
	n *atomic.Int64
}

func (c countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n.Add(int64(n))
	if f, ok := c.w.(http.Flusher); ok && err == nil {
		f.Flush()
	}
	return n, err
}

func serveHostile(t *testing.T, contentType string, answer func(w io.Writer) error) *hostile {
	t.Helper()
	h := &hostile{done: make(chan struct{}, 1)}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", contentType)
		_ = answer(countingWriter{w: w, n: &h.written})
		select {
		case h.done <- struct{}{}:
		default: // a test that waits waits for one answer
		}
	}))
	t.Cleanup(h.Close)
	return h
}

// wait waits for the handler to give up (the client hung up), so written is final.
func (h *hostile) wait(t *testing.T) int64 {
	t.Helper()
	select {
	case <-h.done:
	case <-time.After(time.Minute):
		t.Fatal("the hostile server is still writing a minute after the turn ended: the host did not hang up")
	}
	return h.written.Load()
}

// forever writes head, then chunk until the write fails (or total bytes went out), then tail.
func forever(w io.Writer, head, chunk, tail string, total int64) error {
	if _, err := io.WriteString(w, head); err != nil {
		return err
	}
	for sent := int64(0); total <= 0 || sent < total; sent += int64(len(chunk)) {
		if _, err := io.WriteString(w, chunk); err != nil {
			return err
		}
	}
	_, err := io.WriteString(w, tail)
	return err
}

const mib = 1 << 20

// TestHostileProvider: a provider sending a 400 MB answer, an endless stream, a stream that
// trickles forever, or 200,000 tool calls (whole or streamed) fails the turn with a clear error
// at the cap (a *models.CapError, status 200, not retried), and the host reads no more than the
// cap: the server's count of bytes that left it stays within the cap and the socket buffers
// between them, far below what it had to send.
func TestHostileProvider(t *testing.T) {
	calls := func(n int) string {
		var b strings.Builder
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"id":"c%d","type":"function","function":{"name":"read_file","arguments":"{}"}}`, i)
		}
		return b.String()
	}
	var callChunk atomic.Int64 // the streamed call the server is writing
	for _, tc := range []struct {
		name        string
		stream      bool
		cfg         openai.Config
		contentType string
		answer      func(w io.Writer) error
		want        string
		bound       int64 // the most the server may have written
	}{
		{"400 MB answer", false, openai.Config{MaxResponseBytes: mib}, "application/json", func(w io.Writer) error {
			return forever(w, `{"id":"x","object":"chat.completion","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"`,
				strings.Repeat("a", 64<<10), `"}}]}`, 400*mib)
		}, "openai: the response passed max_response_bytes = 1048576 bytes; the rest was not read", 64 * mib},
		{"endless stream", true, openai.Config{MaxResponseBytes: mib, Timeout: "10m"}, "text/event-stream", func(w io.Writer) error {
			return forever(w, `data: {"id":"x","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant"}}]}`+"\n\n",
				`data: {"id":"x","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"more "}}]}`+"\n\n", "", 0)
		}, "openai: the response passed max_response_bytes = 1048576 bytes; the rest was not read", 64 * mib},
		{"200k tool calls", false, openai.Config{MaxResponseBytes: 64 * mib}, "application/json", func(w io.Writer) error {
			_, err := io.WriteString(w, `{"id":"x","object":"chat.completion","choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","tool_calls":[`+calls(200_000)+`]}}]}`)
			return err
		}, "openai: the answer has 200000 tool calls, past max_tool_calls = 128", 64 * mib},
		{"endless streamed tool calls", true, openai.Config{Timeout: "10m"}, "text/event-stream", func(w io.Writer) error {
			if _, err := io.WriteString(w, `data: {"id":"x","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant"}}]}`+"\n\n"); err != nil {
				return err
			}
			for i := 0; ; i++ {
				callChunk.Store(int64(i))
				if _, err := fmt.Fprintf(w, `data: {"id":"x","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"tool_calls":[{"index":%d,"id":"c%d","type":"function","function":{"name":"read_file","arguments":"{}"}}]}}]}`+"\n\n", i, i); err != nil {
					return err
				}
			}
		}, "openai: the answer has more than 128 tool calls, past max_tool_calls = 128; the rest of the stream was not read", 64 * mib},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := serveHostile(t, tc.contentType, tc.answer)
			cfg := tc.cfg
			cfg.Model, cfg.Stream = "m", tc.stream
			m := compileAt(t, srv.URL, cfg)
			_, err := m.Turn(context.Background(), &models.State{}, view())
			var pe *models.ProviderError
			var ce *models.CapError
			if !errors.As(err, &pe) || !errors.As(err, &ce) || !errors.Is(err, models.ErrCapped) || err.Error() != tc.want {
				t.Fatalf("err = %v, want %q, a capped answer", err, tc.want)
			}
			if pe.Status != http.StatusOK || pe.Temporary() || pe.Timeout {
				t.Fatalf("err = %#v: a capped answer came with status 200 and is not retried", pe)
			}
			n := srv.wait(t)
			if n > tc.bound {
				t.Fatalf("the server wrote %d bytes before the host hung up, more than %d", n, tc.bound)
			}
			t.Logf("the server wrote %d bytes before the host hung up", n)
		})
	}
	if n := callChunk.Load(); n > 100_000 {
		t.Errorf("the server wrote %d streamed tool calls before the host hung up", n)
	}
}

// TestStreamEndsAtTimeout: a stream that trickles forever, which no byte cap would end soon,
// ends at the request's timeout, which bounds the whole stream, as a timeout (retried, and
// counted as a real-time limit).
func TestStreamEndsAtTimeout(t *testing.T) {
	srv := serveHostile(t, "text/event-stream", func(w io.Writer) error {
		for {
			if _, err := io.WriteString(w, `data: {"id":"x","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"."}}]}`+"\n\n"); err != nil {
				return err
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
	m := compileAt(t, srv.URL, openai.Config{Model: "m", Stream: true, Timeout: "300ms"})
	_, err := m.Turn(context.Background(), &models.State{}, view())
	var pe *models.ProviderError
	if !errors.As(err, &pe) || !pe.Timeout || !pe.RealTime() || err.Error() != "openai: no answer in time" {
		t.Fatalf("err = %#v, want a timeout", err)
	}
	srv.wait(t)
}

// TestCapsOfAPool: a pool's caps tighten the table's (Via), and the table's keys are checked.
func TestCapsOfAPool(t *testing.T) {
	srv := serveHostile(t, "application/json", func(w io.Writer) error {
		_, err := io.WriteString(w, `{"id":"x","object":"chat.completion","choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","tool_calls":[`+
			`{"id":"a","type":"function","function":{"name":"f","arguments":"{}"}},{"id":"b","type":"function","function":{"name":"f","arguments":"{}"}}]}}]}`)
		return err
	})
	m := compileAt(t, srv.URL, openai.Config{Model: "m", MaxToolCalls: 5})
	if _, err := m.Turn(context.Background(), &models.State{}, view()); err != nil {
		t.Fatalf("two calls under a cap of 5: %v", err)
	}
	tight, err := m.Via(models.Endpoint{Caps: models.Caps{ToolCalls: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tight.Turn(context.Background(), &models.State{}, view()); err == nil || err.Error() != "openai: the answer has 2 tool calls, past max_tool_calls = 1" {
		t.Fatalf("through a pool capping at 1: %v", err)
	}
	one := compileAt(t, srv.URL, openai.Config{Model: "m", MaxToolCalls: 1})
	loose, err := one.Via(models.Endpoint{Caps: models.Caps{ToolCalls: 50}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := loose.Turn(context.Background(), &models.State{}, view()); err == nil || err.Error() != "openai: the answer has 2 tool calls, past max_tool_calls = 1" {
		t.Fatalf("a pool's looser cap must not loosen the table's: %v", err)
	}
	_, err = (&openai.Config{Model: "m", MaxResponseBytes: 10, MaxToolCalls: -1}).Compile(&models.KindEnv{ID: "openai:x"})
	if err == nil || !strings.Contains(err.Error(), "max_response_bytes: 10: give 1024 to 1073741824 bytes") || !strings.Contains(err.Error(), "max_tool_calls: -1: give 1 to 100000 calls") {
		t.Fatalf("bad caps: %v", err)
	}
}
