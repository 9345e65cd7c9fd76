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
//	endless = false        # optional; true allows a stage loop with no way
//	                       # out (agents then end at the scenario's limits)
//
//	[tool_permissions]     # optional, agent level
//	read_file = "allow"    # tool name = "allow" | "ask" | "deny"
//
//	[subagents]            # optional: the agent's sub-agent tree
//	max_child_depth = 3    # levels below the agent its subtree may reach
//	                       # (default 3; 0 to 64; 0: no children)
//	max_children = 16      # live children at once (default: the host's
//	                       # cap; 1 to 1000000)
//	detached = false       # spawned as a child, keep running when the
//	                       # parent ends (default false: killed with it)
//	spawnable = ["worker"] # scenario blueprint keys it may spawn, each
//	                       # once (default: any; [] allows none)
//
//	[sandbox]              # optional: tightens the host's sandbox ceiling
//	hidden = ["/home"]     # for every stage; the keys of the host config's
//	                       # [sandbox] (mode, network, on_unavailable,
//	                       # writable, hidden, allow_env_vars, limits.*),
//	                       # each optional, each may only tighten
//
//	[[stages]]             # at least one; order matters (see entry)
//	name = "gather"        # required; unique within the blueprint
//	available_tools = ["read_file", "write_file"]
//	                       # optional; the tools this stage advertises to the
//	                       # model; each a tool the host knows, at most once
//	                       # (default: none)
//	max_iterations = 5     # optional; model turns allowed per visit of the
//	                       # stage (default 10; 1 to 10000)
//	accepts_messages = true  # optional; the agent reads its inbox at its
//	                         # next model turn in this stage (default true)
//
//	[stages.fan_out]       # optional: a fan-out stage; its model is not
//	                       # called, one worker runs per item instead
//	blueprint = "worker"   # required; scenario blueprint key of the workers
//	items_file = "items.txt"   # required; relative path in the workdir: a
//	                           # JSON array of strings, or one item a line
//	max_workers = 8        # workers at once (default 8; 1 to 100000)
//	max_items = 1000       # items in all (default 1000; 1 to 10000000)
//	on_worker_failure = "continue"  # or "fail_all" (default continue)
//	merge_chars = 16000    # merged result size (default 16000; 256 to
//	                       # 10000000)
//
//	[stages.sandbox]       # optional: tightens [sandbox] in this stage,
//	limits.timeout = "5s"  # same keys
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
//   - Every stage reachable from the entry must be able to end: some
//     sequence of outcomes (done, error, max_iterations; a fan_out stage
//     never has max_iterations) must reach one no transition catches.
//     A loop an agent could never leave is an error (ErrNoEnd) at the
//     transition that closes it, unless endless = true.
//   - A fan_out stage must list "fan_out" in available_tools, which the
//     host must offer; its workers are the agent's children, so
//     max_child_depth must be at least 1 and spawnable (when given) must
//     include the workers' blueprint.
//   - Blueprint keys (spawnable, fan_out.blueprint) belong to the
//     scenario, which checks them: [Blueprint.SpawnRefs] lists each with
//     its position.
//   - Sandbox values are checked on their own at load (hostconfig's
//     rules); whether they only tighten the host's ceiling needs the
//     host: [Blueprint.CheckSandboxCeiling]. [Blueprint.StageBoundary]
//     resolves the boundary a stage's commands run under.
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
//	subagents.max_child_depth: out of range: 65; valid: 0 to 64
//	subagents.spawnable[3]: duplicate blueprint key "worker"; already listed as subagents.spawnable[0]: list each blueprint once
//	stages[0].fan_out: fan_out tool not available; a fan_out stage runs the fan_out tool: add "fan_out" to available_tools
//	stages[0].fan_out.blueprint: blueprint not spawnable: "worker" is not in subagents.spawnable (critic), and fan_out workers are the agent's children
//	stages[0].fan_out.items_file: path not local "../items.txt"; valid: a relative path inside the agent's workdir, without ".."
//	stages[0].fan_out.on_worker_failure: unknown failure policy "stop"; valid: continue, fail_all
//	stages[20000]: too many stages: 20001; a blueprint has at most 20000 stages
//	stages[0].transitions[64]: too many transitions: 65; a stage has at most 64 transitions
//	stages[0].transitions[0]: stage graph has no end: every outcome of stage "poll" (done, error, max_iterations) leads back to it, ...
//
// # Limits
//
// Compiling is linear in what a file declares (about 100 µs and 43 KB of allocation for a stage
// of 13 lines), and what a file may declare is capped, so that no file stalls a load: MaxFileBytes,
// MaxStages, MaxTransitions, MaxStageTools, MaxConnectors, MaxListEntries and MaxMCPServers.
// A list over its cap is reported at its first element past the cap, wrapping ErrTooMany; a
// message listing valid names lists at most 40 of them.
//
// Each error wraps a sentinel (ErrMissingKey, ErrInvalidName, ErrNoStages,
// ErrDuplicateStage, ErrUnknownStage, ErrUnknownTool, ErrDuplicateTool,
// ErrOutOfRange, ErrUnknownCondition, ErrDuplicateBlueprint,
// ErrFanOutUnavailable, ErrNotSpawnable, ErrNotLocalPath,
// ErrUnknownFailurePolicy, ErrTooMany, ErrNoEnd, policy.ErrBadVerdict, or one of
// tomlfile's ErrSyntax, ErrUnknownKey, ErrType) for errors.Is. Problems in
// a sandbox table wrap the host config's sentinels instead, as the same
// problem in the host's [sandbox] does (hostconfig.ErrOutOfRange,
// ErrNotAbsolute, ErrDuplicatePath, ErrBadSize, ErrBadDuration,
// ErrBadEnvName; sandbox.ErrUnknownMode, ErrUnknownFallback).
package blueprint
