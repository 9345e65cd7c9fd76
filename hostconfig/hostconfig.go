// Package hostconfig holds the host's own configuration: the permission ceiling
// ([tool_permissions] and [agent_tool_permissions.<blueprint>]), the safe commands the user adds,
// the security switches, the write budget and the interaction settings. It is the user's file,
// passed to `host run --config` or embedded in a scenario as [host]; blueprints (which may come
// from anywhere) can only tighten what it allows. Its [subagents] table caps the sub-agent
// trees of every agent, whatever their blueprints ask for. Its [tool_script_permissions] table is
// Layer 3, the ceiling on the host functions script tools may call, and [scripting] holds the
// script tools' folder and limits. Its [sandbox] table is the ceiling on the boundary every
// command runs under; blueprints and their stages may only tighten it. Its [[mcp_servers]] declare
// the MCP tool servers whose tools (`<server>__<tool>`) the host offers, and [mcp] says whether
// blueprints may declare their own.
package hostconfig

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"maps"
	"slices"
	"strings"

	"github.com/warrenhq/warren/inference"
	"github.com/warrenhq/warren/internal/tomlfile"
	"github.com/warrenhq/warren/mcp/mcpconfig"
	"github.com/warrenhq/warren/policy"
	"github.com/warrenhq/warren/sandbox"
)

// File is the TOML shape of a host config, shared with the [host] table of a scenario.
type File struct {
	ToolPermissions      map[string]string            `toml:"tool_permissions"`
	AgentToolPermissions map[string]map[string]string `toml:"agent_tool_permissions"`
	SafeCommands         *fileSafeCommands            `toml:"safe_commands"`
	Security             fileSecurity                 `toml:"security"`
	WriteBudget          fileWriteBudget              `toml:"write_budget"`
	Interaction          fileInteraction              `toml:"interaction"`
	Subagents            fileSubagents                `toml:"subagents"`
	// ToolScriptPermissions and Scripting are the script-tool tables (see scripting.go).
	ToolScriptPermissions map[string]string `toml:"tool_script_permissions"`
	Scripting             fileScripting     `toml:"scripting"`
	// Sandbox is the ceiling on the boundary commands run under (see sandbox.go).
	Sandbox SandboxTable `toml:"sandbox"`
	// MCP and MCPServers declare the MCP tool servers (see mcp.go).
	MCP        fileMCP          `toml:"mcp"`
	MCPServers []MCPServerTable `toml:"mcp_servers"`
	// InferencePools are the [[inference_pools]] live model turns go through (docs/models.md).
	InferencePools []PoolTable `toml:"inference_pools"`
}

type fileSafeCommands struct {
	Commands []string `toml:"commands"`
}

type fileSecurity struct {
	AllowBlueprintPermissions  bool `toml:"allow_blueprint_permissions"`
	AllowBlueprintSafeCommands bool `toml:"allow_blueprint_safe_commands"`
}

type fileWriteBudget struct {
	PerCall *int64 `toml:"per_call"`
	PerRun  *int64 `toml:"per_run"`
}

type fileInteraction struct {
	TimeoutTicks *int64 `toml:"timeout_ticks"`
	Unattended   bool   `toml:"unattended"`
}

type fileSubagents struct {
	MaxDepth       *int64 `toml:"max_depth"`
	MaxChildren    *int64 `toml:"max_children"`
	MaxAgents      *int64 `toml:"max_agents"`
	Inbox          *int64 `toml:"inbox"`
	MaxFanOutItems *int64 `toml:"max_fanout_items"`
}

// ErrOutOfRange: a limit ([subagents], [scripting] or [sandbox.limits]) is outside what the host
// accepts. Errors wrap it so callers can test them with errors.Is.
var ErrOutOfRange = errors.New("out of range")

// Defaults for settings a config leaves out.
const (
	// DefaultTimeoutTicks is how long a prompt waits for an answer before it is denied.
	DefaultTimeoutTicks = 100
	// DefaultPerCallBytes and DefaultPerRunBytes are the write budget when none is given:
	// 1 MiB per call, 64 MiB per run.
	DefaultPerCallBytes = 1 << 20
	DefaultPerRunBytes  = 64 << 20
	// DefaultMaxDepth is the absolute depth cap of any agent tree (a top-level agent is at depth
	// 0), whatever a blueprint's max_child_depth says.
	DefaultMaxDepth = 8
	// DefaultMaxChildren is how many live children one parent may have at once.
	DefaultMaxChildren = 256
	// DefaultMaxAgents is how many spawned agents may be live in the host at once.
	DefaultMaxAgents = 1_000_000
	// DefaultInbox is how many messages may wait in one agent's inbox; send_to_agent is refused
	// beyond it, so a chatty parent cannot grow a child's memory without bound.
	DefaultInbox = 64
	// DefaultMaxFanOutItems is the most work items one fan_out may take, whatever the stage's
	// max_items says.
	DefaultMaxFanOutItems = 100_000
)

