package warren

import (
	"context"
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

// ExplainRequest is one question for the gate, as `host explain` asks it: an agent (its
// blueprint and the ancestors it was spawned under), the stage it is in, the grants it holds and
// the call it makes. Explain builds the agent's policy from it exactly as a run builds it, so the
// answer is the one a run would give. Problems are reported under the names of the host explain
// flags (--blueprint, --under, --stage, --grant), which the fields below mirror.
type ExplainRequest struct {
	// Host is the host config (the permission ceiling); with Scenario it replaces the scenario's
	// [host]. Nil: the scenario's, or without one the built-in default.
	Host *HostConfig
	// Scenario, when set, is a scenario file the question is asked under: its host config,
	// launch overrides, unattended switch, auto-mode classifier, script and MCP tools. Blueprint
	// and Under then name its groups and [spawn] keys. Empty: they are blueprint files, whose
	// tools/ folders' scripts (and, when the host allows it, MCP servers) are discovered as a
	// scenario's would be.
	Scenario string
	// Blueprint is the agent: a blueprint file, or with Scenario a group (a [spawn] key when
	// Under is given).
	Blueprint string
	// Under lists the agent's ancestors, the top-level agent first, each BLUEPRINT[:STAGE]: an
	// ancestor and the stage it was in when it spawned the next one (default: its entry stage).
	Under []string
	// Stage is the stage the agent is in (default: its blueprint's entry stage).
	Stage string
	// SafetyMode of the top-level agent: "default", "read-only" or "auto"; empty keeps the
	// group's with Scenario, and the default mode without.
	SafetyMode string
	// PlanFile, when set, means the top-level agent is drafting a plan into this workdir file
	// (everything else is read-only).
	PlanFile string
	// Agent is the agent's name, which classifier rules match (default: the top group's first
	// agent, "GROUP-0", with Scenario, and "agent" without).
	Agent string
	// Grants the agent holds, each KEY=stage or KEY=run.
	Grants []string
	// Launch and Unattended are the launch overrides of the run asked about (host run's flags);
	// with Scenario they add to its [launch].
	Launch     Launch
	Unattended bool
	// Tool is the tool called (ShellTool for a command line).
	Tool string
	// Args are the call's arguments as JSON; for the shell tool the command line itself may be
	// given instead. Empty: {}.
	Args string
}

// Explanation is the gate's answer to an ExplainRequest: the decision with every layer it took,
// and what the question was resolved to (the agent's line, its stage, the shell line judged),
// so that a caller can show the whole of it without rebuilding any of it.
type Explanation struct {
	// Gate is the decision with every layer's step; its String is the layered report host
	// explain prints.
	Gate gate.Explanation
	// Command is the shell line the gate judged when the tool is the shell ("" otherwise).
	Command string
	// Line names the agent's line of blueprints, the top-level agent first, each ancestor with
	// the stage it spawned the next one from: "blueprint boss (stage plan)", "blueprint helper".
	Line []string
	// Stage is the name of the stage the agent is in.
	Stage string

	tool       string
	registered bool
	known      []string
}

// Err reports what makes the call itself bad input rather than a decision: a tool this host
// does not register, or arguments that fail the tool's schema. The gate refuses both, as a run
// would, and Gate shows the refusal; a command should still treat them as usage errors, because
// the question named something that does not exist or cannot be called that way.
func (x *Explanation) Err() error {
	switch {
	case !x.registered:
		return fmt.Errorf("no tool %q is registered with this host (known: %s)", x.tool, strings.Join(x.known, ", "))
	case x.Gate.Decision.Layer == gate.LayerSchema:
		return fmt.Errorf("the arguments of %s are invalid: %s", x.tool, x.Gate.Decision.Reason)
	}
	return nil
}

// ShellTool is the name of the tool that runs command lines. The gate judges its calls by keys,
// one per command, redirect and assignment of the line, and an ExplainRequest may give the line
// itself as its Args; a caller that shows explanations needs the name to show the line too.
const ShellTool = policy.ShellTool

// ErrUnknownBlueprint means an ExplainRequest with a Scenario names, as its Blueprint or in
// Under, no group or [spawn] key of that scenario; the message lists the ones it has.
var ErrUnknownBlueprint = errors.New("unknown blueprint")

// Explain decides req's call with the gate a run uses (gate.Explain), recording every layer:
// visibility, the schema, the read-only floor, the permission layers under the agent's
// ancestors, safe keys and grants, the classifier, the unattended rule. The agent's policy is
// built as a run builds it: the top-level agent's group policy, then each descendant's
// inherited from its parent in the stage the parent spawned it from. An error means the question
// itself is bad (launch overrides, a scenario, a blueprint, a stage or a grant that does not
// hold); see also Explanation.Err. MCP servers of a host config or of blueprint files are each
// started once to list their tools; ctx is the call's context, which the classifier sees.
func Explain(ctx context.Context, req ExplainRequest) (*Explanation, error) {
	if err := CheckLaunch(req.Launch); err != nil {
		return nil, err
	}
	safety, err := parseSafetyMode(req.SafetyMode)
	if err != nil {
		return nil, err
	}
	x := &explainer{req: req, safety: safety}
	closeServers, err := x.setup()
	if err != nil {
		return nil, err
	}
	defer closeServers()
	chain := append(slices.Clone(req.Under), req.Blueprint)
	pol, bp, line, err := x.lineage(chain)
	if err != nil {
		return nil, err
	}
	stage := bp.Entry
	if req.Stage != "" {
		st, ok := bp.Stage(req.Stage)
		if !ok {
			return nil, fmt.Errorf("--stage %q: blueprint %s has stages %s", req.Stage, bp.Name, stageNames(bp))
		}
		stage = st.Index
	}
	grants := &policy.Grants{}
	for _, g := range req.Grants {
		key, scopeName, ok := strings.Cut(g, "=")
		scope, err := policy.ParseScope(scopeName)
		if !ok || err != nil || scope == policy.ScopeOnce {
			return nil, fmt.Errorf("--grant %q: write KEY=stage or KEY=run", g)
		}
		grants.Grant([]string{key}, scope, stage)
	}
	args := req.Args
	if req.Tool == policy.ShellTool && !json.Valid([]byte(args)) {
		encoded, _ := json.Marshal(map[string]string{"command": args})
		args = string(encoded)
	}
	if args == "" {
		args = "{}"
	}
	st := &bp.Stages[stage]
	handle, _ := x.registry.Lookup(req.Tool)
	gr := gate.Request{Ctx: ctx, Agent: tools.AgentRef{Name: x.agent}, Stage: stage, StageName: st.Name,
		Visible: st.Advertises(req.Tool), Available: st.AvailableTools, Handle: handle, Tool: req.Tool,
		Args: json.RawMessage(args), Grants: grants}
	out := &Explanation{Gate: gate.Explain(pol, &gr), Line: line, Stage: st.Name,
		tool: req.Tool, registered: handle != nil, known: x.registry.Names()}
	if req.Tool == policy.ShellTool {
		var a struct {
			Command string `json:"command"`
		}
		_ = json.Unmarshal(gr.Args, &a)
		out.Command = a.Command
	}
	return out, nil
}

// parseSafetyMode reads ExplainRequest.SafetyMode: nil for "" (keep the group's).
func parseSafetyMode(s string) (*tools.SafetyMode, error) {
	var m tools.SafetyMode
	switch s {
	case "":
		return nil, nil
	case "default":
		m = tools.SafetyDefault
	case "read-only":
		m = tools.SafetyReadOnly
	case "auto":
		m = tools.SafetyAuto
	default:
		return nil, fmt.Errorf("--safety-mode %q: write default, read-only or auto", s)
	}
	return &m, nil
}

// explainer is what an explanation is decided from: the host, the launch, the tools, the
// classifier, and how to find a blueprint by name.
type explainer struct {
	req        ExplainRequest
	safety     *tools.SafetyMode // nil: the group's
	host       *hostconfig.Config
	launch     policy.Launch
	unattended bool
	registry   *tools.Registry
	classifier tools.AutoClassifier
	sc         *Scenario // nil: blueprints are files
	agent      string
}

// setup loads what the explanation is decided from: a scenario's, or a host config's with the
// tools the blueprints' folders and the config's servers offer. It returns how to release the
// MCP sessions the registry's tools would use.
func (x *explainer) setup() (func(), error) {
	req := &x.req
	cfg := req.Host
	x.launch, x.unattended, x.agent = req.Launch, req.Unattended, req.Agent
	var scripts []*scripting.Script
	var infos []mcp.ToolInfo
	if req.Scenario != "" {
		sc, err := LoadUnder(req.Scenario, cfg)
		if err != nil {
			return nil, fmt.Errorf("%s is not a valid scenario:\n%w", req.Scenario, err)
		}
		x.sc, x.host, x.classifier = sc, sc.Host, sc.AutoClassifier()
		if cfg != nil {
			x.host = cfg
		}
		x.launch = sc.MergeLaunch(x.launch)
		x.unattended = x.unattended || sc.Unattended
		scripts, infos = sc.Scripts, sc.MCPTools
	} else {
		if cfg == nil {
			cfg = hostconfig.Default()
		}
		x.host = cfg
		var err error
		if scripts, infos, err = x.fileTools(cfg); err != nil {
			return nil, err
		}
	}
	x.unattended = x.unattended || x.host.Unattended
	if err := x.launch.Validate(); err != nil {
		return nil, err
	}
	manager := mcp.NewManager(mcp.Options{})
	reg, err := scenarios.NewRegistry(scripts, infos, func(s *scripting.Script) tools.Tool { return &scripting.Tool{Script: s} }, manager.Tool)
	if err != nil {
		_ = manager.Close()
		return nil, err
	}
	x.registry = reg
	return func() { _ = manager.Close() }, nil
}

// fileTools discovers the tools the blueprint files of Blueprint and Under may use beside the
// built-ins: their tools/ folders' and the host's tools_dir's scripts, and the MCP tools of the
// config's servers (and the blueprints' own, when the host allows them), each server started
// once to list them, as loading a scenario does.
func (x *explainer) fileTools(cfg *hostconfig.Config) ([]*scripting.Script, []mcp.ToolInfo, error) {
	req := &x.req
	dirs := []string{cfg.Scripting.ToolsDir}
	servers := slices.Clone(cfg.MCPServers)
	for i, ref := range append(slices.Clone(req.Under), req.Blueprint) {
		path, _ := splitUnder(ref)
		if i == len(req.Under) {
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
		listed, err := discoverServer(&servers[i])
		if err != nil {
			return nil, nil, err
		}
		infos = append(infos, listed...)
	}
	return scripts, infos, nil
}

// lineage builds the agent's policy the way a run does: the top-level agent's group policy, then
// each descendant's inherited from its parent in the stage the parent spawned it from. It returns
// the agent's blueprint and the names of the line, top first.
func (x *explainer) lineage(chain []string) (*gate.Policy, *blueprint.Blueprint, []string, error) {
	known := x.registry.Names()
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
		bp, who, err = x.blueprintOf(name, i, known)
		if err != nil {
			return nil, nil, nil, err
		}
		if i == 0 {
			pol, err = gate.ForGroup(bp, x.host, x.launch, x.modesOf(name))
			if x.agent == "" {
				x.agent = "agent"
				if x.sc != nil {
					x.agent = name + "-0"
				}
			}
		} else {
			pol, err = gate.Inherit(parent, bp, x.host, x.launch, x.unattended)
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

// blueprintOf finds the blueprint named at position i of the line: a file, or with a scenario
// the top group's blueprint (i == 0) or a [spawn] key's. who names the agent in reasons as a run
// does ("of group <key>").
func (x *explainer) blueprintOf(name string, i int, known []string) (*blueprint.Blueprint, string, error) {
	if x.sc == nil {
		bp, err := blueprint.Load(name, known)
		if err != nil {
			return nil, "", fmt.Errorf("%s %s:\n%w", x.flagOf(i), name, err)
		}
		return bp, "of group " + bp.Name, nil
	}
	if i == 0 {
		for _, g := range x.sc.Groups {
			if g.Name == name {
				return g.Blueprint, "of group " + g.Name, nil
			}
		}
		names := make([]string, len(x.sc.Groups))
		for j, g := range x.sc.Groups {
			names[j] = g.Name
		}
		return nil, "", fmt.Errorf("%w %q: the top-level agent is one of the scenario's groups: %s", ErrUnknownBlueprint, name, strings.Join(names, ", "))
	}
	sp, ok := x.sc.Spawn[name]
	if !ok {
		keys := make([]string, 0, len(x.sc.Spawn))
		for k := range x.sc.Spawn {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		return nil, "", fmt.Errorf("%w %q: a sub-agent is one of the scenario's [spawn] keys: %s", ErrUnknownBlueprint, name, strings.Join(keys, ", "))
	}
	return sp.Blueprint, "of group " + sp.Key, nil
}

// flagOf names the flag that gave position i of the line: --under for an ancestor, --blueprint
// for the agent.
func (x *explainer) flagOf(i int) string {
	if i < len(x.req.Under) {
		return "--under"
	}
	return "--blueprint"
}

// modesOf is the top-level agent's modes: the request's, or with a scenario the group's, which
// the request's safety mode and plan file replace when given.
func (x *explainer) modesOf(group string) gate.Modes {
	m := gate.Modes{Unattended: x.unattended, PlanFile: x.req.PlanFile, Classifier: x.classifier}
	if x.sc != nil {
		for _, g := range x.sc.Groups {
			if g.Name == group {
				m.SafetyMode, m.PlanFile = g.SafetyMode, g.PlanFile
			}
		}
	}
	if x.safety != nil {
		m.SafetyMode = *x.safety
	}
	if x.req.PlanFile != "" {
		m.PlanFile = x.req.PlanFile
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

// stageNames lists bp's stages, for the errors that name a stage it does not have.
func stageNames(bp *blueprint.Blueprint) string {
	names := make([]string, len(bp.Stages))
	for i := range bp.Stages {
		names[i] = bp.Stages[i].Name
	}
	return strings.Join(names, ", ")
}
