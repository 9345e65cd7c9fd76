package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/warrenhq/warren/blueprint"
	"github.com/warrenhq/warren/gate"
	"github.com/warrenhq/warren/hostconfig"
	"github.com/warrenhq/warren/mcp"
	"github.com/warrenhq/warren/mcp/mcpconfig"
	"github.com/warrenhq/warren/policy"
	"github.com/warrenhq/warren/scenarios"
	"github.com/warrenhq/warren/scripting"
	"github.com/warrenhq/warren/tools"
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
	Config     string   `help:"Host config file (the permission ceiling); with --scenario it replaces the scenario's [host]." placeholder:"FILE"`
	Scenario   string   `help:"Take the host config, launch flags, unattended switch, auto-mode classifier, script and MCP tools from this scenario; --blueprint and --under then name its groups and [spawn] keys." placeholder:"FILE"`
	Blueprint  string   `required:"" help:"The agent: a blueprint file (with --scenario: a group, or a [spawn] key when --under is given)." placeholder:"FILE|KEY"`
	Under      []string `sep:"none" help:"An ancestor of the agent and the stage it was in when it spawned the next one: BLUEPRINT[:STAGE] (repeatable, the top-level agent first; default stage: the entry)." placeholder:"BLUEPRINT[:STAGE]"`
	Stage      string   `help:"Stage the agent is in (default: the blueprint's entry stage)." placeholder:"NAME"`
	SafetyMode string   `help:"Safety mode of the top-level agent: default, read-only or auto (with --scenario: the group's)." enum:",default,read-only,auto" default:"" placeholder:"MODE"`
	PlanFile   string   `help:"The top-level agent is drafting a plan into this workdir file (everything else is read-only)." placeholder:"PATH"`
	Agent      string   `help:"The agent's name, which classifier rules match (default: the top group's first agent, or \"agent\")." placeholder:"NAME"`
	Grant      []string `help:"A grant the agent holds, KEY=stage or KEY=run (repeatable)." placeholder:"KEY=SCOPE"`
	Tool       string   `arg:"" help:"The tool called (shell for a command line)."`
	Args       string   `arg:"" optional:"" help:"The call's arguments as JSON; for shell, the command line itself may be given instead."`
}

// explainSetup is what an explanation is decided from: the host, the launch, the tools, the
// classifier, and how to find a blueprint by name.
type explainSetup struct {
	host       *hostconfig.Config
	launch     policy.Launch
	unattended bool
	registry   *tools.Registry
	classifier tools.AutoClassifier
	modes      gate.Modes
	sc         *scenarios.Scenario // nil: blueprints are files
	agent      string
}

