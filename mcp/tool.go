package mcp

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/warrenhq/warren/mcp/mcpconfig"
	"github.com/warrenhq/warren/tools"
)

// ToolInfo is one server tool as the host advertises it.
type ToolInfo struct {
	// Server is the server's name.
	Server string
	// Tool is the server's own name for the tool.
	Tool string
	// Name is mcpconfig.ToolName(Server, Tool), the name agents call it by.
	Name string
	// Description is the server's description of the tool.
	Description string
	// Parameters is the server's input schema as JSON; always an object schema.
	Parameters json.RawMessage
	// Effects are what the config vouches the tool does: a tool of the entry's read_only_tools
	// reads (and reaches the network unless its openWorldHint is false); any other is
	// undeclared, so the read-only floor refuses it. A server's readOnlyHint alone is not taken
	// on its word.
	Effects tools.Effects
}

// Tool is a server tool as a tools.Tool: Execute makes one MCP call through the Manager's
// session for the server. Every result carries exactly one Note (Fn "mcp") saying which session
// served it and whether the server answered without error; every failure that is not a host bug
// (timeout, exit, malformed reply, a server error) is an error result, never a Go error, so the
// Note reaches the trace.
type Tool struct {
	mgr  *Manager
	srv  *server // resolved by Manager.Tool; nil when the server was added later (or never)
	info ToolInfo
	spec tools.Spec
	// notePrefix is "server/tool session ", the fixed part of the Note's Text.
	notePrefix string
}

var _ tools.Tool = (*Tool)(nil)

// NoteFn is the Fn of the Note every MCP call's result carries.
const NoteFn = "mcp"

// Tool returns the tools.Tool for one discovered tool of a server added with Add.
func (m *Manager) Tool(info ToolInfo) tools.Tool {
	return newTool(m, info)
}

// newTool builds a Tool; m may be nil (Discover compiles specs without a Manager).
func newTool(m *Manager, info ToolInfo) *Tool {
	t := &Tool{
		mgr:        m,
		info:       info,
		spec:       tools.Spec{Name: info.Name, Description: info.Description, Parameters: info.Parameters},
		notePrefix: info.Server + "/" + info.Tool + " session ",
	}
	if m != nil {
		t.srv = m.lookup(info.Server)
	}
	return t
}

// Spec implements tools.Tool: the host name, the server's description and its input schema.
func (t *Tool) Spec() tools.Spec { return t.spec }

var _ tools.Declarer = (*Tool)(nil)

// Effects implements tools.Declarer: what the server's annotations say (see ToolInfo.Effects).
func (t *Tool) Effects() tools.Effects { return t.info.Effects }

// Execute implements tools.Tool: one call on the server's session, started (or restarted) if
// need be, under the call's context. The server's call_timeout bounds its answer alone, from the
// moment the request goes out: the wait for the session to start (bounded by startTimeout) and
// for a free slot behind other calls is the host's own queueing, which a loaded machine
// stretches, so it never counts (docs/mcp.md, "call_timeout"). It returns a Go error only when
// the tool names a server the Manager was never given (a host wiring bug).
func (t *Tool) Execute(ec *tools.ExecContext, args json.RawMessage) (tools.Result, error) {
	srv := t.srv
	if srv == nil && t.mgr != nil {
		srv = t.mgr.lookup(t.info.Server)
	}
	if srv == nil {
		return tools.Result{}, fmt.Errorf("%s: %w %q", t.info.Name, ErrUnknownServer, t.info.Server)
	}
	if !srv.enter() {
		return t.failed(0, fmt.Sprintf("%s: server %s is closed: the world has ended", t.info.Name, t.info.Server)), nil
	}
	replied := false
	defer func() { srv.leave(replied) }()

	ctx := ec.Context()
	sess, number, err := srv.acquire(ctx)
	if err != nil {
		res := t.failed(number, t.startFailure(ctx, err))
		if errors.Is(err, ErrTimeout) {
			res.Notes = append(res.Notes, tools.RealTimeNote("mcp start timeout "+startTimeout.String()))
		}
		return res, nil
	}
	select {
	case sess.slots <- struct{}{}:
	case <-sess.ended:
		return t.failed(number, sess.failure), nil
	case <-ctx.Done():
		return t.failed(number, t.contextFailure(ctx, 0)), nil
	}
	defer func() { <-sess.slots }()

	timeout := callTimeout(&srv.cfg)
	callCtx, cancel := context.WithTimeoutCause(ctx, timeout, ErrTimeout)
	defer cancel()
	out, err := t.call(callCtx, sess, args)
	if err != nil {
		return t.timedOut(callCtx, timeout, t.failed(number, t.callFailure(callCtx, timeout, sess, err))), nil
	}
	replied = true
	res := tools.Result{Content: cut(renderContent(out), maxResultBytes(&srv.cfg)), IsError: out.IsError}
	note := tools.Note{Fn: NoteFn, Text: t.noteText(number), OK: !out.IsError}
	if out.IsError {
		note.Err = "the tool reported an error"
	}
	res.Notes = []tools.Note{note}
	return res, nil
}

