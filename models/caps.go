package models

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"
)

// Caps bound what one answer of a live model can make the host read, hold and run, whatever the
// provider sends: a broken or hostile endpoint's 400 MB answer, endless stream or 200,000 tool
// calls fails the turn (a model error, which the pool does not retry unless its HTTP status says
// to) instead of filling the host's memory, its trace or its tool lane. A model table and the
// pool that sends its turns may each set them; the tighter one applies (Tighter).
type Caps struct {
	// ResponseBytes caps the bytes of one response body, streamed or not, as they come off the
	// wire (0: DefaultResponseBytes). The body is read through the cap, so no more than this is
	// ever read: an endless stream ends there, not at the timeout.
	ResponseBytes int64
	// ToolCalls caps the tool calls of one answer (0: DefaultToolCalls). A stream stops being
	// read at the first call past it.
	ToolCalls int64
	// Timeout bounds one request, the whole stream included (0: the model table's timeout).
	Timeout time.Duration
}

// Defaults and bounds of the caps (docs/models.md, "Caps").
const (
	// DefaultResponseBytes is 16 MiB: some 90,000 streamed tokens of OpenAI's chunks, and far
	// more answer than max_tokens allows a whole answer.
	DefaultResponseBytes int64 = 16 << 20
	// DefaultToolCalls is more parallel calls than a model makes in one answer.
	DefaultToolCalls int64 = 128
	// MaxResponseBytes and MaxToolCalls are the most a table may set.
	MaxResponseBytes int64 = 1 << 30
	MaxToolCalls     int64 = 100_000
)

// Tighter is each of c's caps or o's, the smaller of the two that are set.
func (c Caps) Tighter(o Caps) Caps {
	pick := func(a, b int64) int64 {
		if a == 0 || (b != 0 && b < a) {
			return b
		}
		return a
	}
	return Caps{ResponseBytes: pick(c.ResponseBytes, o.ResponseBytes), ToolCalls: pick(c.ToolCalls, o.ToolCalls),
		Timeout: time.Duration(pick(int64(c.Timeout), int64(o.Timeout)))}
}

// Bytes is the response cap in force.
func (c Caps) Bytes() int64 {
	if c.ResponseBytes > 0 {
		return c.ResponseBytes
	}
	return DefaultResponseBytes
}

// Calls is the tool call cap in force.
func (c Caps) Calls() int64 {
	if c.ToolCalls > 0 {
		return c.ToolCalls
	}
	return DefaultToolCalls
}

// CapsProblems checks a live model table's max_response_bytes and max_tool_calls (0: the
// default): the problems, each at its key, or none.
func CapsProblems(responseBytes, toolCalls int64) KeyErrors {
	var problems KeyErrors
	if responseBytes < 0 || responseBytes > MaxResponseBytes || (responseBytes > 0 && responseBytes < 1024) {
		problems = append(problems, &KeyError{Key: "max_response_bytes", Err: fmt.Errorf("%d: give 1024 to %d bytes (default %d)", responseBytes, MaxResponseBytes, DefaultResponseBytes)})
	}
	if toolCalls < 0 || toolCalls > MaxToolCalls {
		problems = append(problems, &KeyError{Key: "max_tool_calls", Err: fmt.Errorf("%d: give 1 to %d calls (default %d)", toolCalls, MaxToolCalls, DefaultToolCalls)})
	}
	return problems
}

// ErrCapped is what every *CapError wraps: an answer passed one of its model's caps.
var ErrCapped = errors.New("the answer passed its cap")

// CapError is an answer a cap refused: which cap (its key), its value, and the HTTP status the
// response came with (which decides whether the pool retries: a 200 is not retried).
type CapError struct {
	// Key is the cap's key: "max_response_bytes" or "max_tool_calls".
	Key string
	// Limit is the cap's value.
	Limit int64
	// Calls is, for max_tool_calls, how many calls the answer had (0 for a stream, which is cut
	// at the first one past the cap).
	Calls int64
	// Status is the response's HTTP status.
	Status int
}

// Error says which cap, and that the rest was not read.
func (e *CapError) Error() string {
	switch {
	case e.Key == "max_tool_calls" && e.Calls > 0:
		return "the answer has " + strconv.FormatInt(e.Calls, 10) + " tool calls, past max_tool_calls = " + strconv.FormatInt(e.Limit, 10)
	case e.Key == "max_tool_calls":
		return "the answer has more than " + strconv.FormatInt(e.Limit, 10) + " tool calls, past max_tool_calls = " + strconv.FormatInt(e.Limit, 10) + "; the rest of the stream was not read"
	}
	return "the response passed " + e.Key + " = " + strconv.FormatInt(e.Limit, 10) + " bytes; the rest was not read"
}

// Unwrap makes errors.Is(err, ErrCapped) hold.
func (e *CapError) Unwrap() error { return ErrCapped }

// CapResponses is an SDK middleware (openai-go's and anthropic-sdk-go's option.Middleware) that
// reads every response body through a cap of max bytes: a read past it fails with a *CapError
// carrying the response's status, and nothing past it is read.
func CapResponses(max int64) func(*http.Request, func(*http.Request) (*http.Response, error)) (*http.Response, error) {
	return func(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
		res, err := next(req)
		if err == nil && res != nil && res.Body != nil {
			res.Body = &cappedBody{rc: res.Body, left: max, err: &CapError{Key: "max_response_bytes", Limit: max, Status: res.StatusCode}}
		}
		return res, err
	}
}

// cappedBody is a response body read through a cap: left bytes may still be read, and the read
// that would take one more fails with err.
type cappedBody struct {
	rc   io.ReadCloser
	left int64
	err  *CapError
}

func (b *cappedBody) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if b.left <= 0 {
		// The cap is spent: one byte more says whether the body goes on.
		var one [1]byte
		n, err := b.rc.Read(one[:])
		if n > 0 {
			return 0, b.err
		}
		return 0, err
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	return n, err
}

func (b *cappedBody) Close() error { return b.rc.Close() }

// CapFailure is a *CapError as the turn's failure: a *ProviderError of provider with the
// response's status and the cap's message, wrapping it.
func CapFailure(provider string, ce *CapError) *ProviderError {
	return &ProviderError{Provider: provider, Status: ce.Status, Message: ce.Error(), Err: ce}
}
