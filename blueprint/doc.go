// Package blueprint loads agent blueprints: TOML files that describe the
// stages an agent moves through, the tools each stage advertises, the
// permissions that apply, and how the agent moves from stage to stage.
//
// A blueprint is compiled once into an immutable [*Blueprint] and shared by
// every agent spawned from it (use a [Cache] so that several groups naming
// the same file share one value); per-agent state holds only a stage index
// and counters, which is what keeps an idle agent down to a few kilobytes.
//
// # Format
//
//	name = "worker"        # required; one or more of a-z, 0-9, '_' and '-'
//	description = "..."    # optional free text
//	entry = "gather"       # optional; the stage a run starts in
//	                       # (default: the first stage in the file)
//	max_messages = 32      # optional; the most conversation messages kept
//	                       # per agent (default 32; at least 4)
//
//	[tool_permissions]     # optional, agent level
//	read_file = "allow"    # tool name = "allow" | "ask" | "deny"
//
//	[[stages]]             # at least one; order matters (see entry)
//	name = "gather"        # required; unique within the blueprint
//	available_tools = ["read_file", "write_file"]
//	                       # optional; the tools this stage advertises to the
//	                       # model; each a tool the host knows, at most once
//	                       # (default: none)
//	max_iterations = 5     # optional; model turns allowed per visit of the
//	                       # stage (default 10; 1 to 10000)
//
//	[stages.tool_permissions]  # optional, stage level: same rules as the
//	write_file = "ask"         # agent level; consulted before it
//
//	[[stages.transitions]] # optional, ordered; the first that matches the
//	on = "done"            # way the stage ended wins; when none matches,
//	to = "report"          # the run ends
//
// Keys:
//   - on (required) is one of: done (the model finished the stage), error
//     (the stage failed), max_iterations (the stage used up its
//     max_iterations model turns) or always (matches any of them).
//   - to (required) names a stage of the same blueprint; a stage may
//     transition to itself.
//   - Permission keys must be tool names the host knows and values exactly
//     allow, ask or deny; a misspelling is a load error, never a default.
//     How the stage value, the agent value, the user's ceiling and the
//     built-in defaults combine is the policy package's business.
//
// # Errors
//
// Every problem in a file is reported at once, as a [tomlfile.Errors]
// sorted by line, one per line in the form "file:line:col: key: message".
// A missing key is placed at its nearest parent that is in the file (a
// stage's missing name at its [[stages]] header); line and column are left
// out when there is none. Syntax and type errors stop decoding, so they are
// reported alone; unknown keys are reported together with the rest.
// Each message says what would be valid:
//
//	name: missing required key; expected one or more of a-z, 0-9, '_' and '-'
//	name: invalid name "Worker"; expected one or more of a-z, 0-9, '_' and '-'
//	stages: no stages; define at least one [[stages]] table
//	stages[1].name: missing required key; every stage needs a unique name
//	stages[1].name: invalid name ""; a stage name cannot be empty
//	stages[1].name: duplicate stage name "gather"; first defined at line 7
//	entry: unknown stage "start"; valid stages: gather, report
//	stages[0].available_tools[1]: unknown tool "red_file"; valid tools: read_file, shell, write_file
//	stages[0].available_tools[2]: duplicate tool "read_file"; list each tool once
//	stages[0].max_iterations: out of range: 0; valid: 1 to 10000
//	max_messages: out of range: 2; valid: 4 or more
//	stages[0].transitions[0].on: unknown transition condition "finished"; valid: always, done, error, max_iterations
//	stages[0].transitions[0].on: missing required key; valid: always, done, error, max_iterations
//	stages[0].transitions[0].to: unknown stage "reprot"; valid stages: gather, report
//	stages[0].transitions[0].to: missing required key; valid stages: gather, report
//	tool_permissions.read_file: invalid permission verdict "yes"; valid verdicts: allow, ask, deny
//	tool_permissions.rm: unknown tool "rm"; valid tools: read_file, shell, write_file
//	stages[0].cuont: unknown key; valid keys here: available_tools, max_iterations, name, tool_permissions, transitions
//	stages[0].max_iterations: expected integer, got string
//
// Each error wraps a sentinel (ErrMissingKey, ErrInvalidName, ErrNoStages,
// ErrDuplicateStage, ErrUnknownStage, ErrUnknownTool, ErrDuplicateTool,
// ErrOutOfRange, ErrUnknownCondition, policy.ErrBadVerdict, or one of
// tomlfile's ErrSyntax, ErrUnknownKey, ErrType) for errors.Is.
package blueprint
