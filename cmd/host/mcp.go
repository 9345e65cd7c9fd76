package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/warrenhq/warren/internal/mcpdemo"
	"github.com/warrenhq/warren/mcp"
	"github.com/warrenhq/warren/mcp/mcpconfig"
	"github.com/warrenhq/warren/scenarios"
)

// mcpCmd groups the MCP commands.
type mcpCmd struct {
	List  mcpListCmd  `cmd:"" help:"List the MCP servers a scenario or host config declares, and their tools as the host advertises them."`
	Serve mcpServeCmd `cmd:"" help:"Serve Warren's demo MCP server (the one command = \"@demo\" starts): a key-value store, echo, a slow tool and fault injectors."`
}

// mcpListCmd lists servers and tools: it starts each server once to ask for its tools, as
// loading a scenario does.
type mcpListCmd struct {
	Scenario string `arg:"" optional:"" help:"Scenario whose servers to list (its [host] table and, when allowed, its blueprints')." type:"path"`
	Config   string `help:"Host config whose servers to list; with a scenario, it replaces the scenario's [host] table." placeholder:"FILE"`
}

func (l *mcpListCmd) Run(e *env) error {
	if l.Scenario == "" && l.Config == "" {
		fmt.Fprintln(e.stderr, "host: mcp list needs a scenario or --config FILE")
		return errBadInput
	}
	host, err := loadHostConfig(e, l.Config)
	if err != nil {
		return err
	}
	var servers []mcpconfig.Server
	var tools []mcp.ToolInfo
	if l.Scenario != "" {
		sc, err := scenarios.LoadUnder(l.Scenario, scenarios.KnownTools(), host)
		if err != nil {
			fmt.Fprintf(e.stderr, "host: %s is not a valid scenario:\n%v\n", l.Scenario, err)
			return errBadInput
		}
		servers, tools = sc.MCPServers, sc.MCPTools
	} else {
		servers = host.MCPServers
		for i := range servers {
			found, err := scenarios.DiscoverServer(&servers[i])
			if err != nil {
				fmt.Fprintf(e.stderr, "host: %s: server %q could not list its tools: %v\n", servers[i].Origin(), servers[i].Name, err)
				return errBadInput
			}
			tools = append(tools, found...)
		}
	}
	printServers(e.stdout, servers, tools)
	return nil
}

// printServers writes each server, how it is reached and its limits, then its tools.
func printServers(w io.Writer, servers []mcpconfig.Server, tools []mcp.ToolInfo) {
	if len(servers) == 0 {
		fmt.Fprintln(w, "no MCP servers")
		return
	}
	for i := range servers {
		s := &servers[i]
		if i > 0 {
			fmt.Fprintln(w)
		}
		reach := s.URL
		if s.URL == "" {
			reach = strings.Join(append([]string{s.Command}, s.Args...), " ")
		}
		fmt.Fprintf(w, "%s (%s: %s)\n", s.Name, s.Transport(), reach)
		fmt.Fprintf(w, "  declared at %s\n", s.Origin())
		fmt.Fprintf(w, "  call_timeout %v, max_concurrency %d, max_result_bytes %d\n", s.CallTimeout, s.MaxConcurrency, s.MaxResultBytes)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		n := 0
		for _, t := range tools {
			if t.Server != s.Name {
				continue
			}
			n++
			desc, _, _ := strings.Cut(t.Description, "\n")
			fmt.Fprintf(tw, "  %s\t%s\n", t.Name, desc)
		}
		_ = tw.Flush()
		if n == 0 {
			fmt.Fprintln(w, "  (no tools)")
		}
	}
}

// mcpServeCmd runs the demo server in this process.
type mcpServeCmd struct {
	Args []string `arg:"" optional:"" passthrough:"" help:"The demo server's flags: --transport stdio|http, --listen ADDR, --name NAME, --log-level LEVEL."`
}

func (s *mcpServeCmd) Run(e *env) error {
	stdin := e.stdin
	if stdin == nil {
		stdin = strings.NewReader("")
	}
	if code := mcpdemo.Main(s.Args, stdin, e.stdout, e.stderr); code != 0 {
		return fmt.Errorf("mcp serve: exit %d", code)
	}
	return nil
}
