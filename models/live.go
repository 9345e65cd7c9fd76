package models

import (
	"fmt"
	"net/http"
	"os"
	"strconv"
	"time"
)

// Live is implemented by a back end whose answers come from outside the world (a provider over
// the network): a recorded run keeps each of its turns, and a replay gives them back instead of
// asking it. The host sends a live model's turns through an inference pool (its concurrency,
// rate limits, retries, circuit breaker and fallback), which is why a live back end must be able
// to say what it is (Spec) and to be pointed at another endpoint (Via).
type Live interface {
	Model
	// Live reports whether the back end's answers come from outside the world.
	Live() bool
	// Spec says which provider, model and endpoint the back end asks, and its limits: what pools
	// route by and budgets plan with.
	Spec() LiveSpec
	// Request returns the body a turn with v sends, byte for byte (Turn sends exactly these
	// bytes, which depend on v alone): what a recording hashes, so a replay whose prompt,
	// conversation or tools changed is told apart, and a hash in a recording is the hash of what
	// went over the wire.
	Request(v *View) ([]byte, error)
	// Via returns the same back end sending its turns to ep instead (a pool's endpoint, a
	// fallback pool's model). It is called once per pool when a run starts, never per turn.
	Via(ep Endpoint) (Live, error)
}

// LegacyRequest is implemented by a live back end whose requests recordings of an earlier
// format version (recording.Version) hashed in another form than the body it sends: RecordedAs
// turns a body Request made into the form a recording of that version hashed, so that those
// recordings still replay. A body already in that form comes back as it is.
type LegacyRequest interface {
	RecordedAs(version int, body []byte) []byte
}

// LiveSpec describes a live back end.
type LiveSpec struct {
	// Provider is the wire format's name: "openai" or "anthropic".
	Provider string
	// Model is the provider's model name ("gpt-4o-mini").
	Model string
	// BaseURL is where requests go.
	BaseURL string
	// KeyEnv is the variable the key is read from (the table's api_key_env, or the kind's
	// default), which a host serving other people's scenarios checks against what it allows;
	// KeyNamed is whether a table named it (api_key_env), rather than the kind's default.
	KeyEnv   string
	KeyNamed bool
	// MaxTokens caps one answer's completion tokens (0: the provider's default, which no budget
	// can plan with).
	MaxTokens int64
	// ContextTokens is the model's context window in tokens (0: unknown, never cut).
	ContextTokens int64
	// ContextOverflow is what the host does with a conversation that outgrows ContextTokens:
	// ContextDropOldest (the default when "") or ContextFail.
	ContextOverflow string
}

// The rules for a conversation that outgrows its model's context window (context_overflow).
const (
	// ContextDropOldest sends the conversation without its oldest whole turns (an assistant
	// message with the tool results answering it, or one inbox message), as many as it takes; the
	// system prompt, the task and the latest turn always stay.
	ContextDropOldest = "drop_oldest_turns"
	// ContextFail fails the turn instead, so the stage ends with outcome error.
	ContextFail = "fail"
)

// Endpoint is where a pool sends a live model's turns. An empty field keeps the back end's own.
type Endpoint struct {
	// BaseURL is the provider's base URL.
	BaseURL string
	// Model is the provider's model name.
	Model string
	// APIKeyEnv names the environment variable holding the key, read when Via is called.
	APIKeyEnv string
	// Caps are the pool's caps on an answer, which tighten the model's own (Caps.Tighter).
	Caps Caps
}

// Usage is what a provider reports one answer cost, in tokens. Providers count differently
// (OpenAI's prompt tokens include the cached ones, Anthropic's input tokens exclude both cache
// reads and writes); a back end normalises to these meanings.
type Usage struct {
	// Prompt is every input token of the request, cached or not.
	Prompt int64
	// Completion is the answer's tokens.
	Completion int64
	// CacheRead is the part of Prompt read from the provider's prompt cache.
	CacheRead int64
	// CacheWrite is the part of Prompt written to the provider's prompt cache.
	CacheWrite int64
}

// Total is what a token budget counts: every prompt and completion token.
func (u Usage) Total() int64 { return u.Prompt + u.Completion }

// Add adds o to u.
func (u *Usage) Add(o Usage) {
	u.Prompt += o.Prompt
	u.Completion += o.Completion
	u.CacheRead += o.CacheRead
	u.CacheWrite += o.CacheWrite
}

// IsZero reports whether nothing was counted.
func (u Usage) IsZero() bool { return u == Usage{} }

