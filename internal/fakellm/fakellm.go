// Package fakellm is a language-model server for tests and for trying live scenarios without a
// key: it speaks the OpenAI Chat Completions wire format (streaming and not, tool calls, usage)
// on loopback, answers each request as a test scripts it, and can fail the ways real providers
// fail (429 with Retry-After, 500, a hang, a malformed body, a stream cut short). It keeps every
// request it received, so a test can count what reached the provider.
package fakellm

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"
)

// Message is one message of a request's conversation, as the server read it.
type Message struct {
	Role       string     `json:"role"`
	Content    string     `json:"content"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`
}

// ToolCall is one tool call: in a reply the server sends, or in an assistant message it read.
type ToolCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// Request is one chat completion request the server received.
type Request struct {
	Model    string
	Messages []Message
	// Tools are the names of the tools offered, in the order sent.
	Tools  []string
	Stream bool
	// MaxTokens, Temperature and Seed are the request's, when it set them.
	MaxTokens   *int64
	Temperature *float64
	Seed        *int64
	// Authorized reports whether the request carried a bearer token (never the token itself).
	Authorized bool
}

// Usage is what a reply reports it used.
type Usage struct {
	Prompt, Completion, Cached int
}

// Reply is how the server answers one request.
type Reply struct {
	// Text and ToolCalls are the assistant's answer; Usage what it reports.
	Text      string
	ToolCalls []ToolCall
	Usage     Usage
	// Status, when not 0 or 200, fails the request with that HTTP status (429, 500, ...) and
	// RetryAfter as its Retry-After header (seconds, when set).
	Status     int
	RetryAfter string
	// Hang holds the request open until the client gives up (its context ends).
	Hang bool
	// Malformed answers 200 with a body that is not JSON.
	Malformed bool
	// Cut ends a streamed answer after its first chunk, without the terminating event.
	Cut bool
}

// Script decides the reply to the n-th request (from 1).
type Script func(n int, req Request) Reply

// Server is a running fake provider on 127.0.0.1.
type Server struct {
	// URL is the base URL clients use (…/v1).
	URL string

	script Script
	srv    *http.Server
	ln     net.Listener
	mu     sync.Mutex
	reqs   []Request
	done   chan struct{}
}

