package warren_test

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/warrenhq/warren"
)

// demoHost is a host config with Warren's demo MCP server, allowing three of its tools.
const demoHost = `[[mcp_servers]]
name = "kv"
command = "@demo"
args = ["--log-level", "error"]
tools = ["echo", "kv_get", "kv_set"]
`

// toolNames lists the names s advertises.
func toolNames(s warren.MCPServer) []string {
	var names []string
	for _, t := range s.Tools {
		names = append(names, t.Name)
	}
	return names
}

// TestMCPServers: a host config's servers are started to list their tools (the allow-list
// applied), a scenario's come with the tools found when it loaded, and a server that does not
// start is an error naming its entry.
func TestMCPServers(t *testing.T) {
	if servers, err := warren.MCPServers(nil, nil); err != nil || len(servers) != 0 {
		t.Errorf("the built-in config: %v, %v; want no servers", servers, err)
	}
	host, err := warren.LoadHostConfig(writeFile(t, t.TempDir(), "host.toml", demoHost))
	if err != nil {
		t.Fatal(err)
	}
	servers, err := warren.MCPServers(nil, host)
	if err != nil {
		t.Fatal(err)
	}
	if len(servers) != 1 || servers[0].Config.Name != "kv" || !slices.Equal(toolNames(servers[0]), []string{"kv__echo", "kv__kv_get", "kv__kv_set"}) {
		t.Errorf("servers %+v, want kv with kv__echo, kv__kv_get, kv__kv_set", servers)
	}

	sc, err := warren.Load(filepath.Join("scenarios", "examples", "mcp.toml"))
	if err != nil {
		t.Fatal(err)
	}
	servers, err = warren.MCPServers(sc, host) // the scenario's own, not the host config's
	if err != nil || len(servers) != len(sc.MCPServers) || len(servers) == 0 {
		t.Fatalf("the scenario's servers: %+v, %v", servers, err)
	}
	total := 0
	for _, s := range servers {
		for _, tool := range s.Tools {
			if tool.Server != s.Config.Name {
				t.Errorf("server %s lists %s of server %s", s.Config.Name, tool.Name, tool.Server)
			}
		}
		total += len(s.Tools)
	}
	if total != len(sc.MCPTools) {
		t.Errorf("%d tools listed, the scenario has %d", total, len(sc.MCPTools))
	}

	host.MCPServers[0].Command = "/nonexistent/mcp-server"
	_, err = warren.MCPServers(nil, host)
	if err == nil || !strings.Contains(err.Error(), `host.toml:1: mcp_servers[0]: server "kv" could not list its tools: `) {
		t.Errorf("a server that does not start: %v", err)
	}
}
