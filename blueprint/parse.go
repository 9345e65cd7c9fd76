package blueprint

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/expr-lang/expr/types"

	"github.com/warrenhq/warren/hostconfig"
	"github.com/warrenhq/warren/internal/tomlfile"
	"github.com/warrenhq/warren/models"
	"github.com/warrenhq/warren/policy"
)

// Sentinel errors for blueprint validation. Each reported problem wraps one
// (test with errors.Is on the error Parse, Load or Cache.Load returns), and
// the sentinel's text starts the problem's message.
var (
	// ErrMissingKey: a required key (name, a stage's name, a transition's
	// on or to, a fan_out's blueprint or items_file) is absent.
	ErrMissingKey = errors.New("missing required key")
	// ErrInvalidName: the blueprint name has characters outside
	// [a-z0-9_-], or a name (a stage's, or a blueprint key in spawnable or
	// fan_out.blueprint) is empty.
	ErrInvalidName = errors.New("invalid name")
	// ErrNoStages: the blueprint defines no stage, so an agent could do
	// nothing.
	ErrNoStages = errors.New("no stages")
	// ErrDuplicateStage: two stages share a name, which would make entry and
	// transition targets ambiguous.
	ErrDuplicateStage = errors.New("duplicate stage name")
	// ErrUnknownStage: entry or a transition's to names no stage.
	ErrUnknownStage = errors.New("unknown stage")
	// ErrUnknownTool: available_tools or a permission key names a tool the
	// host does not know.
	ErrUnknownTool = errors.New("unknown tool")
	// ErrDuplicateTool: a stage lists a tool twice in available_tools.
	ErrDuplicateTool = errors.New("duplicate tool")
	// ErrOutOfRange: an integer setting (max_messages, max_iterations, a
	// subagents or fan_out limit) is outside its limits.
	ErrOutOfRange = errors.New("out of range")
	// ErrBadPrompt: a system_prompt or a stage's prompt is not a valid template.
	ErrBadPrompt = errors.New("invalid prompt template")
	// ErrUnknownCondition: a transition's on is not done, error,
	// max_iterations or always.
	ErrUnknownCondition = errors.New("unknown transition condition")
	// ErrNotAvailable: a stage's required_tools names a tool its
	// available_tools does not offer; a stage can only keep what it has.
	ErrNotAvailable = errors.New("required tool not available")
	// ErrDuplicateBlueprint: subagents.spawnable lists a blueprint key twice.
	ErrDuplicateBlueprint = errors.New("duplicate blueprint key")
	// ErrFanOutUnavailable: a stage has a fan_out table but cannot run the
	// fan_out tool, because its available_tools leave it out or the host
	// does not offer it.
	ErrFanOutUnavailable = errors.New("fan_out tool not available")
	// ErrNotSpawnable: a fan_out stage's workers could never be spawned,
	// because subagents.spawnable leaves out their blueprint or
	// subagents.max_child_depth is 0.
	ErrNotSpawnable = errors.New("blueprint not spawnable")
	// ErrNotLocalPath: a fan_out items_file is empty, absolute or climbs out
	// of the agent's workdir with "..".
	ErrNotLocalPath = errors.New("path not local")
	// ErrUnknownFailurePolicy: a fan_out on_worker_failure is not continue
	// or fail_all.
	ErrUnknownFailurePolicy = errors.New("unknown failure policy")
	// ErrTooMany: the file is larger, or declares more of something (stages,
	// a stage's transitions or tools, permission entries...), than a
	// blueprint may (see MaxStages and the other caps), so that compiling
	// any file stays cheap.
	ErrTooMany = errors.New("too many")
	// ErrNoEnd: the stage graph has a loop an agent can reach from the entry and never leave
	// (every outcome of every stage in it has a transition into it), so the agent could only be
	// stopped by a limit. endless = true allows it.
	ErrNoEnd = errors.New("stage graph has no end")
	// ErrConflict: a transition has both to and end.
	ErrConflict = errors.New("conflicting keys")
	// ErrUnknownEnding: a transition's end is not done or failed.
	ErrUnknownEnding = errors.New("unknown ending")
)

// nameRule says what a valid blueprint name is, in messages.
const nameRule = "expected one or more of a-z, 0-9, '_' and '-'"

