// Package resources holds the small typed world resources the systems of a tick share, in the
// arche-model style: each system resolves the ones it needs once, in Initialize, with Get, and
// its Update only does the work. A resource is either plain data (the lanes, the limits, the
// background queue) or a service from a package of its own (the gate and its hub, the agent
// tree, the MCP leases, the sandbox wiring, the script host).
//
// The composition root (the module's root package, warren; the systems' test harness is a
// second one) fills a Set, and Set.Install applies the defaults, once, and adds every resource
// to the world before the scheduler initializes. No system ever fills a default: a missing
// resource is an error naming it (ErrMissing).
package resources

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"github.com/warrenhq/warren/operator"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"sync"

	"github.com/rs/zerolog"

	"github.com/warrenhq/warren/components"
	"github.com/warrenhq/warren/ecs"
	"github.com/warrenhq/warren/faults"
	"github.com/warrenhq/warren/gate"
	"github.com/warrenhq/warren/internal/agenttree"
	"github.com/warrenhq/warren/internal/leases"
	"github.com/warrenhq/warren/internal/sandboxwire"
	"github.com/warrenhq/warren/internal/scripthost"
	"github.com/warrenhq/warren/recording"
	"github.com/warrenhq/warren/subagents"
	"github.com/warrenhq/warren/tools"
	"github.com/warrenhq/warren/trace"
)

// ErrMissing means a system asked for a resource the composition root did not install.
var ErrMissing = errors.New("missing world resource")

// Get returns the world's resource of type T, or an error wrapping ErrMissing that names it.
func Get[T any](w *ecs.World) (*T, error) {
	r := ecs.Resource[T](w)
	if r == nil {
		return nil, fmt.Errorf("%w %s: install the world's resources with resources.Set.Install before the scheduler initializes", ErrMissing, reflect.TypeFor[T]())
	}
	return r, nil
}

// Run is what every part of a run shares: the root of every call's cancellation, the trace and
// the operator's log.
type Run struct {
	// Context is the root of every model turn's and tool call's cancellation.
	Context context.Context
	// Trace receives the run's events; nil disables tracing (its methods are no-ops on nil).
	Trace *trace.Writer
	// Log receives operational warnings (never part of the trace); nil logs nothing.
	Log *zerolog.Logger
	// RealTimeLimits counts the calls whose result a limit measured in real time decided (their
	// tools.NoteRealTime notes), for the summary to say so. World goroutine only.
	RealTimeLimits uint64
	// Models counts, by model id, the turns each model made and how many failed, for the
	// summary's account per model (a stage may have a model of its own). World goroutine only.
	Models map[string]*ModelUse
}

// ModelUse is what one model did in a run: its turns and how many of them failed (a model error,
// an injected fault, a panic).
type ModelUse struct {
	Turns, Failed uint64
}

// CountModelTurn counts one turn of the model id, failed or not.
func (r *Run) CountModelTurn(id string, failed bool) {
	u := r.Models[id]
	if u == nil {
		if r.Models == nil {
			r.Models = map[string]*ModelUse{}
		}
		u = &ModelUse{}
		r.Models[id] = u
	}
	u.Turns++
	if failed {
		u.Failed++
	}
}

// ModelUses returns the per-model counts as data, sorted by model id: for a snapshot and the
// summary.
func (r *Run) ModelUses() []ModelCount {
	out := make([]ModelCount, 0, len(r.Models))
	for _, id := range slices.Sorted(maps.Keys(r.Models)) {
		out = append(out, ModelCount{Model: id, ModelUse: *r.Models[id]})
	}
	return out
}

// RestoreModelUses sets the per-model counts from ModelUses' data.
func (r *Run) RestoreModelUses(counts []ModelCount) {
	r.Models = nil
	for _, c := range counts {
		u := c.ModelUse
		if r.Models == nil {
			r.Models = map[string]*ModelUse{}
		}
		r.Models[c.Model] = &u
	}
}

// ModelCount is one model's ModelUse, by its id.
type ModelCount struct {
	Model string
	ModelUse
}

// Lanes are the two worker lanes and the latency model of virtual time.
type Lanes struct {
	// Model and Tool run blocking model turns and tool calls.
	Model, Tool *ecs.Lane
	// Latency gives virtual completion delays for lane work.
	Latency Latency
}

// Latency is the deterministic latency model of virtual time: how many ticks after it starts a
// job's result becomes available. Zero values count as one tick.
type Latency struct {
	Model   uint64
	Tool    uint64
	PerTool map[string]uint64
}

