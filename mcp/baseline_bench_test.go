package mcp_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
)

// benchRawClient is the baseline of benchCall: the same echo round trip through mcp-go's own
// client, with nothing of Warren's in between (no Manager, no slot, no timeout context, no result
// rendering, no stdout watcher). The difference between the two is what Warren adds to a call.
func benchRawClient(b *testing.B, transport string) {
	cfg := configFor(b, transport, "kv")
	var c *client.Client
	var err error
	if transport == "http" {
		c, err = client.NewStreamableHttpClient(cfg.URL)
	} else {
		c, err = client.NewStdioMCPClient(cfg.Command, nil, cfg.Args...)
	}
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = c.Close() })
	ctx := context.Background()
	if err := c.Start(ctx); err != nil {
		b.Fatal(err)
	}
	init := mcpgo.InitializeRequest{}
	init.Params.ProtocolVersion = mcpgo.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcpgo.Implementation{Name: "bench", Version: "0"}
	if _, err := c.Initialize(ctx, init); err != nil {
		b.Fatal(err)
	}
	req := mcpgo.CallToolRequest{}
	req.Params.Name = "echo"
	req.Params.Arguments = map[string]any{"text": "ping"}
	latencies := make([]time.Duration, 0, 1<<16)
	b.ReportAllocs()
	for b.Loop() {
		start := time.Now()
		res, err := c.CallTool(ctx, req)
		latencies = append(latencies, time.Since(start))
		if err != nil || res.IsError {
			b.Fatalf("echo: %v", err)
		}
	}
	slices.Sort(latencies)
	b.ReportMetric(float64(latencies[len(latencies)/2].Nanoseconds())/1e3, "p50-µs")
	b.ReportMetric(float64(latencies[len(latencies)*99/100].Nanoseconds())/1e3, "p99-µs")
}

func BenchmarkRawClientStdio(b *testing.B) { benchRawClient(b, "stdio") }

func BenchmarkRawClientHTTP(b *testing.B) { benchRawClient(b, "http") }
