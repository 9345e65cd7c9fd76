package warren

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/warrenhq/warren/components"
	"github.com/warrenhq/warren/ecs"
	"github.com/warrenhq/warren/faults"
	"github.com/warrenhq/warren/gate"
	"github.com/warrenhq/warren/hostconfig"
	"github.com/warrenhq/warren/inference"
	"github.com/warrenhq/warren/mcp"
	"github.com/warrenhq/warren/policy"
	"github.com/warrenhq/warren/recording"
	"github.com/warrenhq/warren/resources"
	"github.com/warrenhq/warren/scenarios"
	"github.com/warrenhq/warren/scripting"
	"github.com/warrenhq/warren/systems"
	"github.com/warrenhq/warren/tools"
	"github.com/warrenhq/warren/trace"
)

// Options adjusts one run of a scenario without editing it.
type Options struct {
	// Seed, when set, replaces the scenario's seed.
	Seed *uint64
	// Agents, when positive, rescales the groups so the run has this many agents in total,
	// keeping their proportions (each group keeps at least one agent).
	Agents int
	// Trace, when set, receives the JSON Lines trace.
	Trace io.Writer
	// Events, when set, sees every trace event as it is written (the JSON line, newline
	// included), on the world's goroutine: it must not block and must not keep the slice.
	Events func(line []byte)
	// Answerer answers the prompts the scenario's [[interactions]] do not (nil: those are
	// refused as unanswered, and the run reports them).
	Answerer gate.Answerer
	// Console, when set, is how people act on the run while it goes (host serve, host run
	// --interactive): the prompts the scenario's [[interactions]] and the Answerer leave open wait
	// for them, and what they do (answers, kills, a cancel, each at the tick it is applied) is
	// recorded so the run replays. Run ends the console when the run ends.
	Console *Console
	// WorkRoot is where agent workdirs are made. Empty: a fresh temporary folder, removed
	// after the run.
	WorkRoot string
	// Log receives operational logs (never the trace).
	Log zerolog.Logger
	// PrivateHosts, when set, makes the run's MCP servers over HTTP reach only public addresses,
	// checked as each connection is made, except the hosts it reports true for: host serve's
	// guard against a submitted url reaching the server's own network (its live models get the
	// same guard where the scenario loads: LoadOptions.PrivateHosts).
	PrivateHosts func(host string) bool
	// Progress, when set, is called after every tick with the agents finished so far.
	Progress func(finished, total int)
	// Timeline, when set, is called at the end of every tick with the world's state then: its
	// agents by phase, how many finished, the trace's events so far and the wall time since the
	// ticking started (a run directory's timeline.csv). It runs on the world's goroutine and must
	// not block; it is never part of the trace.
	Timeline func(TickStats)
	// Host, when set, replaces the scenario's host config for the run: its ceilings and settings.
	// The scenario's script tools were fixed when it loaded; LoadUnder (what host run --config
	// uses) compiles the scenario under a host config, its tools_dir included.
	Host *hostconfig.Config
	// Launch adds launch overrides to the scenario's [launch] (host run --yolo, --allow, --ask,
	// --deny); Unattended makes the run unattended.
	Launch     policy.Launch
	Unattended bool
	// Record, when set, receives the run's recording (docs/recording.md): every input from outside
	// the scenario and seed, whole, so that host replay can run it again offline. TraceFile and
	// RecordFile name the trace and the recording (as the command line gave them) in the
	// recording's header and the trace's.
	Record                io.Writer
	TraceFile, RecordFile string
	// RecordNote is a line of text the recording's header keeps, for whoever replays it (what the
	// run was made against, why).
	RecordNote string
	// Replay, when set, answers every outside input from this recording (LoadReplay makes the
	// options): no call on the tool lane runs and no MCP session starts. A call the recording does
	// not have, or has with other arguments, stops the run with an error wrapping
	// recording.ErrDivergence.
	Replay *recording.Tape
	// FaultsSeed, when set, replaces the seed the scenario's [faults] are drawn from.
	FaultsSeed *uint64
	// State, when set, keeps the run's durable state in a state directory (docs/state.md): its
	// trace, its recording and its effect journal, committed at tick boundaries, so that Resume
	// can go on with it after a crash. The trace goes to TraceFile when set, else into the
	// directory; Trace, Record and Replay must be nil.
	State *StateOptions

	// resumed is the state directory a resume (Resume) goes on with; snapshot, the world
	// snapshot it restores (nil: it replays from the start).
	resumed  *stateRun
	snapshot *worldSnapshot
	// recordName, when set, is how the trace's and the recording's headers name the recording
	// (a state directory's is named relative to the directory, so that two directories of one run
	// hold the same trace).
	recordName string
}

