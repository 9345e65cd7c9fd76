package blueprint

import (
	"strconv"
	"strings"

	"github.com/expr-lang/expr/vm"
	"github.com/warrenhq/warren/internal/tomlfile"
	"github.com/warrenhq/warren/mcp/mcpconfig"
	"github.com/warrenhq/warren/models"
	"github.com/warrenhq/warren/policy"
	"github.com/warrenhq/warren/sandbox"
)

// Limits and defaults of the blueprint format.
const (
	// DefaultMaxMessages bounds an agent's kept conversation when the
	// blueprint does not say.
	DefaultMaxMessages = 32
	// MinMaxMessages is the smallest max_messages accepted: room for the
	// system prompt, the task, and one model/tool exchange.
	MinMaxMessages = 4
	// DefaultMaxIterations is the model turns a stage visit may take when
	// the stage does not say.
	DefaultMaxIterations = 10
	// MaxIterationsCeiling is the largest max_iterations accepted, so a typo
	// cannot turn a stage into an effectively endless loop.
	MaxIterationsCeiling = 10000
)

// Caps on what one blueprint file may declare (ErrTooMany past them). Compiling costs time and
// memory in proportion to what a file declares, about 100 µs and 43 KB for a stage of 13 lines,
// so the caps bound what any file can cost (docs/blueprints.md, "Limits"): well above any stage
// graph written by hand or generated for a simulation, well below what would stall a load.
const (
	// MaxFileBytes is the largest blueprint file read: 16 MiB, room for MaxStages stages of
	// 800 bytes each.
	MaxFileBytes = 16 << 20
	// MaxStages is the most stages a blueprint has.
	MaxStages = 20_000
	// MaxTransitions is the most transitions a stage has: the first whose on matches wins, and
	// there are four conditions, so more can only repeat one.
	MaxTransitions = 64
	// MaxStageTools is the most tools a stage lists in available_tools, and in required_tools
	// (its connectors may grant more: those come from the host's servers).
	MaxStageTools = 1024
	// MaxConnectors is the most MCP servers a stage names in connectors.
	MaxConnectors = 64
	// MaxListEntries is the most entries of a tool_permissions table (the blueprint's or a
	// stage's), of safe_commands and of subagents.spawnable.
	MaxListEntries = 1024
	// MaxMCPServers is the most [[mcp_servers]] a blueprint declares.
	MaxMCPServers = 64
)

// Outcome is how one visit of a stage ended; transitions are chosen by it.
// The zero value is not an outcome.
type Outcome uint8

// The ways a stage visit can end.
const (
	// OutcomeDone: the model finished the stage's work.
	OutcomeDone Outcome = iota + 1
	// OutcomeError: the stage failed (a model or host error).
	OutcomeError
	// OutcomeMaxIterations: the stage used up its max_iterations turns.
	OutcomeMaxIterations
)

var outcomeNames = [...]string{OutcomeDone: "done", OutcomeError: "error", OutcomeMaxIterations: "max_iterations"}

// String returns the outcome's name as written in a transition's `on` key,
// for traces and messages; an invalid value prints as Outcome(n).
func (o Outcome) String() string {
	if o >= OutcomeDone && o <= OutcomeMaxIterations {
		return outcomeNames[o]
	}
	return "Outcome(" + strconv.Itoa(int(o)) + ")"
}

// On is the condition a transition fires on: one outcome, or any. The zero
// value is not a condition and matches nothing.
type On uint8

// The transition conditions, spelled as in the `on` key.
const (
	// OnDone fires when the stage ends with OutcomeDone.
	OnDone On = iota + 1
	// OnError fires when the stage ends with OutcomeError.
	OnError
	// OnMaxIterations fires when the stage ends with OutcomeMaxIterations.
	OnMaxIterations
	// OnAlways fires whatever the outcome.
	OnAlways
)

var onNames = [...]string{OnDone: "done", OnError: "error", OnMaxIterations: "max_iterations", OnAlways: "always"}

// validOn lists the accepted `on` values, sorted, for error messages.
const validOn = "always, done, error, max_iterations"