// The file's shape, decoded strictly by tomlfile. Integers are pointers so
// that an absent key (take the default) differs from an explicit 0 (an
// error).
type fileBlueprint struct {
	Name            string            `toml:"name"`
	Description     string            `toml:"description"`
	Entry           string            `toml:"entry"`
	MaxMessages     *int              `toml:"max_messages"`
	SystemPrompt    *string           `toml:"system_prompt"`
	SafeCommands    []string          `toml:"safe_commands"`
	ToolPermissions map[string]string `toml:"tool_permissions"`
	Subagents       fileSubagents     `toml:"subagents"`
	Stages          []fileStage       `toml:"stages"`
	// DynamicTools and ToolScriptPermissions concern the blueprint's script tools.
	DynamicTools          bool              `toml:"dynamic_tools"`
	ToolScriptPermissions map[string]string `toml:"tool_script_permissions"`
	// Endless lets the stage graph have a loop with no way out (see checkEnds).
	Endless bool `toml:"endless"`
	// Sandbox has the host's [sandbox] keys, each of which may only tighten.
	Sandbox hostconfig.SandboxTable `toml:"sandbox"`
	// MCPServers has the host's [[mcp_servers]] keys (see mcp.go).
	MCPServers []hostconfig.MCPServerTable `toml:"mcp_servers"`
	// ResultSchemas are the JSON Schemas of tools' results, by tool (see results.go).
	ResultSchemas map[string]map[string]any `toml:"result_schemas"`
}

// fileStage is one [[stages]] table as written.
type fileStage struct {
	Name            string            `toml:"name"`
	Prompt          *string           `toml:"prompt"`
	AvailableTools  []string          `toml:"available_tools"`
	RequiredTools   []string          `toml:"required_tools"`
	MaxIterations   *int              `toml:"max_iterations"`
	ToolPermissions map[string]string `toml:"tool_permissions"`
	AcceptsMessages *bool             `toml:"accepts_messages"`
	FanOut          *fileFanOut       `toml:"fan_out"`
	Transitions     []fileTransition  `toml:"transitions"`
	// Sandbox tightens the blueprint's [sandbox] while an agent is in this stage.
	Sandbox hostconfig.SandboxTable `toml:"sandbox"`
	// Connectors grant the stage every tool of the named MCP servers (see mcp.go).
	Connectors []string `toml:"connectors"`
}

// fileTransition is one [[stages.transitions]] table as written.
type fileTransition struct {
	On string `toml:"on"`
	To string `toml:"to"`
	// End ends the agent ("done" or "failed") instead of moving it to a stage To names.
	End string `toml:"end"`
	// When is a condition (see condition.go); Set writes memory keys from expressions.
	When *string           `toml:"when"`
	Set  map[string]string `toml:"set"`
}

// toolSet is the host's known tools, built once per Cache.
type toolSet struct {
	names map[string]struct{}
	// sorted holds the names in order, for finding a server's tools by prefix.
	sorted []string
	// valid is the sorted list for "valid tools" messages.
	valid string
	// servers lists the MCP servers the known tools come from, for "valid servers" messages.
	servers string
}

func newToolSet(known []string) *toolSet {
	names := make(map[string]struct{}, len(known))
	for _, t := range known {
		names[t] = struct{}{}
	}
	sorted := slices.Sorted(maps.Keys(names))
	return &toolSet{names: names, sorted: sorted, valid: listOrNone(sorted), servers: listOrNone(serversOf(sorted))}
}

// maxListed is how many names a "valid ...:" message lists: a message about one of 20,000
// stages must not carry all their names, or reporting one mistake per stage would cost the
// square of their number.
const maxListed = 40

// listOrNone joins names for a "valid ...:" message, the first maxListed of them.
func listOrNone(names []string) string {
	switch {
	case len(names) == 0:
		return "none"
	case len(names) > maxListed:
		return strings.Join(names[:maxListed], ", ") + fmt.Sprintf(", … (%d more)", len(names)-maxListed)
	}
	return strings.Join(names, ", ")
}

// has reports whether the host knows tool.
func (ts *toolSet) has(tool string) bool {
	_, ok := ts.names[tool]
	return ok
}