// SubagentLimits are the host-wide caps on sub-agent trees, from [subagents]. They bound what
// blueprints may ask for: the effective limit is the tighter of the two.
type SubagentLimits struct {
	// MaxDepth is the absolute depth cap of any agent tree; MaxChildren the live children per
	// parent; MaxAgents the live spawned agents in the host.
	MaxDepth, MaxChildren, MaxAgents int
	// Inbox is the pending messages an agent's inbox holds before send_to_agent is refused.
	Inbox int
	// MaxFanOutItems is the most work items one fan_out takes.
	MaxFanOutItems int
}

// Config is a validated host configuration.
type Config struct {
	// Path is where the config came from ("" for the defaults, "<scenario> [host]" when
	// embedded); Hash is "sha256:<hex>" of the file's bytes when it came from its own file.
	Path string
	Hash string
	// ToolPermissions is the global ceiling; AgentToolPermissions the per-blueprint one (an
	// entry there wins over the global entry for the same key).
	ToolPermissions      map[string]policy.Verdict
	AgentToolPermissions map[string]map[string]policy.Verdict
	// SafeCommands are added to the shipped safe list.
	SafeCommands []string
	// AllowBlueprintPermissions lets a blueprint loosen a built-in default where the ceiling
	// says nothing; AllowBlueprintSafeCommands lets a blueprint add safe commands.
	AllowBlueprintPermissions  bool
	AllowBlueprintSafeCommands bool
	// WritePerCall and WritePerRun are the write budget ceilings in bytes (0: no ceiling).
	WritePerCall, WritePerRun int64
	// TimeoutTicks bounds how long a prompt stays open.
	TimeoutTicks uint64
	// Unattended says nobody is watching: human tools are not advertised unless required, and
	// approval prompts are denied unless a grant or yolo covers them.
	Unattended bool
	// Subagents are the host-wide caps on sub-agent trees.
	Subagents SubagentLimits
	// ScriptPermissions is [tool_script_permissions], Layer 3: host function -> verdict, the
	// ceiling a blueprint's own table may only tighten (nil: the built-in defaults apply; see
	// policy.NewScriptPermissions).
	ScriptPermissions map[string]policy.ScriptVerdict
	// Scripting is the [scripting] table: the host-wide script tools folder and the limits every
	// script tool call runs under.
	Scripting ScriptingConfig
	// Sandbox is the [sandbox] table as the file wrote it (the zero Spec when absent); what it
	// leaves out takes the defaults in SandboxCeiling, the boundary blueprints may only tighten.
	Sandbox sandbox.Spec
	// MCPServers are the valid [[mcp_servers]] entries in file order, defaults filled in; their
	// tools are offered as `<server>__<tool>`.
	MCPServers []mcpconfig.Server
	// AllowBlueprintServers is [mcp] allow_blueprint_servers: whether a blueprint may declare
	// its own [[mcp_servers]] (false by default, since a blueprint may come from anywhere and a
	// server runs a program or reaches a URL of its choosing).
	AllowBlueprintServers bool
	// Pools are the valid [[inference_pools]] entries in file order, defaults filled in: how live
	// model turns share their endpoints.
	Pools []inference.Config
}

// Default returns the configuration used when none is given: no ceiling entries, no extra safe
// commands, no blueprint opt-ins, the default write budget, prompt timeout and sub-agent caps,
// the built-in script permissions, the default script limits and the default sandbox (an empty
// [sandbox] table: see SandboxCeiling).
func Default() *Config {
	return &Config{
		WritePerCall: DefaultPerCallBytes, WritePerRun: DefaultPerRunBytes, TimeoutTicks: DefaultTimeoutTicks,
		Subagents: SubagentLimits{
			MaxDepth: DefaultMaxDepth, MaxChildren: DefaultMaxChildren, MaxAgents: DefaultMaxAgents,
			Inbox: DefaultInbox, MaxFanOutItems: DefaultMaxFanOutItems,
		},
		Scripting: DefaultScripting(),
	}
}

// HostLayer is the policy layer this config contributes.
func (c *Config) HostLayer() policy.HostLayer {
	return policy.HostLayer{Global: c.ToolPermissions, PerBlueprint: c.AgentToolPermissions, AllowBlueprintPermissions: c.AllowBlueprintPermissions}
}