// call sends tools/call on sess under ctx, ended early if the session ends.
func (t *Tool) call(ctx context.Context, sess *session, args json.RawMessage) (*mcp.CallToolResult, error) {
	callCtx, stop := sess.bind(ctx)
	defer stop()
	callCtx, budget := withBudget(callCtx)
	var req mcp.CallToolRequest
	req.Params.Name = t.info.Tool
	if len(args) > 0 {
		req.Params.Arguments = args
	}
	out, err := sess.client.CallTool(callCtx, req)
	switch {
	case err != nil && (budget.exceeded.Load() || errors.Is(err, ErrReplyTooLarge) || err.Error() == sess.tooLarge()):
		// Over max_reply_bytes: an HTTP body cut at the bound, or the error reply a stdio
		// session's watcher put in place of the reply it skipped.
		err = fmt.Errorf("%w: %s", ErrReplyTooLarge, sess.tooLarge())
	case err == nil && out == nil:
		err = fmt.Errorf("%w: empty result", ErrProtocol)
	}
	return out, err
}

// timedOut adds the real-time note to res when the call's call_timeout is what ended it.
func (t *Tool) timedOut(ctx context.Context, timeout time.Duration, res tools.Result) tools.Result {
	if errors.Is(context.Cause(ctx), ErrTimeout) {
		res.Notes = append(res.Notes, tools.RealTimeNote("mcp call_timeout "+timeout.String()))
	}
	return res
}

// Server is the name of the server the tool belongs to (what a seeded crash fault kills).
func (t *Tool) Server() string { return t.info.Server }

// failed is the error result of a call that did not get a usable reply.
func (t *Tool) failed(number uint64, message string) tools.Result {
	return tools.Result{
		Content: message,
		IsError: true,
		Notes:   []tools.Note{{Fn: NoteFn, Text: t.noteText(number), Err: message}},
	}
}

// noteText is "server/tool session N".
func (t *Tool) noteText(number uint64) string {
	return string(strconv.AppendUint([]byte(t.notePrefix), number, 10))
}

// startFailure explains why no session could serve the call.
func (t *Tool) startFailure(ctx context.Context, err error) string {
	switch {
	case errors.Is(err, ErrClosed):
		return fmt.Sprintf("%s: server %s is closed: the world has ended", t.info.Name, t.info.Server)
	case ctx.Err() != nil:
		return t.contextFailure(ctx, 0)
	default:
		return fmt.Sprintf("%s: %v", t.info.Name, err)
	}
}

// contextFailure explains a call whose context ended: its call_timeout (timeout, when the
// context carries one), or the caller's.
func (t *Tool) contextFailure(ctx context.Context, timeout time.Duration) string {
	if errors.Is(context.Cause(ctx), ErrTimeout) {
		return fmt.Sprintf("%s: no reply within %s (call_timeout); the call was cancelled", t.info.Name, timeout)
	}
	return fmt.Sprintf("%s: the call was cancelled (%v)", t.info.Name, context.Cause(ctx))
}

// callFailure explains a call that went out but got no usable reply.
func (t *Tool) callFailure(ctx context.Context, timeout time.Duration, sess *session, err error) string {
	if errors.Is(err, transport.ErrTransportClosed) && sess.transport == "stdio" {
		// The server closed its stdout: the reaper is about to say why.
		select {
		case <-sess.ended:
		case <-ctx.Done():
		}
	}
	switch {
	case sess.isEnded():
		if t.srv != nil {
			// Record the exit now, on the call's own goroutine, rather than whenever the
			// reaper's goroutine gets to it: the call's result is then never seen before the
			// session's exit, and the next call restarts the server, whatever the scheduling.
			t.srv.sessionBroke(sess)
		}
		return sess.failure
	case ctx.Err() != nil:
		return t.contextFailure(ctx, timeout)
	case errors.Is(err, ErrReplyTooLarge):
		return fmt.Sprintf("%s: %s", t.info.Name, sess.tooLarge())
	case errors.Is(err, transport.ErrSessionTerminated):
		sess.breakWith("session terminated by the server",
			fmt.Sprintf("server %s ended the session; it is restarted on the next call", t.info.Server))
		return sess.failure
	default:
		return fmt.Sprintf("%s: server %s failed the call: %v", t.info.Name, t.info.Server, err)
	}
}