func (x *explainCmd) Run(e *env) error {
	if err := x.check(); err != nil {
		fmt.Fprintf(e.stderr, "host: %v\n", err)
		return errBadInput
	}
	setup, err := x.setup(e)
	if err != nil {
		return err
	}
	chain := append(slices.Clone(x.Under), x.Blueprint)
	pol, bp, names, err := x.lineage(setup, chain)
	if err != nil {
		fmt.Fprintf(e.stderr, "host: %v\n", err)
		return errBadInput
	}
	stage := bp.Entry
	if x.Stage != "" {
		st, ok := bp.Stage(x.Stage)
		if !ok {
			fmt.Fprintf(e.stderr, "host: --stage %q: blueprint %s has stages %s\n", x.Stage, bp.Name, stageNames(bp))
			return errBadInput
		}
		stage = st.Index
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
	args := x.Args
	if x.Tool == policy.ShellTool && !json.Valid([]byte(args)) {
		line, _ := json.Marshal(map[string]string{"command": args})
		args = string(line)
	}
	if args == "" {
		args = "{}"
	}
	st := &bp.Stages[stage]
	handle, _ := setup.registry.Lookup(x.Tool)
	req := gate.Request{Ctx: e.ctx, Agent: tools.AgentRef{Name: setup.agent}, Stage: stage, StageName: st.Name,
		Visible: st.Advertises(x.Tool), Available: st.AvailableTools, Handle: handle, Tool: x.Tool,
		Args: json.RawMessage(args), Grants: grants}
	explanation := gate.Explain(pol, &req)
	if x.Tool == policy.ShellTool {
		var a struct {
			Command string `json:"command"`
		}
		_ = json.Unmarshal(req.Args, &a)
		fmt.Fprintf(e.stdout, "command  %s\n", a.Command)
	}
	fmt.Fprintf(e.stdout, "agent    %s, stage %s\n", strings.Join(names, " > "), st.Name)
	fmt.Fprint(e.stdout, explanation.String())
	switch {
	case handle == nil:
		fmt.Fprintf(e.stderr, "host: no tool %q is registered with this host (known: %s)\n", x.Tool, strings.Join(setup.registry.Names(), ", "))
		return errBadInput
	case explanation.Decision.Layer == gate.LayerSchema:
		fmt.Fprintf(e.stderr, "host: the arguments of %s are invalid: %s\n", x.Tool, explanation.Decision.Reason)
		return errBadInput
	}
	return nil
}

// setup loads what the explanation is decided from: a scenario's, or a host config's with the
// tools the blueprints' folders and the config's servers offer.
func (x *explainCmd) setup(e *env) (*explainSetup, error) {
	cfg, err := loadHostConfig(e, x.Config)
	if err != nil {
		return nil, err
	}
	s := &explainSetup{launch: x.launch(), unattended: x.Unattended, agent: x.Agent}
	var scripts []*scripting.Script
	var infos []mcp.ToolInfo
	if x.Scenario != "" {
		sc, err := scenarios.LoadUnder(x.Scenario, scenarios.KnownTools(), cfg)
		if err != nil {
			fmt.Fprintf(e.stderr, "host: %s is not a valid scenario:\n%v\n", x.Scenario, err)
			return nil, errBadInput
		}
		s.sc, s.host, s.classifier = sc, sc.Host, sc.AutoClassifier()
		if cfg != nil {
			s.host = cfg
		}
		s.launch = sc.MergeLaunch(s.launch)
		s.unattended = s.unattended || sc.Unattended
		scripts, infos = sc.Scripts, sc.MCPTools
	} else {
		if cfg == nil {
			cfg = hostconfig.Default()
		}
		s.host = cfg
		if scripts, infos, err = x.fileTools(cfg); err != nil {
			fmt.Fprintf(e.stderr, "host: %v\n", err)
			return nil, errBadInput
		}
	}
	s.unattended = s.unattended || s.host.Unattended
	if err := s.launch.Validate(); err != nil {
		fmt.Fprintf(e.stderr, "host: %v\n", err)
		return nil, errBadInput
	}
	manager := mcp.NewManager(mcp.Options{})
	defer manager.Close()
	reg, err := scenarios.NewRegistry(scripts, infos, func(s *scripting.Script) tools.Tool { return &scripting.Tool{Script: s} }, manager.Tool)
	if err != nil {
		fmt.Fprintf(e.stderr, "host: %v\n", err)
		return nil, errBadInput
	}
	s.registry = reg
	return s, nil
}

// fileTools discovers the tools the blueprint files of --blueprint and --under may use beside the
// built-ins: their tools/ folders' and the host's tools_dir's scripts, and the MCP tools of the
// config's servers (and the blueprints' own, when the host allows them), each server started
// once to list them, as loading a scenario does.
func (x *explainCmd) fileTools(cfg *hostconfig.Config) ([]*scripting.Script, []mcp.ToolInfo, error) {
	dirs := []string{cfg.Scripting.ToolsDir}
	servers := slices.Clone(cfg.MCPServers)
	for i, ref := range append(slices.Clone(x.Under), x.Blueprint) {
		path, _ := splitUnder(ref)
		if i == len(x.Under) {
			path = ref
		}
		dirs = append(dirs, filepath.Join(filepath.Dir(path), "tools"))
		declared, err := blueprint.DeclaredServers(path)
		if err != nil {
			return nil, nil, fmt.Errorf("%s %s:\n%w", x.flagOf(i), path, err)
		}
		for _, s := range declared {
			if !cfg.AllowBlueprintServers {
				return nil, nil, fmt.Errorf("%w: %s declares MCP server %q, and the host config does not allow blueprint servers ([mcp] allow_blueprint_servers)",
					scenarios.ErrBlueprintServer, s.Origin(), s.Name)
			}
			if !slices.ContainsFunc(servers, func(o mcpconfig.Server) bool { return o.Name == s.Name }) {
				servers = append(servers, s)
			}
		}
	}
	var scripts []*scripting.Script
	seen := map[string]bool{}
	for _, dir := range dirs {
		if dir == "" || seen[dir] {
			continue
		}
		seen[dir] = true
		found, err := scripting.Discover(dir)
		if err != nil {
			return nil, nil, fmt.Errorf("script tools in %s:\n%w", dir, err)
		}
		scripts = append(scripts, found...)
	}
	var infos []mcp.ToolInfo
	for i := range servers {
		listed, err := scenarios.DiscoverServer(&servers[i])
		if err != nil {
			return nil, nil, fmt.Errorf("%s: server %q could not list its tools: %w", servers[i].Origin(), servers[i].Name, err)
		}
		infos = append(infos, listed...)
	}
	return scripts, infos, nil
}

// lineage builds the agent's policy the way a run does: the top-level agent's group policy, then
// each descendant's inherited from its parent in the stage the parent spawned it from. It returns
// the agent's blueprint and the names of the line, top first.
func (x *explainCmd) lineage(s *explainSetup, chain []string) (*gate.Policy, *blueprint.Blueprint, []string, error) {
	known := s.registry.Names()
	var pol *gate.Policy
	var bp *blueprint.Blueprint
	var parent gate.Parent
	names := make([]string, 0, len(chain))
	for i, ref := range chain {
		name, stageName := splitUnder(ref)
		if i == len(chain)-1 {
			name, stageName = ref, ""
		}
		var err error
		var who string
		bp, who, err = x.blueprintOf(s, name, i, known)
		if err != nil {
			return nil, nil, nil, err
		}
		if i == 0 {
			modes := s.modesOf(x, name)
			pol, err = gate.ForGroup(bp, s.host, s.launch, modes)
			if s.agent == "" {
				s.agent = "agent"
				if s.sc != nil {
					s.agent = name + "-0"
				}
			}
		} else {
			pol, err = gate.Inherit(parent, bp, s.host, s.launch, s.unattended)
		}
		if err != nil {
			return nil, nil, nil, fmt.Errorf("%s: %w", ref, err)
		}
		names = append(names, "blueprint "+bp.Name)
		if i < len(chain)-1 {
			stage := bp.Entry
			if stageName != "" {
				st, ok := bp.Stage(stageName)
				if !ok {
					return nil, nil, nil, fmt.Errorf("--under %q: blueprint %s has stages %s", ref, bp.Name, stageNames(bp))
				}
				stage = st.Index
			}
			parent = gate.Parent{Policy: pol, Stage: stage, StageName: bp.Stages[stage].Name, Who: who}
			names[i] += " (stage " + bp.Stages[stage].Name + ")"
		}
	}
	return pol, bp, names, nil
}

// blueprintOf finds the blueprint named at position i of the line: a file, or with --scenario
// the top group's blueprint (i == 0) or a [spawn] key's. who names the agent in reasons as a run
// does ("of group <key>").
func (x *explainCmd) blueprintOf(s *explainSetup, name string, i int, known []string) (*blueprint.Blueprint, string, error) {
	if s.sc == nil {
		bp, err := blueprint.Load(name, known)
		if err != nil {
			return nil, "", fmt.Errorf("%s %s:\n%w", x.flagOf(i), name, err)
		}
		return bp, "of group " + bp.Name, nil
	}
	if i == 0 {
		for _, g := range s.sc.Groups {
			if g.Name == name {
				return g.Blueprint, "of group " + g.Name, nil
			}
		}
		names := make([]string, len(s.sc.Groups))
		for j, g := range s.sc.Groups {
			names[j] = g.Name
		}
		return nil, "", fmt.Errorf("%w %q: the top-level agent is one of the scenario's groups: %s", errUnknownBlueprint, name, strings.Join(names, ", "))
	}
	sp, ok := s.sc.Spawn[name]
	if !ok {
		keys := make([]string, 0, len(s.sc.Spawn))
		for k := range s.sc.Spawn {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		return nil, "", fmt.Errorf("%w %q: a sub-agent is one of the scenario's [spawn] keys: %s", errUnknownBlueprint, name, strings.Join(keys, ", "))
	}
	return sp.Blueprint, "of group " + sp.Key, nil
}

// flagOf names the flag that gave position i of the line: --under for an ancestor, --blueprint
// for the agent.
func (x *explainCmd) flagOf(i int) string {
	if i < len(x.Under) {
		return "--under"
	}
	return "--blueprint"
}

// errUnknownBlueprint: --blueprint or --under names no group or [spawn] key of the scenario.
var errUnknownBlueprint = errors.New("unknown blueprint")

// modesOf is the top-level agent's modes: the flags, or with --scenario the group's.
func (s *explainSetup) modesOf(x *explainCmd, group string) gate.Modes {
	m := gate.Modes{Unattended: s.unattended, PlanFile: x.PlanFile, Classifier: s.classifier}
	if s.sc != nil {
		for _, g := range s.sc.Groups {
			if g.Name == group {
				m.SafetyMode, m.PlanFile = g.SafetyMode, g.PlanFile
			}
		}
	}
	switch x.SafetyMode {
	case "read-only":
		m.SafetyMode = tools.SafetyReadOnly
	case "auto":
		m.SafetyMode = tools.SafetyAuto
	case "default":
		m.SafetyMode = tools.SafetyDefault
	}
	if x.PlanFile != "" {
		m.PlanFile = x.PlanFile
	}
	return m
}

// splitUnder splits BLUEPRINT[:STAGE] at its last colon.
func splitUnder(ref string) (name, stage string) {
	if i := strings.LastIndexByte(ref, ':'); i >= 0 {
		return ref[:i], ref[i+1:]
	}
	return ref, ""
}

func stageNames(bp *blueprint.Blueprint) string {
	names := make([]string, len(bp.Stages))
	for i := range bp.Stages {
		names[i] = bp.Stages[i].Name
	}
	return strings.Join(names, ", ")
}
