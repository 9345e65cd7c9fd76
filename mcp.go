package warren

import (
	"fmt"

	"github.com/warrenhq/warren/mcp"
	"github.com/warrenhq/warren/mcp/mcpconfig"
	"github.com/warrenhq/warren/scenarios"
)

// MCPServer is one MCP server a scenario or host config declares, with the tools the host
// advertises from it, so that a listing (host mcp list) shows what agents would see without
// running a world.
type MCPServer struct {
	// Config is the server's validated [[mcp_servers]] entry: how it is reached, where it was
	// declared, its limits.
	Config mcpconfig.Server
	// Tools are the tools the host advertises from it (after the entry's allow-list), in the
	// order the server listed them.
	Tools []mcp.ToolInfo
}

// MCPServers lists the MCP servers of sc (its host config's and, when the host allows them, its
// blueprints'), with the tools found when it loaded. With sc nil it lists host's servers,
// starting each once to ask for its tools, as loading a scenario does (nil host: the built-in
// config, which declares none); an error names the entry of a server that could not list them.
func MCPServers(sc *Scenario, host *HostConfig) ([]MCPServer, error) {
	if sc != nil {
		return groupTools(sc.MCPServers, sc.MCPTools), nil
	}
	if host == nil {
		host = DefaultHostConfig()
	}
	var infos []mcp.ToolInfo
	for i := range host.MCPServers {
		found, err := discoverServer(&host.MCPServers[i])
		if err != nil {
			return nil, err
		}
		infos = append(infos, found...)
	}
	return groupTools(host.MCPServers, infos), nil
}

// groupTools pairs each server with its tools, keeping both orders.
func groupTools(servers []mcpconfig.Server, infos []mcp.ToolInfo) []MCPServer {
	out := make([]MCPServer, len(servers))
	for i := range servers {
		out[i].Config = servers[i]
		for _, t := range infos {
			if t.Server == servers[i].Name {
				out[i].Tools = append(out[i].Tools, t)
			}
		}
	}
	return out
}

// discoverServer starts s once and lists its tools as the host advertises them; the error names
// the entry.
func discoverServer(s *mcpconfig.Server) ([]mcp.ToolInfo, error) {
	found, err := scenarios.DiscoverServer(s)
	if err != nil {
		return nil, fmt.Errorf("%s: server %q could not list its tools: %w", s.Origin(), s.Name, err)
	}
	return found, nil
}