// renderContent concatenates a result's contents in order, one per line: text as is, anything
// else as a bracketed summary. A result with no content shows its structured content as JSON.
func renderContent(out *mcp.CallToolResult) string {
	if len(out.Content) == 1 {
		if text, ok := out.Content[0].(mcp.TextContent); ok {
			return text.Text
		}
	}
	if len(out.Content) == 0 {
		return renderStructured(out)
	}
	var sb strings.Builder
	for i, content := range out.Content {
		if i > 0 {
			sb.WriteByte('\n')
		}
		sb.WriteString(renderOne(content))
	}
	return sb.String()
}

// renderOne renders one content item.
func renderOne(content mcp.Content) string {
	switch c := content.(type) {
	case mcp.TextContent:
		return c.Text
	case mcp.ImageContent:
		return fmt.Sprintf("[image: %s, %d bytes]", c.MIMEType, decodedLen(c.Data))
	case mcp.AudioContent:
		return fmt.Sprintf("[audio: %s, %d bytes]", c.MIMEType, decodedLen(c.Data))
	case mcp.ResourceLink:
		return fmt.Sprintf("[resource link: %s]", c.URI)
	case mcp.EmbeddedResource:
		switch r := c.Resource.(type) {
		case mcp.TextResourceContents:
			return r.Text
		case mcp.BlobResourceContents:
			return fmt.Sprintf("[resource: %s, %s, %d bytes]", r.URI, r.MIMEType, decodedLen(r.Blob))
		}
		return "[resource]"
	default:
		return fmt.Sprintf("[content: %T]", content)
	}
}

// renderStructured renders structured content as JSON, or "" when there is none.
func renderStructured(out *mcp.CallToolResult) string {
	if len(out.RawStructuredContent) > 0 {
		return string(out.RawStructuredContent)
	}
	if out.StructuredContent == nil {
		return ""
	}
	encoded, err := json.Marshal(out.StructuredContent)
	if err != nil {
		return fmt.Sprintf("[structured content that does not encode: %v]", err)
	}
	return string(encoded)
}

// decodedLen is the size of base64 data once decoded (0 for data that is not base64).
func decodedLen(data string) int {
	n, err := base64.StdEncoding.DecodeString(data)
	if err != nil {
		return 0
	}
	return len(n)
}

// cut bounds text to max bytes, cutting at a UTF-8 boundary and saying how much there was.
func cut(text string, max int) string {
	if len(text) <= max {
		return text
	}
	end := max
	for end > 0 && !utf8.RuneStart(text[end]) {
		end--
	}
	return text[:end] + fmt.Sprintf("\n[cut: the result was %d bytes; max_result_bytes is %d]", len(text), max)
}

// callTimeout, maxConcurrency and maxResultBytes read a config's limits, defaults for zero.
func callTimeout(cfg *mcpconfig.Server) time.Duration {
	if cfg.CallTimeout <= 0 {
		return mcpconfig.DefaultCallTimeout
	}
	return cfg.CallTimeout
}

func maxConcurrency(cfg *mcpconfig.Server) int {
	if cfg.MaxConcurrency <= 0 {
		return mcpconfig.DefaultMaxConcurrency
	}
	return cfg.MaxConcurrency
}

func maxResultBytes(cfg *mcpconfig.Server) int {
	if cfg.MaxResultBytes <= 0 {
		return mcpconfig.DefaultMaxResultBytes
	}
	return cfg.MaxResultBytes
}

// maxReplyBytes, maxTools and maxToolSchemaBytes read the bounds a server is held to, defaults
// for zero (the reply bound never less than the result bound, as the loader has it).
func maxReplyBytes(cfg *mcpconfig.Server) int {
	if cfg.MaxReplyBytes <= 0 {
		return max(mcpconfig.DefaultMaxReplyBytes, maxResultBytes(cfg))
	}
	return cfg.MaxReplyBytes
}

func maxTools(cfg *mcpconfig.Server) int {
	if cfg.MaxTools <= 0 {
		return mcpconfig.DefaultMaxTools
	}
	return cfg.MaxTools
}

func maxToolSchemaBytes(cfg *mcpconfig.Server) int {
	if cfg.MaxToolSchemaBytes <= 0 {
		return mcpconfig.DefaultMaxToolSchemaBytes
	}
	return cfg.MaxToolSchemaBytes
}
