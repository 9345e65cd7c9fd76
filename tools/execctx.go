package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/warrenhq/warren/memory"
	"time"
)

// AgentRef identifies the agent making a call. It is a Warren addition to the reference context:
// many agents share one host, so tools that keep per-agent state (the checklist) or report detached
// work need to know whose call this is.
type AgentRef struct {
	// ID is the agent's world-unique id (stable across a run, used as the key of per-agent state).
	ID uint64
	// Name is the agent's human-readable name, for messages only.
	Name string
}

// ExecContext is what one tool execution receives: cancellation, the call's ids and its place in
// the conversation, the workdir, the model, safety and plan mode, the turn's intent, the
// classifier and the checklist broker, and the host's per-call services (the write budget, the
// command runner, the script host's callbacks). It carries the reference runtime's ExecContext
// translated to a world of many agents; the fields Warren left out, and why, are listed in
// docs/decisions.md ("ExecContext: every field real"). Every field is optional in the sense that its zero value has a
// documented headless meaning, and every method is safe on a nil *ExecContext, so a tool run from
// a bare test context degrades instead of crashing.
//
// The live dispatch path (tool dispatch in package systems) fills every field after
// NewExecContext.
type ExecContext struct {
	// Ctx carries cancellation (the reference's token): tools doing I/O or waiting select on
	// Ctx.Done(). nil means context.Background() (never cancelled); read it through Context().
	Ctx context.Context
	// CallID is the id of this tool call (from the model's reply), echoed in progress and results.
	CallID string
	// TurnID numbers the agent's turn that issued the call.
	TurnID uint64
	// Agent is the calling agent (Warren addition, see AgentRef).
	Agent AgentRef
	// Workdir is the absolute path of the agent's working directory. File tools are confined to it
	// and create it on first use.
	Workdir string
	// ModelID is the calling agent's active model id; sub-agents inherit it so they hit the same
	// provider.
	ModelID string
	// SessionID names the conversation dispatching this call: the calling agent's, by its name,
	// which is unique in a run and the same in every replay, so checkpoints anchor to a
	// conversation position (with MessageIndex). "" on headless paths.
	SessionID string
	// MessageIndex is the conversation length at dispatch; it pairs with SessionID for checkpoint
	// anchoring (see CheckpointOrigin). -1 when unknown.
	MessageIndex int
	// SafetyMode is the effective live safety mode for this call — from the session, not the static
	// config, and floored to read-only while a plan is being drafted. The policy gate builds its
	// decision from it.
	SafetyMode SafetyMode
	// PlanFile is set while the agent is in plan mode: the one path the policy gate exempts from
	// the read-only floor, and the flag the plan carve-outs and the task tools key on. "" when not
	// planning.
	PlanFile string
	// ContextPercent is the context-window fill at dispatch (0-100), when the agent's model back
	// end reports its context size; -1 when it does not (the scripted and js kinds have no context
	// window).
	ContextPercent int
	// Intent is the stated intent for the turn: the latest user message of the agent's
	// conversation (its task, a person's answer, a message from another agent), passed to the auto
	// mode classifier so it can judge whether an action is aligned with it. "" when there is none.
	Intent string
	// Classifier is the model-backed classifier for SafetyAuto. Set only when the effective mode is
	// auto and a provider is bound; nil means the gate fails safe and escalates to ask.
	Classifier AutoClassifier
	// Writes is the write budget of the agent run this call belongs to: the write ceilings in
	// effect and what the run has spent of them. write_file and edit_file charge it before they
	// write. It is shared (a pointer) rather than copied because the running total has to survive
	// across every batch the run makes: a per-run budget that reset per batch would bound nothing.
	// nil is headless: no budget configured, nothing is charged and no write is refused.
	Writes *WriteBudget
	// Journal, set for a call of an ExactlyOnce tool in a run with a state directory, journals
	// the call's intent with what its effect will be before the tool makes it, so that a resume
	// after a crash can tell whether it happened (see ExactlyOnce). nil: nothing is journaled.
	Journal EffectRecorder
	// Tasks is the checklist broker, the single writer of all checklist state (one per world, a
	// world resource). Present on every live path; nil only in bare contexts, where the checklist tools return a graceful no-op
	// result.
	Tasks *TaskBroker
	// Memory is the calling agent's key-value memory, for memory_set and memory_get: set only
	// for a call the world runs inline, in its own order (nil elsewhere, where the memory tools
	// answer ErrNoMemory), since the memory is the world's data.
	Memory *memory.Store
	// Now is the world clock's time when the call was dispatched (virtual time in scenarios), so
	// a tool that shows the time (a script's Date) stays deterministic. Zero in bare contexts.
	Now time.Time
	// Seed seeds the call's own random stream: derived from the run's seed, the agent and the
	// call, so a tool that draws random numbers (a script's Math.random) draws the same ones in
	// every replay, whichever worker runs it.
	Seed uint64
	// ScriptPermit is Layer 3 for script tools: whether the host function fn (read_file,
	// write_file, shell, http_get, ...) may run now for this agent, evaluated at each host call.
	// nil in bare contexts, where scripts may call nothing that needs a permission.
	ScriptPermit func(fn string) error
	// Commands runs this agent's shell commands: its sandbox manager, pointed at the boundary of
	// the agent's current stage. nil in bare contexts, where the shell tool refuses to run.
	Commands CommandRunner
	// FileOwner, when set, owns what the file tools create in the workdir (the workdir itself,
	// new folders, new files): the host user the agent's commands run as, when it is not the
	// host's own (a root host runs commands as an unprivileged uid), so the agent's commands can
	// change what its file tools wrote. nil leaves them to the host's user.
	FileOwner *FileOwner
	// CallTool runs another tool for this agent through the full gate (visibility included: only a
	// tool the agent's stage offers), synchronously on the caller's goroutine, under ctx
	// (the calling tool's own, which may end sooner than Ctx: a script's budget). An ask that no
	// grant or safe key covers is refused, since a call inside a tool cannot open a prompt. nil in
	// bare contexts.
	CallTool func(ctx context.Context, name string, args json.RawMessage) (Result, error)
	// Outside, when set, is how a script tool's requests to the world outside the run (its host
	// functions, and the tools it calls that leave the world) go out while the run is recorded, or
	// are answered while it is replayed. nil: they go out directly.
	Outside Outside
}

