package scenarios

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/template"
	"time"

	"github.com/rs/zerolog"

	"github.com/warrenhq/warren/components"
	"github.com/warrenhq/warren/ecs"
	"github.com/warrenhq/warren/gate"
	"github.com/warrenhq/warren/hostconfig"
	"github.com/warrenhq/warren/mcp"
	"github.com/warrenhq/warren/mcp/mcpconfig"
	"github.com/warrenhq/warren/models"
	"github.com/warrenhq/warren/policy"
	"github.com/warrenhq/warren/sandbox"
	"github.com/warrenhq/warren/scripting"
	"github.com/warrenhq/warren/subagents"
	"github.com/warrenhq/warren/systems"
	"github.com/warrenhq/warren/tools"
	"github.com/warrenhq/warren/trace"
)

// KnownTools lists the tools a scenario's blueprints may name on this host: the built-ins and
// the sub-agent tools.
func KnownTools() []string {
	names := make([]string, 0, 20)
	for _, t := range tools.Builtins() {
		names = append(names, t.Spec().Name)
	}
	for _, t := range subagents.Tools() {
		names = append(names, t.Spec().Name)
	}
	slices.Sort(names)
	return names
}

// NewRegistry is the registry of a host's tools: the built-ins, the sub-agent tools, the script
// tools (each made a tool by scriptTool) and the MCP tools (by mcpTool). A run and host explain
// build theirs with it, so both know the same tools with the same schemas and effects.
func NewRegistry(scripts []*scripting.Script, mcpTools []mcp.ToolInfo, scriptTool func(*scripting.Script) tools.Tool, mcpTool func(mcp.ToolInfo) tools.Tool) (*tools.Registry, error) {
	reg := tools.NewRegistry()
	if err := tools.RegisterBuiltins(reg); err != nil {
		return nil, err
	}
	if err := subagents.Register(reg); err != nil {
		return nil, err
	}
	for _, s := range scripts {
		if err := reg.Register(scriptTool(s)); err != nil {
			return nil, fmt.Errorf("script tool %s: %w", s.File, err)
		}
	}
	for _, info := range mcpTools {
		if err := reg.Register(mcpTool(info)); err != nil {
			return nil, fmt.Errorf("MCP tool %s: %w", info.Name, err)
		}
	}
	return reg, nil
}

// AutoClassifier is the scenario's scripted auto-mode classifier ([[classifier]] rules), nil when
// it has none (auto mode then fails safe to ask).
func (sc *Scenario) AutoClassifier() tools.AutoClassifier {
	if len(sc.Classifier) == 0 {
		return nil
	}
	return &classifier{rules: sc.Classifier}
}

// MergeLaunch adds launch overrides given on the command line to the scenario's [launch] table.
func (sc *Scenario) MergeLaunch(l policy.Launch) policy.Launch { return mergeLaunch(sc.Launch, l) }

// LoadHostConfig loads a host config file for this host (host run --config): the known tools,
// plus the script tools of its own [scripting] tools_dir and the tools of its own
// [[mcp_servers]] (each server is started once to list them), which its permission tables may
// name.
func LoadHostConfig(path string) (*hostconfig.Config, error) {
	scripts := func(dir string) ([]string, error) {
		found, err := scripting.Discover(dir)
		names := make([]string, len(found))
		for i, s := range found {
			names[i] = s.Name
		}
		return names, err
	}
	servers := func(s *mcpconfig.Server) ([]string, error) {
		found, err := discover(s)
		names := make([]string, len(found))
		for i, t := range found {
			names[i] = t.Name
		}
		return names, err
	}
	return hostconfig.LoadWithTools(path, KnownTools(), scripts, servers)
}

