package policy

import "slices"

// builtinDefaults holds the built-in default of every tool Warren ships. Read-only tools, the
// to-do list, the questions to the user and the sub-agent tools are harmless to run unasked;
// the tools that change files or run programs ask. A tool missing here (an MCP tool
// "<server>__<tool>", a script tool, a misspelling) falls back to ask, because nothing is known
// about what it does.
var builtinDefaults = map[string]Verdict{
	"read_file":        Allow,
	"list_dir":         Allow,
	"todo_add":         Allow,
	"todo_done":        Allow,
	"todo_list":        Allow,
	"memory_set":       Allow,
	"memory_get":       Allow,
	"ask_user_text":    Allow,
	"ask_user_choice":  Allow,
	"ask_user_confirm": Allow,
	"spawn_agent":      Allow,
	"check_agent":      Allow,
	"wait_for_agent":   Allow,
	"send_to_agent":    Allow,
	"kill_agent":       Allow,
	"list_agents":      Allow,
	"fan_out":          Allow,
	"write_file":       Ask,
	"edit_file":        Ask,
	ShellTool:          Ask,
}

// DefaultVerdict is the built-in default for tool, the bottom layer of every decision: what
// applies when neither the host nor the blueprint names the tool. Unknown tools ask, so a new
// MCP or script tool is never silently trusted.
func DefaultVerdict(tool string) Verdict {
	if v, ok := builtinDefaults[tool]; ok {
		return v
	}
	return Ask
}

// Loosenable lists the tools a blueprint may loosen beyond the built-in default even without
// [security] allow_blueprint_permissions. They are safe to loosen because their writes are
// confined to the workdir and charged to the write budget; shell is deliberately absent, since
// a command line can reach anything. NewResolver reads the list when it is called.
var Loosenable = []string{"write_file", "edit_file"}

// defaultToolNames returns the tools with a built-in default, sorted, so that the resolver can
// precompute a decision for each of them in a stable order.
func defaultToolNames() []string {
	names := make([]string, 0, len(builtinDefaults))
	for name := range builtinDefaults {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}
