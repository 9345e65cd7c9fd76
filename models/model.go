package models

import (
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"strconv"
)

// Role says who produced a conversation message; back ends map it onto their own wire
// format (for example the "role" field of an OpenAI-compatible request).
type Role uint8

// The roles a conversation message can have.
const (
	// RoleSystem is the host's instructions to the model (blueprint and stage prompts).
	RoleSystem Role = iota
	// RoleUser is input from the task or a human.
	RoleUser
	// RoleAssistant is the model's own reply, possibly requesting tool calls.
	RoleAssistant
	// RoleTool is the result of one tool call, answering Message.CallID.
	RoleTool
)

var roleNames = [...]string{
	RoleSystem:    "system",
	RoleUser:      "user",
	RoleAssistant: "assistant",
	RoleTool:      "tool",
}

// String returns the role's wire name ("system", "user", "assistant", "tool"), or
// "role(N)" for a value outside the enumeration so a corrupted role is visible in logs.
func (r Role) String() string {
	if int(r) < len(roleNames) {
		return roleNames[r]
	}
	return "role(" + strconv.Itoa(int(r)) + ")"
}

// ToolCall is one tool invocation requested by a model. The host executes it through the
// permission gate and answers with a RoleTool message carrying the same ID.
type ToolCall struct {
	// ID links the call to its result. A back end may leave it empty; the host then
	// assigns one before the call reaches the trace.
	ID string
	// Name is the tool's name as advertised in View.Tools.
	Name string
	// Args is the call's arguments as a JSON object. Back ends may share one backing
	// array between calls, so the host must treat it as read-only.
	Args json.RawMessage
}

// Message is one entry of an agent's conversation.
type Message struct {
	// Role says who produced the message.
	Role Role
	// Content is the message text (for RoleTool, the tool's output or error text).
	Content string
	// Calls lists the tools an assistant message requested; empty for other roles.
	Calls []ToolCall
	// CallID is, for a RoleTool message, the ToolCall.ID this message answers.
	CallID string
	// IsError marks a RoleTool message whose call failed (refused, invalid, or errored),
	// so a model can tell failure output from ordinary output.
	IsError bool
}

// ToolInfo describes one tool a stage advertises to the model: what a live back end puts
// in its request's tool list. It mirrors the tools package's spec without importing it,
// so models stays free of tool execution concerns.
type ToolInfo struct {
	// Name is the tool's unique name within the stage.
	Name string
	// Description tells the model what the tool does.
	Description string
	// Parameters is the JSON schema of the tool's arguments.
	Parameters json.RawMessage
}

// AgentInfo identifies the agent a turn is for.
type AgentInfo struct {
	// ID is the host-assigned agent id, unique within a run.
	ID uint64
	// Name is the agent's unique, human-readable name (for example "worker-3").
	Name string
	// Group is the scenario group the agent was spawned in.
	Group string
	// Index is the agent's 0-based position within its group.
	Index int
}

// View is everything a model may look at for one turn. The host builds it and reuses it
// between calls, so a back end must treat it as read-only and must not retain it (or its
// slices) after Turn returns.
type View struct {
	// Agent identifies the agent.
	Agent AgentInfo
	// Stage is the name of the agent's current stage.
	Stage string
	// StageIndex is the position of the current stage in its blueprint.
	StageIndex int
	// Iteration is the 0-based model turn within this visit of the stage.
	Iteration int
	// Visit is the 1-based count of visits to this stage, including the current one.
	Visit int
	// Turn is the 0-based model turn over the whole run.
	Turn int
	// System is the system prompt the host composed for this turn: the blueprint's and the
	// stage's prompts, templated (empty when neither sets one). A live back end sends it first,
	// after its own table's system_prompt, in its provider's place for it.
	System string
	// Messages is the conversation so far, oldest first.
	Messages []Message
	// Tools is what the current stage advertises, sorted by name for stable prompts.
	Tools []ToolInfo
	// Memory is the agent's key-value memory (memory_set, a transition's set) as decoded JSON
	// values by key; nil when empty. It is the host's and shared: read it, never modify it.
	Memory map[string]any
	// Rand is the agent's own seeded random stream, so back ends that simulate choice
	// stay deterministic. It may be nil when the host gives the agent no stream.
	Rand *rand.Rand
}

// Reply is a model's decision for one turn.
type Reply struct {
	// Text is the model's prose for this turn (may be empty).
	Text string
	// Usage is what the turn cost, as its provider reported it (zero for a back end that runs
	// in the host: scripted turns, JS policies).
	Usage Usage
	// Calls is the tools the model wants run. Empty means the stage's work is done,
	// and the host resolves the stage with outcome "done". The slice belongs to the host
	// once Turn returns (it fills missing ids in place and keeps it in the conversation), so a
	// back end returns a fresh slice each turn; the Args inside may be shared and are never
	// modified.
	Calls []ToolCall
}

// State is the per-agent memory of a model back end, kept by the host in the agent's side
// store (components.AgentData) and passed back on every turn. It must stay tiny, and it holds
// no pointer, because the host may hold a million of them and copies one to the model lane and
// back on every lane turn: Cursor covers position-based back ends such as Scripted. A future
// back end that needs real per-agent memory (a live model's session, a summary of a long
// conversation) keeps it in the agent side store, a field of components.AgentData beside the
// conversation, where references are safe and reap frees them; see docs/architecture.md,
// "Agent data: pointer-free components and the side store", and docs/decisions.md.
type State struct {
	// Cursor is the back end's position (for Scripted, the index of the next turn).
	Cursor int32
}

// Model is one back end deciding agents' next steps. Implementations are shared by many
// agents and must be safe for concurrent use; per-agent memory lives in State.
type Model interface {
	// ID returns a stable identifier recorded in traces (for example "scripted:worker"),
	// so a trace says which back end made each decision.
	ID() string
	// Turn decides the agent's next step. It may update st. A returned error is a model
	// failure: the host ends the stage with outcome "error" and records the message.
	//
	// ctx is cancelled when the turn is no longer wanted: the agent was killed (kill_agent,
	// its subtree's kill, its parent's end), the run was cancelled, or a deadline of the run
	// passed. A back end that waits (a network call, a script) must stop soon after and
	// return, typically with an error wrapping ctx.Err(); the host drops the reply of a
	// killed agent, and a lane that never got its turn back could not close. A back end that
	// only computes (Scripted) may ignore ctx.
	Turn(ctx context.Context, st *State, v *View) (Reply, error)
}

// Errors a back end returns, testable with errors.Is.
var (
	// ErrScriptExhausted is returned by a scripted model in "fail" mode once every
	// scripted turn has been used.
	ErrScriptExhausted = errors.New("scripted model ran out of turns")
	// ErrStageMismatch is returned when a scripted turn asserts a stage other than the
	// one the agent is in, which means the scenario and the blueprint disagree.
	ErrStageMismatch = errors.New("scripted turn stage mismatch")
	// ErrScriptedFailure wraps the message of a scripted turn that simulates a failing
	// model.
	ErrScriptedFailure = errors.New("scripted model failure")
	// ErrInvalidScript is wrapped by every error NewScripted and ParseWhenExhausted
	// return for a malformed script.
	ErrInvalidScript = errors.New("invalid script")
)