// Load reads and validates the host config at path. knownTools are the tools the host offers;
// permission keys must be one of them or a shell key. The tools of a [scripting] tools_dir are
// not known to Load: use LoadWithScripts to let the permission tables name them.
func Load(path string, knownTools []string) (*Config, error) {
	return LoadWithScripts(path, knownTools, nil)
}

// ScriptNames lists the names of the script tools in a folder (scripting.Discover's, for the
// host), so that a host config's permission tables may name the tools of its own tools_dir.
type ScriptNames func(dir string) ([]string, error)

// LoadWithScripts is Load for a host config whose [scripting] tools_dir offers tools: names
// lists them (a nil names is Load), and they join knownTools before the tables are checked. A
// folder that does not load is reported at tools_dir.
func LoadWithScripts(path string, knownTools []string, names ScriptNames) (*Config, error) {
	return LoadWithTools(path, knownTools, names, nil)
}

// ServerTools lists one server's tools by their host names (<server>__<tool>): discovery. The
// host's lister starts the server (or reaches it) and asks for its tools, so that the permission
// tables of the file that declares it may name them.
type ServerTools func(s *mcpconfig.Server) ([]string, error)

// LoadWithTools is LoadWithScripts that also discovers the tools of the config's [[mcp_servers]]
// with servers (nil: they are not listed, and a permission name `<declared server>__<tool>` is
// accepted on the server's name alone; see CompileWith).
func LoadWithTools(path string, knownTools []string, scripts ScriptNames, servers ServerTools) (*Config, error) {
	data, err := tomlfile.Read(path)
	if err != nil {
		return nil, err
	}
	var f File
	doc, err := tomlfile.Decode(path, data, &f)
	if doc == nil {
		return nil, err
	}
	errs, ok := onlyUnknownKeys(err)
	if !ok {
		return nil, err
	}
	if scripts != nil && f.Scripting.ToolsDir != nil && *f.Scripting.ToolsDir != "" {
		dir := (&compiler{doc: doc}).toolsDir(*f.Scripting.ToolsDir)
		found, err := scripts(dir)
		if err != nil {
			errs = append(errs, doc.Errorf("scripting.tools_dir", "script tools in %s:\n%w", dir, err))
		}
		knownTools = append(slices.Clip(knownTools), found...)
	}
	cfg, more := CompileWith(doc, "", &f, knownTools, servers)
	errs = append(errs, more...)
	if len(errs) > 0 {
		errs.Sort()
		return nil, errs
	}
	cfg.Path = path
	sum := sha256.Sum256(data)
	cfg.Hash = "sha256:" + hex.EncodeToString(sum[:])
	return cfg, nil
}

// onlyUnknownKeys splits a decode error into its problems, reporting whether they are all
// unknown keys (which leave the rest decoded and worth validating).
func onlyUnknownKeys(err error) (tomlfile.Errors, bool) {
	if err == nil {
		return nil, true
	}
	var errs tomlfile.Errors
	if !errors.As(err, &errs) {
		return nil, false
	}
	for _, e := range errs {
		if !errors.Is(e, tomlfile.ErrUnknownKey) {
			return nil, false
		}
	}
	return errs, true
}

// Compile validates a decoded File whose keys sit under prefix in doc ("" for a config file,
// "host" for a scenario's [host] table) and returns the config and every problem found. A
// relative [scripting] tools_dir is resolved against the folder of doc.File, the file the table
// was written in: the config file, or the scenario that embeds it.
func Compile(doc *tomlfile.Doc, prefix string, f *File, knownTools []string) (*Config, tomlfile.Errors) {
	return CompileWith(doc, prefix, f, knownTools, nil)
}

