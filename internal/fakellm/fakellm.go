// Package fakellm is a language-model server for tests and for trying live scenarios without a
// key. On loopback it speaks both wire formats the live kinds use: the OpenAI Chat Completions
// API (POST /v1/chat/completions) and the Anthropic Messages API (POST /v1/messages), each
// streaming and not, with tool calls (parallel ones included) and usage (cached tokens
// included). It answers each request as a test scripts it (a Script, or the rules of a file:
// LoadRules), and can fail the ways real providers fail: a status with Retry-After (429, 500,
// Anthropic's 529), a hang, a slow answer, a malformed body, a stream cut short.
//
// It keeps every request it received, with its arrival number and time, and counts the requests
// it is serving at once, so a test can check what reached the provider, how many at a time and
// how fast: what an inference pool's concurrency and rate limits promise.
//
// Like internal/mcpdemo it is a test server that a binary also serves (host models serve-fake),
// so it lives under internal/ and only cmd/ binaries and tests link it; no package of the host's
// own code imports it.
package fakellm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"
	"unicode/utf8"
)

// Wire names the wire format a request came in on, so a script serving both halves can tell
// them apart.
type Wire string

// The wire formats the server speaks.
const (
	// WireOpenAI is the OpenAI Chat Completions API.
	WireOpenAI Wire = "openai"
	// WireAnthropic is the Anthropic Messages API.
	WireAnthropic Wire = "anthropic"
)

// Message is one message of a request's conversation, as the server read it. Both wire formats
// fill Role, Content and ToolCalls, so a script written for one reads the other; an Anthropic
// message also lists its content blocks.
type Message struct {
	// Role is the wire's role: "system", "user", "assistant", "tool" (OpenAI) or "user",
	// "assistant" (Anthropic, whose tool results are blocks of a user message).
	Role string `json:"role"`
	// Content is the message's text: OpenAI's content, or the text of an Anthropic message's
	// text and tool_result blocks joined by newlines.
	Content string `json:"content"`
	// ToolCallID is the call an OpenAI tool message answers.
	ToolCallID string `json:"tool_call_id,omitempty"`
	// ToolCalls are the calls an assistant message made (Anthropic's tool_use blocks).
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// Blocks are an Anthropic message's content blocks, in order (nil for OpenAI).
	Blocks []Block `json:"blocks,omitempty"`
}

// Block is one content block of an Anthropic message, summarised.
type Block struct {
	// Type is the block's type: "text", "tool_use", "tool_result" (others by their name).
	Type string `json:"type"`
	// Text is a text block's text, or a tool_result's content (its text parts joined).
	Text string `json:"text,omitempty"`
	// ID, Name and Input are a tool_use block's (Input as the JSON sent).
	ID    string `json:"id,omitempty"`
	Name  string `json:"name,omitempty"`
	Input string `json:"input,omitempty"`
	// ToolUseID and IsError are a tool_result block's.
	ToolUseID string `json:"tool_use_id,omitempty"`
	IsError   bool   `json:"is_error,omitempty"`
	// Cached reports that the block carried a cache_control marker.
	Cached bool `json:"cached,omitempty"`
}

// ToolCall is one tool call: in a reply the server sends, or in an assistant message it read.
type ToolCall struct {
	// ID links the call to its result. A reply sends it as it is, empty included (a back end
	// then leaves the call's id to the host).
	ID   string `json:"id"`
	Name string `json:"name"`
	// Arguments is the call's arguments as JSON text. A reply may send text that is not JSON,
	// as a model that garbles its call does.
	Arguments string `json:"arguments"`
}

// Request is one request the server received, in either wire format.
type Request struct {
	// Seq is the request's arrival number, from 1: the n its Script was called with.
	Seq int
	// Arrived is when the server read the request, on this machine's clock (with its monotonic
	// reading), for tests that count requests per window of time; nothing deterministic may
	// depend on it.
	Arrived time.Time
	// Wire is the format the request came in on.
	Wire  Wire
	Model string
	// System is the request's system text: Anthropic's system blocks, or the content of
	// OpenAI's system messages (which stay in Messages too), joined by newlines.
	System   string
	Messages []Message
	// Tools are the names of the tools offered, in the order sent.
	Tools  []string
	Stream bool
	// MaxTokens, Temperature and Seed are the request's, when it set them.
	MaxTokens   *int64
	Temperature *float64
	Seed        *int64
	// Stop is the request's stop sequences (OpenAI's stop, Anthropic's stop_sequences).
	Stop []string
	// CacheMarks lists where an Anthropic request put cache_control markers, as paths into its
	// body: "tools[1]", "system[0]", "messages[3].content[0]", and "cache_control" for the
	// top-level one. Empty when it sent none, and for OpenAI requests.
	CacheMarks []string
	// Authorized reports whether the request carried a key: a bearer token, or (Anthropic)
	// an x-api-key header. The key itself is never kept.
	Authorized bool
}

// Usage is what a reply reports it used, in the normalised meanings of models.Usage: Prompt is
// every input token, Cached the part of it read from the cache, CacheWrite the part written to
// it. Each wire format reports them its own way (OpenAI's prompt_tokens include the cached
// ones; Anthropic's input_tokens exclude cache reads and writes).
type Usage struct {
	Prompt, Completion, Cached, CacheWrite int
}

