package mcp

import (
	"context"
	"sync/atomic"

	"github.com/warrenhq/warren/mcp/mcpconfig"
)

// DiscoverCounting is Discover counting in read the bytes it reads from the server, so a test
// can hold a hostile server's tool list to the bounds.
func DiscoverCounting(ctx context.Context, cfg *mcpconfig.Server, read *atomic.Int64) ([]ToolInfo, error) {
	return discover(ctx, cfg, read, nil)
}
