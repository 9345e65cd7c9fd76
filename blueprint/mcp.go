package blueprint

import (
	"bytes"
	"errors"
	"maps"
	"slices"
	"strings"

	"github.com/warrenhq/warren/hostconfig"
	"github.com/warrenhq/warren/internal/tomlfile"
	"github.com/warrenhq/warren/mcp/mcpconfig"
)

// Sentinel errors of a stage's connectors. Problems in a blueprint's [[mcp_servers]] wrap the
// hostconfig sentinels instead (hostconfig.ErrBadServerName and the others CompileMCPServers
// reports), since the keys are the host's.
var (
	// ErrUnknownServer: a connector names no MCP server the host knows tools of, so the stage
	// would be granted nothing.
	ErrUnknownServer = errors.New("unknown MCP server")
	// ErrDuplicateConnector: a stage lists a connector twice.
	ErrDuplicateConnector = errors.New("duplicate connector")
)

// serversOf returns the servers the tools of sorted (sorted, unique names) come from: the part
// before the first "__" of every name holding one, sorted and unique.
func serversOf(sorted []string) []string {
	var servers []string
	for _, name := range sorted {
		if server, _, ok := strings.Cut(name, mcpconfig.Separator); ok && server != "" {
			servers = append(servers, server)
		}
	}
	slices.Sort(servers)
	return slices.Compact(servers)
}

// serverTools returns the known tools of server, `<server>__*`, a sorted sub-slice of the known
// tools that the caller must not modify.
func (ts *toolSet) serverTools(server string) []string {
	prefix := server + mcpconfig.Separator
	start, _ := slices.BinarySearch(ts.sorted, prefix)
	end := start
	for end < len(ts.sorted) && strings.HasPrefix(ts.sorted[end], prefix) {
		end++
	}
	return ts.sorted[start:end]
}

// mcpServers compiles the blueprint's [[mcp_servers]] with the host's rules, marking them as a
// blueprint's.
func (c *compiler) mcpServers(entries []hostconfig.MCPServerTable) []mcpconfig.Server {
	if !c.within("mcp_servers", len(entries), MaxMCPServers, "servers", "a blueprint") {
		return nil
	}
	servers, errs := hostconfig.CompileMCPServers(c.doc, "", entries, true)
	c.errs = append(c.errs, errs...)
	return servers
}

// connectors grants the stage every known tool of each server it names, after its
// available_tools (a tool listed there and covered by a connector too is advertised once).
func (c *compiler) connectors(path string, servers []string, st *Stage) {
	if len(servers) == 0 {
		return
	}
	st.Connectors = make([]string, 0, len(servers))
	granted := make([][]string, 0, len(servers))
	total := 0
	for j, server := range servers {
		elem := tomlfile.JoinIndex(path, j)
		tools := c.tools.serverTools(server)
		switch {
		case server == "" || strings.Contains(server, mcpconfig.Separator) || len(tools) == 0:
			c.errorf(elem, "%w %q; a connector names a server whose tools the host knows; valid servers: %s", ErrUnknownServer, server, c.tools.servers)
			continue
		case slices.Contains(st.Connectors, server):
			c.errorf(elem, "%w %q; list each server once", ErrDuplicateConnector, server)
			continue
		}
		st.Connectors = append(st.Connectors, server)
		granted = append(granted, tools)
		total += len(tools)
	}
	// Sized once: a connector may grant hundreds of tools.
	advertised := make(map[string]struct{}, len(st.advertised)+total)
	maps.Copy(advertised, st.advertised)
	st.advertised = advertised
	st.AvailableTools = slices.Grow(st.AvailableTools, total)
	for _, tools := range granted {
		for _, tool := range tools {
			if _, dup := advertised[tool]; !dup {
				advertised[tool] = struct{}{}
				st.AvailableTools = append(st.AvailableTools, tool)
			}
		}
	}
	slices.Sort(st.Connectors)
	slices.Sort(st.AvailableTools)
}

// mayDeclareServers reports whether a file's text could declare [[mcp_servers]]: it names them,
// or has a \u escape that could spell the name in a quoted key. Most blueprints declare none, and
// need not be decoded twice.
func mayDeclareServers(data []byte) bool {
	return bytes.Contains(data, []byte("mcp_servers")) || bytes.Contains(data, []byte(`\u`)) || bytes.Contains(data, []byte(`\U`))
}

// DeclaredServers reads only the [[mcp_servers]] of the blueprint file at path, so that the
// scenario loader can discover the tools of a blueprint's own servers (and decide whether the
// host allows them) before compiling the blueprint against the tools the host knows, which then
// include them. The rest of the file is not checked here (Load does that); problems in the
// entries are reported as by Load, each positioned at its key, as tomlfile.Errors.
//
// The file is decoded into the whole blueprint's shape, so that only keys that are really
// unknown are reported by the decoder: decoding it into a shape holding mcp_servers alone made
// every other key unknown, and the decoder's report of each (with the document's lines for
// context) cost the square of the file's size, 40 s for 5,000 stages.
func DeclaredServers(path string) ([]mcpconfig.Server, error) {
	data, err := tomlfile.Read(path)
	if err != nil {
		return nil, err
	}
	if err := checkSize(path, data); err != nil {
		return nil, err
	}
	if !mayDeclareServers(data) {
		return nil, nil
	}
	var raw fileBlueprint
	doc, err := tomlfile.Decode(path, data, &raw)
	var errs tomlfile.Errors
	if err != nil {
		// Unknown keys outside the entries are Load's to report; unknown keys inside an entry
		// are the entry's problems.
		if doc == nil || !errors.As(err, &errs) || !onlyUnknownKeys(errs) {
			return nil, err
		}
		errs = slices.DeleteFunc(errs, func(e *tomlfile.Error) bool {
			return !strings.HasPrefix(e.Key, "mcp_servers[")
		})
	}
	if len(raw.MCPServers) > MaxMCPServers {
		return nil, append(errs, doc.Errorf(tomlfile.JoinIndex("mcp_servers", MaxMCPServers),
			"%w servers: %d; a blueprint has at most %d servers", ErrTooMany, len(raw.MCPServers), MaxMCPServers))
	}
	servers, more := hostconfig.CompileMCPServers(doc, "", raw.MCPServers, true)
	errs = append(errs, more...)
	if len(errs) > 0 {
		errs.Sort()
		return nil, errs
	}
	return servers, nil
}