// recordingName is how the headers name the recording.
func (o *Options) recordingName() string { return cmp.Or(o.recordName, o.RecordFile) }

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
	// Ticks is how many ticks ran; Stop says why the ticking ended.
	Ticks uint64
	Stop  ecs.Stop
	// Status is how the run ended, as the trace's end event gives it: trace.RunFinished (a fixed
	// point), trace.RunTickLimit, trace.RunInterrupted (the context ended: a signal, a caller's
	// cancel) or trace.RunFailed (the trace could not be written, or a system panicked). Only a
	// finished run is the whole run; the others are summaries of the ticks that ran.
	Status string
	// Err says why a run that did not finish stopped: the context's cause when it was
	// interrupted (context.Cause: for host run, the signal), the error Run also returns when it
	// failed (ErrTrace for a trace write error); nil for a finished run or one at its tick limit.
	Err error
	// ByStatus counts agents by final status (components.StatusKind order).
	ByStatus                          [5]int
	ModelTurns, ToolCalls, ToolErrors uint64
	// Elapsed is wall time spent ticking (not part of any trace).
	Elapsed time.Duration
	// Records holds every agent's final record: reaped agents in reap order, then agents the
	// run left unfinished.
	Records []components.FinalRecord
	// Failures lists the expectations that did not hold, in file order, then the prompts
	// nothing answered.
	Failures []string
	// TraceEvents counts the events written to the trace.
	TraceEvents uint64
	// MCPStarts and MCPCalls count the MCP sessions started and the calls that reached an MCP
	// server: both 0 in a replay, which answers from its recording.
	MCPStarts int
	MCPCalls  int64
	// FaultsSeed is the seed the scenario's [faults] were drawn from (nil: it has none).
	FaultsSeed *uint64
	// RealTimeLimits counts the calls a limit measured in real time decided (an MCP call_timeout,
	// a command's timeout, a script's wall-clock backstop): each has a tool_note with fn
	// realtime_limit, and the trace is, there, a record of the machine as much as of the scenario.
	RealTimeLimits uint64
	// Recorded counts the recording's entries (host run --record); Replayed the recorded tool
	// calls a replay answered, of ReplayCalls in its recording.
	Recorded              uint64
	Replayed, ReplayCalls int
	// Spend is what the run's live model turns cost (tokens and picodollars); Groups what each
	// group's did, by group name; Trees what each agent tree's did, by its top-level agent's name
	// (trees of one agent included). Empty when no live model ran.
	Spend  components.Spend
	Groups map[string]components.Spend
	Trees  map[string]components.Spend
	// Pools is what each inference pool did, in order (configured pools first).
	Pools []PoolSummary
	// Models is what each model did (a stage may have a model of its own), sorted by model id:
	// its turns, how many failed, and what its live turns spent.
	Models []ModelSummary
	// Snapshots is what the run's world snapshots cost (a run with a state directory).
	Snapshots SnapshotStats
}

// SnapshotStats is what a run's world snapshots cost: how many were written, how long the world
// waited while each was copied (the only part it waits for: encoding and writing happen beside
// it), how long the writes took, and the last one's size. A due snapshot that the state it fell
// due in could not be saved as yet is Deferred, taken at a later tick.
type SnapshotStats struct {
	// Copied counts the snapshots the world paused for, Taken those written.
	Copied, Taken, Deferred int
	MaxPause                time.Duration
	TotalPause              time.Duration
	TotalWrite              time.Duration
	LastBytes               int64
	LastAgents              int
	// Why is the reason of the last deferral, Failed the last write's error ("" when none was).
	Why, Failed string
}

// ModelSummary is what one model did in a run.
type ModelSummary struct {
	// ID names the model as the trace does ("scripted:planner", "openai:grader").
	ID string
	// Turns counts its turns, Failed those that failed (a model error, an injected fault, a
	// panic).
	Turns, Failed uint64
	// Spend is what its live turns cost (zero for a model that runs in the host).
	Spend components.Spend
}

// PoolSummary is what one inference pool did in a run.
type PoolSummary struct {
	Name string
	// MaxConcurrency is its cap on requests in flight, RequestsPerMinute and TokensPerMinute its
	// rate limits (0: none).
	MaxConcurrency                     int
	RequestsPerMinute, TokensPerMinute int64
	// Stats are its counters.
	Stats inference.Stats
}

// StepsPerSecond is the run's throughput in agent-steps (model turns with their tool calls) per
// wall-clock second.
func (s *Summary) StepsPerSecond() float64 {
	if s.Elapsed <= 0 {
		return 0
	}
	return float64(s.ModelTurns) / s.Elapsed.Seconds()
}

// ErrItems marks a run that would give a group more agents (host run --agents) than its
// inputs.items file has items.
var ErrItems = errors.New("not enough items")

// ErrLaunch marks launch overrides that contradict each other.
var ErrLaunch = errors.New("conflicting launch overrides")

// ErrRan means Run was called on a Runtime that already ran (or was closed).
var ErrRan = errors.New("this runtime already ran")