// Options adjusts one run of a scenario without editing it.
type Options struct {
	// Seed, when set, replaces the scenario's seed.
	Seed *uint64
	// Agents, when positive, rescales the groups so the run has this many agents in total,
	// keeping their proportions (each group keeps at least one agent).
	Agents int
	// Trace, when set, receives the JSON Lines trace.
	Trace io.Writer
	// WorkRoot is where agent workdirs are made. Empty: a fresh temporary folder, removed
	// after the run.
	WorkRoot string
	// Log receives operational logs (never the trace).
	Log zerolog.Logger
	// Progress, when set, is called after every tick with the agents finished so far.
	Progress func(finished, total int)
	// Host, when set, replaces the scenario's host config for the run: its ceilings and settings.
	// The scenario's script tools were fixed when it loaded; LoadUnder (what host run --config
	// uses) compiles the scenario under a host config, its tools_dir included.
	Host *hostconfig.Config
	// Launch adds launch overrides to the scenario's [launch] (host run --yolo, --allow, --ask,
	// --deny); Unattended makes the run unattended.
	Launch     policy.Launch
	Unattended bool
}

// Summary is what a run did.
type Summary struct {
	Scenario string
	Seed     uint64
	Clock    string
	// Agents counts every agent of the run: the groups' and the sub-agents they spawned
	// (Spawned of them).
	Agents  int
	Spawned int
	// Tree counts agents by depth in the agent tree (index 0: top level) and final status
	// (components.StatusKind order).
	Tree [][5]int
	// Ticks is how many ticks ran; Stop says why the run ended.
	Ticks uint64
	Stop  ecs.Stop
	// ByStatus counts agents by final status (components.StatusKind order).
	ByStatus                          [5]int
	ModelTurns, ToolCalls, ToolErrors uint64
	// Elapsed is wall time spent ticking (not part of any trace).
	Elapsed time.Duration
	// Records holds every agent's final record: reaped agents in reap order, then agents the
	// run left unfinished.
	Records []components.FinalRecord
	// Failures lists the expectations that did not hold, in file order.
	Failures []string
	// TraceEvents counts the events written to the trace.
	TraceEvents uint64
}

// StepsPerSecond is the run's throughput in agent-steps (model turns with their tool calls) per
// wall-clock second.
func (s *Summary) StepsPerSecond() float64 {
	if s.Elapsed <= 0 {
		return 0
	}
	return float64(s.ModelTurns) / s.Elapsed.Seconds()
}

// GroupCounts returns each group's agent count for a run with the given Agents option.
func (sc *Scenario) GroupCounts(agents int) []int {
	counts := make([]int, len(sc.Groups))
	total := 0
	for i, g := range sc.Groups {
		counts[i] = g.Count
		total += g.Count
	}
	if agents <= 0 || agents == total {
		return counts
	}
	// Largest-remainder apportionment, every group keeping at least one agent: deterministic,
	// and the counts sum to agents whenever agents >= len(groups).
	assigned := 0
	rem := make([]int, len(counts))
	for i, c := range counts {
		counts[i] = c * agents / total
		rem[i] = c * agents % total
		if counts[i] < 1 {
			counts[i], rem[i] = 1, -1
		}
		assigned += counts[i]
	}
	for assigned < agents {
		best := -1
		for i := range rem {
			if rem[i] >= 0 && (best < 0 || rem[i] > rem[best]) {
				best = i
			}
		}
		if best < 0 {
			break
		}
		counts[best]++
		rem[best] = -1
		assigned++
	}
	// Raising small groups to one may overshoot: take the surplus back from the groups furthest
	// above their exact share (count×total − original×agents is that excess, scaled by total).
	for assigned > agents {
		best := -1
		excess := func(i int) int { return counts[i]*total - sc.Groups[i].Count*agents }
		for i := range counts {
			if counts[i] > 1 && (best < 0 || excess(i) > excess(best)) {
				best = i
			}
		}
		if best < 0 {
			break
		}
		counts[best]--
		assigned--
	}
	return counts
}

