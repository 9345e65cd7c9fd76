package main

import (
	"path/filepath"
	"strings"
	"testing"
)

func mcpData(name string) string { return filepath.Join("testdata", "mcp", name) }

// TestMCPList: host mcp list shows each server, how it is reached, where it was declared, its
// limits and its tools as the host advertises them (after the allow-list, the read-only ones
// marked), for a scenario and for a host config; a server that does not start is bad input naming
// its entry.
func TestMCPList(t *testing.T) {
	r := host(t, "mcp", "list", example("mcp.toml"))
	wantCode(t, r, exitOK)
	for _, want := range []string{"kv (stdio: @demo --name kv --log-level warn --persist)\n", "mcp.toml:34: host.mcp_servers[0]\n",
		"call_timeout 5m0s, max_concurrency 64, max_result_bytes 1024\n", "  kv__echo     Return text unchanged.\n", "  kv__kv_list  "} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("mcp list %s:\n%s\nwant it to contain %q", example("mcp.toml"), r.stdout, want)
		}
	}
	if strings.Contains(r.stdout, "kv__crash") {
		t.Errorf("a tool outside the allow-list is listed:\n%s", r.stdout)
	}

	r = host(t, "mcp", "list", "--config", mcpData("host.toml"))
	wantCode(t, r, exitOK)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	var tools []string
	for _, l := range lines {
		if name, ok := strings.CutPrefix(l, "  kv__"); ok {
			tools = append(tools, strings.Fields(name)[0])
		}
	}
	if strings.Join(tools, " ") != "echo kv_get kv_set" {
		t.Errorf("tools %q, want the allow-list echo kv_get kv_set:\n%s", tools, r.stdout)
	}
	for _, want := range []string{"  max_reply_bytes 4194304, max_tools 50, max_tool_schema_bytes 65536\n", "  kv__kv_get  (read-only) Return"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("mcp list --config %s:\n%s\nwant it to contain %q (the bounds with their defaults, the tools read_only_tools vouches for)", mcpData("host.toml"), r.stdout, want)
		}
	}
	if strings.Contains(r.stdout, "kv__kv_set  (read-only)") {
		t.Errorf("kv_set is marked read-only without the entry vouching for it:\n%s", r.stdout)
	}

	r = host(t, "mcp", "list", "--config", mcpData("bad_server.toml"))
	wantCode(t, r, exitBadInput)
	if !strings.Contains(r.stderr, "bad_server.toml:1: mcp_servers[0]") || !strings.Contains(r.stderr, "/nonexistent/mcp-server") {
		t.Errorf("stderr %q, want the entry and the missing program", r.stderr)
	}
	wantCode(t, host(t, "mcp", "list"), exitBadInput)
}

// TestMCPExplain: host explain knows the tools of the host config's servers, and refuses a
// blueprint that brings its own server without the host's opt-in.
func TestMCPExplain(t *testing.T) {
	bp := filepath.Join(examples, "mcp", "client.toml")
	r := host(t, "explain", "--config", mcpData("host.toml"), "--blueprint", bp, "kv__kv_get", `{"key":"a"}`)
	wantCode(t, r, exitOK)
	if !strings.HasPrefix(r.stdout, "agent    blueprint client, stage record\nallow (host, key kv__kv_get)") {
		t.Errorf("explain kv__kv_get:\n%s", r.stdout)
	}
	r = host(t, "explain", "--config", mcpData("host.toml"), "--blueprint", bp, "kv__kv_set", `{"key":"a","value":"b"}`)
	wantCode(t, r, exitOK)
	if !strings.Contains(r.stdout, "ask (default, key kv__kv_set): no layer names this tool; tools without a built-in default ask") {
		t.Errorf("explain kv__kv_set:\n%s", r.stdout)
	}
	r = host(t, "explain", "--blueprint", mcpData("own_server.toml"), "mine__echo")
	wantCode(t, r, exitBadInput)
	if !strings.Contains(r.stderr, "own_server.toml:4: mcp_servers[0] declares MCP server \"mine\"") || !strings.Contains(r.stderr, "allow_blueprint_servers") {
		t.Errorf("stderr %q, want the refused blueprint server", r.stderr)
	}
}

// TestMCPServe: host mcp serve runs the demo server on this process's stdin and stdout; with
// stdin at its end it stops cleanly, and bad flags are bad input.
func TestMCPServe(t *testing.T) {
	wantCode(t, host(t, "mcp", "serve"), exitOK)
	r := host(t, "mcp", "serve", "--transport", "carrier-pigeon")
	wantCode(t, r, exitBadInput)
	if !strings.Contains(r.stderr, "carrier-pigeon") {
		t.Errorf("stderr %q, want the bad transport named", r.stderr)
	}
}
