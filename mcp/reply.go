package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/warrenhq/warren/mcp/mcpconfig"
)

const (
	// malformedQuoteBytes is how much of a malformed line an error message quotes.
	malformedQuoteBytes = 80
	// keptLineCapacity bounds the line buffer a reply watcher keeps between lines, so one huge
	// reply does not pin its size for the rest of the session.
	keptLineCapacity = 64 << 10
	// readChunk is how much a reply watcher reads from a server's stdout at a time.
	readChunk = 32 << 10
	// skipFactor bounds how far a reply over max_reply_bytes is skipped to find its end: past
	// skipFactor times the bound, the server is taken for broken (a reply without an end would
	// otherwise be read for ever).
	skipFactor = 16
	// replyTooLargeCode is the JSON-RPC error code of the error reply a watcher puts in place of
	// a reply it skipped (in the range JSON-RPC leaves to implementations).
	replyTooLargeCode = -32099
	// exitGrace is how long a stdio server that closed its stdout has to be seen exiting before
	// it is killed (awaitExit).
	exitGrace = 30 * time.Second
)

// malformedPrefix starts the reason of a session broken by a malformed reply.
const malformedPrefix = "malformed reply: "

// replyWatcher sits between a stdio server's stdout and mcp-go, which reads each line whole and
// silently skips lines that are not JSON. It hands mcp-go complete lines only, holding at most
// max_reply_bytes of the current one:
//   - the first line that is not a JSON object or array breaks the session (the server is not
//     speaking MCP any more), and the stream then reads as ended so mcp-go stops too;
//   - a line longer than max_reply_bytes is not kept: it is skipped to its end, unread, and in
//     its place mcp-go gets an error reply to the same request (replyTooLarge), so that call
//     alone fails and the session goes on; a line that goes on past skipFactor times the bound
//     breaks the session, and one whose id is not in its first max_reply_bytes does too (there
//     is no telling which call it answers).
type replyWatcher struct {
	r       io.Reader
	session *session
	// max is the longest line kept (0: mcpconfig.DefaultMaxReplyBytes).
	max int
	// read counts the bytes read from the server (nil: not counted).
	read *atomic.Int64

	buf  []byte // the chunk being read
	line []byte // the current line so far, at most max bytes
	out  []byte // complete lines ready for mcp-go
	// skipping: the current line is over max and being skipped; skipped counts its bytes so
	// far, and instead is the error reply that takes its place.
	skipping bool
	skipped  int64
	instead  []byte
	// done is the error the stream ends with once out is drained (io.EOF, or a read error).
	done error
}

// limit is the longest line the watcher keeps.
func (w *replyWatcher) limit() int {
	if w.max <= 0 {
		return mcpconfig.DefaultMaxReplyBytes
	}
	return w.max
}

// Read hands mcp-go the complete lines read so far, reading more when there are none.
func (w *replyWatcher) Read(p []byte) (int, error) {
	for len(w.out) == 0 {
		if w.done != nil {
			return 0, w.done
		}
		if w.buf == nil {
			w.buf = make([]byte, readChunk)
		}
		n, err := w.r.Read(w.buf)
		if w.read != nil {
			w.read.Add(int64(n))
		}
		w.take(w.buf[:n])
		switch {
		case w.done != nil:
		case errors.Is(err, io.EOF):
			w.awaitExit()
			w.done = io.EOF
		case err != nil:
			w.done = err
		}
	}
	n := copy(p, w.out)
	w.out = w.out[n:]
	if len(w.out) == 0 {
		w.out = w.out[:0:0]
	}
	return n, nil
}