// Run runs sc to a fixed point (or its tick limit), writes the trace, and checks the
// expectations. An error means the run could not be carried out; failed expectations are in
// Summary.Failures.
func Run(ctx context.Context, sc *Scenario, opt Options) (*Summary, error) {
	seed := sc.Seed
	if opt.Seed != nil {
		seed = *opt.Seed
	}
	counts := sc.GroupCounts(opt.Agents)
	total := 0
	for _, c := range counts {
		total += c
	}
	root, cleanup, err := workRoot(opt.WorkRoot, opt.Log)
	if err != nil {
		return nil, err
	}
	defer cleanup()

	host := sc.Host
	if opt.Host != nil {
		host = opt.Host
	}
	engine := scripting.NewEngine(scriptLimits(host))
	defer engine.Close()
	scriptTool := scriptTools(engine, host)
	servers := mcp.NewManager(mcp.Options{Log: &opt.Log})
	defer servers.Close()
	for i := range sc.MCPServers {
		if err := servers.Add(&sc.MCPServers[i]); err != nil {
			return nil, err
		}
	}
	reg, err := NewRegistry(sc.Scripts, sc.MCPTools, scriptTool, servers.Tool)
	if err != nil {
		return nil, err
	}
	scoped := tools.NewScoped(reg)
	launch := mergeLaunch(sc.Launch, opt.Launch)
	if err := launch.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrLaunch, err)
	}
	unattended := sc.Unattended || opt.Unattended || host.Unattended
	auto := sc.AutoClassifier()

	var tw *trace.Writer
	if opt.Trace != nil {
		tw, err = trace.NewWriter(opt.Trace, trace.Header{Scenario: sc.Name, ScenarioHash: runHash(sc, opt, total, host, launch),
			Clock: sc.Clock.Mode.String(), Seed: seed})
		if err != nil {
			return nil, fmt.Errorf("trace: %w", err)
		}
	}

	w := ecs.NewWorld(ecs.Config{Seed: seed, Clock: sc.Clock})
	hostRes := &systems.Host{
		Log:        &opt.Log,
		Context:    ctx,
		Trace:      tw,
		Tasks:      tools.NewTaskBroker(),
		Records:    &components.Records{},
		Latency:    sc.Latency,
		Hub:        systems.NewHub(newScript(sc.Interactions)),
		Offspring:  &offspring{sc: sc, scoped: scoped, host: host, launch: launch, unattended: unattended, root: root},
		ScriptTool: scriptTool,
		Limits: subagents.Limits{MaxDepth: host.Subagents.MaxDepth, MaxChildren: host.Subagents.MaxChildren,
			MaxLive: host.Subagents.MaxAgents},
		InboxCap:       host.Subagents.Inbox,
		MaxFanOutItems: host.Subagents.MaxFanOutItems,
	}
	if len(sc.MCPServers) > 0 {
		hostRes.MCP = servers
	}
	pipeline := systems.Pipeline()
	if opt.Progress != nil {
		pipeline = append(pipeline, &progress{records: hostRes.Records, total: total, report: opt.Progress})
	}
	sched := ecs.NewScheduler(w, pipeline...)
	hostRes.ModelLane = sched.AddLane(ecs.LaneConfig{Name: "model", Capacity: sc.Lanes.ModelCapacity})
	hostRes.ToolLane = sched.AddLane(ecs.LaneConfig{Name: "tool", Capacity: sc.Lanes.ToolCapacity, Workers: sc.Lanes.ToolWorkers})
	ecs.AddResource(w, hostRes)
	defer sched.Finalize()
	if err := sched.Initialize(); err != nil {
		return nil, err
	}
	spawner, err := systems.NewSpawner(w)
	if err != nil {
		return nil, err
	}
	namers := make([]func(int) string, len(sc.Groups))
	for i := range sc.Groups {
		namers[i] = sc.Groups[i].namer(counts[i])
	}
	if err := checkNames(sc, counts, namers); err != nil {
		return nil, err
	}
	for i := range sc.Groups {
		g := &sc.Groups[i]
		pol, err := toolPolicy(g, host, launch, unattended, auto)
		if err != nil {
			return nil, err
		}
		p, err := profile(g, scoped, root, pol, host.SandboxCeiling(), sc.leasedServers(g.Blueprint))
		if err != nil {
			return nil, err
		}
		spawner.SpawnGroup(w, p, counts[i], namers[i])
	}
	opt.Log.Info().Str("scenario", sc.Name).Int("agents", total).Uint64("seed", seed).Str("workdir", root).Msg("run started")

	start := time.Now()
	stop, err := sched.Run(ctx, sc.MaxTicks)
	elapsed := time.Since(start)
	if cerr := hostRes.CloseServers(w.Tick()); cerr != nil {
		opt.Log.Warn().Err(cerr).Msg("MCP servers did not stop cleanly")
	}
	if err != nil {
		_ = tw.Close() // keep the trace up to the failure: it is the best account of what happened
		return nil, err
	}
	records := append([]components.FinalRecord(nil), hostRes.Records.All()...)
	records = append(records, systems.Unfinished(w, "the run ended ("+stop.String()+") before this agent finished")...)
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("trace: %w", err)
	}
	sum := &Summary{Scenario: sc.Name, Seed: seed, Clock: sc.Clock.Mode.String(), Agents: len(records),
		Ticks: w.Tick() + 1, Stop: stop, Elapsed: elapsed, Records: records, TraceEvents: tw.Events()}
	for i := range records {
		r := &records[i]
		sum.ByStatus[r.Status]++
		for int(r.Depth) >= len(sum.Tree) {
			sum.Tree = append(sum.Tree, [5]int{})
		}
		sum.Tree[r.Depth][r.Status]++
		if r.Depth > 0 {
			sum.Spawned++
		}
		sum.ModelTurns += uint64(r.Counters.ModelTurns)
		sum.ToolCalls += uint64(r.Counters.ToolCalls)
		sum.ToolErrors += uint64(r.Counters.ToolErrors)
	}
	sum.Failures = append(Check(sc, records), hostRes.Hub.Unanswered()...)
	opt.Log.Info().Str("stop", stop.String()).Uint64("ticks", sum.Ticks).Dur("elapsed", elapsed).Msg("run finished")
	return sum, nil
}

