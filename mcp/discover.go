package mcp

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/warrenhq/warren/mcp/mcpconfig"
	"github.com/warrenhq/warren/tools"
)

// Discover starts the server, initializes it, lists its tools (every page), stops it and
// returns the tools sorted by Name, filtered by cfg.Tools. An allow-list naming a tool the
// server does not offer wraps ErrUnknownServerTool and lists what it offers; a tool whose name
// or schema does not make a valid tools.Spec is an error naming it (wrapping
// tools.ErrInvalidSpec). Start failures wrap ErrStart (and ErrServerExited, ErrProtocol or
// ErrTimeout when one of those is why).
func Discover(ctx context.Context, cfg *mcpconfig.Server) (infos []ToolInfo, err error) {
	if cfg == nil {
		return nil, fmt.Errorf("discover: %w: config is nil", ErrUnknownServer)
	}
	sess, err := startSession(ctx, cfg, 1, nil)
	if err != nil {
		return nil, fmt.Errorf("discover %s (%s): %w", cfg.Name, cfg.Origin(), err)
	}
	defer func() {
		if stopErr := sess.shutdown(false); stopErr != nil {
			err = errors.Join(err, stopErr)
		}
	}()
	listed, err := listTools(ctx, sess)
	if err != nil {
		return nil, fmt.Errorf("discover %s (%s): %w", cfg.Name, cfg.Origin(), err)
	}
	infos, err = toolInfos(cfg, listed)
	if err != nil {
		return nil, fmt.Errorf("discover %s (%s): %w", cfg.Name, cfg.Origin(), err)
	}
	return infos, nil
}

// listTools lists every page of the server's tools.
func listTools(ctx context.Context, sess *session) ([]mcp.Tool, error) {
	ctx, cancel := context.WithTimeoutCause(ctx, startTimeout, ErrTimeout)
	defer cancel()
	ctx, stop := sess.bind(ctx)
	defer stop()
	res, err := sess.client.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		return nil, sess.explain(ctx, "list tools", err)
	}
	return res.Tools, nil
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
	infos := make([]ToolInfo, 0, len(wanted))
	for _, name := range wanted {
		info, err := toolInfo(cfg.Name, byName[name])
		if err != nil {
			return nil, err
		}
		infos = append(infos, info)
	}
	slices.SortFunc(infos, func(a, b ToolInfo) int { return cmp.Compare(a.Name, b.Name) })
	return infos, nil
}

// toolInfo builds one ToolInfo and checks it compiles as a tools.Spec.
func toolInfo(server string, tool mcp.Tool) (ToolInfo, error) {
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
		Effects:     annotatedEffects(tool.Annotations),
	}
	if _, err := tools.NewHandle(newTool(nil, info)); err != nil {
		return ToolInfo{}, fmt.Errorf("tool %q: %w", tool.Name, err)
	}
	return info, nil
}

// annotatedEffects turns a tool's annotations into its effects: readOnlyHint true means it reads
// (and, unless openWorldHint is false, reaches the network); anything else declares nothing, so
// the tool is assumed to do everything.
func annotatedEffects(a mcp.ToolAnnotation) tools.Effects {
	if a.ReadOnlyHint == nil || !*a.ReadOnlyHint {
		return tools.EffectsUnknown
	}
	e := tools.EffectsDeclared | tools.EffectReads
	if a.OpenWorldHint == nil || *a.OpenWorldHint {
		e |= tools.EffectNetwork
	}
	return e
}
