package subagents

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/warrenhq/warren/tools"
)

// Names of the sub-agent tools, for blueprints, policy defaults and the dispatch path.
const (
	NameSpawn  = "spawn_agent"
	NameCheck  = "check_agent"
	NameWait   = "wait_for_agent"
	NameSend   = "send_to_agent"
	NameKill   = "kill_agent"
	NameList   = "list_agents"
	NameFanOut = "fan_out"
)

// Op says which sub-agent operation a call asks for. The dispatch path reads it from a WorldTool
// and queues the call for the sub-agent system, which switches on it instead of comparing names.
// The zero value is no operation, so an unset Op is never mistaken for a spawn.
type Op uint8

// The sub-agent operations, one per tool.
const (
	OpSpawn Op = iota + 1
	OpCheck
	OpWait
	OpSend
	OpKill
	OpList
	OpFanOut
)

// opNames maps each Op to its tool name; index 0 is unused.
var opNames = [...]string{
	OpSpawn:  NameSpawn,
	OpCheck:  NameCheck,
	OpWait:   NameWait,
	OpSend:   NameSend,
	OpKill:   NameKill,
	OpList:   NameList,
	OpFanOut: NameFanOut,
}

// String returns the tool name of the operation, or "Op(n)" for a value that is none, so traces
// and logs name operations the way models call them.
func (o Op) String() string {
	if o >= OpSpawn && int(o) < len(opNames) {
		return opNames[o]
	}
	return "Op(" + strconv.Itoa(int(o)) + ")"
}

// WorldTool is implemented by the sub-agent tools: they change the world, so the dispatch path
// hands an allowed call to the sub-agent system instead of running Execute.
type WorldTool interface {
	tools.Tool
	// Op names the operation the sub-agent system carries out for a call of this tool.
	Op() Op
}

// Compile-time guards: every sub-agent tool is a WorldTool, and so a tools.Tool.
var (
	_ WorldTool = Spawn{}
	_ WorldTool = Check{}
	_ WorldTool = Wait{}
	_ WorldTool = Send{}
	_ WorldTool = Kill{}
	_ WorldTool = List{}
	_ WorldTool = FanOut{}
)

// Namespace is the built-in registry's namespace of the sub-agent tools: their ids are
// "subagents.<name>" ("subagents.spawn_agent"), the package that defines them.
const Namespace = "subagents"

// init registers the sub-agent tools in the built-in registry (tools.RegisterBuiltin), which
// Tools and Register read, so no hand-written list has to be kept in step with the tools.
func init() {
	for _, info := range []tools.BuiltinInfo{
		{ID: "subagents.spawn_agent", New: func() tools.Tool { return Spawn{} }},
		{ID: "subagents.check_agent", New: func() tools.Tool { return Check{} }},
		{ID: "subagents.wait_for_agent", New: func() tools.Tool { return Wait{} }},
		{ID: "subagents.send_to_agent", New: func() tools.Tool { return Send{} }},
		{ID: "subagents.kill_agent", New: func() tools.Tool { return Kill{} }},
		{ID: "subagents.list_agents", New: func() tools.Tool { return List{} }},
		{ID: "subagents.fan_out", New: func() tools.Tool { return FanOut{} }},
	} {
		tools.RegisterBuiltin(info)
	}
}

// Limits on arguments, enforced by the schemas and by the Parse functions alike.
const (
	// maxChildDepthArg is the largest max_child_depth spawn_agent accepts; deeper trees are
	// refused by the depth budget long before, so a larger number would only mislead.
	maxChildDepthArg = 64
	// maxMessageLength bounds one send_to_agent message, in characters, so one call cannot flood
	// a child's context.
	maxMessageLength = 65536
	// maxWorkersArg bounds fan_out's max_workers: beyond it the number is a typo, not a plan.
	maxWorkersArg = 100000
)

// needsWorld is the error every sub-agent tool's Execute returns.
func needsWorld(name string) error { return fmt.Errorf("%s %w", name, ErrNeedsWorld) }