// ProviderError is a live back end's failure to get an answer, with what the host's retry policy
// decides on: the HTTP status (0 when there was none: a timeout, a refused connection, a cut
// stream) and the provider's Retry-After. Its message carries the provider's status and message,
// never the request's headers.
type ProviderError struct {
	// Provider is the wire format's name ("openai").
	Provider string
	// Status is the HTTP status, 0 when no response came.
	Status int
	// RetryAfter is the wait the provider asked for (0: none).
	RetryAfter time.Duration
	// Timeout marks a request that ran past its timeout: a limit measured in real time.
	Timeout bool
	// Message says what went wrong.
	Message string
	// Err is the cause the message says, when the host decided it (a *CapError), for errors.Is
	// and errors.As.
	Err error
}

// Error is "openai: status 429: slow down", "openai: no answer in time". A success status (an
// answer a cap refused) is not shown: the message says what was wrong with it.
func (e *ProviderError) Error() string {
	if e.Status >= 300 {
		return fmt.Sprintf("%s: status %d: %s", e.Provider, e.Status, e.Message)
	}
	return e.Provider + ": " + e.Message
}

// Unwrap is the cause the host decided (nil for a provider's own failure).
func (e *ProviderError) Unwrap() error { return e.Err }

// Temporary reports whether another attempt may succeed: a rate limit (429), an overloaded or
// failing server (408, 409, 5xx and Anthropic's 529), a timeout, or no response at all. A 400 or
// 401 will fail the same way again.
func (e *ProviderError) Temporary() bool { return Temporary(e.Status, e.Timeout) }

// Temporary is ProviderError.Temporary for a failure known by its HTTP status (0: none) and
// whether it timed out, as a recording keeps it.
func Temporary(status int, timeout bool) bool {
	switch {
	case status == 0, timeout:
		return true
	case status < 300:
		return false // an answer came, and a cap refused it: it would come again
	case status == 408, status == 409, status == 429, status >= 500:
		return true
	}
	return false
}

// RealTime reports whether a limit measured in real time decided the failure (a timeout), which
// the host counts and records (tools.IsRealTime).
func (e *ProviderError) RealTime() bool { return e.Timeout }

// ParseRetryAfter reads the wait a provider asks for from its response headers: retry-after-ms
// (OpenAI's, in milliseconds), else Retry-After in seconds or as an HTTP date, which is measured
// from the response's Date header so that no clock of this machine decides it. 0 when there is
// none or it cannot be read.
func ParseRetryAfter(h http.Header) time.Duration {
	if ms, err := strconv.ParseFloat(h.Get("retry-after-ms"), 64); err == nil && ms > 0 {
		return time.Duration(ms * float64(time.Millisecond))
	}
	v := h.Get("Retry-After")
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil && s > 0 {
		return time.Duration(s * float64(time.Second))
	}
	at, err := http.ParseTime(v)
	if err != nil {
		return 0
	}
	date, err := http.ParseTime(h.Get("Date"))
	if err != nil || !at.After(date) {
		return 0
	}
	return at.Sub(date)
}

// ContextProblems checks a live model table's context_tokens and context_overflow keys, which
// every live kind has: the problems, each at its key, or none.
func ContextProblems(tokens int64, overflow string) KeyErrors {
	var problems KeyErrors
	if tokens < 0 {
		problems = append(problems, &KeyError{Key: "context_tokens", Err: fmt.Errorf("%d: give the model's context window in tokens", tokens)})
	}
	switch overflow {
	case "", ContextDropOldest, ContextFail:
	default:
		problems = append(problems, &KeyError{Key: "context_overflow", Err: fmt.Errorf("%q: valid rules are %s, %s", overflow, ContextDropOldest, ContextFail)})
	}
	return problems
}

// LiveBaseURL is a live table's base_url when it sets one, else the environment variable env (the
// one its SDK's users know, such as OPENAI_BASE_URL), else def.
func LiveBaseURL(set, env, def string) string {
	if set != "" {
		return set
	}
	if v := os.Getenv(env); v != "" {
		return v
	}
	return def
}

// LiveTimeout parses a live table's timeout key: def when raw is empty, else a positive Go
// duration, or a problem at the key (and def).
func LiveTimeout(raw string, def time.Duration) (time.Duration, *KeyError) {
	if raw == "" {
		return def, nil
	}
	d, err := time.ParseDuration(raw)
	if err != nil || d <= 0 {
		return def, &KeyError{Key: "timeout", Err: fmt.Errorf("%q: give a positive Go duration, e.g. \"30s\"", raw)}
	}
	return d, nil
}
