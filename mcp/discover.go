package mcp

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/warrenhq/warren/mcp/mcpconfig"
	"github.com/warrenhq/warren/tools"
)

// Discover starts the server, initializes it, lists its tools (every page), stops it and
// returns the tools sorted by Name, filtered by cfg.Tools. An allow-list naming a tool the
// server does not offer wraps ErrUnknownServerTool and lists what it offers; a tool whose name
// or schema does not make a valid tools.Spec is an error naming it (wrapping
// tools.ErrInvalidSpec). A list over the entry's bounds (more than max_tools tools, a page of it
// over max_reply_bytes, a tool's description or schema over max_tool_schema_bytes) is refused,
// wrapping ErrToolListRefused. Start failures wrap ErrStart (and ErrServerExited, ErrProtocol or
// ErrTimeout when one of those is why).
func Discover(ctx context.Context, cfg *mcpconfig.Server) ([]ToolInfo, error) {
	return discover(ctx, cfg, nil, nil)
}

// DiscoverPublic is Discover reaching a server over HTTP only at public addresses, checked as each
// connection is made, except the hosts allowed reports true for (Options.PrivateHosts): how host
// serve lists the tools of a submitted scenario's servers.
func DiscoverPublic(ctx context.Context, cfg *mcpconfig.Server, allowed func(host string) bool) ([]ToolInfo, error) {
	return discover(ctx, cfg, nil, allowed)
}

// discover is Discover counting in read the bytes read from the server (nil: not counted), and
// guarded by private when set (DiscoverPublic).
func discover(ctx context.Context, cfg *mcpconfig.Server, read *atomic.Int64, private func(host string) bool) (infos []ToolInfo, err error) {
	if cfg == nil {
		return nil, fmt.Errorf("discover: %w: config is nil", ErrUnknownServer)
	}
	sess, err := startSession(ctx, cfg, 1, nil, read, private)
	if err != nil {
		return nil, fmt.Errorf("discover %s (%s): %w", cfg.Name, cfg.Origin(), err)
	}
	defer func() {
		if stopErr := sess.shutdown(false); stopErr != nil {
			err = errors.Join(err, stopErr)
		}
	}()
	listed, err := listTools(ctx, sess, cfg)
	if err != nil {
		return nil, fmt.Errorf("discover %s (%s): %w", cfg.Name, cfg.Origin(), err)
	}
	infos, err = toolInfos(cfg, listed)
	if err != nil {
		return nil, fmt.Errorf("discover %s (%s): %w", cfg.Name, cfg.Origin(), err)
	}
	return infos, nil
}

// listTools lists every page of the server's tools, refusing the list as soon as it goes past
// max_tools (or, with pages that add nothing, past max_tools pages) or a page goes past
// max_reply_bytes, so a hostile server's list is never read further than the bounds.
func listTools(ctx context.Context, sess *session, cfg *mcpconfig.Server) ([]mcp.Tool, error) {
	ctx, cancel := context.WithTimeoutCause(ctx, startTimeout, ErrTimeout)
	defer cancel()
	ctx, stop := sess.bind(ctx)
	defer stop()
	limit := maxTools(cfg)
	var all []mcp.Tool
	seen := map[mcp.Cursor]bool{}
	var req mcp.ListToolsRequest
	for pages := 1; ; pages++ {
		pageCtx, budget := withBudget(ctx)
		res, err := sess.client.ListToolsByPage(pageCtx, req)
		switch {
		case err != nil && (budget.exceeded.Load() || errors.Is(err, ErrReplyTooLarge) || err.Error() == sess.tooLarge()):
			return nil, fmt.Errorf("%w: server %s: a page of its tool list is more than %d bytes (max_reply_bytes); raise max_reply_bytes if the server is to be trusted with that",
				ErrToolListRefused, cfg.Name, sess.maxReply)
		case err != nil:
			return nil, sess.explain(ctx, "list tools", err)
		}
		all = append(all, res.Tools...)
		switch next := res.NextCursor; {
		case len(all) > limit:
			return nil, fmt.Errorf("%w: server %s lists more than %d tools (max_tools); raise max_tools if the server is to be trusted with that many",
				ErrToolListRefused, cfg.Name, limit)
		case next == "":
			return all, nil
		case seen[next]:
			return nil, fmt.Errorf("list tools: %w: the server repeats the cursor %q", ErrProtocol, next)
		case pages >= limit:
			return nil, fmt.Errorf("%w: server %s's tool list runs past %d pages (max_tools) with %d tools in them",
				ErrToolListRefused, cfg.Name, limit, len(all))
		default:
			seen[next] = true
			req.Params.Cursor = next
		}
	}
}