// Parse compiles the blueprint in data, read from file (used in messages
// and as Blueprint.Path). knownTools are the tool names the host offers;
// available_tools and permission keys must come from them. On failure it
// returns every problem found as tomlfile.Errors sorted by line.
func Parse(file string, data []byte, knownTools []string) (*Blueprint, error) {
	return parse(file, data, newToolSet(knownTools))
}

// Load reads and compiles the blueprint file at path; see Parse. A missing
// file is an error naming it that wraps fs.ErrNotExist. Agents should share
// blueprints through a Cache rather than call Load for each spawn.
func Load(path string, knownTools []string) (*Blueprint, error) {
	return load(path, newToolSet(knownTools))
}

// load is Load with a prepared tool set, shared with Cache.
func load(path string, tools *toolSet) (*Blueprint, error) {
	data, err := tomlfile.Read(path)
	if err != nil {
		return nil, err
	}
	return parse(path, data, tools)
}

// parse is Parse with a prepared tool set, shared with Load and Cache.
func parse(file string, data []byte, tools *toolSet) (*Blueprint, error) {
	if err := checkSize(file, data); err != nil {
		return nil, err
	}
	var raw fileBlueprint
	doc, err := tomlfile.Decode(file, data, &raw)
	c := compiler{doc: doc, tools: tools}
	if err != nil {
		// Unknown keys leave the rest decoded, so validation can still run
		// and everything is reported together; other decode errors cannot
		// be validated past.
		if doc == nil || !errors.As(err, &c.errs) || !onlyUnknownKeys(c.errs) {
			return nil, err
		}
	}
	bp := c.compile(&raw)
	if len(c.errs) > 0 {
		c.errs.Sort()
		return nil, c.errs
	}
	sum := sha256.Sum256(data)
	bp.SpawnRefs = c.refs
	bp.sandboxAt = c.sandboxAt
	bp.Path = file
	bp.Hash = hex.EncodeToString(sum[:])
	return bp, nil
}

// checkSize refuses a file over MaxFileBytes before it is decoded, since decoding is what a
// file's size costs.
func checkSize(file string, data []byte) error {
	if len(data) <= MaxFileBytes {
		return nil
	}
	return tomlfile.Errors{{File: file, Line: 1, Column: 1,
		Msg: fmt.Sprintf("%v: the file is %d bytes; a blueprint is at most %d bytes (%d MiB)", ErrTooMany, len(data), MaxFileBytes, MaxFileBytes>>20),
		Err: ErrTooMany}}
}

// onlyUnknownKeys reports whether every decode problem is an unknown key,
// the one kind that leaves the rest of the file decoded.
func onlyUnknownKeys(errs tomlfile.Errors) bool {
	for _, e := range errs {
		if !errors.Is(e, tomlfile.ErrUnknownKey) {
			return false
		}
	}
	return true
}

// compiler validates a decoded file, collecting every problem.
type compiler struct {
	doc   *tomlfile.Doc
	tools *toolSet
	errs  tomlfile.Errors
	// pending are the transitions with a when or a set, compiled once every stage is (see
	// conditions).
	pending []pendingCondition
	// offeredTools lists every stage's tools, sorted, for messages about tools.<name>.
	offeredTools string
	// stageIndex maps each stage name to its first index.
	stageIndex map[string]int
	// validStages lists the stage names, sorted, for messages.
	validStages string
	// sub is the blueprint's compiled [subagents], which fan_out stages
	// are checked against.
	sub *Subagents
	// refs collects the blueprint keys named, in the order checked.
	refs []SpawnRef
	// sandboxAt positions the sandbox settings written (see
	// Blueprint.sandboxAt).
	sandboxAt map[string]tomlfile.Error
	// results are the blueprint's compiled [result_schemas]; typedEnv is ConditionEnv's type
	// with them (conditionTypes), built by the first expression that needs it.
	results  map[string]*resultSchema
	typedEnv types.Map
	// badGraph is set when a stage name, a transition or the entry has a
	// problem: the stage graph is then incomplete, and checking whether it
	// ends would only report false problems.
	badGraph bool
}

// errorf records a problem positioned at path.
func (c *compiler) errorf(path, format string, args ...any) {
	c.errs = append(c.errs, c.doc.Errorf(path, format, args...))
}

// present reports whether the file spells out path, telling a missing key
// from one given an empty value.
func (c *compiler) present(path string) bool {
	_, _, ok := c.doc.Pos(path)
	return ok
}