// ForTool returns the latency of one call of tool.
func (l Latency) ForTool(tool string) uint64 {
	if v, ok := l.PerTool[tool]; ok {
		return v
	}
	return l.Tool
}

// Offspring builds the shared profile of sub-agents spawned from blueprint key by an agent of
// parent's profile while it is in stage parentStage: the child's own blueprint, model and tools,
// under a tool policy that carries the parent's permission as a ceiling (gate.Inherit). The same
// arguments must give the same profile, so children spawned alike share one.
type Offspring interface {
	Profile(parent *components.Profile, parentStage int32, key string) (*components.Profile, error)
}

// Spawning is how agents may grow the tree: where children's profiles come from and the host's
// caps.
type Spawning struct {
	// Offspring builds children's profiles (nil: spawn_agent and fan_out refuse every blueprint).
	Offspring Offspring
	// Limits are the host's caps on agent trees (zero fields: no cap).
	Limits subagents.Limits
	// InboxCap bounds the messages waiting in one inbox; MaxFanOutItems bounds one fan-out.
	// Install sets their defaults (DefaultInboxCap, DefaultMaxFanOutItems).
	InboxCap       int
	MaxFanOutItems int
}

// The defaults Install applies to Spawning.
const (
	DefaultInboxCap       = 64
	DefaultMaxFanOutItems = 100_000
)

// AgentLimits bound what one agent may do over its whole life, so that every agent ends, whatever
// its model does: an agent about to be asked for a model turn past MaxModelTurns ends failed
// instead (infer_dispatch), with the reason TurnLimitReason gives.
type AgentLimits struct {
	// MaxModelTurns is the most model turns one agent is asked for, across every stage and
	// visit (Counters.ModelTurns); Install sets DefaultMaxModelTurns when it is 0.
	MaxModelTurns uint32
	// Key names the setting in the failure's reason (a scenario's
	// "limits.max_turns_per_agent"); Install sets DefaultLimitKey when it is empty.
	Key string
}

// The defaults Install applies to AgentLimits: generous enough that no shipped scenario comes
// near it (the busiest agent of the examples makes about 200 turns), small enough that a model
// stuck in a loop ends in well under a second of scripted work.
const (
	DefaultMaxModelTurns = 1000
	DefaultLimitKey      = "limits.max_turns_per_agent"
)

// TurnLimitReason is the status reason of an agent the turn limit ended:
// "turn limit: 1000 model turns (limits.max_turns_per_agent)".
func (l *AgentLimits) TurnLimitReason() string {
	return "turn limit: " + strconv.FormatUint(uint64(l.MaxModelTurns), 10) + " model turns (" + l.Key + ")"
}

// Gate is the decision function every tool call passes, from an agent's turn and from inside a
// script tool.
type Gate struct {
	Decider gate.Decider
}

// BackgroundJob is work a call left running (a background shell command) and the tick its report
// is due in the agent's inbox.
type BackgroundJob struct {
	Due    uint64
	Entity ecs.Entity
	Agent  uint64
	CallID string
	Work   tools.Detached
}

// Background is the queue of background jobs not delivered yet, in the order their calls were
// filed (tool results are filed in canonical order, so the queue is too).
type Background struct {
	Pending []BackgroundJob
}

// Add records a job.
func (b *Background) Add(j BackgroundJob) { b.Pending = append(b.Pending, j) }

// TeardownOrder places a teardown step among the things reap releases for a terminal agent.
// Steps run in ascending order; the built-in steps hold the documented places, and an
// embedder's steps go between them.
type TeardownOrder uint8

// The documented teardown order. A terminal agent's final record and reap event come first;
// then, in this order:
const (
	// TeardownChildren: live children that are not detached are killed (their subtrees with
	// them), and the agent leaves the tree.
	TeardownChildren TeardownOrder = 10
	// TeardownSandbox: the agent's sandbox (processes, private folders, mounts).
	TeardownSandbox TeardownOrder = 20
	// TeardownMCP: the agent's leases on MCP server sessions.
	TeardownMCP TeardownOrder = 30
	// TeardownScripts: the agent's dynamic tools (their compiled scripts and registry).
	TeardownScripts TeardownOrder = 40
	// TeardownPrompts: prompts still open (closed as cancelled).
	TeardownPrompts TeardownOrder = 50
	// TeardownTasks: the agent's checklist.
	TeardownTasks TeardownOrder = 60
)