// ErrTrace marks a run stopped because its trace could not be written (a full disk, a closed
// pipe): a run whose trace stopped is no longer a record of itself, so it stops at the end of the
// tick in which the write failed, and Run returns the summary so far with this error.
var ErrTrace = errors.New("the trace could not be written")

// ErrRecording marks a run stopped because its recording could not be written: like a trace, a
// recording that stopped no longer replays the run, so the run stops at the end of that tick.
var ErrRecording = errors.New("the recording could not be written")

// Runtime is one built world, ready to run once.
type Runtime struct {
	sc        *Scenario
	opt       Options
	seed      uint64
	total     int
	world     *ecs.World
	sched     *ecs.Scheduler
	set       *resources.Set
	installed resources.Installed
	trace     *trace.Writer
	records   *components.Records
	record    *recording.Writer
	servers   *mcp.Manager
	cleanup   []func()
	ran       bool
	// state is the run's state directory (nil: none).
	state *stateRun
	// halt ends the run's context with a cause, from the trace watch (set by Run).
	halt context.CancelCauseFunc
	// hash is the run's scenario hash; answerer answers its prompts (the hub's).
	hash     string
	answerer gate.Answerer
	// snapshots takes the world's snapshots (nil: none).
	snapshots *snapshotter
	// started is when the ticking started (set by Run), for the timeline's wall times.
	started time.Time
}

// PhaseNames names an agent's phases in the order TickStats.Phases counts them: entering,
// ready_to_infer, awaiting_inference, ready_for_tools, awaiting_tools, resolve_transition,
// terminal.
var PhaseNames = systems.PhaseNames

// TickStats is the world at the end of one tick (Options.Timeline).
type TickStats struct {
	Tick uint64
	// Phases counts the live agents by phase, in PhaseNames order.
	Phases [len(systems.PhaseNames)]int
	// Finished counts the agents that ended (and were reaped) so far; Events the trace's events
	// so far.
	Finished int
	Events   uint64
	// Wall is the wall time from the start of the ticking to the end of this tick: the one
	// figure of a timeline that depends on the machine.
	Wall time.Duration
	// ModelLaneWaiting and ToolLaneWaiting are the jobs waiting for a slot in the world's
	// model and tool lanes; Pools the model turns waiting in each inference pool (sent neither
	// yet nor retried), in the run's pool order.
	ModelLaneWaiting, ToolLaneWaiting int
	Pools                             []PoolQueue
}

// PoolQueue is how many model turns wait in one inference pool at the end of a tick.
type PoolQueue struct {
	Pool   string
	Queued int
}

// Run builds sc's world with opt and runs it under ctx: New, then Runtime.Run. An error means
// the run could not be carried out; failed expectations are in Summary.Failures.
func Run(ctx context.Context, sc *Scenario, opt Options) (*Summary, error) {
	r, err := New(sc, opt)
	if err != nil {
		return nil, err
	}
	return r.Run(ctx)
}

