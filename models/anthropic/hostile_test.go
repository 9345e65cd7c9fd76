package anthropic_test

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
	"github.com/warrenhq/warren/models/anthropic"
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

// TestHostileProvider: a provider sending a 400 MB answer, an endless stream, 200,000 tool_use
// blocks, or tool_use blocks streamed without end fails the turn with a clear error at the cap (a
// *models.CapError, status 200, not retried), and the host reads no more than the cap: the
// server's count of bytes that left it stays within the cap and the socket buffers between them.
func TestHostileProvider(t *testing.T) {
	block := func(i int) string {
		return fmt.Sprintf(`{"type":"tool_use","id":"toolu_%d","name":"read_file","input":{}}`, i)
	}
	const start = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"m\",\"content\":[],\"usage\":{\"input_tokens\":1,\"output_tokens\":0}}}\n\n"
	for _, tc := range []struct {
		name        string
		stream      bool
		cfg         anthropic.Config
		contentType string
		answer      func(w io.Writer) error
		want        string
	}{
		{"400 MB answer", false, anthropic.Config{MaxResponseBytes: mib}, "application/json", func(w io.Writer) error {
			return forever(w, `{"id":"m","type":"message","role":"assistant","model":"m","stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":1},"content":[{"type":"text","text":"`,
				strings.Repeat("a", 64<<10), `"}]}`, 400*mib)
		}, "anthropic: the response passed max_response_bytes = 1048576 bytes; the rest was not read"},
		{"endless stream", true, anthropic.Config{MaxResponseBytes: mib, Timeout: "10m"}, "text/event-stream", func(w io.Writer) error {
			return forever(w, start+"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n",
				"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"more \"}}\n\n", "", 0)
		}, "anthropic: the response passed max_response_bytes = 1048576 bytes; the rest was not read"},
		{"200k tool calls", false, anthropic.Config{MaxResponseBytes: 64 * mib}, "application/json", func(w io.Writer) error {
			blocks := make([]string, 200_000)
			for i := range blocks {
				blocks[i] = block(i)
			}
			_, err := io.WriteString(w, `{"id":"m","type":"message","role":"assistant","model":"m","stop_reason":"tool_use","usage":{"input_tokens":1,"output_tokens":1},"content":[`+strings.Join(blocks, ",")+`]}`)
			return err
		}, "anthropic: the answer has 200000 tool calls, past max_tool_calls = 128"},
		{"endless streamed tool calls", true, anthropic.Config{Timeout: "10m"}, "text/event-stream", func(w io.Writer) error {
			if _, err := io.WriteString(w, start); err != nil {
				return err
			}
			for i := 0; ; i++ {
				if _, err := fmt.Fprintf(w, "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":%d,\"content_block\":%s}\n\nevent: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":%d}\n\n", i, block(i), i); err != nil {
					return err
				}
			}
		}, "anthropic: the answer has more than 128 tool calls, past max_tool_calls = 128; the rest of the stream was not read"},
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
			if n > 64*mib {
				t.Fatalf("the server wrote %d bytes before the host hung up", n)
			}
			t.Logf("the server wrote %d bytes before the host hung up", n)
		})
	}
}