// compile checks the top-level keys and every stage, returning the
// blueprint as far as it could be built; it is only used when c.errs is
// empty afterwards.
func (c *compiler) compile(raw *fileBlueprint) *Blueprint {
	bp := &Blueprint{
		Name:            raw.Name,
		Description:     raw.Description,
		MaxMessages:     DefaultMaxMessages,
		ToolPermissions: c.permissions("tool_permissions", raw.ToolPermissions),
		MCPServers:      c.mcpServers(raw.MCPServers),
		SafeCommands:    c.safeCommands(raw.SafeCommands),
		Subagents:       c.subagents(&raw.Subagents),
		DynamicTools:    raw.DynamicTools,
		Endless:         raw.Endless,
	}
	bp.ScriptPermissions, bp.scriptAt = c.scriptPermissions("tool_script_permissions", raw.ToolScriptPermissions)
	bp.Sandbox = c.sandbox("sandbox", &raw.Sandbox)
	c.sub = &bp.Subagents
	switch {
	case raw.Name == "" && !c.present("name"):
		c.errorf("name", "%w; %s", ErrMissingKey, nameRule)
	case !validName(raw.Name):
		c.errorf("name", "%w %q; %s", ErrInvalidName, raw.Name, nameRule)
	}
	bp.SystemPrompt = c.prompt("system_prompt", raw.SystemPrompt)
	if raw.MaxMessages != nil {
		if *raw.MaxMessages < MinMaxMessages {
			c.errorf("max_messages", "%w: %d; valid: %d or more", ErrOutOfRange, *raw.MaxMessages, MinMaxMessages)
		}
		bp.MaxMessages = *raw.MaxMessages
	}
	if len(raw.Stages) == 0 {
		c.errorf("stages", "%w; define at least one [[stages]] table", ErrNoStages)
		return bp
	}
	if !c.within("stages", len(raw.Stages), MaxStages, "stages", "a blueprint") {
		return bp
	}
	c.indexStages(raw.Stages)
	bp.Stages = make([]Stage, len(raw.Stages))
	for i := range raw.Stages {
		c.stage(i, &raw.Stages[i], &bp.Stages[i])
	}
	if raw.Entry != "" || c.present("entry") {
		if entry, ok := c.stageIndex[raw.Entry]; ok {
			bp.Entry = entry
		} else {
			c.errorf("entry", "%w %q; valid stages: %s", ErrUnknownStage, raw.Entry, c.validStages)
			c.badGraph = true
		}
	}
	bp.resultSchemas = c.resultSchemas(raw.ResultSchemas, offeredTools(bp))
	c.conditions(bp)
	if !c.badGraph {
		c.checkFallbacks(bp)
		c.checkEnds(bp)
	}
	return bp
}

// within reports whether a list at path has at most limit elements, and otherwise reports it at
// its first element past the limit (or at the key, for a table): what, counted, is over the cap
// of whose.
func (c *compiler) within(path string, n, limit int, what, whose string) bool {
	if n <= limit {
		return true
	}
	at := path
	if _, _, ok := c.doc.Pos(tomlfile.JoinIndex(path, limit)); ok {
		at = tomlfile.JoinIndex(path, limit)
	}
	c.errorf(at, "%w %s: %d; %s has at most %d %s", ErrTooMany, what, n, whose, limit, what)
	return false
}