// Outside carries one call's requests to the world outside the run when the run is recorded
// (host run --record) or replayed (host replay). A script tool runs again in a replay, so its
// logic and notes are replayed; only what it asked of the world comes from the recording. One
// Outside belongs to one top-level call, whose requests come one after another.
type Outside interface {
	// Do performs request (a text naming what is asked: a path, a URL and body, a tool's
	// arguments) of fn. A recording calls live, which fills *out (a value that marshals to JSON),
	// and keeps what it returned; a replay fills *out and returns the error of the recorded
	// request in the same place, without calling live, or a divergence error when the request
	// there differs.
	Do(fn, request string, out any, live func() error) error
	// Secret is Do for a value the run must never keep (an environment variable): live runs in a
	// replay too, and the recording keeps only a hash of its result, so a replay with another
	// value is a divergence that does not show either.
	Secret(fn, request string, live func() (string, error)) (string, error)
}

// FileOwner is a host user and group, as ExecContext.FileOwner gives them.
type FileOwner struct{ UID, GID int }

// NewExecContext builds a context for one call with the "unknown" sentinels set (MessageIndex and
// ContextPercent are -1) and every optional field in its headless state. A nil ctx means
// context.Background().
func NewExecContext(ctx context.Context, callID string, turn uint64, agent AgentRef, workdir string) *ExecContext {
	if ctx == nil {
		ctx = context.Background()
	}
	return &ExecContext{
		Ctx:            ctx,
		CallID:         callID,
		TurnID:         turn,
		Agent:          agent,
		Workdir:        workdir,
		MessageIndex:   -1,
		ContextPercent: -1,
	}
}

// Context returns the cancellation context, context.Background() when none is set.
func (ec *ExecContext) Context() context.Context {
	if ec == nil || ec.Ctx == nil {
		return context.Background()
	}
	return ec.Ctx
}

// Cancelled reports whether the call has been cancelled.
func (ec *ExecContext) Cancelled() bool { return ec.Context().Err() != nil }

// CheckpointOrigin is the provenance of a checkpoint: the conversation position (session and
// message index) and the call that produced a file snapshot, so rewind and fork can surface
// snapshots by anchor.
type CheckpointOrigin struct {
	SessionID    string // "" on headless paths
	MessageIndex int    // -1 when unknown
	CallID       string
	TurnID       uint64
}

// CheckpointOrigin returns this call's checkpoint provenance. Every checkpoint-creating tool
// passes it along so file snapshots anchor to the conversation position that produced them.
func (ec *ExecContext) CheckpointOrigin() CheckpointOrigin {
	if ec == nil {
		return CheckpointOrigin{MessageIndex: -1}
	}
	return CheckpointOrigin{SessionID: ec.SessionID, MessageIndex: ec.MessageIndex, CallID: ec.CallID, TurnID: ec.TurnID}
}

// InPlanMode reports whether the agent is drafting a plan (PlanFile is set).
func (ec *ExecContext) InPlanMode() bool { return ec != nil && ec.PlanFile != "" }

// SafetyMode is the effective safety mode of a call.
type SafetyMode uint8

const (
	// SafetyDefault applies the normal permission layers.
	SafetyDefault SafetyMode = iota
	// SafetyReadOnly refuses every write (the plan file excepted while planning).
	SafetyReadOnly
	// SafetyAuto lets the auto classifier settle asks; without a classifier the gate escalates.
	SafetyAuto
)

var safetyModeNames = [...]string{SafetyDefault: "default", SafetyReadOnly: "read-only", SafetyAuto: "auto"}

// String returns the mode's config spelling: "default", "read-only" or "auto".
func (m SafetyMode) String() string {
	if int(m) < len(safetyModeNames) {
		return safetyModeNames[m]
	}
	return fmt.Sprintf("SafetyMode(%d)", uint8(m))
}

// ParseSafetyMode parses the config spelling of a mode. Anything else is an error wrapping
// ErrUnknownValue that lists the valid spellings: a misspelled mode must never become a silent
// default.
func ParseSafetyMode(s string) (SafetyMode, error) {
	for m, name := range safetyModeNames {
		if s == name {
			return SafetyMode(m), nil
		}
	}
	return SafetyDefault, fmt.Errorf("safety mode %q: %w (want default, read-only or auto)", s, ErrUnknownValue)
}

// MarshalText implements encoding.TextMarshaler, so modes round-trip through TOML and JSON.
func (m SafetyMode) MarshalText() ([]byte, error) {
	if int(m) >= len(safetyModeNames) {
		return nil, fmt.Errorf("safety mode %d: %w", uint8(m), ErrUnknownValue)
	}
	return []byte(m.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler with ParseSafetyMode's strictness.
func (m *SafetyMode) UnmarshalText(text []byte) error {
	parsed, err := ParseSafetyMode(string(text))
	if err != nil {
		return err
	}
	*m = parsed
	return nil
}
