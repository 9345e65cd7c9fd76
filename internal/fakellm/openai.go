package fakellm

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// The OpenAI half: POST /v1/chat/completions.

// chatRequest is the part of a Chat Completions request the server reads.
type chatRequest struct {
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
	Stream      bool            `json:"stream"`
	MaxTokens   *int64          `json:"max_tokens"`
	MaxComplete *int64          `json:"max_completion_tokens"`
	Temperature *float64        `json:"temperature"`
	Seed        *int64          `json:"seed"`
	Stop        json.RawMessage `json:"stop"`
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
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

// stopList reads OpenAI's stop: a string or an array of them.
func stopList(raw json.RawMessage) []string {
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return []string{one}
	}
	var many []string
	_ = json.Unmarshal(raw, &many)
	return many
}

func (s *Server) chat(w http.ResponseWriter, r *http.Request) {
	var wr chatRequest
	if err := json.NewDecoder(r.Body).Decode(&wr); err != nil {
		http.Error(w, `{"error":{"message":"the request body is not a chat completion request"}}`, http.StatusBadRequest)
		return
	}
	req := Request{Wire: WireOpenAI, Model: wr.Model, Stream: wr.Stream, MaxTokens: wr.MaxTokens, Temperature: wr.Temperature, Seed: wr.Seed,
		Stop: stopList(wr.Stop), Authorized: len(r.Header.Get("Authorization")) > len("Bearer ")}
	if req.MaxTokens == nil {
		req.MaxTokens = wr.MaxComplete
	}
	var system []string
	for _, m := range wr.Messages {
		msg := Message{Role: m.Role, Content: content(m.Content), ToolCallID: m.ToolCallID}
		for _, c := range m.ToolCalls {
			msg.ToolCalls = append(msg.ToolCalls, ToolCall{ID: c.ID, Name: c.Function.Name, Arguments: c.Function.Arguments})
		}
		if m.Role == "system" || m.Role == "developer" {
			system = append(system, msg.Content)
		}
		req.Messages = append(req.Messages, msg)
	}
	req.System = strings.Join(system, "\n")
	for _, t := range wr.Tools {
		req.Tools = append(req.Tools, t.Function.Name)
	}
	req = s.record(req)

	reply := s.script(req.Seq, req)
	if !hold(r.Context(), reply) {
		return
	}
	switch {
	case failing(reply):
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
	id := "chatcmpl-" + strconv.Itoa(req.Seq)
	if req.Stream {
		chatStream(w, id, req, reply)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(completion(id, req, reply))
}

// finish is the finish reason of reply.
func finish(reply Reply) string {
	if len(reply.ToolCalls) > 0 {
		return "tool_calls"
	}
	return "stop"
}

// chatUsage is reply's usage on the wire: prompt_tokens count the cached ones.
func chatUsage(u Usage) map[string]any {
	return map[string]any{"prompt_tokens": u.Prompt, "completion_tokens": u.Completion, "total_tokens": u.Prompt + u.Completion,
		"prompt_tokens_details": map[string]any{"cached_tokens": u.Cached}}
}

// chatCalls is reply's tool calls on the wire (index set for a stream's deltas).
func chatCalls(calls []ToolCall, indexed bool) []map[string]any {
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
func completion(id string, req Request, reply Reply) map[string]any {
	msg := map[string]any{"role": "assistant", "content": reply.Text}
	if len(reply.ToolCalls) > 0 {
		msg["tool_calls"] = chatCalls(reply.ToolCalls, false)
	}
	return map[string]any{"id": id, "object": "chat.completion", "created": 0, "model": req.Model,
		"choices": []map[string]any{{"index": 0, "message": msg, "finish_reason": finish(reply)}},
		"usage":   chatUsage(reply.Usage)}
}

// chatStream sends reply as server-sent events: the text in two chunks, the tool calls, the
// finish, the usage, and [DONE]; Cut stops after the first chunk.
func chatStream(w http.ResponseWriter, id string, req Request, reply Reply) {
	w.Header().Set("Content-Type", "text/event-stream")
	flusher, _ := w.(http.Flusher)
	send := func(choice map[string]any, usage map[string]any) {
		chunk := map[string]any{"id": id, "object": "chat.completion.chunk", "created": 0, "model": req.Model, "choices": []map[string]any{}}
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
	first, second := halves(reply.Text)
	send(map[string]any{"index": 0, "delta": map[string]any{"role": "assistant", "content": first}, "finish_reason": nil}, nil)
	if reply.Cut {
		return
	}
	send(map[string]any{"index": 0, "delta": map[string]any{"content": second}, "finish_reason": nil}, nil)
	if len(reply.ToolCalls) > 0 {
		send(map[string]any{"index": 0, "delta": map[string]any{"tool_calls": chatCalls(reply.ToolCalls, true)}, "finish_reason": nil}, nil)
	}
	send(map[string]any{"index": 0, "delta": map[string]any{}, "finish_reason": finish(reply)}, nil)
	send(nil, chatUsage(reply.Usage))
	fmt.Fprint(w, "data: [DONE]\n\n")
	if flusher != nil {
		flusher.Flush()
	}
}
