package systems

import (
	"context"
	"github.com/rs/zerolog"

	"github.com/warrenhq/warren/components"
	"github.com/warrenhq/warren/ecs"
	"github.com/warrenhq/warren/gate"
	"github.com/warrenhq/warren/sandbox"
	"github.com/warrenhq/warren/subagents"
	"github.com/warrenhq/warren/tools"
	"github.com/warrenhq/warren/trace"
)

// Host is the world resource that bundles the services systems share: the trace, the permission
// gate, the checklist broker, the final records, the latency model and the two lanes. The runner
// builds it once and adds it with ecs.AddResource before initializing the pipeline.
type Host struct {
	// Context is the root of every tool execution's cancellation.
	Context context.Context
	// Trace receives the run's events; nil disables tracing.
	Trace *trace.Writer
	// Gate decides every tool call, from an agent's turn and from inside a script tool
	// (gate.Standard when nil).
	Gate gate.Decider
	// Hub holds open prompts until their answer or deadline (one with no answerer when nil:
	// every prompt is denied as unanswered).
	Hub *Hub
	// Tasks is the checklist broker behind the todo tools.
	Tasks *tools.TaskBroker
	// Settings is the read-only host settings view handed to tools.
	Settings tools.Settings
	// Records, when set, receives every reaped agent's final record: the embedder chose to keep
	// them all (the scenario runner does, for expectations and the summary). nil keeps none
	// beyond what check_agent and wait_for_agent need, which the agent tree holds only while
	// some live agent can still address the agent, so a long-running host does not grow with
	// every agent it ever ran.
	Records *components.Records
	// Agents stores what each agent owns that holds references; Profiles what groups share.
	Agents   *components.Agents
	Profiles *components.Profiles
	// Latency gives virtual completion delays for lane work.
	Latency Latency
	// ModelLane and ToolLane run blocking model and tool work.
	ModelLane, ToolLane *ecs.Lane
	// Offspring builds the profiles sub-agents are spawned with (nil: spawn_agent and fan_out
	// refuse every blueprint).
	Offspring Offspring
	// Limits are the host's caps on agent trees (zero fields: no cap); InboxCap bounds the
	// messages waiting in one inbox (0: 64); MaxFanOutItems bounds one fan-out (0: 100000).
	// ScriptTool builds the tool of a script an agent with dynamic_tools wrote into its workdir
	// (nil: dynamic_tools finds nothing).
	ScriptTool     ScriptTool
	Limits         subagents.Limits
	InboxCap       int
	MaxFanOutItems int
	// Sandbox is what this machine offers for containing commands (sandbox.Probe); nil probes
	// on first use.
	Sandbox *sandbox.Capabilities
	// MCP is the world's MCP server sessions (nil: no servers). Agents lease the servers their
	// profile advertises from spawn to reap; see Servers.
	MCP Servers
	// Log receives operational warnings (a sandbox degraded because this machine lacks a
	// mechanism), once per distinct warning; nil logs nothing. Never part of the trace.
	Log *zerolog.Logger

	tree       *treeState
	teardown   []TeardownStep
	background *backgroundJobs
	// warned holds the degradation warnings already logged.
	warned map[string]bool
	// runsCommands says, per profile, whether its blueprint offers the shell tool; owner is the
	// file owner of the agents that do (see fileOwner).
	runsCommands map[*components.Profile]bool
	owner        *tools.FileOwner
	// clock and seed are the world's, for the calls' ExecContext (Now, Seed).
	clock *ecs.Clock
	seed  uint64
}

// Offspring builds the shared profile of sub-agents spawned from blueprint key by an agent of
// parent's profile while it is in stage parentStage: the child's own blueprint, model and tools,
// under a tool policy that carries the parent's permission as a ceiling. The same arguments
// must give the same profile, so children spawned alike share one.
type Offspring interface {
	Profile(parent *components.Profile, parentStage int32, key string) (*components.Profile, error)
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

// hostOf fetches the Host resource, or reports that the runner forgot it.
func hostOf(w *ecs.World) (*Host, error) {
	h := ecs.Resource[Host](w)
	if h == nil {
		return nil, errNoHost
	}
	if h.Agents == nil {
		h.Agents = &components.Agents{}
	}
	if h.Profiles == nil {
		h.Profiles = &components.Profiles{}
	}
	if h.Gate == nil {
		h.Gate = gate.Standard{}
	}
	if h.Hub == nil {
		h.Hub = NewHub(nil)
	}
	if h.Context == nil {
		h.Context = context.Background()
	}
	if h.background == nil {
		h.background = &backgroundJobs{}
	}
	if h.tree == nil {
		h.tree = newTreeState()
	}
	h.clock, h.seed = w.Clock(), w.Seed()
	return h, nil
}