// New builds sc's world: the work root, the script engine, the MCP sessions, the tool registry,
// the world's resources, the tick's systems and every group's agents (spawned, not yet run).
func New(sc *Scenario, opt Options) (_ *Runtime, err error) {
	r := &Runtime{sc: sc, opt: opt, seed: sc.Seed}
	defer func() {
		if err != nil {
			r.Close()
		}
	}()
	if opt.Seed != nil {
		r.seed = *opt.Seed
	}
	counts := sc.GroupCounts(opt.Agents)
	for i, c := range counts {
		r.total += c
		if in := sc.Groups[i].Inputs; in != nil && in.Items != nil && c > len(in.Items) {
			return nil, fmt.Errorf("%w: group %q has %d items (%s) and --agents gives it %d agents: each agent needs an item",
				ErrItems, sc.Groups[i].Name, len(in.Items), in.ItemsFile, c)
		}
	}
	host := sc.Host
	if opt.Host != nil {
		host = opt.Host
	}
	engine := scripting.NewEngine(scriptLimits(host))
	r.cleanup = append(r.cleanup, engine.Close)
	scriptTool := scriptTools(engine, host)
	servers := mcp.NewManager(mcp.Options{Log: &opt.Log, PrivateHosts: opt.PrivateHosts})
	r.servers = servers
	r.cleanup = append(r.cleanup, func() { _ = servers.Close() })
	for i := range sc.MCPServers {
		if err := servers.Add(&sc.MCPServers[i]); err != nil {
			return nil, err
		}
	}
	reg, err := scenarios.NewRegistry(sc.Scripts, sc.MCPTools, scriptTool, servers.Tool)
	if err != nil {
		return nil, err
	}
	scoped := tools.NewScoped(reg)
	launch := sc.MergeLaunch(opt.Launch)
	if err := launch.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrLaunch, err)
	}
	unattended := sc.Unattended || opt.Unattended || host.Unattended

	hash := runHash(sc, opt, r.total, host, launch)
	r.hash = hash
	r.state = opt.resumed
	if opt.State != nil {
		if r.state, err = openState(sc, &opt, r.seed, hash); err != nil {
			return nil, err
		}
		r.opt = opt
	}
	if r.state != nil {
		r.cleanup = append(r.cleanup, r.state.Close)
	}
	if r.state != nil && (opt.Answerer != nil || opt.Console != nil) {
		return nil, errors.New("a run with a state directory takes no Answerer or Console yet: its answers could not be resumed")
	}
	if opt.Record != nil && opt.Replay != nil && r.state == nil {
		return nil, errors.New("a run records or replays, not both")
	}
	switch {
	case opt.Record != nil && opt.snapshot != nil:
		r.record = recording.Continue(opt.Record, &opt.snapshot.Recording)
	case opt.Record != nil:
		if r.record, err = recording.NewWriter(opt.Record, recordingHeader(sc, opt, r.seed, hash)); err != nil {
			return nil, fmt.Errorf("recording: %w", err)
		}
	}
	root, removeRoot, err := workRoot(opt.WorkRoot, opt.Log)
	if err != nil {
		return nil, err
	}
	r.cleanup = append(r.cleanup, removeRoot)
	if len(sc.MCPServers) > 0 {
		data, err := mcpDataRoot(r.state)
		if err != nil {
			return nil, err
		}
		servers.SetDataRoot(data.dir)
		r.cleanup = append(r.cleanup, data.remove)
	}
	out := opt.Trace
	if out == nil && opt.Events != nil {
		out = io.Discard // the events are observed, not kept
	}
	if out != nil {
		if opt.snapshot != nil {
			r.trace, err = trace.Continue(out, opt.snapshot.TraceEvents)
		} else {
			r.trace, err = trace.NewWriter(out, trace.Header{Scenario: sc.Name, ScenarioHash: hash,
				Clock: sc.Clock.Mode.String(), Seed: r.seed, Recording: opt.recordingName()})
		}
		if err != nil {
			return nil, fmt.Errorf("trace: %w", err)
		}
		r.trace.Tap(opt.Events)
	}

	clock := sc.Clock
	wallReplay := opt.Replay != nil && opt.Replay.Header.Clock == ecs.Wall.String()
	if wallReplay {
		// A wall-clock run replays in virtual time, its passes, hand-overs and times as recorded
		// (ecs.Plan); its trace still says wall, as the recorded one does.
		clock.Mode = ecs.Virtual
	}
	r.world = ecs.NewWorld(ecs.Config{Seed: r.seed, Clock: clock})
	r.records = &components.Records{}
	var answerer gate.Answerer = sc.Answerer()
	switch {
	case opt.Replay != nil && opt.Replay.Header.Answerer:
		answerer = firstAnswer{answerer, &replayedAnswers{tape: opt.Replay, fail: func(err error) { r.set.Recording.Fail(err) }}}
	case opt.Answerer != nil && r.record != nil:
		answerer = firstAnswer{answerer, &recordedAnswers{inner: opt.Answerer, rec: r.record}}
	case opt.Answerer != nil:
		answerer = firstAnswer{answerer, opt.Answerer}
	}
	r.set = &resources.Set{
		Run:     resources.Run{Context: context.Background(), Trace: r.trace, Log: &opt.Log},
		Hub:     gate.NewHub(answerer),
		Records: r.records,
		Limits:  resources.AgentLimits{MaxModelTurns: sc.MaxTurnsPerAgent},
		Spawning: resources.Spawning{
			Offspring: &offspring{sc: sc, scoped: scoped, host: host, launch: launch, unattended: unattended, root: root},
			Limits:    subagentLimits(host), InboxCap: host.Subagents.Inbox, MaxFanOutItems: host.Subagents.MaxFanOutItems,
		},
		ScriptTool: scriptTool,
	}
	r.answerer = answerer
	if opt.snapshot != nil {
		if err := r.restoreBeforeInstall(opt.snapshot, root); err != nil {
			return nil, err
		}
	}
	r.set.Recording.Writer, r.set.Recording.Tape = r.record, opt.Replay
	if r.state != nil {
		r.set.Recording.Journal, r.set.Recording.Resume = r.state.journal, r.state.resume
	}
	r.set.Inference = &resources.Inference{Configs: host.Pools, Budgets: resources.Budgets{
		TokensPerAgent: sc.Budgets.TokensPerAgent, TokensPerRun: sc.Budgets.TokensPerRun, CostPerRun: inference.CostOf(sc.Budgets.CostUSD)}}
	if sc.Faults != nil {
		seed := r.seed
		switch {
		case opt.FaultsSeed != nil:
			seed = *opt.FaultsSeed
		case sc.Faults.Seed != nil:
			seed = *sc.Faults.Seed
		}
		r.set.Faults = faults.New(sc.Faults, seed)
	}
	if len(sc.MCPServers) > 0 {
		r.set.Servers = servers
	}
	pipeline := systems.Pipeline()
	if opt.Progress != nil {
		pipeline = append(pipeline, &progress{records: r.records, total: r.total, report: opt.Progress})
	}
	if opt.Timeline != nil {
		pipeline = append(pipeline, &timeline{r: r, report: opt.Timeline})
	}
	if r.trace != nil || r.record != nil {
		// Last, so that it sees a write error of any system of the tick.
		pipeline = append(pipeline, &traceWatch{trace: r.trace, record: r.record, halt: func(err error) { r.halt(err) }})
	}
	if r.state != nil {
		// After the trace watch: a tick whose trace failed is not committed.
		pipeline = append(pipeline, &stateCommit{state: r.state, trace: r.trace, rec: r.record, records: r.records, halt: func(err error) { r.halt(err) }})
	}
	r.sched = ecs.NewScheduler(r.world, pipeline...)
	if c := opt.Console; c != nil {
		r.set.Operator.Console = c
		c.SetWake(r.sched.Wake)
	}
	if r.state != nil && (r.state.snapTicks > 0 || r.state.snapWall > 0) {
		r.snapshots = &snapshotter{r: r, everyTicks: r.state.snapTicks, everyWall: r.state.snapWall, lastWall: time.Now()}
		r.sched.SetBoundary(r.snapshots.boundary)
		r.state.snapshotWait = r.snapshots.wait
	}
	r.set.Lanes = resources.Lanes{Latency: sc.Latency,
		Model: r.sched.AddLane(modelLane(sc, host)),
		Tool:  r.sched.AddLane(ecs.LaneConfig{Name: "tool", Capacity: sc.Lanes.ToolCapacity, Workers: sc.Lanes.ToolWorkers})}
	if wallReplay {
		plan, err := wallPlan(opt.Replay)
		if err != nil {
			return nil, err
		}
		r.sched.SetPlan(plan)
	}
	if r.record != nil && sc.Clock.Mode == ecs.Wall {
		r.sched.SetJournal(wallJournal{r.record})
	}
	r.installed = r.set.Install(r.world)
	r.cleanup = append(r.cleanup, r.sched.Finalize)
	if err := r.sched.Initialize(); err != nil {
		return nil, err
	}
	profiles, err := r.groupProfiles(counts, root, scoped, host, launch, unattended)
	if err != nil {
		return nil, err
	}
	if snap := opt.snapshot; snap != nil {
		err = r.restoreWorld(snap, profiles)
		if r.snapshots != nil {
			r.snapshots.lastTick = r.world.Tick()
		}
	} else {
		// A resume's workdirs hold what the run made of its corpora before it stopped: the copy
		// is made once, by the run that starts from nothing.
		if opt.resumed == nil {
			err = copyCorpora(sc, counts, profiles, root)
		}
		if err == nil {
			err = r.spawnGroups(counts, profiles)
		}
	}
	if err != nil {
		return nil, err
	}
	opt.Log.Info().Str("scenario", sc.Name).Int("agents", r.total).Uint64("seed", r.seed).Str("workdir", root).Msg("run started")
	return r, nil
}