// runHash is the trace header's scenario hash: the scenario's content hash, followed by what the
// command line changed (the agent count, a replacing host config, launch overrides, unattended),
// so two traces of one scenario run differently never claim the same origin.
func runHash(sc *Scenario, opt Options, total int, host *hostconfig.Config, launch policy.Launch) string {
	hash := sc.Hash
	if opt.Agents > 0 {
		hash += " agents=" + strconv.Itoa(total)
	}
	if opt.Host != nil {
		hash += " config=" + host.Hash
	}
	if l := opt.Launch; l.Yolo || len(l.Allow)+len(l.Ask)+len(l.Deny) > 0 {
		hash += fmt.Sprintf(" launch=yolo:%v,allow:%s,ask:%s,deny:%s", launch.Yolo,
			strings.Join(launch.Allow, "|"), strings.Join(launch.Ask, "|"), strings.Join(launch.Deny, "|"))
	}
	if opt.Unattended {
		hash += " unattended"
	}
	return hash
}

// workRoot returns the folder agent workdirs live under, with its symbolic links resolved (the
// file tools refuse a workdir whose path goes through one, as a planted link would: see
// tools.OpenWorkdir), and what to do when the run ends. A temporary root is removed then with
// tools.RemoveTree, which follows no link the agents planted and leaves in place, logged, any
// mount a mode-none command made in it.
func workRoot(dir string, log zerolog.Logger) (string, func(), error) {
	if dir != "" {
		abs, err := filepath.Abs(dir)
		if err != nil {
			return "", nil, fmt.Errorf("workdir %s: %w", dir, err)
		}
		if err := os.MkdirAll(abs, 0o755); err != nil {
			return "", nil, fmt.Errorf("workdir: %w", err)
		}
		resolved, err := filepath.EvalSymlinks(abs)
		if err != nil {
			return "", nil, fmt.Errorf("workdir: %w", err)
		}
		return resolved, func() {}, nil
	}
	tmp, err := os.MkdirTemp("", "warren-run-")
	if err != nil {
		return "", nil, fmt.Errorf("workdir: %w", err)
	}
	resolved, err := filepath.EvalSymlinks(tmp)
	if err != nil {
		_ = os.Remove(tmp)
		return "", nil, fmt.Errorf("workdir: %w", err)
	}
	return resolved, func() {
		if err := tools.RemoveTree(resolved); err != nil {
			log.Warn().Err(err).Msg("the run's temporary workdir root was not removed whole")
		}
	}, nil
}