// addressRule is the addressing rule every tool that takes an id repeats, so a model reading any
// one tool's description knows it.
const addressRule = "Ids are agent names: a child of \"planner-0\" is \"planner-0/1\", \"planner-0/2\", ... " +
	"(numbered from 1 in spawn order), a grandchild \"planner-0/1/1\". You may address only yourself and " +
	"your descendants (children, their children, and so on); any other id fails with \"not in your subtree\"."

// statusFields describes the status object check_agent, wait_for_agent and spawn_agent return.
const statusFields = "a JSON object {\"id\", \"blueprint\", \"depth\" (0 for a top-level agent), " +
	"\"status\" (\"active\" while it works, \"waiting\" while it waits on a prompt or a sub-agent; \"done\", \"failed\" or \"killed\" once it has ended), \"stage\" " +
	"(its current stage), \"reason\" (why it failed or was killed), \"output\" (its final answer, once done), " +
	"\"model_turns\", \"tool_calls\", \"live_children\", \"inbox\" (messages queued for it, not yet read)}; " +
	"empty fields are left out"

// Spawn is the spawn_agent tool: the caller starts a child agent.
type Spawn struct{}

var spawnSchema = json.RawMessage(fmt.Sprintf(`{
	"type": "object",
	"properties": {
		"blueprint": {"type": "string", "minLength": 1, "description": "Name of the blueprint the child runs; it must be one your blueprint may spawn."},
		"task": {"type": "string", "description": "What the child is to do: its first user message. Make it self-contained unless seed_context is true."},
		"wait": {"type": "boolean", "description": "true: you are parked until the child ends and get its final status with its output. false (default): return at once while the child runs."},
		"seed_context": {"type": "boolean", "description": "true: the child starts with a copy of your conversation so far. false (default): it starts from the task alone."},
		"max_child_depth": {"type": "integer", "minimum": 0, "maximum": %d, "description": "How many levels of sub-agents the child may spawn below itself (0: none). It can only lower the limit, never raise it past yours minus one or the child blueprint's own."}
	},
	"required": ["blueprint", "task"],
	"additionalProperties": false
}`, maxChildDepthArg))

// Spec describes spawn_agent.
func (Spawn) Spec() tools.Spec {
	return tools.Spec{
		Name: NameSpawn,
		Description: "Start a sub-agent: a new agent, your child, running the given blueprint on the given task. " +
			"Its id is your id, a slash and the number of children you have spawned so far (\"planner-0/3\" is the third). " +
			"Returns its status, " + statusFields + ". " +
			"With wait=false (default) the call returns at once with status \"active\" and the child works alongside you; " +
			"follow it with check_agent, wait_for_agent, send_to_agent or kill_agent. " +
			"With wait=true you are parked (no model turns) until the child ends, and the status carries its output. " +
			"Rules: depth is limited (your blueprint's max_child_depth and a host cap; the child may spawn at most one level " +
			"less than you), you may have only so many live children at once, and the host caps live sub-agents; " +
			"each limit fails the call with an error saying which. The child's permissions are never looser than yours. " +
			"When you end, your live children are killed, except those whose blueprint makes them detached.",
		Parameters: spawnSchema,
	}
}

// Op reports OpSpawn.
func (Spawn) Op() Op { return OpSpawn }

// Execute refuses: spawning creates an entity, which only the sub-agent system may do.
func (Spawn) Execute(*tools.ExecContext, json.RawMessage) (tools.Result, error) {
	return tools.Result{}, needsWorld(NameSpawn)
}

// targetSchema is the arguments of the tools that name one agent and nothing else.
var targetSchema = json.RawMessage(`{
	"type": "object",
	"properties": {
		"id": {"type": "string", "minLength": 1, "description": "The agent's id, e.g. \"planner-0/2\"."}
	},
	"required": ["id"],
	"additionalProperties": false
}`)

// Check is the check_agent tool: the caller looks at an agent of its subtree without waiting.
type Check struct{}