// Scenario is the scenario the runtime runs.
func (r *Runtime) Scenario() *Scenario { return r.sc }

// spawnGroups spawns every group's agents, each group under its own tool policy and profile.
func (r *Runtime) spawnGroups(counts []int, profiles []*components.Profile) error {
	spawner, err := systems.NewSpawner(r.world)
	if err != nil {
		return err
	}
	for i := range r.sc.Groups {
		if p := profiles[i]; p != nil {
			spawner.SpawnGroup(r.world, p, counts[i], r.sc.Groups[i].Namer(counts[i]))
		}
	}
	return nil
}

// groupProfiles builds each group's profile under its own tool policy (nil for a group of no
// agents, which takes no place in the profile store), once the group names are checked.
func (r *Runtime) groupProfiles(counts []int, root string, scoped *tools.ScopedToolRegistry, host *hostconfig.Config, launch policy.Launch, unattended bool) ([]*components.Profile, error) {
	sc := r.sc
	namers := make([]func(int) string, len(sc.Groups))
	for i := range sc.Groups {
		namers[i] = sc.Groups[i].Namer(counts[i])
	}
	if err := sc.CheckNames(counts, namers); err != nil {
		return nil, err
	}
	auto := sc.AutoClassifier()
	out := make([]*components.Profile, len(sc.Groups))
	for i := range sc.Groups {
		g := &sc.Groups[i]
		pol, err := gate.ForGroup(g.Blueprint, host, launch, gate.Modes{Unattended: unattended,
			SafetyMode: g.SafetyMode, PlanFile: g.PlanFile, Classifier: auto})
		if err != nil {
			return nil, fmt.Errorf("group %q: %w", g.Name, err)
		}
		p, err := profile(g, scoped, root, pol, host.SandboxCeiling(), sc.LeasedServers(g.Blueprint))
		if err != nil {
			return nil, err
		}
		if counts[i] > 0 {
			out[i] = p
		}
	}
	return out, nil
}