// CompileWith is Compile for a config whose [[mcp_servers]] offer tools. The servers are
// compiled first; then, when servers is not nil, each valid server's tools are listed with it
// and join knownTools (a server whose listing fails is reported at its entry), so the
// permission tables may name them. When servers is nil, a permission name `<server>__<tool>` is
// accepted for any server the config declares, its tool part left for the caller to check once
// the server's tools are known.
func CompileWith(doc *tomlfile.Doc, prefix string, f *File, knownTools []string, servers ServerTools) (*Config, tomlfile.Errors) {
	c := compiler{doc: doc, prefix: prefix, known: knownTools}
	cfg := Default()
	cfg.MCPServers = c.mcpServers(f.MCPServers, false)
	cfg.AllowBlueprintServers = f.MCP.AllowBlueprintServers
	c.serverTools(cfg.MCPServers, servers)
	cfg.ToolPermissions = c.permissions("tool_permissions", f.ToolPermissions)
	if len(f.AgentToolPermissions) > 0 {
		cfg.AgentToolPermissions = map[string]map[string]policy.Verdict{}
		for _, bp := range slices.Sorted(maps.Keys(f.AgentToolPermissions)) {
			cfg.AgentToolPermissions[bp] = c.permissions(tomlfile.JoinKey("agent_tool_permissions", bp), f.AgentToolPermissions[bp])
		}
	}
	if f.SafeCommands != nil {
		for i, cmd := range f.SafeCommands.Commands {
			if strings.TrimSpace(cmd) == "" {
				c.errorf(tomlfile.JoinIndex("safe_commands.commands", i), "empty entry; a safe command is a program, optionally with its subcommand (\"git status\")")
				continue
			}
			cfg.SafeCommands = append(cfg.SafeCommands, cmd)
		}
	}
	cfg.AllowBlueprintPermissions = f.Security.AllowBlueprintPermissions
	cfg.AllowBlueprintSafeCommands = f.Security.AllowBlueprintSafeCommands
	if v := f.WriteBudget.PerCall; v != nil {
		cfg.WritePerCall = c.bytes("write_budget.per_call", *v)
	}
	if v := f.WriteBudget.PerRun; v != nil {
		cfg.WritePerRun = c.bytes("write_budget.per_run", *v)
	}
	if v := f.Interaction.TimeoutTicks; v != nil {
		if *v < 1 || *v > 1_000_000_000 {
			c.errorf("interaction.timeout_ticks", "%d: a prompt timeout is 1 to 1000000000 ticks", *v)
		} else {
			cfg.TimeoutTicks = uint64(*v)
		}
	}
	cfg.Unattended = f.Interaction.Unattended
	c.subagents(&f.Subagents, &cfg.Subagents)
	cfg.ScriptPermissions = c.scriptPermissions("tool_script_permissions", f.ToolScriptPermissions)
	c.scripting(&f.Scripting, &cfg.Scripting)
	cfg.Sandbox = c.sandbox("sandbox", &f.Sandbox)
	cfg.Pools = c.pools(f.InferencePools)
	return cfg, c.errs
}

// subagentLimit is one [subagents] key: where it is, its bounds, and what it means in messages.
type subagentLimit struct {
	key     string
	min     int64
	max     int64
	meaning string
	value   *int64
	target  *int
}

// subagents fills limits from the [subagents] table, keeping the default of every key left out.
func (c *compiler) subagents(f *fileSubagents, limits *SubagentLimits) {
	for _, l := range [...]subagentLimit{
		{"max_depth", 1, 64, "the deepest any agent tree may grow", f.MaxDepth, &limits.MaxDepth},
		{"max_children", 1, 1_000_000, "live children per parent", f.MaxChildren, &limits.MaxChildren},
		{"max_agents", 1, 100_000_000, "live spawned agents in the host", f.MaxAgents, &limits.MaxAgents},
		{"inbox", 1, 100_000, "pending messages per agent inbox", f.Inbox, &limits.Inbox},
		{"max_fanout_items", 1, 10_000_000, "work items per fan_out", f.MaxFanOutItems, &limits.MaxFanOutItems},
	} {
		switch {
		case l.value == nil:
			// Absent: the default stays.
		case *l.value < l.min || *l.value > l.max:
			c.errorf("subagents."+l.key, "%w: %d; valid: %d to %d (%s)", ErrOutOfRange, *l.value, l.min, l.max, l.meaning)
		default:
			*l.target = int(*l.value)
		}
	}
}

type compiler struct {
	doc    *tomlfile.Doc
	prefix string
	known  []string
	// servers are the names of the declared MCP servers whose tools were not listed: permission
	// names under them are accepted by prefix (see CompileWith).
	servers []string
	errs    tomlfile.Errors
}

func (c *compiler) path(p string) string {
	if c.prefix == "" {
		return p
	}
	return c.prefix + "." + p
}

func (c *compiler) errorf(path, format string, args ...any) {
	c.errs = append(c.errs, c.doc.Errorf(c.path(path), format, args...))
}

func (c *compiler) bytes(path string, v int64) int64 {
	if v < 0 {
		c.errorf(path, "%d: a write budget is a number of bytes, 0 for no ceiling", v)
		return 0
	}
	return v
}

// permissions validates one permission table: values allow|ask|deny, keys known tools or shell
// keys.
func (c *compiler) permissions(path string, raw map[string]string) map[string]policy.Verdict {
	verdicts, problems := policy.ParseTable(raw, func(name string) error {
		if c.declaredServerTool(name) {
			return nil
		}
		return policy.CheckName(name, c.known)
	})
	for _, p := range problems {
		c.errorf(tomlfile.JoinKey(path, p.Name), "%w", p.Err)
	}
	return verdicts
}