// validName reports whether name is one or more of [a-z0-9_-].
func validName(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// indexStages checks stage names and records where each is first defined,
// before transitions (which may point forward) are resolved.
func (c *compiler) indexStages(stages []fileStage) {
	c.stageIndex = make(map[string]int, len(stages))
	for i := range stages {
		name := stages[i].Name
		path := tomlfile.JoinIndex("stages", i) + ".name"
		if name == "" {
			if c.present(path) {
				c.errorf(path, "%w %q; a stage name cannot be empty", ErrInvalidName, name)
			} else {
				c.errorf(path, "%w; every stage needs a unique name", ErrMissingKey)
			}
			c.badGraph = true
			continue
		}
		if first, dup := c.stageIndex[name]; dup {
			line, _, _ := c.doc.Pos(tomlfile.JoinIndex("stages", first) + ".name")
			c.errorf(path, "%w %q; first defined at line %d", ErrDuplicateStage, name, line)
			c.badGraph = true
			continue
		}
		c.stageIndex[name] = i
	}
	c.validStages = listOrNone(slices.Sorted(maps.Keys(c.stageIndex)))
}

// stage compiles stage i into st.
func (c *compiler) stage(i int, raw *fileStage, st *Stage) {
	path := tomlfile.JoinIndex("stages", i)
	st.Name = raw.Name
	st.Index = i
	st.MaxIterations = c.intIn(path+".max_iterations", raw.MaxIterations, 1, MaxIterationsCeiling, DefaultMaxIterations)
	st.AcceptsMessages = raw.AcceptsMessages == nil || *raw.AcceptsMessages
	st.Prompt = c.prompt(path+".prompt", raw.Prompt)
	const whose = "a stage"
	if c.within(path+".available_tools", len(raw.AvailableTools), MaxStageTools, "tools", whose) {
		c.availableTools(path+".available_tools", raw.AvailableTools, st)
	}
	if c.within(path+".connectors", len(raw.Connectors), MaxConnectors, "connectors", whose) {
		c.connectors(path+".connectors", raw.Connectors, st)
	}
	if c.within(path+".required_tools", len(raw.RequiredTools), MaxStageTools, "tools", whose) {
		c.requiredTools(path+".required_tools", raw.RequiredTools, st)
	}
	if raw.FanOut != nil {
		st.FanOut = c.fanOut(path+".fan_out", raw.FanOut, st)
	}
	st.ToolPermissions = c.permissions(path+".tool_permissions", raw.ToolPermissions)
	st.Sandbox = c.sandbox(path+".sandbox", &raw.Sandbox)
	if !c.within(path+".transitions", len(raw.Transitions), MaxTransitions, "transitions", whose) {
		c.badGraph = true
		return
	}
	if len(raw.Transitions) > 0 {
		st.Transitions = make([]Transition, 0, len(raw.Transitions))
	}
	for k := range raw.Transitions {
		at := tomlfile.JoinIndex(path+".transitions", k)
		if t, ok := c.transition(at, &raw.Transitions[k]); ok {
			if raw.Transitions[k].When != nil || len(raw.Transitions[k].Set) > 0 {
				c.pending = append(c.pending, pendingCondition{stage: i, transition: len(st.Transitions), path: at, raw: &raw.Transitions[k]})
			}
			st.Transitions = append(st.Transitions, t)
		} else {
			c.badGraph = true
		}
	}
}

// availableTools checks a stage's tools and fills its sorted list and set.
func (c *compiler) availableTools(path string, tools []string, st *Stage) {
	st.AvailableTools = make([]string, 0, len(tools))
	st.advertised = make(map[string]struct{}, len(tools))
	for j, tool := range tools {
		elem := tomlfile.JoinIndex(path, j)
		if !c.tools.has(tool) {
			c.errorf(elem, "%w %q; valid tools: %s", ErrUnknownTool, tool, c.tools.valid)
			continue
		}
		if _, dup := st.advertised[tool]; dup {
			c.errorf(elem, "%w %q; list each tool once", ErrDuplicateTool, tool)
			continue
		}
		st.advertised[tool] = struct{}{}
		st.AvailableTools = append(st.AvailableTools, tool)
	}
	slices.Sort(st.AvailableTools)
}

// requiredTools checks that every required tool is one the stage offers.
func (c *compiler) requiredTools(path string, tools []string, st *Stage) {
	for j, tool := range tools {
		if !st.Advertises(tool) {
			c.errorf(tomlfile.JoinIndex(path, j), "%w: %q is not in this stage's available_tools (%s)", ErrNotAvailable, tool, listOrNone(st.AvailableTools))
			continue
		}
		st.RequiredTools = append(st.RequiredTools, tool)
	}
	slices.Sort(st.RequiredTools)
	st.RequiredTools = slices.Compact(st.RequiredTools)
}

// safeCommands keeps the blueprint's safe command entries; they only count
// when the host opts in, and the host checks their form when it builds its
// safe keys.
func (c *compiler) safeCommands(entries []string) []string {
	if !c.within("safe_commands", len(entries), MaxListEntries, "entries", "safe_commands") {
		return nil
	}
	for i, e := range entries {
		if strings.TrimSpace(e) == "" {
			c.errorf(tomlfile.JoinIndex("safe_commands", i), "empty entry; a safe command is a program, optionally with its subcommand (\"git status\")")
		}
	}
	return slices.Clone(entries)
}

// permissions validates a tool_permissions table: values allow|ask|deny, keys tools the host
// knows or shell keys.
func (c *compiler) permissions(path string, raw map[string]string) map[string]policy.Verdict {
	if !c.within(path, len(raw), MaxListEntries, "entries", "a tool_permissions table") {
		return nil
	}
	verdicts, problems := policy.ParseTable(raw, func(name string) error {
		switch {
		case c.tools.has(name):
			return nil
		case policy.IsShellKey(name):
			return policy.CheckName(name, nil)
		}
		return fmt.Errorf("%w %q; valid tools: %s (or a shell key such as \"shell:rm\")", ErrUnknownTool, name, c.tools.valid)
	})
	for _, p := range problems {
		c.errorf(tomlfile.JoinKey(path, p.Name), "%w", p.Err)
	}
	return verdicts
}

// scriptPermissions validates the [tool_script_permissions] table (keys host functions, values
// allow | deny | inherit) and records where each valid entry is written, so that the check
// against the host, which needs both files, can point at it.
func (c *compiler) scriptPermissions(path string, raw map[string]string) (map[string]policy.ScriptVerdict, map[string]tomlfile.Error) {
	verdicts, problems := policy.ParseScriptTable(raw)
	for _, p := range problems {
		c.errorf(tomlfile.JoinKey(path, p.Name), "%w", p.Err)
	}
	if len(verdicts) == 0 {
		return verdicts, nil
	}
	at := make(map[string]tomlfile.Error, len(verdicts))
	for fn := range verdicts {
		key := tomlfile.JoinKey(path, fn)
		line, col, _ := c.doc.Pos(key)
		at[fn] = tomlfile.Error{File: c.doc.File, Line: line, Column: col, Key: key}
	}
	return verdicts, at
}

// transition resolves one transition's on, to and end; ok is false when it has a problem. Its
// when and set are compiled once every stage is known (conditions), since they may name any
// stage's tools.
func (c *compiler) transition(path string, raw *fileTransition) (Transition, bool) {
	on, onOK := parseOn(raw.On)
	if !onOK {
		if raw.On == "" && !c.present(path+".on") {
			c.errorf(path+".on", "%w; valid: %s", ErrMissingKey, validOn)
		} else {
			c.errorf(path+".on", "%w %q; valid: %s", ErrUnknownCondition, raw.On, validOn)
		}
	}
	hasTo, hasEnd := raw.To != "" || c.present(path+".to"), raw.End != "" || c.present(path+".end")
	switch {
	case hasTo && hasEnd:
		c.errorf(path+".end", "%w: a transition either moves the agent (to) or ends it (end), not both; remove one", ErrConflict)
		return Transition{}, false
	case hasEnd:
		end := map[string]Ending{"done": EndDone, "failed": EndFailed}[raw.End]
		if end == EndNone {
			c.errorf(path+".end", "%w %q; valid: done, failed", ErrUnknownEnding, raw.End)
		}
		return Transition{On: on, To: -1, End: end}, onOK && end != EndNone
	}
	to, toOK := c.stageIndex[raw.To]
	if !toOK {
		if !hasTo {
			c.errorf(path+".to", "%w; valid stages: %s (or end = \"done\" or \"failed\" to end the agent)", ErrMissingKey, c.validStages)
		} else {
			c.errorf(path+".to", "%w %q; valid stages: %s", ErrUnknownStage, raw.To, c.validStages)
		}
	}
	return Transition{On: on, To: to, ToName: raw.To}, onOK && toOK
}

// prompt compiles a templated prompt at path (nil when absent).
func (c *compiler) prompt(path string, raw *string) *models.Prompt {
	if raw == nil {
		return nil
	}
	p, err := models.CompilePrompt(*raw)
	if err != nil {
		c.errorf(path, "%w: %v; a prompt is text with optional {{.Name}}, {{.Group}}, {{.Index}}, {{.Stage}}, {{.Visit}}, {{.Iteration}}, {{.Turn}}, {{.Task}} or {{.Memory.<key>}}", ErrBadPrompt, err)
		return nil
	}
	return p
}
