package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/warrenhq/warren/blueprint"
	"github.com/warrenhq/warren/hostconfig"
	"github.com/warrenhq/warren/policy"
	"github.com/warrenhq/warren/scenarios"
	"github.com/warrenhq/warren/scripting"
)

// launchFlags are the launch overrides `host run` and `host explain` share.
type launchFlags struct {
	Yolo       bool     `help:"Turn every ask into allow (never lifts a deny)."`
	Allow      []string `sep:"none" help:"Turn an ask into allow for this tool or key (repeatable)." placeholder:"TOOL|KEY"`
	Ask        []string `sep:"none" help:"Ask before this tool or key runs, even where a layer allows it (repeatable)." placeholder:"TOOL|KEY"`
	Deny       []string `sep:"none" help:"Deny this tool or key (repeatable)." placeholder:"TOOL|KEY"`
	Unattended bool     `help:"Nobody is watching: human tools are not advertised unless a stage requires them, and asks no grant or --yolo covers are denied."`
}

func (l launchFlags) launch() policy.Launch {
	return policy.Launch{Yolo: l.Yolo, Allow: l.Allow, Ask: l.Ask, Deny: l.Deny}
}

// check reports a misspelled or contradictory override as a usage error.
func (l launchFlags) check() error {
	for _, f := range [...]struct {
		flag  string
		names []string
	}{{"--allow", l.Allow}, {"--ask", l.Ask}, {"--deny", l.Deny}} {
		for _, name := range f.names {
			if err := policy.CheckName(name, scenarios.KnownTools()); name != "" && err != nil {
				return fmt.Errorf("%s: %w", f.flag, err)
			}
		}
	}
	return l.launch().Validate()
}

type explainCmd struct {
	launchFlags
	Config    string   `help:"Host config file (the permission ceiling)." placeholder:"FILE"`
	Blueprint string   `required:"" help:"Blueprint file of the agent." placeholder:"FILE"`
	Stage     string   `help:"Stage the agent is in (default: the blueprint's entry stage)." placeholder:"NAME"`
	Grant     []string `help:"A grant the agent holds, KEY=stage or KEY=run (repeatable)." placeholder:"KEY=SCOPE"`
	Tool      string   `arg:"" help:"The tool called (shell for a command line)."`
	Args      string   `arg:"" optional:"" help:"The call's arguments as JSON; for shell, the command line itself may be given instead."`
}

