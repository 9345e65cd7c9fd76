package scenarios

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/template"

	"github.com/warrenhq/warren/hostconfig"
	"github.com/warrenhq/warren/mcp"
	"github.com/warrenhq/warren/mcp/mcpconfig"
	"github.com/warrenhq/warren/policy"
	"github.com/warrenhq/warren/scripting"
	"github.com/warrenhq/warren/subagents"
	"github.com/warrenhq/warren/tools"
)

// KnownTools lists the tools a scenario's blueprints may name on this host: the built-ins and
// the sub-agent tools.
func KnownTools() []string {
	names := make([]string, 0, 20)
	for _, t := range tools.Builtins() {
		names = append(names, t.Spec().Name)
	}
	for _, t := range subagents.Tools() {
		names = append(names, t.Spec().Name)
	}
	slices.Sort(names)
	return names
}

// NewRegistry is the registry of a host's tools: the built-ins, the sub-agent tools, the script
// tools (each made a tool by scriptTool) and the MCP tools (by mcpTool). A run and host explain
// build theirs with it, so both know the same tools with the same schemas and effects.
func NewRegistry(scripts []*scripting.Script, mcpTools []mcp.ToolInfo, scriptTool func(*scripting.Script) tools.Tool, mcpTool func(mcp.ToolInfo) tools.Tool) (*tools.Registry, error) {
	reg := tools.NewRegistry()
	if err := tools.RegisterBuiltins(reg); err != nil {
		return nil, err
	}
	if err := subagents.Register(reg); err != nil {
		return nil, err
	}
	for _, s := range scripts {
		if err := reg.Register(scriptTool(s)); err != nil {
			return nil, fmt.Errorf("script tool %s: %w", s.File, err)
		}
	}
	for _, info := range mcpTools {
		if err := reg.Register(mcpTool(info)); err != nil {
			return nil, fmt.Errorf("MCP tool %s: %w", info.Name, err)
		}
	}
	return reg, nil
}

// AutoClassifier is the scenario's scripted auto-mode classifier ([[classifier]] rules), nil when
// it has none (auto mode then fails safe to ask).
func (sc *Scenario) AutoClassifier() tools.AutoClassifier {
	if len(sc.Classifier) == 0 {
		return nil
	}
	return &classifier{rules: sc.Classifier}
}

// MergeLaunch adds launch overrides given on the command line to the scenario's [launch] table.
func (sc *Scenario) MergeLaunch(l policy.Launch) policy.Launch { return mergeLaunch(sc.Launch, l) }

// LoadHostConfig loads a host config file for this host (host run --config): the known tools,
// plus the script tools of its own [scripting] tools_dir and the tools of its own
// [[mcp_servers]] (each server is started once to list them), which its permission tables may
// name.
func LoadHostConfig(path string) (*hostconfig.Config, error) {
	return LoadHostConfigWith(path, nil)
}

// LoadHostConfigWith is LoadHostConfig that lists its MCP servers' tools with discover (nil: ask
// the servers).
func LoadHostConfigWith(path string, discover Discovery) (*hostconfig.Config, error) {
	if discover == nil {
		discover = liveDiscovery
	}
	scripts := func(dir string) ([]string, error) {
		found, err := scripting.Discover(dir)
		names := make([]string, len(found))
		for i, s := range found {
			names[i] = s.Name
		}
		return names, err
	}
	servers := func(s *mcpconfig.Server) ([]string, error) {
		found, err := discover(s)
		names := make([]string, len(found))
		for i, t := range found {
			names[i] = t.Name
		}
		return names, err
	}
	return hostconfig.LoadWithTools(path, KnownTools(), scripts, servers)
}

// GroupCounts returns each group's agent count for a run with the given Agents option.
func (sc *Scenario) GroupCounts(agents int) []int {
	counts := make([]int, len(sc.Groups))
	total := 0
	for i, g := range sc.Groups {
		counts[i] = g.Count
		total += g.Count
	}
	if agents <= 0 || agents == total {
		return counts
	}
	// Largest-remainder apportionment, every group keeping at least one agent: deterministic,
	// and the counts sum to agents whenever agents >= len(groups).
	assigned := 0
	rem := make([]int, len(counts))
	for i, c := range counts {
		counts[i] = c * agents / total
		rem[i] = c * agents % total
		if counts[i] < 1 {
			counts[i], rem[i] = 1, -1
		}
		assigned += counts[i]
	}
	for assigned < agents {
		best := -1
		for i := range rem {
			if rem[i] >= 0 && (best < 0 || rem[i] > rem[best]) {
				best = i
			}
		}
		if best < 0 {
			break
		}
		counts[best]++
		rem[best] = -1
		assigned++
	}
	// Raising small groups to one may overshoot: take the surplus back from the groups furthest
	// above their exact share (count×total − original×agents is that excess, scaled by total).
	for assigned > agents {
		best := -1
		excess := func(i int) int { return counts[i]*total - sc.Groups[i].Count*agents }
		for i := range counts {
			if counts[i] > 1 && (best < 0 || excess(i) > excess(best)) {
				best = i
			}
		}
		if best < 0 {
			break
		}
		counts[best]--
		assigned--
	}
	return counts
}

