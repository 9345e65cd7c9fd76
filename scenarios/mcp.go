package scenarios

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/warrenhq/warren/blueprint"
	"github.com/warrenhq/warren/hostconfig"
	"github.com/warrenhq/warren/internal/tomlfile"
	"github.com/warrenhq/warren/mcp"
	"github.com/warrenhq/warren/mcp/mcpconfig"
	"github.com/warrenhq/warren/subagents"
)

// DiscoveryTimeout bounds how long loading a scenario waits for one MCP server to start and list
// its tools.
const DiscoveryTimeout = 30 * time.Second

// ErrBlueprintServer: a blueprint declares an MCP server, and the host config does not allow
// blueprint servers ([mcp] allow_blueprint_servers), so a downloaded blueprint cannot start a
// process the user never approved; or its server takes a name another declaration holds.
var ErrBlueprintServer = errors.New("blueprint MCP server refused")

// servers finds the MCP servers the scenario may use and lists their tools, before its
// blueprints are loaded so that their available_tools and connectors may name them: the host
// config's [[mcp_servers]], then, when the host allows blueprint servers, every blueprint's.
// Each server is started once to list its tools and stopped again; its session in a run starts
// on the first call. The tools' names (<server>__<tool>) join the known tools, and the servers'
// settings and tool lists the scenario's hash. It reports whether every server listed its
// tools.
func (c *compiler) servers(hash interface{ Write([]byte) (int, error) }) bool {
	var servers []mcpconfig.Server
	allow := false
	switch h := c.file.Host; {
	case c.hostOverride != nil:
		servers = slices.Clone(c.hostOverride.MCPServers)
		allow = c.hostOverride.AllowBlueprintServers
	case h != nil:
		// Problems in the entries are reported once, when host() compiles the whole table.
		servers, _ = hostconfig.CompileMCPServers(c.doc, "host", h.MCPServers, false)
		allow = h.MCP.AllowBlueprintServers
	}
	byName := map[string]mcpconfig.Server{}
	for _, s := range servers {
		byName[s.Name] = s
	}
	for _, key := range sortedKeys(c.file.Blueprints) {
		path, ok := c.resolveAt(tomlfile.JoinKey("blueprints", key), c.file.Blueprints[key])
		if !ok {
			continue
		}
		declared, err := blueprint.DeclaredServers(path)
		if err != nil {
			continue // loading the blueprint reports it
		}
		for _, s := range declared {
			at := tomlfile.JoinKey("blueprints", key)
			prev, taken := byName[s.Name]
			switch {
			case !allow:
				c.errorf(at, "%w: %s declares MCP server %q, and the host config does not allow blueprint servers; "+
					"a user who trusts this blueprint sets allow_blueprint_servers = true in the host config's [mcp] table",
					ErrBlueprintServer, s.Origin(), s.Name)
			case taken && !sameServer(&prev, &s):
				c.errorf(at, "%w: %s declares MCP server %q, a name %s already gives another server; rename one of them",
					ErrBlueprintServer, s.Origin(), s.Name, prev.Origin())
			case !taken:
				servers = append(servers, s)
				byName[s.Name] = s
			}
		}
	}
	slices.SortFunc(servers, func(a, b mcpconfig.Server) int { return strings.Compare(a.Name, b.Name) })
	ok := true
	c.sc.serverOf = map[string]string{}
	for i := range servers {
		s := &servers[i]
		if !c.programAllowed(s) {
			ok = false
			continue
		}
		tools, err := c.discover(s)
		if err != nil {
			c.serverError(s, "server %q could not list its tools: %w", s.Name, err)
			ok = false
			continue
		}
		c.sc.MCPServers = append(c.sc.MCPServers, *s)
		schemas := sha256.New()
		for _, t := range tools {
			if slices.Contains(c.known, t.Name) {
				c.serverError(s, "server %q offers %q, the name of another tool; allow-list its tools with `tools` to leave it out", s.Name, t.Name)
				continue
			}
			c.sc.MCPTools = append(c.sc.MCPTools, t)
			c.sc.serverOf[t.Name] = s.Name
			_ = json.NewEncoder(schemas).Encode(t)
		}
		fmt.Fprintf(hash, "\nmcp %s %s%s %x\n", s.Name, s.Command, s.URL, schemas.Sum(nil))
	}
	for _, t := range c.sc.MCPTools {
		c.known = append(c.known, t.Name)
	}
	slices.Sort(c.known)
	return ok
}