// Reply is how the server answers one request.
type Reply struct {
	// Text and ToolCalls are the assistant's answer; Usage what it reports.
	Text      string
	ToolCalls []ToolCall
	Usage     Usage
	// Status, when not 0 or 200, fails the request with that HTTP status (429, 500, 529, ...)
	// and RetryAfter as its Retry-After header (seconds, when set).
	Status     int
	RetryAfter string
	// Delay holds the response that long before answering (or failing), as a slow provider
	// does; a client that gives up first gets nothing.
	Delay time.Duration
	// Hang holds the request open until the client gives up (its context ends).
	Hang bool
	// Malformed answers 200 with a body that is not JSON (a streamed request: an event whose
	// data is not JSON).
	Malformed bool
	// Cut ends a streamed answer after its first chunk, without the terminating event.
	Cut bool
	// StreamError, in a streamed Anthropic answer, follows the first chunk with an error event
	// of that status's type (529: overloaded_error, 429: rate_limit_error, ...), as the
	// Messages API reports a failure after its 200 has gone out.
	StreamError int
}

// Script decides the reply to the n-th request (from 1). The server calls it from the
// goroutine serving each request, so a script that keeps state must guard it.
type Script func(n int, req Request) Reply

// Server is a running fake provider on a loopback address.
type Server struct {
	// URL is the base URL OpenAI clients use (http://127.0.0.1:PORT/v1).
	URL string
	// AnthropicURL is the base URL Anthropic clients use (http://127.0.0.1:PORT): the SDK adds
	// /v1/messages itself.
	AnthropicURL string

	script Script
	srv    *http.Server
	ln     net.Listener
	done   chan struct{}

	mu          sync.Mutex
	reqs        []Request
	seq         int
	forget      bool
	inFlight    int
	maxInFlight int
}

// Start serves script on a free loopback port until Close.
func Start(script Script) (*Server, error) { return Listen("127.0.0.1:0", script) }

// Listen serves script on addr, which must be a loopback address ("127.0.0.1:8089",
// "[::1]:0", "localhost:8089"), until Close. A fake provider answers anyone who reaches it and
// logs nothing, so it never listens where another machine could.
func Listen(addr string, script Script) (*Server, error) {
	if err := CheckLoopback(addr); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("fakellm: %w", err)
	}
	if tcp, ok := ln.Addr().(*net.TCPAddr); !ok || !tcp.IP.IsLoopback() {
		_ = ln.Close()
		return nil, fmt.Errorf("fakellm: %s resolved to %s, which is not a loopback address", addr, ln.Addr())
	}
	base := "http://" + ln.Addr().String()
	s := &Server{URL: base + "/v1", AnthropicURL: base, script: script, ln: ln, done: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", s.track(s.chat))
	mux.HandleFunc("POST /v1/messages", s.track(s.messages))
	mux.HandleFunc("/", notFound)
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		defer close(s.done)
		_ = s.srv.Serve(ln)
	}()
	return s, nil
}

// CheckLoopback reports an error unless addr ("host:port") names a loopback host: an IP
// address such as 127.0.0.1 or ::1, or "localhost". An empty host (":8089") means every
// interface, and is refused.
func CheckLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("fakellm: listen address %q: %w", addr, err)
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	if host == "" {
		host = "every interface"
	}
	return fmt.Errorf("fakellm: listen address %q is not a loopback address (%s): the fake provider answers anyone who reaches it, so it listens on 127.0.0.1, ::1 or localhost only", addr, host)
}

// Close stops the server, ending requests still open (a hang included).
func (s *Server) Close() error {
	err := s.srv.Close()
	<-s.done
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// Requests returns a copy of every request received so far, in arrival order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

// InFlight returns how many requests the server is serving now.
func (s *Server) InFlight() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.inFlight
}

// MaxInFlight returns the most requests the server has ever served at once: what a test of a
// concurrency limit checks.
func (s *Server) MaxInFlight() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.maxInFlight
}

// track counts h's requests in flight for as long as each is served.
func (s *Server) track(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.inFlight++
		s.maxInFlight = max(s.maxInFlight, s.inFlight)
		s.mu.Unlock()
		defer func() {
			s.mu.Lock()
			s.inFlight--
			s.mu.Unlock()
		}()
		h(w, r)
	}
}

// record keeps req, numbering and timing its arrival, and returns it so numbered.
func (s *Server) record(req Request) Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	req.Seq = s.seq
	req.Arrived = time.Now()
	if !s.forget {
		s.reqs = append(s.reqs, req)
	}
	return req
}

// Forget stops the server keeping the requests it receives (Requests then returns only those kept
// before): a long-running fake (host models serve-fake) or a benchmark measuring the host's
// memory must not grow with every request. Seq still counts every request.
func (s *Server) Forget() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.forget = true
}

// hold waits out reply's Delay, or for a Hang until the client gives up; it reports whether
// the server should go on to answer.
func hold(ctx context.Context, reply Reply) bool {
	if reply.Hang {
		<-ctx.Done()
		return false
	}
	if reply.Delay <= 0 {
		return true
	}
	t := time.NewTimer(reply.Delay)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// failing reports whether reply fails its request with an HTTP status.
func failing(reply Reply) bool { return reply.Status != 0 && reply.Status != http.StatusOK }

// halves splits s near its middle, at a rune boundary, as a stream sends text in two chunks.
func halves(s string) (string, string) {
	i := len(s) / 2
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i], s[i:]
}

// notFound answers a path the server does not serve, in an error body both SDKs read, saying
// which base URL each wire format wants (an Anthropic base URL ending in /v1 is the usual
// mistake: the SDK adds /v1/messages itself).
func notFound(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusNotFound)
	msg := fmt.Sprintf("fake provider: nothing is served at %s %s; it serves POST /v1/chat/completions (OpenAI: base URL http://HOST:PORT/v1) and POST /v1/messages (Anthropic: base URL http://HOST:PORT, without /v1)", r.Method, r.URL.Path)
	_ = json.NewEncoder(w).Encode(map[string]any{"type": "error", "error": map[string]any{"type": "not_found_error", "message": msg}})
}