// parseOn converts an `on` value; ok is false for anything else.
func parseOn(s string) (On, bool) {
	for on := OnDone; on <= OnAlways; on++ {
		if onNames[on] == s {
			return on, true
		}
	}
	return 0, false
}

// String returns the condition as written in the `on` key; an invalid value
// prints as On(n).
func (on On) String() string {
	if on >= OnDone && on <= OnAlways {
		return onNames[on]
	}
	return "On(" + strconv.Itoa(int(on)) + ")"
}

// matches reports whether a transition on this condition fires for o.
func (on On) matches(o Outcome) bool {
	switch on {
	case OnAlways:
		return true
	case OnDone:
		return o == OutcomeDone
	case OnError:
		return o == OutcomeError
	case OnMaxIterations:
		return o == OutcomeMaxIterations
	}
	return false
}

// Transition moves an agent to another stage, or ends it, when its condition matches how the
// current stage ended: its On, and its When when it has one.
type Transition struct {
	// On is the outcome the transition fires on.
	On On
	// When, when not nil, must also hold (docs/blueprints.md, "Conditions"): the transition
	// fires only if it evaluates to true over what the visit produced.
	When *Expression
	// Set are the memory writes the transition makes when it fires, sorted by key; each value
	// is evaluated before any is written, over the same environment as When.
	Set []Assignment
	// To is the index of the target stage in Blueprint.Stages; ToName is its name, kept for
	// traces and messages. To is -1 when the transition ends the agent (End).
	To     int
	ToName string
	// End, when not EndNone, makes the transition end the agent (done or failed) instead of
	// moving it to a stage.
	End Ending
}

// Ending is how a transition with end ends its agent; the zero value moves it to a stage.
type Ending uint8

// The endings a transition's end key names.
const (
	// EndNone: the transition moves the agent to its To stage.
	EndNone Ending = iota
	// EndDone ends the agent done.
	EndDone
	// EndFailed ends the agent failed.
	EndFailed
)

// String returns the ending as written in the end key ("" for EndNone).
func (e Ending) String() string {
	switch e {
	case EndDone:
		return "done"
	case EndFailed:
		return "failed"
	}
	return ""
}

// Target names where the transition leads, for messages and graphs: its stage, or "end
// (done)".
func (t *Transition) Target() string {
	if t.End != EndNone {
		return "end (" + t.End.String() + ")"
	}
	return strconv.Quote(t.ToName)
}

// Stage is one compiled stage. It is shared by every agent of the
// blueprint and must not be modified.
type Stage struct {
	// Name is unique within the blueprint.
	Name string
	// Index is the stage's position in Blueprint.Stages, the value agents
	// store as their cursor.
	Index int
	// AvailableTools are the tools the stage advertises, sorted so that
	// prompts built from them are stable.
	AvailableTools []string
	// RequiredTools are the human-in-the-loop tools the stage keeps through
	// an unattended run (a subset of AvailableTools, sorted).
	RequiredTools []string
	// MaxIterations is the model turns allowed per visit of the stage.
	MaxIterations int
	// Prompt is the stage's prompt (nil: none): what a live model is told, after the
	// blueprint's SystemPrompt, while an agent is in the stage.
	Prompt *models.Prompt
	// Transitions are tried in file order; the first match wins.
	Transitions []Transition
	// ToolPermissions are the stage-level permission values (nil if none).
	ToolPermissions map[string]policy.Verdict
	// AcceptsMessages says whether an agent in this stage reads its inbox
	// (messages sent by send_to_agent) at its next model turn; when false
	// the messages wait until the agent reaches a stage that accepts them.
	AcceptsMessages bool
	// FanOut, when not nil, makes this a fan-out stage: instead of calling
	// the model, the host splits the stage's work into items and runs one
	// worker per item (see FanOut).
	FanOut *FanOut
	// Sandbox is the stage's [stages.sandbox] as written (the zero Spec
	// when absent): it tightens the blueprint's boundary while an agent is
	// in this stage (see Blueprint.StageBoundary).
	Sandbox sandbox.Spec
	// Connectors are the MCP servers whose every tool the stage was
	// granted (sorted), kept for display: their tools are already in
	// AvailableTools.
	Connectors []string
	// advertised holds AvailableTools for O(1) membership tests.
	advertised map[string]struct{}
	// conditional: some transition has a When or a Set (see Conditional).
	conditional bool
}