// take sorts one chunk of the server's output into complete lines (out), the current line
// (line), or a skipped line.
func (w *replyWatcher) take(chunk []byte) {
	for len(chunk) > 0 && w.done == nil {
		i := bytes.IndexByte(chunk, '\n')
		if w.skipping {
			if i < 0 {
				w.skipped += int64(len(chunk))
				w.checkSkip()
				return
			}
			w.skipped += int64(i)
			w.skipping = false
			w.out = append(w.out, w.instead...)
			w.instead = nil
			chunk = chunk[i+1:]
			continue
		}
		part := chunk
		if i >= 0 {
			part = chunk[:i]
		}
		if len(w.line)+len(part) > w.limit() {
			w.startSkip(part)
			if i < 0 {
				return
			}
			chunk = chunk[i:] // the newline ends the skip
			continue
		}
		if i < 0 {
			w.line = append(w.line, part...)
			return
		}
		line := part
		if len(w.line) > 0 {
			w.line = append(w.line, part...)
			line = w.line
		}
		if !wellFormed(line) {
			w.breakMalformed(line)
			return
		}
		w.out = append(append(w.out, line...), '\n')
		w.line = w.line[:0]
		if cap(w.line) > keptLineCapacity {
			w.line = nil
		}
		chunk = chunk[i+1:]
	}
}

// startSkip begins skipping the current line, whose first bytes are w.line and then part, now
// past the limit: the error reply to the request it answers takes its place, or the session
// breaks when its first max_reply_bytes do not say which request that is.
func (w *replyWatcher) startSkip(part []byte) {
	head := append(w.line, part[:w.limit()-len(w.line)]...)
	id, request, ok := replyID(head)
	w.skipped = int64(len(w.line) + len(part))
	w.line = w.line[:0]
	if cap(w.line) > keptLineCapacity {
		w.line = nil
	}
	switch {
	case !ok:
		w.breakWith(fmt.Sprintf("reply of more than %d bytes (max_reply_bytes) with no id in them", w.limit()),
			fmt.Sprintf("server %s sent a reply of more than %d bytes (max_reply_bytes) that does not say which call it answers; the session was ended, and is restarted on the next call",
				w.session.server, w.limit()))
		return
	case request:
		// A request or notification from the server, over the bound: dropped unread.
		w.instead = nil
	default:
		w.instead = replyTooLargeLine(id, w.session.tooLarge())
	}
	w.skipping = true
	w.checkSkip()
}

// checkSkip breaks the session when the line being skipped has gone on past skipFactor times
// the bound.
func (w *replyWatcher) checkSkip() {
	bound := int64(skipFactor) * int64(w.limit())
	if w.skipped <= bound {
		return
	}
	w.breakWith(fmt.Sprintf("reply of more than %d bytes (%d times max_reply_bytes)", bound, skipFactor),
		fmt.Sprintf("server %s sent a reply of more than %d bytes, %d times max_reply_bytes (%d), without an end; the session was ended, and is restarted on the next call",
			w.session.server, bound, skipFactor, w.limit()))
}

// breakMalformed breaks the session for a line that is not JSON, quoting its start.
func (w *replyWatcher) breakMalformed(line []byte) {
	quoted := line[:min(len(line), malformedQuoteBytes)]
	w.breakWith(fmt.Sprintf("%s%q", malformedPrefix, quoted), fmt.Sprintf("server %s sent a malformed reply: %q", w.session.server, quoted))
}

// breakWith ends the session for reason, kills the server's process group, and makes the stream
// end once the lines before are handed over.
func (w *replyWatcher) breakWith(reason, failure string) {
	w.done = io.EOF
	w.line, w.skipping, w.instead = nil, false, nil
	w.session.breakWith(reason, failure)
	w.session.killGroup()
}

// awaitExit runs when the server closes its stdout: normally because it exited, and then the
// reaper has news within moments. A server that closes stdout and lives on cannot answer any
// more, so after exitGrace it is killed. The wait decides what the trace says (the exit status,
// or "signal: killed" after a kill), so it is a backstop far above what a loaded machine takes to
// reap a process that has exited, not stopGrace.
func (w *replyWatcher) awaitExit() {
	if !waitClosed(w.session.exited, exitGrace) {
		w.session.killGroup()
	}
}

// wellFormed reports whether one stdout line may be MCP: blank, or a JSON object or array.
func wellFormed(line []byte) bool {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return true
	}
	if line[0] != '{' && line[0] != '[' {
		return false
	}
	return json.Valid(line)
}