// Spec describes check_agent.
func (Check) Spec() tools.Spec {
	return tools.Spec{
		Name: NameCheck,
		Description: "Look at one agent, yourself or a descendant, without waiting. Returns its status, " +
			statusFields + ". An agent that has ended keeps its final status, so you can check it again later. " +
			addressRule,
		Parameters: targetSchema,
	}
}

// Op reports OpCheck.
func (Check) Op() Op { return OpCheck }

// Execute refuses: a status lives in the world's components.
func (Check) Execute(*tools.ExecContext, json.RawMessage) (tools.Result, error) {
	return tools.Result{}, needsWorld(NameCheck)
}

// Wait is the wait_for_agent tool: the caller parks until a descendant ends.
type Wait struct{}

// Spec describes wait_for_agent.
func (Wait) Spec() tools.Spec {
	return tools.Spec{
		Name: NameWait,
		Description: "Park until one of your descendants ends, then return its final status, " + statusFields +
			". While parked you take no model turns; if it has already ended the call returns at once. " +
			"You cannot wait on yourself. " + addressRule,
		Parameters: targetSchema,
	}
}

// Op reports OpWait.
func (Wait) Op() Op { return OpWait }

// Execute refuses: parking an agent is a change of the world.
func (Wait) Execute(*tools.ExecContext, json.RawMessage) (tools.Result, error) {
	return tools.Result{}, needsWorld(NameWait)
}

// Send is the send_to_agent tool: the caller queues a message in a descendant's inbox.
type Send struct{}

var sendSchema = json.RawMessage(fmt.Sprintf(`{
	"type": "object",
	"properties": {
		"id": {"type": "string", "minLength": 1, "description": "The agent's id, e.g. \"planner-0/2\"."},
		"message": {"type": "string", "minLength": 1, "maxLength": %d, "description": "The text to deliver."}
	},
	"required": ["id", "message"],
	"additionalProperties": false
}`, maxMessageLength))

// Spec describes send_to_agent.
func (Send) Spec() tools.Spec {
	return tools.Spec{
		Name: NameSend,
		Description: "Queue a message in the inbox of one of your live descendants. It reads its queued messages at its " +
			"next model turn, if its current stage accepts messages (otherwise they wait until a stage that does). " +
			"Returns {\"id\", \"queued\": true, \"inbox\": N}, N being the messages now waiting in its inbox. " +
			"Fails if the agent has ended or its inbox is full (wait and try again). " + addressRule,
		Parameters: sendSchema,
	}
}

// Op reports OpSend.
func (Send) Op() Op { return OpSend }

// Execute refuses: inboxes are world components.
func (Send) Execute(*tools.ExecContext, json.RawMessage) (tools.Result, error) {
	return tools.Result{}, needsWorld(NameSend)
}

// Kill is the kill_agent tool: the caller ends a descendant and its whole subtree.
type Kill struct{}

// Spec describes kill_agent.
func (Kill) Spec() tools.Spec {
	return tools.Spec{
		Name: NameKill,
		Description: "End one of your live descendants at once, together with its whole subtree (its children, their " +
			"children, detached ones included); each ends with status \"killed\". Work they had not finished is lost. " +
			"Returns {\"killed\": [ids, the named agent first, then its subtree in tree order], \"count\": N}. " +
			"You cannot kill yourself, and killing an agent that has already ended fails. " + addressRule,
		Parameters: targetSchema,
	}
}

// Op reports OpKill.
func (Kill) Op() Op { return OpKill }

// Execute refuses: ending entities is a change of the world.
func (Kill) Execute(*tools.ExecContext, json.RawMessage) (tools.Result, error) {
	return tools.Result{}, needsWorld(NameKill)
}

// List is the list_agents tool: the caller sees its whole subtree.
type List struct{}

var listSchema = json.RawMessage(`{"type": "object", "additionalProperties": false}`)