// profile builds the shared Profile of a group's agents: what each stage advertises and the
// registry its calls resolve through. In an unattended run a stage that does not require an
// interaction tool neither advertises it nor lets it block: its registry pushes a scope in which
// a stand-in answers with the unattended answer at once. servers are the MCP servers its agents
// lease (see Scenario.leasedServers).
func profile(g *Group, scoped *tools.ScopedToolRegistry, root string, pol *gate.Policy, ceiling sandbox.Boundary, servers []string) (*components.Profile, error) {
	bp := g.Blueprint
	stageTools := make([][]models.ToolInfo, len(bp.Stages))
	registries := make([]*tools.ScopedToolRegistry, len(bp.Stages))
	boundaries := make([]sandbox.Boundary, len(bp.Stages))
	for i := range bp.Stages {
		st := &bp.Stages[i]
		registries[i] = scoped
		boundaries[i] = bp.StageBoundary(ceiling, i)
		var standIns *tools.ScopedToolRegistry
		var scope tools.ScopeID
		for _, name := range st.AvailableTools {
			t, ok := scoped.Get(name)
			if !ok {
				continue
			}
			if pol.Unattended && tools.IsInteraction(name) && !slices.Contains(st.RequiredTools, name) {
				if standIns == nil {
					standIns = tools.NewScoped(scoped.Base())
					scope = standIns.PushScope()
				}
				if _, err := standIns.RegisterInScope(scope, tools.UnattendedStandIn(t)); err != nil {
					return nil, err
				}
				continue // not advertised
			}
			spec := t.Spec()
			stageTools[i] = append(stageTools[i], models.ToolInfo{Name: spec.Name, Description: spec.Description, Parameters: spec.Parameters})
		}
		if standIns != nil {
			registries[i] = standIns
		}
	}
	p := &components.Profile{
		Group: g.Name, Blueprint: bp, Model: g.Model, ModelID: g.Model.ID(),
		Tools: scoped, StageTools: stageTools, StageRegistries: registries, Policy: pol,
		Sandbox: boundaries, MCPServers: servers, WorkRoot: root,
	}
	groupDir := filepath.Join(root, g.Name)
	if g.workdir == nil {
		p.Workdir = func(name string, _ int) string { return filepath.Join(groupDir, name) }
	} else {
		p.Workdir = func(name string, index int) string {
			rel := expand(g.workdir, templateData{Name: name, Index: index, Group: g.Name})
			if !filepath.IsLocal(rel) {
				return "" // the file tools refuse to work without a workdir
			}
			return filepath.Join(root, rel)
		}
	}
	if g.task != nil {
		p.Task = func(name string, index int) string {
			return expand(g.task, templateData{Name: name, Index: index, Group: g.Name})
		}
	}
	return p, nil
}

// ErrLaunch marks launch overrides that contradict each other.
var ErrLaunch = errors.New("conflicting launch overrides")

// mergeLaunch adds the command line's launch overrides to the scenario's.
func mergeLaunch(a, b policy.Launch) policy.Launch {
	return policy.Launch{
		Yolo:  a.Yolo || b.Yolo,
		Allow: append(slices.Clone(a.Allow), b.Allow...),
		Ask:   append(slices.Clone(a.Ask), b.Ask...),
		Deny:  append(slices.Clone(a.Deny), b.Deny...),
	}
}

// toolPolicy builds the shared tool policy of a group: its blueprint's layers under the host's
// ceiling and the launch overrides, the safe keys, and the group's safety mode.
func toolPolicy(g *Group, host *hostconfig.Config, launch policy.Launch, unattended bool, auto tools.AutoClassifier) (*gate.Policy, error) {
	pol, err := gate.ForGroup(g.Blueprint, host, launch, gate.Modes{Unattended: unattended,
		SafetyMode: g.SafetyMode, PlanFile: g.PlanFile, Classifier: auto})
	if err != nil {
		return nil, fmt.Errorf("group %q: %w", g.Name, err)
	}
	return pol, nil
}

