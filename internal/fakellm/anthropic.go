package fakellm

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// The Anthropic half: POST /v1/messages.

// anthropicBlock is the part of a content block (of a message, or of the system prompt) the
// server reads.
type anthropicBlock struct {
	Type         string          `json:"type"`
	Text         string          `json:"text"`
	ID           string          `json:"id"`
	Name         string          `json:"name"`
	Input        json.RawMessage `json:"input"`
	ToolUseID    string          `json:"tool_use_id"`
	Content      json.RawMessage `json:"content"`
	IsError      bool            `json:"is_error"`
	CacheControl json.RawMessage `json:"cache_control"`
}

// messagesRequest is the part of a Messages request the server reads.
type messagesRequest struct {
	Model     string          `json:"model"`
	MaxTokens *int64          `json:"max_tokens"`
	System    json.RawMessage `json:"system"`
	Messages  []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Tools []struct {
		Name         string          `json:"name"`
		CacheControl json.RawMessage `json:"cache_control"`
	} `json:"tools"`
	Stream        bool            `json:"stream"`
	StopSequences []string        `json:"stop_sequences"`
	Temperature   *float64        `json:"temperature"`
	CacheControl  json.RawMessage `json:"cache_control"`
}

// marked reports whether a cache_control value was sent (and is not null).
func marked(raw json.RawMessage) bool { return len(raw) > 0 && string(raw) != "null" }

// blocks reads content that is a string (one text block) or an array of blocks.
func blocks(raw json.RawMessage) []anthropicBlock {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []anthropicBlock{{Type: "text", Text: s}}
	}
	var out []anthropicBlock
	_ = json.Unmarshal(raw, &out)
	return out
}