// Advertises reports whether the stage offers tool to the model, the first
// check of the tool gate: a call to a tool the stage does not advertise is
// refused before arguments or permissions are looked at.
func (s *Stage) Advertises(tool string) bool {
	_, ok := s.advertised[tool]
	return ok
}

// Next returns the index of the stage that follows when this stage ends with outcome o, for a
// stage whose transitions have no conditions (Conditional is false): the target of the first
// matching transition. ok is false (and to is -1) when no transition matches, which ends the
// agent, or when the one that matches ends it (End).
func (s *Stage) Next(o Outcome) (to int, ok bool) {
	for i := range s.Transitions {
		if s.Transitions[i].On.matches(o) {
			return s.Transitions[i].To, s.Transitions[i].To >= 0
		}
	}
	return -1, false
}

// Conditional reports whether the stage has a transition with a condition or a set action, so
// that resolving its end needs Fire and a ConditionEnv rather than Next.
func (s *Stage) Conditional() bool { return s.conditional }

// Fire returns the index in Transitions of the transition that fires when the stage ends with
// outcome o: the first whose On matches and whose When, if any, holds over env. It is -1 when
// none matches (the agent ends: done for outcome done, failed otherwise). An error evaluating a
// condition wraps ErrConditionFailed and names the transition.
func (s *Stage) Fire(o Outcome, machine *vm.VM, env *ConditionEnv) (int, error) {
	for i := range s.Transitions {
		t := &s.Transitions[i]
		if !t.On.matches(o) {
			continue
		}
		if t.When == nil {
			return i, nil
		}
		ok, err := t.When.Holds(machine, env)
		if err != nil {
			return -1, err
		}
		if ok {
			return i, nil
		}
	}
	return -1, nil
}

// Blueprint is a compiled blueprint, shared read-only by every agent spawned
// from it; it must not be modified.
type Blueprint struct {
	// Name identifies the blueprint in traces; Description is free text.
	Name, Description string
	// Path is the file the blueprint came from (as given to Parse or Load;
	// absolute when loaded through a Cache).
	Path string
	// Entry is the index of the stage a run starts in.
	Entry int
	// MaxMessages bounds the conversation kept per agent.
	MaxMessages int
	// SystemPrompt is the blueprint's system prompt (nil: none), sent first to a live model in
	// every stage; see SystemFor.
	SystemPrompt *models.Prompt
	// Stages are in file order; agents refer to them by index.
	Stages []Stage
	// ToolPermissions are the agent-level permission values (nil if none).
	ToolPermissions map[string]policy.Verdict
	// SafeCommands are the blueprint's additions to the safe command list,
	// used only when the host opts in ([security]
	// allow_blueprint_safe_commands).
	SafeCommands []string
	// Subagents are the limits on the sub-agent trees of this blueprint's
	// agents, with defaults filled in.
	Subagents Subagents
	// SpawnRefs are the scenario blueprint keys this blueprint names
	// (subagents.spawnable, then each stage's fan_out.blueprint in stage
	// order), each with its position, so the scenario loader, which owns
	// the keys, can report an unknown one where it was written.
	SpawnRefs []SpawnRef
	// Hash is the hex SHA-256 of the file's bytes, recorded in traces so a
	// replay can tell that a blueprint changed.
	Hash string
	// DynamicTools is dynamic_tools: whether the host may re-scan this
	// blueprint's script tools during a run, so an agent sees tools added
	// after it was spawned. false (the default) fixes the tool set at spawn.
	DynamicTools bool
	// Endless is endless: the stage graph may have a loop that an agent can
	// reach and never leave (an on = "always" loop of polling stages, say),
	// for simulations whose agents are meant to run until a limit stops
	// them: the scenario's max_turns_per_agent or max_ticks. false (the
	// default) makes such a loop a load error (ErrNoEnd), since an agent in
	// it could never finish.
	Endless bool
	// ScriptPermissions is the blueprint's [tool_script_permissions] (nil if
	// none): host function -> verdict, with values already validated. It
	// may only tighten the host's table; CheckScriptCeiling says whether it
	// does, once the host is known.
	ScriptPermissions map[string]policy.ScriptVerdict
	// scriptAt positions each ScriptPermissions entry for
	// CheckScriptCeiling's errors (File, Line, Column and Key set).
	scriptAt map[string]tomlfile.Error
	// Sandbox is the blueprint's [sandbox] as written (the zero Spec when
	// absent): it may only tighten the host's ceiling, and each stage's
	// Sandbox may only tighten it in turn. CheckSandboxCeiling says whether
	// they do, once the host is known; StageBoundary resolves a stage's.
	Sandbox sandbox.Spec
	// sandboxAt positions every sandbox setting written, the blueprint's
	// and its stages', by full key ("stages[1].sandbox.limits.timeout"),
	// for CheckSandboxCeiling's errors.
	sandboxAt map[string]tomlfile.Error
	// MCPServers are the blueprint's valid [[mcp_servers]] entries, in
	// file order with defaults filled in (Blueprint set). Whether the
	// blueprint may declare servers is the host's [mcp]
	// allow_blueprint_servers, which the scenario loader checks.
	MCPServers []mcpconfig.Server
	// Reads is what the blueprint's conditions and set values read, so the host keeps only
	// that for its agents.
	Reads Reads
	// resultSchemas are the [result_schemas] by tool (nil when none): what conditions reading
	// tools.<tool> were type-checked against, and what ToolValue holds results to.
	resultSchemas map[string]*resultSchema
}

