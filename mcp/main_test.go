package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/warrenhq/warren/internal/mcpdemo"
	"github.com/warrenhq/warren/mcp"
	"github.com/warrenhq/warren/mcp/mcpconfig"
	"github.com/warrenhq/warren/tools"
)

// mcpserverPath is the repo's MCP test server, built once by TestMain.
var mcpserverPath string

// TestMain builds cmd/mcpserver once for every test of the package.
func TestMain(m *testing.M) {
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	dir, err := os.MkdirTemp("", "warren-mcp-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "mcp tests:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	mcpserverPath = filepath.Join(dir, "mcpserver")
	build := exec.Command("go", "build", "-o", mcpserverPath, "github.com/warrenhq/warren/cmd/mcpserver")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "mcp tests: build mcpserver:", err)
		return 1
	}
	return m.Run()
}

// stdioConfig is a stdio server named name running the test server.
func stdioConfig(t testing.TB, name string) *mcpconfig.Server {
	t.Helper()
	return &mcpconfig.Server{
		Name: name, Command: mcpserverPath, Args: []string{"--transport", "stdio", "--log-level", "error"},
		Dir: t.TempDir(), File: "host.toml", Line: 3, Key: "mcp_servers[0]",
	}
}

// httpConfig starts the test server in HTTP mode on a free port (stopped when the test ends)
// and returns an entry reaching it.
func httpConfig(t testing.TB, name string) *mcpconfig.Server {
	t.Helper()
	cmd := exec.Command(mcpserverPath, "--transport", "http", "--listen", "127.0.0.1:0", "--log-level", "error")
	cmd.Dir = t.TempDir()
	url, err := mcpdemo.StartHTTP(cmd)
	if err != nil {
		t.Fatalf("the HTTP test server: %v", err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	})
	return &mcpconfig.Server{Name: name, URL: url, File: "host.toml", Line: 9, Key: "mcp_servers[1]"}
}

// configFor returns a config of the given transport.
func configFor(t testing.TB, transport, name string) *mcpconfig.Server {
	t.Helper()
	if transport == "http" {
		return httpConfig(t, name)
	}
	return stdioConfig(t, name)
}

// newManager returns a Manager holding cfg, closed when the test ends.
func newManager(t testing.TB, opt mcp.Options, cfgs ...*mcpconfig.Server) *mcp.Manager {
	t.Helper()
	m := mcp.NewManager(opt)
	for _, cfg := range cfgs {
		if err := m.Add(cfg); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { _ = m.Close() })
	return m
}

// toolOf returns the tools.Tool for server's tool, with the schema the real server gives it
// (checked by Discover elsewhere; here a permissive one keeps the tests independent of it).
func toolOf(m *mcp.Manager, server, tool string) tools.Tool {
	return m.Tool(mcp.ToolInfo{
		Server: server, Tool: tool, Name: mcpconfig.ToolName(server, tool),
		Parameters: json.RawMessage(`{"type":"object"}`),
	})
}

// call runs one call with a background context and a generous bound.
func call(t testing.TB, tool tools.Tool, args string) tools.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := tool.Execute(tools.NewExecContext(ctx, "c1", 1, tools.AgentRef{ID: 1}, ""), json.RawMessage(args))
	if err != nil {
		t.Fatalf("Execute: %v", err)
	}
	return res
}

// mustOK fails unless res is a successful result, and returns its content.
func mustOK(t testing.TB, res tools.Result) string {
	t.Helper()
	if res.IsError {
		t.Fatalf("error result: %s", res.Content)
	}
	return res.Content
}