// Run ticks the world to a fixed point, its tick limit or ctx's end (the current tick finishes
// first), then stops the MCP sessions, writes the trace's end event, closes the trace, checks the
// expectations, cleans up and returns the summary. A Runtime runs once.
//
// The summary says how the run ended (Summary.Status). An interrupted run (ctx ended) returns its
// summary and no error: stopping was asked for. A run that failed returns its summary so far and
// the error: a trace write error (ErrTrace), which stops the run at the end of the tick in which
// it happened, or a panic escaping a system (ecs.ErrSystemPanic). Any other error comes with a
// nil summary: the run could not start.
func (r *Runtime) Run(ctx context.Context) (*Summary, error) {
	if r.ran {
		return nil, ErrRan
	}
	r.ran = true
	defer r.Close()
	// Every model turn's and tool call's cancellation hangs off the run's context; it is cancelled
	// as soon as the ticking stops (a tick limit, a fixed point with work left blocked), so no lane
	// job outlives the run and the lanes close without waiting on one.
	// Work a call detaches from its turn (a background command) hangs off it too (tools.Detach),
	// so an interrupt ends it instead of waiting for its own timeout.
	parent := ctx
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	ctx = tools.WithRunLifetime(ctx)
	r.set.Run.Context = ctx
	r.halt = cancel
	r.set.Recording.Stop = cancel // a replay that left its recording ends with the divergence as the cause
	r.set.Operator.Halt = cancel  // a person's cancel
	if c := r.opt.Console; c != nil {
		defer c.End()
	}
	start := time.Now()
	r.started = start
	stop, err := r.sched.Run(ctx, r.sc.MaxTicks)
	elapsed := time.Since(start)
	r.snapshots.wait()
	var cause error
	if ctx.Err() != nil {
		cause = context.Cause(ctx)
	}
	cancel(nil)
	// The ticks that ran: a run stopped by its context stops with its clock already past the last
	// one. What is written after the ticking (the MCP sessions' stops, the end event) carries that
	// tick, so the trace's ticks never go back.
	last, ran := r.sched.LastStep()
	ticks := last + 1
	if !ran {
		last, ticks = r.world.Tick(), 0
	}
	if cerr := r.installed.Leases.Close(last); cerr != nil {
		r.opt.Log.Warn().Err(cerr).Msg("MCP servers did not stop cleanly")
	}
	status, why := runStatus(stop, err, cause)
	if terr := r.trace.Err(); terr != nil && !errors.Is(why, ErrTrace) {
		status, why = trace.RunFailed, fmt.Errorf("%w: %w", ErrTrace, terr)
	}
	if rerr := r.record.Close(status, stop.String()); rerr != nil && status != trace.RunFailed {
		status, why = trace.RunFailed, fmt.Errorf("%w: %w", ErrRecording, rerr)
	}
	records := append([]components.FinalRecord(nil), r.records.All()...)
	records = append(records, systems.Unfinished(r.world, "the run ended ("+stop.String()+") before this agent finished")...)
	sum := &Summary{Scenario: r.sc.Name, Seed: r.seed, Clock: r.sc.Clock.Mode.String(), Agents: len(records),
		Ticks: ticks, Stop: stop, Status: status, Err: why, Elapsed: elapsed, Records: records,
		Recorded: r.record.Entries(), RealTimeLimits: r.set.Run.RealTimeLimits}
	r.spendSummary(sum)
	for _, c := range r.set.Run.ModelUses() {
		m := ModelSummary{ID: c.Model, Turns: c.Turns, Failed: c.Failed}
		if in := r.set.Inference; in != nil && in.Models[c.Model] != nil {
			m.Spend = *in.Models[c.Model]
		}
		sum.Models = append(sum.Models, m)
	}
	if r.snapshots != nil {
		sum.Snapshots = r.snapshots.stats()
	}
	if r.set.Faults != nil {
		fs := r.set.Faults.Seed()
		sum.FaultsSeed = &fs
	}
	for i := range r.sc.MCPServers {
		st := r.servers.Stats(r.sc.MCPServers[i].Name)
		sum.MCPStarts += st.Starts
		sum.MCPCalls += st.Calls
	}
	if tape := r.opt.Replay; tape != nil {
		sum.ReplayCalls = tape.Calls()
		sum.Replayed = sum.ReplayCalls - tape.Unused()
	}
	for i := range records {
		rec := &records[i]
		sum.ByStatus[rec.Status]++
		for int(rec.Depth) >= len(sum.Tree) {
			sum.Tree = append(sum.Tree, [5]int{})
		}
		sum.Tree[rec.Depth][rec.Status]++
		if rec.Depth > 0 {
			sum.Spawned++
		}
		sum.ModelTurns += uint64(rec.Counters.ModelTurns)
		sum.ToolCalls += uint64(rec.Counters.ToolCalls)
		sum.ToolErrors += uint64(rec.Counters.ToolErrors)
	}
	// The end event says the trace is whole; a trace that failed has none (the writer drops it),
	// so a reader can tell a complete trace from one cut short.
	r.trace.End(last, status, sum.Ticks, sum.Agents, sum.ModelTurns, sum.ToolCalls, sum.ToolErrors,
		&trace.Spent{Tokens: sum.Spend.Tokens.Total(), Cost: sum.Spend.Cost})
	if terr := r.trace.Close(); terr != nil && !errors.Is(sum.Err, ErrTrace) {
		sum.Status, sum.Err = trace.RunFailed, fmt.Errorf("%w: %w", ErrTrace, terr)
	}
	sum.TraceEvents = r.trace.Events()
	sum.Failures = append(scenarios.Check(r.sc, records), r.set.Hub.Unanswered()...)
	if r.state.replayFailed(sum) {
		r.opt.Log.Warn().Err(sum.Err).Uint64("tick", r.state.restored.Tick).Msg("the run restored from the world snapshot did not replay the committed ticks exactly; resuming from an earlier one")
		reopen := r.state.reopen
		r.Close()
		next, err := reopen()
		if err != nil {
			return nil, err
		}
		return next.Run(parent)
	}
	if r.state != nil {
		r.state.finish(sum)
	}
	r.opt.Log.Info().Str("stop", stop.String()).Str("status", sum.Status).Uint64("ticks", sum.Ticks).Dur("elapsed", elapsed).Msg("run finished")
	if sum.Status == trace.RunFailed {
		return sum, sum.Err
	}
	return sum, nil
}