// TeardownStep releases one thing a terminal agent held. Release gets the agent's identity and
// data before its slot is freed; it must not block (hand slow work to a goroutine it owns).
type TeardownStep struct {
	Order   TeardownOrder
	Name    string
	Release func(id *components.Identity, d *components.AgentData)
}

// Teardown holds the teardown steps an embedder adds to reap's built-in ones.
type Teardown struct {
	Steps []TeardownStep
}

// Add registers a step; call it before the scheduler initializes (reap reads the steps once).
// Steps of equal order run in registration order, after a built-in step of that order.
func (t *Teardown) Add(step TeardownStep) {
	t.Steps = append(t.Steps, step)
	slices.SortStableFunc(t.Steps, func(a, b TeardownStep) int { return cmp.Compare(a.Order, b.Order) })
}

// Recording is where a run's outside inputs go (Writer: host run --record) or come from (Tape:
// host replay): the tool lane's calls, background reports and MCP session events. Both are nil in
// a plain run; only a resumed run (host resume) has both.
type Recording struct {
	Writer *recording.Writer
	Tape   *recording.Tape
	// Journal, in a run with a state directory, journals the side-effecting lane calls (nil:
	// none); Resume, in a resumed run, is what the run before it journaled. A resumed run has a
	// Tape (the committed part of its recording, Tape.Resuming) and a Writer both: it replays the
	// committed ticks, recording them again, and goes on live past them.
	Journal EffectJournal
	Resume  *Resume
	// Stop ends the run after the current tick with err, a replay that left its recording (nil:
	// the systems' test harness, where the error is only seen through Err).
	Stop func(err error)
	mu   sync.Mutex
	err  error // the first error given to Fail
}

// Fail records the first way a replay left its recording and stops the run. A script tool's
// requests are answered on the tool lane, so it is safe for concurrent use.
func (r *Recording) Fail(err error) {
	r.mu.Lock()
	first := r.err == nil
	if first {
		r.err = err
	}
	r.mu.Unlock()
	if first && r.Stop != nil {
		r.Stop(err)
	}
}

// Err is the first error given to Fail (nil while the replay matches its recording).
func (r *Recording) Err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

// Set is every resource of one world, as the composition root assembles it. Fields left zero get
// their defaults from Install.
type Set struct {
	Run      Run
	Lanes    Lanes
	Spawning Spawning
	// Limits bound each agent's life (the defaults when zero).
	Limits AgentLimits
	// Gate decides every tool call (gate.Standard when nil); Hub holds open prompts (one with no
	// answerer when nil: every prompt is denied as unanswered).
	Gate gate.Decider
	Hub  *gate.Hub
	// Tasks is the checklist broker behind the todo tools (a fresh one when nil).
	Tasks *tools.TaskBroker
	// Records, when set, receives every reaped agent's final record: the embedder chose to keep
	// them all (the scenario runner does, for expectations and the summary). nil keeps none
	// beyond what check_agent and wait_for_agent need, which the agent tree holds only while
	// some live agent can still address the agent, so a long-running host does not grow with
	// every agent it ever ran.
	Records *components.Records
	// Agents stores what each agent owns that holds references; Profiles what groups share
	// (fresh stores when nil).
	Agents   *components.Agents
	Profiles *components.Profiles
	// Servers is the world's MCP server sessions (nil: none).
	Servers leases.Servers
	// Sandbox wires agents to the sandbox (one that probes this machine on first use when nil).
	Sandbox *sandboxwire.Wiring
	// ScriptTool makes the tool of a script an agent with dynamic_tools wrote into its workdir
	// (nil: dynamic_tools finds nothing).
	ScriptTool scripthost.ScriptTool
	// Teardown are the embedder's teardown steps.
	Teardown Teardown
	// Recording records or replays the run's outside inputs (neither when zero).
	Recording Recording
	// Faults injects the scenario's [faults] (nil: none).
	Faults *faults.Injector
	// Inference is the run's inference pools and budgets (a fresh one with no configured pools
	// and no budgets when nil).
	Inference *Inference
	// Operator is how people act on the run (nobody when its Console is nil).
	Operator Operator
}

// Operator is how people act on a running world: the console their commands come through (nil:
// nobody acts on the run, or a replay applies what its recording says they did), and Halt, which
// ends the run after the current tick with a cause (a person's cancel; nil in the systems' test
// harness).
type Operator struct {
	Console *operator.Console
	Halt    func(cause error)
}

// Faults is the run's fault injector as a resource (Injector nil: no faults).
type Faults struct {
	Injector *faults.Injector
}