func (x *explainCmd) Run(e *env) error {
	known := scenarios.KnownTools()
	if err := x.check(); err != nil {
		fmt.Fprintf(e.stderr, "host: %v\n", err)
		return errBadInput
	}
	cfg, err := loadHostConfig(e, x.Config)
	if err != nil {
		return err
	}
	if cfg == nil {
		cfg = hostconfig.Default()
	}
	// The blueprint may list script tools: its own tools/ folder's and the host's tools_dir's.
	for _, dir := range []string{filepath.Join(filepath.Dir(x.Blueprint), "tools"), cfg.Scripting.ToolsDir} {
		if dir == "" {
			continue
		}
		found, err := scripting.Discover(dir)
		if err != nil {
			fmt.Fprintf(e.stderr, "host: script tools in %s:\n%v\n", dir, err)
			return errBadInput
		}
		for _, s := range found {
			known = append(known, s.Name)
		}
	}
	// It may list MCP tools: the host config's servers', and its own when the host allows them.
	names, err := serverToolNames(cfg, x.Blueprint)
	if err != nil {
		fmt.Fprintf(e.stderr, "host: %v\n", err)
		return errBadInput
	}
	known = append(known, names...)
	bp, err := blueprint.Load(x.Blueprint, known)
	if err != nil {
		fmt.Fprintf(e.stderr, "host: --blueprint %s:\n%v\n", x.Blueprint, err)
		return errBadInput
	}
	stage := bp.Entry
	if x.Stage != "" {
		st, ok := bp.Stage(x.Stage)
		if !ok {
			names := make([]string, len(bp.Stages))
			for i := range bp.Stages {
				names[i] = bp.Stages[i].Name
			}
			fmt.Fprintf(e.stderr, "host: --stage %q: blueprint %s has stages %s\n", x.Stage, bp.Name, strings.Join(names, ", "))
			return errBadInput
		}
		stage = st.Index
	}
	layer := bp.PolicyLayer()
	resolver, err := policy.NewResolver(cfg.HostLayer(), layer, x.launch())
	if err != nil {
		fmt.Fprintf(e.stderr, "host: %v\n", err)
		return errBadInput
	}
	lists := [][]string{policy.ShippedSafeCommands, cfg.SafeCommands}
	if cfg.AllowBlueprintSafeCommands {
		lists = append(lists, bp.SafeCommands)
	}
	safe, err := policy.NewSafeKeys(lists...)
	if err != nil {
		fmt.Fprintf(e.stderr, "host: safe commands: %v\n", err)
		return errBadInput
	}
	grants := &policy.Grants{}
	for _, g := range x.Grant {
		key, scopeName, ok := strings.Cut(g, "=")
		scope, err := policy.ParseScope(scopeName)
		if !ok || err != nil || scope == policy.ScopeOnce {
			fmt.Fprintf(e.stderr, "host: --grant %q: write KEY=stage or KEY=run\n", g)
			return errBadInput
		}
		grants.Grant([]string{key}, scope, stage)
	}
	call := policy.Call{Stage: stage, Tool: x.Tool, Parsed: true}
	if x.Tool == policy.ShellTool {
		line := x.Args
		var a struct {
			Command string `json:"command"`
		}
		if json.Unmarshal([]byte(x.Args), &a) == nil && a.Command != "" {
			line = a.Command
		}
		var why string
		call.Keys, why = policy.ShellKeysExplained(line)
		call.Parsed = why == ""
		fmt.Fprintf(e.stdout, "command  %s\n", line)
		if why != "" {
			fmt.Fprintf(e.stdout, "keys     none: %s\n", why)
		} else {
			fmt.Fprintf(e.stdout, "keys     %s\n", strings.Join(call.Keys, ", "))
		}
	}
	fmt.Fprintf(e.stdout, "agent    blueprint %s, stage %s\n", bp.Name, bp.Stages[stage].Name)
	if !bp.Stages[stage].Advertises(x.Tool) {
		fmt.Fprintf(e.stdout, "visibility  deny: stage %s does not offer %s (available: %s); a run refuses the call before any layer below\n",
			bp.Stages[stage].Name, x.Tool, strings.Join(bp.Stages[stage].AvailableTools, ", "))
	}
	x2 := resolver.Explain(call, safe, grants)
	fmt.Fprint(e.stdout, x2.String())
	if x2.Decision.Verdict == policy.Ask && (x.Unattended || cfg.Unattended) {
		fmt.Fprintln(e.stdout, "unattended: nobody is watching this run, so the ask is denied")
	}
	return nil
}

// serverToolNames lists the tools of the MCP servers an agent of the blueprint at path may use
// under cfg: the config's servers, and the blueprint's own when the config allows blueprint
// servers. Each server is started once to list its tools, as loading a scenario does.
func serverToolNames(cfg *hostconfig.Config, path string) ([]string, error) {
	servers := slices.Clone(cfg.MCPServers)
	declared, err := blueprint.DeclaredServers(path)
	if err != nil {
		return nil, fmt.Errorf("--blueprint %s:\n%w", path, err)
	}
	for _, s := range declared {
		if !cfg.AllowBlueprintServers {
			return nil, fmt.Errorf("%w: %s declares MCP server %q, and the host config does not allow blueprint servers ([mcp] allow_blueprint_servers)",
				scenarios.ErrBlueprintServer, s.Origin(), s.Name)
		}
		servers = append(servers, s)
	}
	var names []string
	for i := range servers {
		tools, err := scenarios.DiscoverServer(&servers[i])
		if err != nil {
			return nil, fmt.Errorf("%s: server %q could not list its tools: %w", servers[i].Origin(), servers[i].Name, err)
		}
		for _, t := range tools {
			names = append(names, t.Name)
		}
	}
	return names, nil
}