// replyID finds, in the first bytes of a JSON-RPC message (head, cut anywhere), the message's
// top-level id as JSON, and whether it has a method (a request or notification from the server,
// not a reply). ok is false when head is not the start of a JSON object or holds no id.
func replyID(head []byte) (id json.RawMessage, request, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(head))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, false, false
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			break
		}
		switch key {
		case "id":
			var raw json.RawMessage
			if dec.Decode(&raw) != nil {
				return nil, request, false
			}
			id = raw
		case "method":
			request = true
			var skip json.RawMessage
			if dec.Decode(&skip) != nil {
				return id, request, id != nil
			}
		default:
			if skipValue(dec) != nil {
				return id, request, id != nil
			}
		}
	}
	return id, request, id != nil
}

// skipValue reads past one value, token by token, so that a value cut by the end of head is
// walked as far as it goes rather than decoded whole.
func skipValue(dec *json.Decoder) error {
	depth := 0
	for {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			depth++
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
		if depth == 0 {
			return nil
		}
	}
}

// replyTooLargeLine is the error reply, to the request id, that takes the place of a reply
// skipped for its size.
func replyTooLargeLine(id json.RawMessage, message string) []byte {
	quoted, _ := json.Marshal(message) // a string always encodes
	return []byte(`{"jsonrpc":"2.0","id":` + string(id) + `,"error":{"code":` + strconv.Itoa(replyTooLargeCode) +
		`,"message":` + string(quoted) + "}}\n")
}

// tooLarge is what a call reads whose reply was over max_reply_bytes, after the tool's name; over
// stdio it is also the message of the error reply that takes the skipped reply's place, which is
// how the call knows.
func (s *session) tooLarge() string {
	return fmt.Sprintf("the server's reply was more than %d bytes (max_reply_bytes) and was discarded", s.maxReply)
}

// budgetKey is the context key of a request's replyBudget.
type budgetKey struct{}

// replyBudget marks a request whose reply went over the bound, so the caller can say so whatever
// mcp-go made of the read error (a decode error, an SSE stream that ended early).
type replyBudget struct{ exceeded atomic.Bool }

// withBudget returns ctx carrying a fresh replyBudget for the requests made under it.
func withBudget(ctx context.Context) (context.Context, *replyBudget) {
	b := &replyBudget{}
	return context.WithValue(ctx, budgetKey{}, b), b
}

// cappedTransport is the round tripper of a streamable HTTP session: every response body reads
// at most max bytes (counted in read), then fails with ErrReplyTooLarge and closes the
// connection, so a server's answer is never read past the bound; and once a request's budget is
// spent, its further round trips (mcp-go resuming an SSE stream) fail at once.
type cappedTransport struct {
	base     http.RoundTripper
	max      int64
	read     *atomic.Int64
	tooLarge string
}

// RoundTrip implements http.RoundTripper.
func (c *cappedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	budget, _ := req.Context().Value(budgetKey{}).(*replyBudget)
	if budget != nil && budget.exceeded.Load() {
		return nil, fmt.Errorf("%w: %s", ErrReplyTooLarge, c.tooLarge)
	}
	resp, err := c.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	resp.Body = &cappedBody{rc: resp.Body, left: c.max, read: c.read, budget: budget, tooLarge: c.tooLarge}
	return resp, nil
}

// cappedBody is a response body that reads at most left more bytes.
type cappedBody struct {
	rc       io.ReadCloser
	left     int64
	read     *atomic.Int64
	budget   *replyBudget
	tooLarge string
	over     bool
}

// Read implements io.Reader: it asks for one byte past the bound at most, and a body that has
// one is over it.
func (b *cappedBody) Read(p []byte) (int, error) {
	if b.over {
		return 0, fmt.Errorf("%w: %s", ErrReplyTooLarge, b.tooLarge)
	}
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1]
	}
	n, err := b.rc.Read(p)
	b.read.Add(int64(n))
	b.left -= int64(n)
	if b.left >= 0 {
		return n, err
	}
	b.over = true
	if b.budget != nil {
		b.budget.exceeded.Store(true)
	}
	_ = b.rc.Close()
	return n + int(b.left), fmt.Errorf("%w: %s", ErrReplyTooLarge, b.tooLarge)
}

// Close implements io.Closer.
func (b *cappedBody) Close() error { return b.rc.Close() }