// Spec describes list_agents.
func (List) Spec() tools.Spec {
	return tools.Spec{
		Name: NameList,
		Description: "List your subtree: yourself first, then every descendant in tree order (each agent followed by its " +
			"children in spawn order), ended ones included. Returns {\"agents\": [statuses], \"total\": N, \"omitted\": M}, " +
			"each status " + statusFields + ". A long list shows only its first entries; omitted counts the rest " +
			"(use check_agent on a particular id).",
		Parameters: listSchema,
	}
}

// Op reports OpList.
func (List) Op() Op { return OpList }

// Execute refuses: the statuses live in the world's components.
func (List) Execute(*tools.ExecContext, json.RawMessage) (tools.Result, error) {
	return tools.Result{}, needsWorld(NameList)
}

// FanOut is the fan_out tool: the caller splits a task into work items, one worker per item.
type FanOut struct{}

var fanOutSchema = json.RawMessage(fmt.Sprintf(`{
	"type": "object",
	"properties": {
		"items": {"type": "array", "minItems": 1, "items": {"type": "string", "minLength": 1}, "description": "The work items; each becomes one worker's task, verbatim, so make each self-contained."},
		"items_file": {"type": "string", "minLength": 1, "description": "Instead of items: the path, relative to your workdir, of a file holding the items, as a JSON array of strings or one item per non-empty line."},
		"blueprint": {"type": "string", "minLength": 1, "description": "Name of the blueprint every worker runs; it must be one your blueprint may spawn."},
		"max_workers": {"type": "integer", "minimum": 1, "maximum": %d, "description": "How many workers may run at once (default: the host's setting); the others start as workers end."},
		"on_worker_failure": {"type": "string", "enum": ["continue", "fail_all"], "description": "continue (default): run every item whatever happens. fail_all: at the first failed worker, kill the running ones and start no more."}
	},
	"required": ["blueprint"],
	"oneOf": [{"required": ["items"]}, {"required": ["items_file"]}],
	"additionalProperties": false
}`, maxWorkersArg))

// Spec describes fan_out.
func (FanOut) Spec() tools.Spec {
	return tools.Spec{
		Name: NameFanOut,
		Description: "Split work across parallel workers: one sub-agent of the given blueprint per item, the item as its " +
			"task. Give the items inline (items) or in a file in your workdir (items_file), exactly one of the two. Workers are your children (ids like \"planner-0/4\") and obey the rules of spawn_agent (depth, " +
			"permissions, blueprint). At most max_workers run at once; the host also caps the number of items per call. " +
			"You are parked (no model turns) until every item is handled, then get one merged report: a first line " +
			"\"fan_out of N items: D done, F failed, K killed\" (with \"(stopped after the first failure: fail_all)\" " +
			"when it stopped), then one line per item in items order, \"[i] <status> <worker id>: <output, or why it " +
			"failed>\", i counting from 0, or \"[i] not run\" for an item fail_all never started. The report has a fixed " +
			"size: short outputs are shown whole and long ones share the rest equally, cut with \"…[+N chars]\".",
		Parameters: fanOutSchema,
	}
}

// Op reports OpFanOut.
func (FanOut) Op() Op { return OpFanOut }

// Execute refuses: workers are entities, which only the sub-agent system may create.
func (FanOut) Execute(*tools.ExecContext, json.RawMessage) (tools.Result, error) {
	return tools.Result{}, needsWorld(NameFanOut)
}

// Tools returns one of each sub-agent tool, sorted by id (namespace "subagents"), which is name
// order. It reads the built-in registry that this package's init fills. The tools are stateless
// values: all their work happens in the world's sub-agent system, so one set serves every agent.
func Tools() []tools.Tool { return tools.BuiltinsIn(Namespace) }

// Register registers every sub-agent tool in r (Tools, in that order). It fails (registering
// nothing further) if a name is already taken.
func Register(r *tools.Registry) error {
	if err := tools.RegisterBuiltinsIn(r, Namespace); err != nil {
		return fmt.Errorf("register sub-agent tools: %w", err)
	}
	return nil
}