// namer returns how agents of g are named when the group has count agents: its agent_name
// template, or "<group>-<index>" with the index zero-padded to the width of the largest.
func (g *Group) namer(count int) func(int) string {
	if g.agentName != nil {
		return func(i int) string { return expand(g.agentName, templateData{Index: i, Group: g.Name}) }
	}
	width := len(strconv.Itoa(max(count-1, 0)))
	prefix := g.Name + "-"
	return func(i int) string {
		s := strconv.Itoa(i)
		if pad := width - len(s); pad > 0 {
			s = strings.Repeat("0", pad) + s
		}
		return prefix + s
	}
}

// checkNames makes sure every agent of the run gets a usable, unique name. Default names
// ("<group>-<digits>") are unique by construction, so only groups with an agent_name template are
// checked, against every name of the run.
func checkNames(sc *Scenario, counts []int, namers []func(int) string) error {
	custom := false
	for i := range sc.Groups {
		custom = custom || sc.Groups[i].agentName != nil
	}
	if !custom {
		return nil
	}
	seen := map[string]string{}
	for i := range sc.Groups {
		g := &sc.Groups[i]
		for index := range counts[i] {
			name := namers[i](index)
			if g.agentName != nil && !validAgentName(name) {
				return fmt.Errorf("%w: group %q: agent_name gives %q for index %d; a name is letters, digits, '.', '_' and '-', starting with a letter or digit, and never \"..\"", ErrAgentNames, g.Name, name, index)
			}
			if other, dup := seen[name]; dup {
				return fmt.Errorf("%w: %q is the name of an agent of group %q and of group %q; make agent_name give unique names (use {{.Index}})", ErrAgentNames, name, other, g.Name)
			}
			seen[name] = g.Name
		}
	}
	return nil
}

// ErrAgentNames means the run's agent names are unusable or not unique.
var ErrAgentNames = errors.New("bad agent names")

func expand(t *template.Template, data templateData) string {
	var b strings.Builder
	if err := t.Execute(&b, data); err != nil {
		return ""
	}
	return b.String()
}

// progress reports finished agents after every tick; it changes nothing in the world.
type progress struct {
	records *components.Records
	total   int
	report  func(int, int)
}

func (*progress) Name() string                { return "progress" }
func (*progress) Initialize(*ecs.World) error { return nil }
func (p *progress) Update(w *ecs.World) {
	// Sub-agents join the run as they are spawned: the total is what ended plus what lives.
	p.report(p.records.Len(), max(p.total, p.records.Len()+w.Entities()))
}
func (*progress) Finalize(*ecs.World) {}

// scriptLimits are the limits of every script call of a run, from the host's [scripting].
func scriptLimits(host *hostconfig.Config) scripting.Limits {
	l := scripting.DefaultLimits()
	if host.Scripting.CallTimeout > 0 {
		l.CallTimeout = host.Scripting.CallTimeout
	}
	if host.Scripting.MaxCallStack > 0 {
		l.MaxCallStack = host.Scripting.MaxCallStack
	}
	if host.Scripting.MaxMemory > 0 {
		l.MaxMemory = host.Scripting.MaxMemory
	}
	return l
}

// scriptTools returns how the run makes a script's tool: run by engine with the host's HTTP
// settings and the environment variables its allow-list names (read once, when the run starts).
// The scenario's script tools and the dynamic tools agents write share it.
func scriptTools(engine *scripting.Engine, host *hostconfig.Config) systems.ScriptTool {
	env := map[string]string{}
	for _, name := range host.Scripting.AllowEnv {
		if v, ok := os.LookupEnv(name); ok {
			env[name] = v
		}
	}
	httpCfg := scripting.HTTPConfig{Timeout: host.Scripting.HTTPTimeout, MaxResponseBytes: host.Scripting.MaxHTTPResponseBytes,
		AllowPrivate: host.Scripting.HTTPAllowPrivate}
	return func(s *scripting.Script) tools.Tool {
		return &scripting.Tool{Script: s, Engine: engine, HTTP: httpCfg, Env: env}
	}
}