// Installed is what Install added, for the composition root to keep: the services it made.
type Installed struct {
	Tree   *agenttree.State
	Leases *leases.Leases
}

// Install applies the defaults to the fields left zero and adds every resource to w: call it
// once, after the lanes exist and before the scheduler initializes. It registers the hub as a
// waiter, so a world with open prompts is not at a fixed point.
func (s *Set) Install(w *ecs.World) Installed {
	if s.Run.Context == nil {
		s.Run.Context = context.Background()
	}
	if s.Spawning.InboxCap <= 0 {
		s.Spawning.InboxCap = DefaultInboxCap
	}
	if s.Spawning.MaxFanOutItems <= 0 {
		s.Spawning.MaxFanOutItems = DefaultMaxFanOutItems
	}
	if s.Limits.MaxModelTurns == 0 {
		s.Limits.MaxModelTurns = DefaultMaxModelTurns
	}
	if s.Limits.Key == "" {
		s.Limits.Key = DefaultLimitKey
	}
	if s.Gate == nil {
		s.Gate = gate.Standard{}
	}
	if s.Hub == nil {
		s.Hub = gate.NewHub(nil)
	}
	if s.Tasks == nil {
		s.Tasks = tools.NewTaskBroker()
	}
	if s.Agents == nil {
		s.Agents = &components.Agents{}
	}
	if s.Profiles == nil {
		s.Profiles = &components.Profiles{}
	}
	if s.Sandbox == nil {
		s.Sandbox = sandboxwire.New(nil, s.Run.Log)
	}
	in := Installed{Tree: agenttree.New(), Leases: leases.New(s.Servers, s.Run.Trace)}
	in.Leases.Record(s.Recording.Writer, s.Recording.Tape)
	if s.Recording.Journal != nil {
		source, _ := s.Servers.(leases.EventSource)
		in.Leases.Journal(s.Recording.Journal, source, s.Recording.Resume.Kept(leases.IsEffectKey))
	}
	ecs.AddResource(w, &s.Run)
	ecs.AddResource(w, &s.Lanes)
	ecs.AddResource(w, &s.Spawning)
	ecs.AddResource(w, &s.Limits)
	if s.Inference == nil {
		s.Inference = &Inference{}
	}
	s.Inference.install(w)
	ecs.AddResource(w, s.Inference)
	ecs.AddResource(w, &Gate{Decider: s.Gate})
	ecs.AddResource(w, s.Hub)
	ecs.AddResource(w, s.Tasks)
	if s.Records != nil {
		ecs.AddResource(w, s.Records)
	}
	ecs.AddResource(w, s.Agents)
	ecs.AddResource(w, s.Profiles)
	ecs.AddResource(w, in.Tree)
	ecs.AddResource(w, in.Leases)
	ecs.AddResource(w, s.Sandbox)
	dynamic := scripthost.NewDynamic(s.ScriptTool, s.Run.Trace)
	dynamic.Record(s.Recording.Writer, s.Recording.Tape)
	ecs.AddResource(w, dynamic)
	ecs.AddResource(w, &Background{})
	ecs.AddResource(w, &s.Teardown)
	ecs.AddResource(w, &s.Recording)
	ecs.AddResource(w, &Faults{Injector: s.Faults})
	ecs.AddResource(w, &s.Operator)
	w.AddWaiter(s.Hub)
	return in
}

// BackgroundImage is one background job not delivered yet, as data: its work is a process of
// the host that took the snapshot, so a restore asks its caller what stands in for it.
type BackgroundImage struct {
	Due    uint64
	Entity ecs.EntityRef
	Agent  uint64
	CallID string
}

// Image returns the queue as data, in its order.
func (b *Background) Image() []BackgroundImage {
	out := make([]BackgroundImage, len(b.Pending))
	for i, j := range b.Pending {
		out[i] = BackgroundImage{Due: j.Due, Entity: ecs.RefOf(j.Entity), Agent: j.Agent, CallID: j.CallID}
	}
	return out
}

// RestoreBackground returns the queue img holds; work gives each job the work that stands in
// for the one that died with the host (a replayed report, or one that says the command was
// lost).
func RestoreBackground(img []BackgroundImage, work func(agent uint64, callID string) tools.Detached) *Background {
	b := &Background{}
	for _, j := range img {
		b.Add(BackgroundJob{Due: j.Due, Entity: j.Entity.Entity(), Agent: j.Agent, CallID: j.CallID, Work: work(j.Agent, j.CallID)})
	}
	return b
}