// mergeLaunch adds the command line's launch overrides to the scenario's.
func mergeLaunch(a, b policy.Launch) policy.Launch {
	return policy.Launch{
		Yolo:  a.Yolo || b.Yolo,
		Allow: append(slices.Clone(a.Allow), b.Allow...),
		Ask:   append(slices.Clone(a.Ask), b.Ask...),
		Deny:  append(slices.Clone(a.Deny), b.Deny...),
	}
}

// Namer returns how agents of g are named when the group has count agents: its agent_name
// template, or "<group>-<index>" with the index zero-padded to the width of the largest.
func (g *Group) Namer(count int) func(int) string {
	if g.agentName != nil {
		return func(i int) string {
			return expand(g.agentName, templateData{Index: i, Group: g.Name, Params: g.params, Item: g.item(i)})
		}
	}
	width := len(strconv.Itoa(max(count-1, 0)))
	prefix := g.Name + "-"
	return func(i int) string {
		s := strconv.Itoa(i)
		if pad := width - len(s); pad > 0 {
			s = strings.Repeat("0", pad) + s
		}
		return prefix + s
	}
}

// CheckNames makes sure every agent of the run gets a usable, unique name, given each group's
// agent count and namer (Group.Namer). Default names
// ("<group>-<digits>") are unique by construction, so only groups with an agent_name template are
// checked, against every name of the run.
func (sc *Scenario) CheckNames(counts []int, namers []func(int) string) error {
	custom := false
	for i := range sc.Groups {
		custom = custom || sc.Groups[i].agentName != nil
	}
	if !custom {
		return nil
	}
	seen := map[string]string{}
	for i := range sc.Groups {
		g := &sc.Groups[i]
		for index := range counts[i] {
			name := namers[i](index)
			if g.agentName != nil && !validAgentName(name) {
				return fmt.Errorf("%w: group %q: agent_name gives %q for index %d; a name is letters, digits, '.', '_' and '-', starting with a letter or digit, and never \"..\"", ErrAgentNames, g.Name, name, index)
			}
			if other, dup := seen[name]; dup {
				return fmt.Errorf("%w: %q is the name of an agent of group %q and of group %q; make agent_name give unique names (use {{.Index}})", ErrAgentNames, name, other, g.Name)
			}
			seen[name] = g.Name
		}
	}
	return nil
}

// ErrAgentNames means the run's agent names are unusable or not unique.
var ErrAgentNames = errors.New("bad agent names")

// WorkdirFunc returns where each agent of g works under the run's root: its workdir template
// expanded ("" when the expansion leaves the root: the file tools then refuse to work), or
// "<root>/<group>/<name>".
func (g *Group) WorkdirFunc(root string) func(name string, index int) string {
	if g.workdir == nil {
		groupDir := filepath.Join(root, g.Name)
		return func(name string, _ int) string { return filepath.Join(groupDir, name) }
	}
	return func(name string, index int) string {
		rel := expand(g.workdir, templateData{Name: name, Index: index, Group: g.Name, Params: g.params, Item: g.item(index)})
		if !filepath.IsLocal(rel) {
			return "" // the file tools refuse to work without a workdir
		}
		return filepath.Join(root, rel)
	}
}

// TaskFunc returns each agent's first message, its task template expanded; nil when the group
// has no task.
func (g *Group) TaskFunc() func(name string, index int) string {
	if g.task == nil {
		return nil
	}
	return func(name string, index int) string {
		return expand(g.task, templateData{Name: name, Index: index, Group: g.Name, Params: g.params, Item: g.item(index)})
	}
}

// item is agent index's item decoded, for templates (nil without one).
func (g *Group) item(index int) any {
	raw := g.Inputs.Item(index)
	if raw == nil {
		return nil
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return nil
	}
	return v
}

func expand(t *template.Template, data templateData) string {
	var b strings.Builder
	if err := t.Execute(&b, data); err != nil {
		return ""
	}
	return b.String()
}