// runStatus maps how the ticking ended to the run's status and, for a run that did not finish,
// why: the scheduler's error (failed), the cause the run's context ended with (failed when the
// trace watch ended it, interrupted otherwise).
func runStatus(stop ecs.Stop, err, cause error) (string, error) {
	switch {
	case err != nil:
		return trace.RunFailed, err
	case stop == ecs.Cancelled && (errors.Is(cause, ErrTrace) || errors.Is(cause, ErrRecording) || errors.Is(cause, recording.ErrDivergence)):
		return trace.RunFailed, cause
	case stop == ecs.Cancelled:
		return trace.RunInterrupted, cause
	case stop == ecs.MaxTicks:
		return trace.RunTickLimit, nil
	}
	return trace.RunFinished, nil
}

// traceWatch stops the run at the end of the tick in which its trace or its recording failed (Err is
// sticky and set by the write that failed), by ending the run's context with the error: every
// event after it would be dropped, and a run that goes on unrecorded is not the run the trace
// claims. It is the pipeline's last system, so it sees the errors of every system of the tick, and
// it costs one nil check a tick.
type traceWatch struct {
	trace  *trace.Writer
	record *recording.Writer
	halt   func(error)
}

var _ ecs.System = (*traceWatch)(nil)

func (*traceWatch) Name() string                { return "trace_watch" }
func (*traceWatch) Initialize(*ecs.World) error { return nil }
func (t *traceWatch) Update(*ecs.World) {
	if err := t.trace.Err(); err != nil {
		t.halt(fmt.Errorf("%w: %w", ErrTrace, err))
	}
	if err := t.record.Err(); err != nil {
		t.halt(fmt.Errorf("%w: %w", ErrRecording, err))
	}
}
func (*traceWatch) Finalize(*ecs.World) {}

// Close releases what New made, in reverse order: the scheduler's lanes, the MCP sessions, the
// script engine and a temporary work root. Run calls it; it is safe to call more than once.
func (r *Runtime) Close() {
	r.snapshots.wait() // its file is the state directory's
	for i := len(r.cleanup) - 1; i >= 0; i-- {
		r.cleanup[i]()
	}
	r.cleanup = nil
	r.ran = true
}

// firstAnswer asks each answerer in turn: the scenario's scripted answers first, then the
// embedder's.
type firstAnswer []gate.Answerer

func (f firstAnswer) Answer(req *gate.PromptRequest) (string, uint64, bool) {
	for _, a := range f {
		if answer, delay, ok := a.Answer(req); ok {
			return answer, delay, true
		}
	}
	return "", 0, false
}