// programAllowed asks LoadOptions.Confine about the program a stdio server of the scenario's own
// (its [host] table's or a blueprint's, not a LoadOptions.Host's) runs, before anything starts
// it: a path as written, a bare name as PATH finds it (one PATH does not find is refused, since
// what it would run cannot be told). The built-in demo server and HTTP servers run no program.
func (c *compiler) programAllowed(s *mcpconfig.Server) bool {
	if c.confine == nil || s.Command == "" || s.Command == mcpconfig.DemoCommand || c.hostOverride != nil && !s.Blueprint {
		return true
	}
	prog := s.Command
	if !strings.ContainsRune(prog, filepath.Separator) {
		found, err := exec.LookPath(prog)
		if err != nil {
			c.serverError(s, "server %q runs %q, which PATH does not find: %w", s.Name, prog, err)
			return false
		}
		prog = found
	}
	if abs, err := filepath.Abs(prog); err == nil {
		prog = abs
	}
	if err := c.confine(prog); err != nil {
		c.serverError(s, "server %q runs %s: %w", s.Name, prog, err)
		return false
	}
	return true
}

// Discovery lists one MCP server's tools as the scenario and the host config load: by asking the
// server (the default), or from a recording.
type Discovery func(s *mcpconfig.Server) ([]mcp.ToolInfo, error)

// liveDiscovery lists one server's tools by starting it and asking, bounded by DiscoveryTimeout.
func liveDiscovery(s *mcpconfig.Server) ([]mcp.ToolInfo, error) {
	ctx, cancel := context.WithTimeout(context.Background(), DiscoveryTimeout)
	defer cancel()
	return mcp.Discover(ctx, s)
}

// publicDiscovery is liveDiscovery reaching a server over HTTP only at public addresses, except
// the hosts private allows (LoadOptions.PrivateHosts).
func publicDiscovery(private func(host string) bool) Discovery {
	return func(s *mcpconfig.Server) ([]mcp.ToolInfo, error) {
		ctx, cancel := context.WithTimeout(context.Background(), DiscoveryTimeout)
		defer cancel()
		return mcp.DiscoverPublic(ctx, s, private)
	}
}

// serverTools is the hostconfig.ServerTools of a scenario's [host] table: the names listed when
// the scenario's servers were discovered.
func (c *compiler) serverTools(s *mcpconfig.Server) ([]string, error) {
	var names []string
	for _, t := range c.sc.MCPTools {
		if t.Server == s.Name {
			names = append(names, t.Name)
		}
	}
	return names, nil
}

// serverError reports a problem with a server where it was declared.
func (c *compiler) serverError(s *mcpconfig.Server, format string, args ...any) {
	err := fmt.Errorf(format, args...)
	c.errs = append(c.errs, &tomlfile.Error{File: s.File, Line: s.Line, Key: s.Key, Msg: err.Error(), Err: err})
}

// sameServer reports whether two declarations describe the same server, wherever they were
// written: blueprints that sit side by side may share one server.
func sameServer(a, b *mcpconfig.Server) bool {
	x, y := *a, *b
	x.File, x.Line, x.Key, y.File, y.Line, y.Key = "", 0, "", "", 0, ""
	return reflect.DeepEqual(x, y)
}

// LeasedServers lists, sorted, the MCP servers an agent of bp leases from spawn to reap: those
// whose tools a stage of bp advertises and, when it may spawn sub-agents, those its possible
// descendants may call. A parent thus keeps a server's session alive for the children that come
// and go under it: a boss that spawns clients one after another keeps one session instead of
// starting one per child.
func (sc *Scenario) LeasedServers(bp *blueprint.Blueprint) []string {
	servers := map[string]bool{}
	seen := map[*blueprint.Blueprint]bool{}
	var walk func(bp *blueprint.Blueprint)
	walk = func(bp *blueprint.Blueprint) {
		if bp == nil || seen[bp] {
			return
		}
		seen[bp] = true
		spawns := false
		for i := range bp.Stages {
			st := &bp.Stages[i]
			for _, name := range st.AvailableTools {
				if server, ok := sc.serverOf[name]; ok {
					servers[server] = true
				}
				spawns = spawns || name == subagents.NameSpawn || name == subagents.NameFanOut
			}
			if st.FanOut != nil {
				spawns = true
				if sp := sc.Spawn[st.FanOut.Blueprint]; sp != nil {
					walk(sp.Blueprint)
				}
			}
		}
		if !spawns {
			return
		}
		for key, sp := range sc.Spawn {
			if bp.Subagents.MaySpawn(key) {
				walk(sp.Blueprint)
			}
		}
	}
	walk(bp)
	return slices.Sorted(maps.Keys(servers))
}

// DiscoverServer starts one server, lists its tools as the host would advertise them, and stops
// it again (`host mcp list`), bounded by DiscoveryTimeout.
func DiscoverServer(s *mcpconfig.Server) ([]mcp.ToolInfo, error) { return liveDiscovery(s) }
