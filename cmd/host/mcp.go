package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/warrenhq/warren"
	// The demo MCP server is the one package besides the root that this binary links: the root
	// package must not (internal/archtest: only cmd/ binaries and tests link a test server), and
	// host mcp serve runs it, as the "@demo" entry it registers does (warren.Init runs it).
	"github.com/warrenhq/warren/internal/mcpdemo"
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
	var sc *warren.Scenario
	if l.Scenario != "" {
		if sc, err = warren.LoadUnder(l.Scenario, host); err != nil {
			fmt.Fprintf(e.stderr, "host: %s is not a valid scenario:\n%v\n", l.Scenario, err)
			return errBadInput
		}
	}
	servers, err := warren.MCPServers(sc, host)
	if err != nil {
		fmt.Fprintf(e.stderr, "host: %v\n", err)
		return errBadInput
	}
	printServers(e.stdout, servers)
	return nil
}

// printServers writes each server, how it is reached and its limits, then its tools, marking
// those its entry's read_only_tools vouches for (the only ones the read-only floor lets through).
func printServers(w io.Writer, servers []warren.MCPServer) {
	if len(servers) == 0 {
		fmt.Fprintln(w, "no MCP servers")
		return
	}
	for i := range servers {
		s := &servers[i].Config
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
		fmt.Fprintf(w, "  max_reply_bytes %d, max_tools %d, max_tool_schema_bytes %d\n", s.MaxReplyBytes, s.MaxTools, s.MaxToolSchemaBytes)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		for _, t := range servers[i].Tools {
			desc, _, _ := strings.Cut(t.Description, "\n")
			if slices.Contains(s.ReadOnlyTools, t.Tool) {
				desc = "(read-only) " + desc
			}
			fmt.Fprintf(tw, "  %s\t%s\n", t.Name, desc)
		}
		_ = tw.Flush()
		if len(servers[i].Tools) == 0 {
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