// CheckScriptCeiling reports every [tool_script_permissions] entry of the
// blueprint that is looser than what host (the host config's table; nil
// for the built-in defaults) sets for the same function, each positioned
// at the entry in the blueprint file and wrapping policy.ErrScriptLoosens.
// Loaders call it once both files are known, since the host may come from
// a separate config file; nil means the blueprint only tightens.
func (b *Blueprint) CheckScriptCeiling(host map[string]policy.ScriptVerdict) error {
	var errs tomlfile.Errors
	for _, p := range policy.CheckScriptTightening(host, b.ScriptPermissions) {
		e, ok := b.scriptAt[p.Name]
		if !ok {
			e = tomlfile.Error{File: b.Path, Key: tomlfile.JoinKey("tool_script_permissions", p.Name)}
		}
		e.Msg, e.Err = p.Err.Error(), p.Err
		errs = append(errs, &e)
	}
	errs.Sort()
	return errs.Err()
}

// Stage returns the stage called name, for tools and tests that refer to
// stages by name; agents use indices.
func (b *Blueprint) Stage(name string) (*Stage, bool) {
	for i := range b.Stages {
		if b.Stages[i].Name == name {
			return &b.Stages[i], true
		}
	}
	return nil, false
}

// PolicyLayer is what the blueprint says about permissions, as the policy resolver takes it:
// its agent-level and per-stage tool_permissions, and its stage names for reasons.
func (b *Blueprint) PolicyLayer() policy.BlueprintLayer {
	layer := policy.BlueprintLayer{
		Name:       b.Name,
		Agent:      b.ToolPermissions,
		Stages:     make([]map[string]policy.Verdict, len(b.Stages)),
		StageNames: make([]string, len(b.Stages)),
	}
	for i := range b.Stages {
		layer.Stages[i] = b.Stages[i].ToolPermissions
		layer.StageNames[i] = b.Stages[i].Name
	}
	return layer
}

// SystemFor is the system prompt of a live turn with v in stage: the blueprint's system_prompt
// and the stage's prompt, rendered for v, joined by a blank line ("" when neither is set).
func (b *Blueprint) SystemFor(stage int, v *models.View) (string, error) {
	var parts []string
	for _, p := range [...]*models.Prompt{b.SystemPrompt, b.Stages[stage].Prompt} {
		if p == nil {
			continue
		}
		s, err := p.Render(v)
		if err != nil {
			return "", err
		}
		if s != "" {
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, "\n\n"), nil
}