// Start serves script on a free loopback port until Close.
func Start(script Script) (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &Server{URL: "http://" + ln.Addr().String() + "/v1", script: script, ln: ln, done: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", s.chat)
	s.srv = &http.Server{Handler: mux}
	go func() {
		defer close(s.done)
		_ = s.srv.Serve(ln)
	}()
	return s, nil
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

// wireRequest is the part of a Chat Completions request the server reads.
type wireRequest struct {
	Model    string `json:"model"`
	Messages []struct {
		Role       string          `json:"role"`
		Content    json.RawMessage `json:"content"`
		ToolCallID string          `json:"tool_call_id"`
		ToolCalls  []struct {
			ID       string `json:"id"`
			Function struct {
				Name      string `json:"name"`
				Arguments string `json:"arguments"`
			} `json:"function"`
		} `json:"tool_calls"`
	} `json:"messages"`
	Tools []struct {
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	} `json:"tools"`
	Stream      bool     `json:"stream"`
	MaxTokens   *int64   `json:"max_tokens"`
	MaxComplete *int64   `json:"max_completion_tokens"`
	Temperature *float64 `json:"temperature"`
	Seed        *int64   `json:"seed"`
}

// content reads a message's content: a string, or an array of text parts.
func content(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	_ = json.Unmarshal(raw, &parts)
	out := ""
	for _, p := range parts {
		out += p.Text
	}
	return out
}

func (s *Server) chat(w http.ResponseWriter, r *http.Request) {
	var wr wireRequest
	if err := json.NewDecoder(r.Body).Decode(&wr); err != nil {
		http.Error(w, `{"error":{"message":"the request body is not a chat completion request"}}`, http.StatusBadRequest)
		return
	}
	req := Request{Model: wr.Model, Stream: wr.Stream, MaxTokens: wr.MaxTokens, Temperature: wr.Temperature, Seed: wr.Seed,
		Authorized: len(r.Header.Get("Authorization")) > len("Bearer ")}
	if req.MaxTokens == nil {
		req.MaxTokens = wr.MaxComplete
	}
	for _, m := range wr.Messages {
		msg := Message{Role: m.Role, Content: content(m.Content), ToolCallID: m.ToolCallID}
		for _, c := range m.ToolCalls {
			msg.ToolCalls = append(msg.ToolCalls, ToolCall{ID: c.ID, Name: c.Function.Name, Arguments: c.Function.Arguments})
		}
		req.Messages = append(req.Messages, msg)
	}
	for _, t := range wr.Tools {
		req.Tools = append(req.Tools, t.Function.Name)
	}
	s.mu.Lock()
	s.reqs = append(s.reqs, req)
	n := len(s.reqs)
	s.mu.Unlock()

	reply := s.script(n, req)
	switch {
	case reply.Hang:
		<-r.Context().Done()
		return
	case reply.Status != 0 && reply.Status != http.StatusOK:
		if reply.RetryAfter != "" {
			w.Header().Set("Retry-After", reply.RetryAfter)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(reply.Status)
		fmt.Fprintf(w, `{"error":{"message":"fake provider: status %d","type":"fake","code":%q}}`, reply.Status, strconv.Itoa(reply.Status))
		return
	case reply.Malformed:
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"id": "chatcmpl-broken", "choices": [`)
		return
	}
	id := "chatcmpl-" + strconv.Itoa(n)
	if req.Stream {
		s.stream(w, id, req.Model, reply)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(completion(id, req.Model, reply))
}

// finish is the finish reason of reply.
func finish(reply Reply) string {
	if len(reply.ToolCalls) > 0 {
		return "tool_calls"
	}
	return "stop"
}

// wireUsage is reply's usage on the wire.
func wireUsage(u Usage) map[string]any {
	return map[string]any{"prompt_tokens": u.Prompt, "completion_tokens": u.Completion, "total_tokens": u.Prompt + u.Completion,
		"prompt_tokens_details": map[string]any{"cached_tokens": u.Cached}}
}

// wireCalls is reply's tool calls on the wire (index set for a stream's deltas).
func wireCalls(calls []ToolCall, indexed bool) []map[string]any {
	out := make([]map[string]any, len(calls))
	for i, c := range calls {
		out[i] = map[string]any{"id": c.ID, "type": "function", "function": map[string]any{"name": c.Name, "arguments": c.Arguments}}
		if indexed {
			out[i]["index"] = i
		}
	}
	return out
}

// completion is a whole (not streamed) answer.
func completion(id, model string, reply Reply) map[string]any {
	msg := map[string]any{"role": "assistant", "content": reply.Text}
	if len(reply.ToolCalls) > 0 {
		msg["tool_calls"] = wireCalls(reply.ToolCalls, false)
	}
	return map[string]any{"id": id, "object": "chat.completion", "created": 0, "model": model,
		"choices": []map[string]any{{"index": 0, "message": msg, "finish_reason": finish(reply)}},
		"usage":   wireUsage(reply.Usage)}
}

// stream sends reply as server-sent events: the text in two chunks, the tool calls, the finish,
// the usage, and [DONE]; Cut stops after the first chunk.
func (s *Server) stream(w http.ResponseWriter, id, model string, reply Reply) {
	w.Header().Set("Content-Type", "text/event-stream")
	flusher, _ := w.(http.Flusher)
	send := func(choice map[string]any, usage map[string]any) {
		chunk := map[string]any{"id": id, "object": "chat.completion.chunk", "created": 0, "model": model, "choices": []map[string]any{}}
		if choice != nil {
			chunk["choices"] = []map[string]any{choice}
		}
		if usage != nil {
			chunk["usage"] = usage
		}
		data, _ := json.Marshal(chunk)
		fmt.Fprintf(w, "data: %s\n\n", data)
		if flusher != nil {
			flusher.Flush()
		}
	}
	half := len(reply.Text) / 2
	send(map[string]any{"index": 0, "delta": map[string]any{"role": "assistant", "content": reply.Text[:half]}, "finish_reason": nil}, nil)
	if reply.Cut {
		return
	}
	send(map[string]any{"index": 0, "delta": map[string]any{"content": reply.Text[half:]}, "finish_reason": nil}, nil)
	if len(reply.ToolCalls) > 0 {
		send(map[string]any{"index": 0, "delta": map[string]any{"tool_calls": wireCalls(reply.ToolCalls, true)}, "finish_reason": nil}, nil)
	}
	send(map[string]any{"index": 0, "delta": map[string]any{}, "finish_reason": finish(reply)}, nil)
	send(nil, wireUsage(reply.Usage))
	fmt.Fprint(w, "data: [DONE]\n\n")
	if flusher != nil {
		flusher.Flush()
	}
}