// toolInfos turns a server's tool list into ToolInfos: filtered by the allow-list, sorted by
// name, each one checked to compile as a tools.Spec.
func toolInfos(cfg *mcpconfig.Server, listed []mcp.Tool) ([]ToolInfo, error) {
	byName := make(map[string]mcp.Tool, len(listed))
	for _, tool := range listed {
		if _, dup := byName[tool.Name]; dup {
			return nil, fmt.Errorf("%w: the server lists tool %q twice", ErrProtocol, tool.Name)
		}
		byName[tool.Name] = tool
	}
	offered := make([]string, 0, len(byName))
	for name := range byName {
		offered = append(offered, name)
	}
	slices.Sort(offered)
	wanted := offered
	if cfg.Tools != nil {
		var missing []string
		for _, name := range cfg.Tools {
			if _, ok := byName[name]; !ok {
				missing = append(missing, name)
			}
		}
		if len(missing) > 0 {
			slices.Sort(missing)
			return nil, fmt.Errorf("%w: the tools allow-list names %s; the server offers %s",
				ErrUnknownServerTool, strings.Join(missing, ", "), strings.Join(offered, ", "))
		}
		wanted = slices.Compact(slices.Sorted(slices.Values(cfg.Tools)))
	}
	for _, tool := range listed {
		if err := checkToolSize(cfg, tool); err != nil {
			return nil, err
		}
	}
	infos := make([]ToolInfo, 0, len(wanted))
	for _, name := range cfg.ReadOnlyTools {
		if _, ok := byName[name]; !ok {
			return nil, fmt.Errorf("%w: read_only_tools names %s; the server offers %s",
				ErrUnknownServerTool, name, strings.Join(offered, ", "))
		}
	}
	for _, name := range wanted {
		info, err := toolInfo(cfg.Name, byName[name], slices.Contains(cfg.ReadOnlyTools, name))
		if err != nil {
			return nil, err
		}
		infos = append(infos, info)
	}
	slices.SortFunc(infos, func(a, b ToolInfo) int { return cmp.Compare(a.Name, b.Name) })
	return infos, nil
}

// checkToolSize refuses the list of a tool whose description, input schema or output schema is
// over max_tool_schema_bytes: each reaches a model's prompt on every turn that advertises it.
func checkToolSize(cfg *mcpconfig.Server, tool mcp.Tool) error {
	limit := maxToolSchemaBytes(cfg)
	sizes := [...]struct {
		what string
		n    int
	}{
		{"description", len(tool.Description)},
		{"input schema", schemaSize(tool.RawInputSchema, tool.InputSchema)},
		{"output schema", schemaSize(tool.RawOutputSchema, tool.OutputSchema)},
	}
	for _, s := range sizes {
		if s.n > limit {
			return fmt.Errorf("%w: server %s's tool %q: its %s is %d bytes, more than max_tool_schema_bytes (%d)",
				ErrToolListRefused, cfg.Name, tool.Name, s.what, s.n, limit)
		}
	}
	return nil
}

// schemaSize is the size of a schema as JSON: the raw form when the server sent one, else the
// parsed form encoded again.
func schemaSize[S any](raw json.RawMessage, parsed S) int {
	if raw != nil {
		return len(raw)
	}
	encoded, err := json.Marshal(parsed)
	if err != nil {
		return 0
	}
	return len(encoded)
}

// toolInfo builds one ToolInfo and checks it compiles as a tools.Spec; readOnly says that the
// config vouches the tool only reads (read_only_tools).
func toolInfo(server string, tool mcp.Tool, readOnly bool) (ToolInfo, error) {
	schema := tool.RawInputSchema
	if schema == nil {
		if tool.InputSchema.Type != "object" {
			return ToolInfo{}, fmt.Errorf("tool %q: %w: input schema type is %q, not \"object\"", tool.Name, tools.ErrInvalidSpec, tool.InputSchema.Type)
		}
		encoded, err := json.Marshal(tool.InputSchema)
		if err != nil {
			return ToolInfo{}, fmt.Errorf("tool %q: %w: input schema: %w", tool.Name, tools.ErrInvalidSpec, err)
		}
		schema = encoded
	}
	info := ToolInfo{
		Server:      server,
		Tool:        tool.Name,
		Name:        mcpconfig.ToolName(server, tool.Name),
		Description: tool.Description,
		Parameters:  schema,
		Effects:     vouchedEffects(readOnly, tool.Annotations),
	}
	if _, err := tools.NewHandle(newTool(nil, info)); err != nil {
		return ToolInfo{}, fmt.Errorf("tool %q: %w", tool.Name, err)
	}
	return info, nil
}

// vouchedEffects are a tool's effects: reading (and, unless its openWorldHint is false, reaching
// the network) when the config vouches it only reads; otherwise nothing declared, so the tool is
// assumed to do everything. The server's readOnlyHint is not taken on its word: a server that
// writes can annotate a tool read-only, and the read-only floor would let it through.
func vouchedEffects(readOnly bool, a mcp.ToolAnnotation) tools.Effects {
	if !readOnly {
		return tools.EffectsUnknown
	}
	e := tools.EffectsDeclared | tools.EffectReads
	if a.OpenWorldHint == nil || *a.OpenWorldHint {
		e |= tools.EffectNetwork
	}
	return e
}