// launchHash is runHash for sc run with opt, worked out as New does.
func launchHash(sc *Scenario, opt Options) string {
	total := 0
	for _, c := range sc.GroupCounts(opt.Agents) {
		total += c
	}
	host := sc.Host
	if opt.Host != nil {
		host = opt.Host
	}
	return runHash(sc, opt, total, host, sc.MergeLaunch(opt.Launch))
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
	if opt.FaultsSeed != nil {
		hash += " faults=" + strconv.FormatUint(*opt.FaultsSeed, 10)
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

// mcpData is where the run's stdio MCP servers keep their own state, and how it goes away.
type mcpData struct {
	dir    string
	remove func()
}

// mcpDataRoot is the folder the run's stdio MCP servers get their data folders under: the state
// directory's mcp/ (it lives as long as the run's state), else a temporary folder removed after
// the run. It is never under the work root, where an agent's workdir (a group's workdir template
// may name any folder there) could have planted a link.
func mcpDataRoot(s *stateRun) (mcpData, error) {
	if s != nil {
		dir := filepath.Join(s.dir.Path(), "mcp")
		if err := s.dir.Root().MkdirAll("mcp", 0o700); err != nil {
			return mcpData{}, fmt.Errorf("the MCP servers' data folder: %w", err)
		}
		return mcpData{dir: dir, remove: func() {}}, nil
	}
	dir, err := os.MkdirTemp("", "warren-mcp-")
	if err != nil {
		return mcpData{}, fmt.Errorf("the MCP servers' data folder: %w", err)
	}
	return mcpData{dir: dir, remove: func() { _ = os.RemoveAll(dir) }}, nil
}

// progress reports finished agents after every tick; it changes nothing in the world.
type progress struct {
	records *components.Records
	total   int
	report  func(int, int)
}

var _ ecs.System = (*progress)(nil)

func (*progress) Name() string                { return "progress" }
func (*progress) Initialize(*ecs.World) error { return nil }
func (p *progress) Update(w *ecs.World) {
	// Sub-agents join the run as they are spawned: the total is what ended plus what lives.
	p.report(p.records.Len(), max(p.total, p.records.Len()+w.Entities()))
}
func (*progress) Finalize(*ecs.World) {}

// timeline reports the world's state at the end of every tick (Options.Timeline).
type timeline struct {
	r      *Runtime
	report func(TickStats)
}

var _ ecs.System = (*timeline)(nil)

func (*timeline) Name() string                { return "timeline" }
func (*timeline) Initialize(*ecs.World) error { return nil }
func (t *timeline) Update(w *ecs.World) {
	s := TickStats{Tick: w.Tick(), Phases: systems.PhaseCounts(w), Finished: t.r.records.Len(),
		Events: t.r.trace.Events(), Wall: time.Since(t.r.started)}
	if l := &t.r.set.Lanes; l.Model != nil {
		s.ModelLaneWaiting, s.ToolLaneWaiting = l.Model.Waiting(), l.Tool.Waiting()
	}
	if in := t.r.set.Inference; in != nil && len(in.Pools) > 0 {
		s.Pools = make([]PoolQueue, len(in.Pools))
		for i, p := range in.Pools {
			s.Pools[i] = PoolQueue{Pool: p.Name(), Queued: p.Queued()}
		}
	}
	t.report(s)
}
func (*timeline) Finalize(*ecs.World) {}

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
	l.MaxTotalMemory = host.Scripting.MaxTotalMemory
	return l
}

// scriptTools returns how the run makes a script's tool: run by engine with the host's HTTP
// settings and the environment variables its allow-list names (read once, when the run starts).
// The scenario's script tools and the dynamic tools agents write share it.
func scriptTools(engine *scripting.Engine, host *hostconfig.Config) func(*scripting.Script) tools.Tool {
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

// modelLane sizes the model lane: the scenario's capacity, plus room for every configured pool to
// fill its cap and for the implicit pools of live models no pool serves. Live turns block on the
// network, so with a pool the lane runs a worker per slot: a pool of 64 has 64 requests in flight,
// not as many as there are cores.
func modelLane(sc *Scenario, host *hostconfig.Config) ecs.LaneConfig {
	cfg := ecs.LaneConfig{Name: "model", Capacity: sc.Lanes.ModelCapacity}
	if !sc.HasLiveModels() {
		return cfg
	}
	slots := 0
	for _, p := range host.Pools {
		slots += p.MaxConcurrency
	}
	cfg.Capacity = max(cfg.Capacity, 64) + slots + 8*inference.DefaultMaxConcurrency
	cfg.Workers = cfg.Capacity
	return cfg
}

// spendSummary fills what live turns spent and what the pools did.
func (r *Runtime) spendSummary(sum *Summary) {
	in := r.set.Inference
	if in == nil || (in.Run == components.Spend{}) && len(in.Pools) == 0 {
		return
	}
	sum.Spend = in.Run
	sum.Groups = make(map[string]components.Spend, len(in.Groups))
	for g, s := range in.Groups {
		sum.Groups[g] = *s
	}
	names := make(map[uint64]string, len(sum.Records))
	for i := range sum.Records {
		names[sum.Records[i].ID] = sum.Records[i].Name
	}
	sum.Trees = make(map[string]components.Spend, len(in.Trees))
	for root, s := range in.Trees {
		sum.Trees[names[root]] = *s
	}
	for _, p := range in.Pools {
		c := p.Config()
		sum.Pools = append(sum.Pools, PoolSummary{Name: c.Name, MaxConcurrency: c.MaxConcurrency,
			RequestsPerMinute: c.RequestsPerMinute, TokensPerMinute: c.TokensPerMinute, Stats: p.Stats()})
	}
}