// texts joins the text of blocks (a tool_result's content) with newlines.
func texts(bs []anthropicBlock) string {
	var parts []string
	for _, b := range bs {
		if b.Type == "text" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// read summarises a Messages request.
func (wr *messagesRequest) read(r *http.Request) Request {
	req := Request{Wire: WireAnthropic, Model: wr.Model, MaxTokens: wr.MaxTokens, Stream: wr.Stream, Stop: wr.StopSequences,
		Temperature: wr.Temperature, Authorized: r.Header.Get("X-Api-Key") != "" || len(r.Header.Get("Authorization")) > len("Bearer ")}
	if marked(wr.CacheControl) {
		req.CacheMarks = append(req.CacheMarks, "cache_control")
	}
	for i, t := range wr.Tools {
		req.Tools = append(req.Tools, t.Name)
		if marked(t.CacheControl) {
			req.CacheMarks = append(req.CacheMarks, fmt.Sprintf("tools[%d]", i))
		}
	}
	if len(wr.System) > 0 {
		system := blocks(wr.System)
		for i, b := range system {
			if marked(b.CacheControl) {
				req.CacheMarks = append(req.CacheMarks, fmt.Sprintf("system[%d]", i))
			}
		}
		req.System = texts(system)
	}
	for i, m := range wr.Messages {
		msg := Message{Role: m.Role}
		var text []string
		for j, b := range blocks(m.Content) {
			blk := Block{Type: b.Type, Cached: marked(b.CacheControl)}
			switch b.Type {
			case "text":
				blk.Text = b.Text
				text = append(text, b.Text)
			case "tool_use":
				blk.ID, blk.Name, blk.Input = b.ID, b.Name, string(b.Input)
				msg.ToolCalls = append(msg.ToolCalls, ToolCall{ID: b.ID, Name: b.Name, Arguments: string(b.Input)})
			case "tool_result":
				blk.ToolUseID, blk.IsError = b.ToolUseID, b.IsError
				if len(b.Content) > 0 {
					blk.Text = texts(blocks(b.Content))
				}
				text = append(text, blk.Text)
			}
			if blk.Cached {
				req.CacheMarks = append(req.CacheMarks, fmt.Sprintf("messages[%d].content[%d]", i, j))
			}
			msg.Blocks = append(msg.Blocks, blk)
		}
		msg.Content = strings.Join(text, "\n")
		req.Messages = append(req.Messages, msg)
	}
	return req
}

func (s *Server) messages(w http.ResponseWriter, r *http.Request) {
	var wr messagesRequest
	if err := json.NewDecoder(r.Body).Decode(&wr); err != nil {
		anthropicError(w, http.StatusBadRequest, "the request body is not a Messages request")
		return
	}
	req := s.record(wr.read(r))

	reply := s.script(req.Seq, req)
	if !hold(r.Context(), reply) {
		return
	}
	switch {
	case failing(reply):
		if reply.RetryAfter != "" {
			w.Header().Set("Retry-After", reply.RetryAfter)
		}
		anthropicError(w, reply.Status, fmt.Sprintf("fake provider: status %d", reply.Status))
		return
	case reply.Malformed && req.Stream:
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "event: message_start\ndata: {\"type\": \"message_start\", \"message\": {\n\n")
		return
	case reply.Malformed:
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"id": "msg_broken", "type": "message", "content": [`)
		return
	}
	id := "msg_fake_" + strconv.Itoa(req.Seq)
	if req.Stream {
		messageStream(w, id, req, reply)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(message(id, req, reply))
}

// errorTypes are the Messages API's error types by status.
var errorTypes = map[int]string{
	400: "invalid_request_error", 401: "authentication_error", 402: "billing_error", 403: "permission_error",
	404: "not_found_error", 413: "request_too_large", 429: "rate_limit_error", 500: "api_error",
	504: "timeout_error", 529: "overloaded_error",
}

// errorBody is the Messages API's error body for status.
func errorBody(status int, msg string) map[string]any {
	typ := errorTypes[status]
	if typ == "" {
		typ = "api_error"
	}
	return map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": msg}}
}

// anthropicError fails a request with status, in the Messages API's error body.
func anthropicError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Request-Id", "req_fake")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(errorBody(status, msg))
}

// input is a call's arguments as a tool_use block's input: the JSON object they are, or (for
// a garbled call) the text as a JSON string, which is not an object.
func input(c ToolCall) json.RawMessage {
	switch {
	case strings.TrimSpace(c.Arguments) == "":
		return json.RawMessage("{}")
	case json.Valid([]byte(c.Arguments)):
		return json.RawMessage(c.Arguments)
	}
	data, _ := json.Marshal(c.Arguments)
	return data
}

// stopReason is the stop reason of reply.
func stopReason(reply Reply) string {
	if len(reply.ToolCalls) > 0 {
		return "tool_use"
	}
	return "end_turn"
}

// messageUsage is reply's usage on the wire: input_tokens exclude cache reads and writes.
func messageUsage(u Usage) map[string]any {
	return map[string]any{"input_tokens": max(0, u.Prompt-u.Cached-u.CacheWrite), "output_tokens": u.Completion,
		"cache_read_input_tokens": u.Cached, "cache_creation_input_tokens": u.CacheWrite}
}

// answerBlock is one content block of an answer.
type answerBlock struct {
	text string
	// call is the block's tool call (nil: a text block).
	call *ToolCall
}

// blocks is reply's content: its text (when it has some, or no calls), then a tool_use block
// per call.
func (reply Reply) blocks() []answerBlock {
	var out []answerBlock
	if reply.Text != "" || len(reply.ToolCalls) == 0 {
		out = append(out, answerBlock{text: reply.Text})
	}
	for i := range reply.ToolCalls {
		out = append(out, answerBlock{call: &reply.ToolCalls[i]})
	}
	return out
}

// wire is the block as a whole answer sends it.
func (b answerBlock) wire() map[string]any {
	if b.call == nil {
		return map[string]any{"type": "text", "text": b.text}
	}
	return map[string]any{"type": "tool_use", "id": b.call.ID, "name": b.call.Name, "input": input(*b.call)}
}

// message is a whole (not streamed) answer.
func message(id string, req Request, reply Reply) map[string]any {
	var content []map[string]any
	for _, b := range reply.blocks() {
		content = append(content, b.wire())
	}
	return map[string]any{"id": id, "type": "message", "role": "assistant", "model": req.Model, "content": content,
		"stop_reason": stopReason(reply), "stop_sequence": nil, "usage": messageUsage(reply.Usage)}
}

// messageStream sends reply as the Messages API's server-sent events: message_start (with the
// input usage), for each block a content_block_start, its deltas in two halves (text_delta, or
// input_json_delta for a tool_use's input) and a content_block_stop, a ping, then message_delta
// (the stop reason and the usage) and message_stop. Cut stops after the first delta, and
// StreamError sends an error event there instead of the rest.
func messageStream(w http.ResponseWriter, id string, req Request, reply Reply) {
	w.Header().Set("Content-Type", "text/event-stream")
	flusher, _ := w.(http.Flusher)
	send := func(event map[string]any) {
		data, _ := json.Marshal(event)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event["type"], data)
		if flusher != nil {
			flusher.Flush()
		}
	}
	usage := messageUsage(reply.Usage)
	start := map[string]any{"input_tokens": usage["input_tokens"], "output_tokens": 1,
		"cache_read_input_tokens": usage["cache_read_input_tokens"], "cache_creation_input_tokens": usage["cache_creation_input_tokens"]}
	send(map[string]any{"type": "message_start", "message": map[string]any{"id": id, "type": "message", "role": "assistant", "model": req.Model,
		"content": []any{}, "stop_reason": nil, "stop_sequence": nil, "usage": start}})
	for i, b := range reply.blocks() {
		var first, second map[string]any
		if b.call == nil {
			send(map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "text", "text": ""}})
			a, z := halves(b.text)
			first = map[string]any{"type": "text_delta", "text": a}
			second = map[string]any{"type": "text_delta", "text": z}
		} else {
			args := b.call.Arguments // streamed, garbled arguments arrive as they are
			if strings.TrimSpace(args) == "" {
				args = "{}"
			}
			send(map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "tool_use", "id": b.call.ID, "name": b.call.Name, "input": map[string]any{}}})
			a, z := halves(args)
			first = map[string]any{"type": "input_json_delta", "partial_json": a}
			second = map[string]any{"type": "input_json_delta", "partial_json": z}
		}
		send(map[string]any{"type": "content_block_delta", "index": i, "delta": first})
		if reply.StreamError != 0 {
			send(errorBody(reply.StreamError, fmt.Sprintf("fake provider: status %d in the stream", reply.StreamError)))
			return
		}
		if reply.Cut {
			return
		}
		send(map[string]any{"type": "content_block_delta", "index": i, "delta": second})
		send(map[string]any{"type": "content_block_stop", "index": i})
	}
	send(map[string]any{"type": "ping"})
	send(map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stopReason(reply), "stop_sequence": nil}, "usage": usage})
	send(map[string]any{"type": "message_stop"})
}
