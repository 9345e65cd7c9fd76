package scenarios

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"text/template"
	"time"

	"github.com/pelletier/go-toml/v2"

	"github.com/warrenhq/warren/blueprint"
	"github.com/warrenhq/warren/components"
	"github.com/warrenhq/warren/ecs"
	"github.com/warrenhq/warren/faults"
	"github.com/warrenhq/warren/hostconfig"
	"github.com/warrenhq/warren/internal/netguard"
	"github.com/warrenhq/warren/internal/tomlfile"
	"github.com/warrenhq/warren/mcp"
	"github.com/warrenhq/warren/mcp/mcpconfig"
	"github.com/warrenhq/warren/memory"
	"github.com/warrenhq/warren/models"
	"github.com/warrenhq/warren/policy"
	"github.com/warrenhq/warren/resources"
	"github.com/warrenhq/warren/scripting"
	"github.com/warrenhq/warren/tools"
)

// Scenario is a loaded, validated and compiled scenario file: blueprints loaded (each once),
// models compiled, templates parsed. Running it does not read the file again.
type Scenario struct {
	// Path is the scenario file as given; Dir is where relative paths in it are resolved.
	Path, Dir         string
	Name, Description string
	Seed              uint64
	// Params are the scenario's parameters ([params]), by name: strings, int64s, float64s and
	// booleans; nil when it has none.
	Params map[string]any
	// MaxTicks bounds the run: it stops after this many ticks if it has not reached a fixed
	// point ([limits] max_ticks; DefaultMaxTicks when the file leaves it out, never 0, so that
	// every run ends).
	MaxTicks uint64
	// MaxTurnsPerAgent bounds each agent's model turns over its whole life ([limits]
	// max_turns_per_agent; resources.DefaultMaxModelTurns when left out): an agent about to
	// be asked for one more ends failed, with a reason naming the limit.
	MaxTurnsPerAgent uint32
	// Budgets bound what live model turns may spend ([limits] max_tokens_per_agent,
	// max_tokens_per_run, max_cost_usd; zero fields: no limit).
	Budgets Budgets
	// Faults is the [faults] table (nil: no faults are injected).
	Faults  *faults.Spec
	Clock   ecs.ClockConfig
	Latency resources.Latency
	Lanes   LaneSizes
	// Blueprints by the key the scenario gives them.
	Blueprints map[string]*blueprint.Blueprint
	Groups     []Group
	// Spawn holds what sub-agents may be spawned from, by blueprint key ([spawn.<key>]).
	Spawn     map[string]*Spawnable
	Expect    []Expectation
	ExpectRun *RunExpectation
	// Host is the scenario's host config ([host]), or the defaults; `host run --config`
	// replaces it.
	Host *hostconfig.Config
	// Launch holds the [launch] overrides; `host run` flags add to them.
	Launch     policy.Launch
	Unattended bool
	// Interactions answer prompts; Classifier rules are the scripted auto-mode classifier.
	Interactions []Interaction
	Classifier   []ClassifierRule
	// Scripts are the script tools the scenario offers, by name: every blueprint's tools/ folder
	// and the host's tools_dir, compiled once and shared by every agent of a run.
	Scripts []*scripting.Script
	// MCPServers are the MCP servers the scenario may use, sorted by name (the host config's,
	// and the blueprints' when the host allows them), and MCPTools their tools as the host
	// advertises them, listed once at load; serverOf maps a tool's name to its server's.
	MCPServers []mcpconfig.Server
	MCPTools   []mcp.ToolInfo
	serverOf   map[string]string
	// Hash identifies the scenario's content: the scenario file, every blueprint it uses and
	// every script tool.
	Hash string
}

// LaneSizes bounds the model and tool lanes.
type LaneSizes struct {
	ModelCapacity, ToolCapacity, ToolWorkers int
}

// Group is one agent group of a scenario.
type Group struct {
	Name         string
	BlueprintKey string
	Blueprint    *blueprint.Blueprint
	ModelKey     string
	Model        models.Model
	// StageModels are the stages of the blueprint that have a model of their own
	// (stage_models), in stage order.
	StageModels []StageModel
	Count       int
	// SafetyMode and PlanFile put the group in read-only, plan or auto mode.
	SafetyMode tools.SafetyMode
	PlanFile   string
	// Watches are the scenario's result expectations its agents may meet, for their profile
	// (components.Profile.Watches): nil unless an [[expect.results]] is about the group or an
	// agent.
	Watches   []components.ResultWatch
	agentName *template.Template
	workdir   *template.Template
	task      *template.Template
	// params are the scenario's, for the templates.
	params map[string]any
	// Inputs are the group's corpus and items ([groups.inputs]; nil: none).
	Inputs *GroupInputs
}

// Spawnable is a blueprint agents may spawn as sub-agents, with the model its agents run.
// Agents spawned from it form the group named by its key.
type Spawnable struct {
	Key       string
	Blueprint *blueprint.Blueprint
	ModelKey  string
	Model     models.Model
	// StageModels are the stages with a model of their own, as for a Group.
	StageModels []StageModel
	// Watches are the result expectations its agents may meet, as for a Group.
	Watches []components.ResultWatch
}

// StageModel is a stage of a group's blueprint that has a model of its own (stage_models): a
// cheap model to plan, another to review.
type StageModel struct {
	// Stage is the stage's name and Index its position in the blueprint.
	Stage string
	Index int
	// ModelKey is the [models] key and Model the compiled model.
	ModelKey string
	Model    models.Model
}

// stageModels compiles a stage_models table (stage name = model key) at path for blueprint bp
// (nil when it did not load: the table is not checked against it), in stage order.
func (c *compiler) stageModels(path string, table map[string]string, bp *blueprint.Blueprint) []StageModel {
	var out []StageModel
	for _, stage := range sortedKeys(table) {
		key := table[stage]
		at := tomlfile.JoinKey(path, stage)
		m, ok := c.models[key]
		if !ok {
			if _, failed := c.file.Models[key]; !failed {
				c.errorf(at, "unknown model %q; defined in [models]: %s", key, listOrNone(sortedKeys(c.file.Models)))
			}
			continue
		}
		if bp == nil {
			continue
		}
		index := -1
		for i := range bp.Stages {
			if bp.Stages[i].Name == stage {
				index = i
			}
		}
		var names []string
		for i := range bp.Stages {
			if bp.Stages[i].FanOut == nil {
				names = append(names, bp.Stages[i].Name)
			}
		}
		switch {
		case index < 0:
			c.errorf(at, "unknown stage %q: blueprint %q has no such stage; the stages whose model is asked: %s", stage, bp.Name, named(names))
			continue
		case bp.Stages[index].FanOut != nil:
			c.errorf(at, "stage %q of blueprint %q is a fan-out stage: its model is never asked; the stages whose model is asked: %s", stage, bp.Name, named(names))
			continue
		}
		out = append(out, StageModel{Stage: stage, Index: index, ModelKey: key, Model: m})
	}
	if distinct := len(slices.Compact(slices.Sorted(maps.Values(table)))); distinct > maxStageModels {
		c.errorf(path, "%d models: a group's stages may have at most %d models of their own", distinct, maxStageModels)
	}
	slices.SortFunc(out, func(a, b StageModel) int { return a.Index - b.Index })
	return out
}

// maxStageModels bounds the distinct models of one group's stage_models: an agent keeps its
// state in each in a slot numbered by a byte.
const maxStageModels = 255

// templateData is what group templates (agent_name, workdir, task) may use.
type templateData struct {
	Name  string
	Index int
	Group string
	// Params are the scenario's parameters ({{.Params.peers}}).
	Params map[string]any
	// Item is the agent's item from its group's items file, decoded ({{.Item.title}}); nil
	// without one.
	Item any
}

var namePattern = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]*$`)

// Load reads, validates and compiles the scenario at path. knownTools lists the tool names the
// host offers (blueprints may only name those). Every problem found is reported at once, each
// with file, line, key and what would be valid.
func Load(path string, knownTools []string) (*Scenario, error) {
	return LoadUnder(path, knownTools, nil)
}

// LoadUnder is Load with a host config that replaces the scenario's [host] table (host run
// --config): the scenario is compiled under it, so the script tools of its [scripting] tools_dir
// are discovered and every blueprint is checked against its ceilings. A nil host is Load.
func LoadUnder(path string, knownTools []string, host *hostconfig.Config) (*Scenario, error) {
	return LoadWith(path, knownTools, host, nil)
}

// LoadWith is LoadUnder that lists the MCP servers' tools with discover (nil: start each server
// and ask it, bounded by DiscoveryTimeout). A replay passes the tools its recording listed, so
// the scenario loads the same without any server running.
func LoadWith(path string, knownTools []string, host *hostconfig.Config, discover Discovery) (*Scenario, error) {
	return LoadParams(path, knownTools, host, discover, nil)
}

// Param gives one value of the scenario another value for a run (a sweep's --param): a
// parameter of [params] by its bare name ("peers"), or any string, number or boolean the file
// sets, by its key path ("limits.max_ticks", "models.writer.turns[0].text"), where a group is
// named by its name ("groups.voters.count") or its index ("groups[0].count").
type Param struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// ErrParam marks a parameter that names no value of the scenario, or gives it a value of another
// kind.
var ErrParam = errors.New("invalid parameter")

// LoadParams is LoadWith for the scenario with params applied: each replaces the value of its key
// in the file's text, in the value's own kind, so that every error still names the file's own
// lines, and the scenario's hash (and every trace's header) covers the values given.
func LoadParams(path string, knownTools []string, host *hostconfig.Config, discover Discovery, params []Param) (*Scenario, error) {
	return LoadWithOptions(path, LoadOptions{KnownTools: knownTools, Host: host, Discover: discover, Params: params})
}

// LoadOptions are LoadParams's arguments, with the two a host serving other people's scenarios
// needs besides (host serve): Confine and Keys.
type LoadOptions struct {
	// KnownTools, Host, Discover and Params are LoadParams's arguments.
	KnownTools []string
	Host       *hostconfig.Config
	Discover   Discovery
	Params     []Param
	// Confine, when set, is asked about every file and folder the scenario (or a blueprint it
	// names) makes the host read or run, before the load opens it: its blueprints and their
	// tools/ folders, [host.scripting] tools_dir, the files of its models (a js policy, a
	// response schema), its groups' corpora and items, and the programs of the MCP servers its
	// [host] table and blueprints declare (a bare name as PATH finds it). The path is absolute
	// when the scenario's was. An error refuses the path, reported at the key that names it;
	// nothing refused is opened. The files of a Host given here are not asked about: they are
	// the caller's own.
	Confine func(path string) error
	// Keys, when set, is where the live models' keys (api_key_env) are looked up instead of the
	// process environment: a variable it does not give leaves the model without a key.
	Keys func(name string) (string, bool)
	// PrivateHosts, when set, makes the live models reach only public addresses, checked as each
	// connection is made, except the hosts ("name" or "name:port") it reports true for (host
	// serve's [outbound] private).
	PrivateHosts func(host string) bool
}

// servedClient is the live models' client under LoadOptions.PrivateHosts (nil: none asked for).
func servedClient(private func(host string) bool) *http.Client {
	if private == nil {
		return nil
	}
	return netguard.ServedClient(private)
}

// LoadWithOptions is LoadParams with its options in one value (LoadOptions).
func LoadWithOptions(path string, o LoadOptions) (*Scenario, error) {
	knownTools, host, discover, params := o.KnownTools, o.Host, o.Discover, o.Params
	data, err := tomlfile.Read(path)
	if err != nil {
		return nil, err
	}
	for _, p := range params {
		key, err := paramPath(path, data, p.Name)
		if err != nil {
			return nil, err
		}
		if data, err = tomlfile.Override(path, data, key, p.Value); err != nil {
			return nil, fmt.Errorf("%w %s: %w", ErrParam, p.Name, err)
		}
	}
	var f fileScenario
	doc, err := tomlfile.Decode(path, data, &f)
	if doc == nil {
		return nil, err
	}
	var errs tomlfile.Errors
	if err != nil {
		decodeErrs, ok := err.(tomlfile.Errors)
		if !ok {
			return nil, err
		}
		for _, e := range decodeErrs {
			if !errors.Is(e, tomlfile.ErrUnknownKey) {
				// A value of the wrong type leaves the rest half-decoded: checking it would
				// only add false problems. Report the decode errors alone.
				return nil, decodeErrs
			}
		}
		errs = append(errs, decodeErrs...)
	}
	if discover == nil {
		discover = liveDiscovery
		if o.PrivateHosts != nil {
			discover = publicDiscovery(o.PrivateHosts)
		}
	}
	c := compiler{doc: doc, file: &f, known: knownTools, hostOverride: host, discover: discover, confine: o.Confine, keys: o.Keys, httpClient: servedClient(o.PrivateHosts), sc: &Scenario{
		Path: path, Dir: filepath.Dir(path), Name: f.Name, Description: f.Description,
		Blueprints: map[string]*blueprint.Blueprint{},
	}}
	c.errs = errs
	c.compile(data)
	if len(c.errs) > 0 {
		c.errs.Sort()
		return nil, c.errs
	}
	return c.sc, nil
}

// paramPath turns a parameter's name into the key path it gives a value: a bare name is a
// [params] entry, and groups.<name> is the group of that name.
func paramPath(file string, data []byte, name string) (string, error) {
	var doc struct {
		Params map[string]any `toml:"params"`
		Groups []struct {
			Name string `toml:"name"`
		} `toml:"groups"`
	}
	_ = toml.Unmarshal(data, &doc) // a broken file is reported by its load
	if !strings.ContainsAny(name, ".[") {
		if _, ok := doc.Params[name]; !ok {
			return "", fmt.Errorf("%w %s: %s declares no such parameter in [params] (declared: %s); to give another value to a key of the file, name it by its path (limits.max_ticks, groups.<name>.count)",
				ErrParam, name, file, listOrNone(sortedKeys(doc.Params)))
		}
		return tomlfile.JoinKey("params", name), nil
	}
	rest, ok := strings.CutPrefix(name, "groups.")
	if !ok {
		return name, nil
	}
	group, key, _ := strings.Cut(rest, ".")
	var names []string
	for i, g := range doc.Groups {
		if g.Name == group {
			return tomlfile.JoinIndex("groups", i) + "." + key, nil
		}
		names = append(names, g.Name)
	}
	return "", fmt.Errorf("%w %s: %s has no group %q (groups: %s)", ErrParam, name, file, group, listOrNone(names))
}

type compiler struct {
	// hash receives the content of every file the scenario uses besides its own (Scenario.Hash).
	hash   io.Writer
	doc    *tomlfile.Doc
	file   *fileScenario
	known  []string
	sc     *Scenario
	errs   tomlfile.Errors
	models map[string]models.Model
	// hostOverride replaces the [host] table (LoadUnder); nil compiles the table.
	hostOverride *hostconfig.Config
	// discover lists an MCP server's tools.
	discover Discovery
	// confine and keys are LoadOptions.Confine and Keys; refused holds the result of confine
	// for each key it was asked about (see resolveAt).
	confine func(path string) error
	keys    func(name string) (string, bool)
	// httpClient carries the live models' requests (LoadOptions.PrivateHosts; nil: the default).
	httpClient *http.Client
	refused    map[string]bool
	// watches numbers the result expectations (components.ResultWatch.ID).
	watches int32
}

func (c *compiler) errorf(path, format string, args ...any) {
	c.errs = append(c.errs, c.doc.Errorf(path, format, args...))
}

func (c *compiler) compile(data []byte) {
	f := c.file
	if f.Name == "" {
		c.errorf("name", "missing: every scenario needs a name")
	} else if !namePattern.MatchString(f.Name) {
		c.errorf("name", "%q: use lower-case letters, digits, '-' and '_'", f.Name)
	}
	if f.Seed < 0 {
		c.errorf("seed", "%d: the seed must be zero or positive", f.Seed)
	}
	c.sc.Seed = uint64(f.Seed)
	c.params()
	c.limits()
	c.clock()
	c.lanes()
	hash := sha256.New()
	hash.Write(data)
	c.hash = hash
	c.scripts(hash)
	if !c.servers(hash) {
		// Without a server's tools, every blueprint and permission naming them would fail too:
		// report the server alone, the cause to fix first.
		return
	}
	c.host() // before the models: a js model's memory budget is the host's
	c.blueprints(hash)
	c.compileModels(hash)
	c.budgetModels()
	c.groups()
	c.spawnables()
	c.expectations()
	c.plans()
	c.scriptCeilings()
	c.sandboxCeilings()
	c.launch()
	c.compileInteractions()
	c.faults()
	c.sc.Hash = "sha256:" + hex.EncodeToString(hash.Sum(nil))
}

// paramPattern is what a parameter's name looks like: it is read as params.<name> in code.
var paramPattern = regexp.MustCompile(`^[a-z_][a-z0-9_]*$`)

// params compiles [params]: the scenario's parameters, each with its default value, read by JS
// policies (params.name) and group templates ({{.Params.name}}), and given other values by a
// sweep's --param name=....
func (c *compiler) params() {
	if len(c.file.Params) == 0 {
		return
	}
	c.sc.Params = make(map[string]any, len(c.file.Params))
	for _, name := range sortedKeys(c.file.Params) {
		path := tomlfile.JoinKey("params", name)
		if !paramPattern.MatchString(name) {
			c.errorf(path, "%q: a parameter's name is lower-case letters, digits and '_', not starting with a digit (code reads it as params.%s)", name, name)
			continue
		}
		switch v := c.file.Params[name].(type) {
		case string, int64, float64, bool:
			c.sc.Params[name] = v
		default:
			kind := "a table"
			switch v.(type) {
			case []any:
				kind = "an array"
			case time.Time, toml.LocalDate, toml.LocalDateTime, toml.LocalTime:
				kind = "a date or time"
			}
			c.errorf(path, "%s: a parameter is a string, an integer, a float or a boolean", kind)
		}
	}
}

// The run's limits when [limits] leaves them out, and the largest values it may give. The
// defaults are generous (the busiest shipped example runs about a thousand ticks and two hundred
// turns an agent) and never "no limit": a run always ends.
const (
	// DefaultMaxTicks is [limits] max_ticks when the file leaves it out: a hundred times what
	// the busiest shipped example needs.
	DefaultMaxTicks = 100_000
	// MaxTicksCeiling is the largest max_ticks: far past any run (31,000 years of one-second
	// ticks), so that a run meant to go on can say so, but still a limit.
	MaxTicksCeiling = 1_000_000_000_000
	// MaxTurnsCeiling is the largest max_turns_per_agent; the turn counter is 32 bits.
	MaxTurnsCeiling = 1_000_000_000
	// defaultTurnLimit is max_turns_per_agent when the file leaves it out: the runtime's own
	// default, so a file and a world built in Go agree.
	defaultTurnLimit = resources.DefaultMaxModelTurns
)

// limits compiles [limits]: max_ticks and max_turns_per_agent, each from 1 to its ceiling. 0 is
// refused rather than read as "no limit" (what max_ticks = 0 meant before), so a file written
// for the old meaning fails loudly instead of running to the new default.
func (c *compiler) limits() {
	fl := c.file.Limits
	c.sc.MaxTicks, c.sc.MaxTurnsPerAgent = DefaultMaxTicks, defaultTurnLimit
	if v := fl.MaxTicks; v != nil {
		switch {
		case *v == 0:
			c.errorf("limits.max_ticks", "0 is not \"no limit\": a run always ends; give a tick limit from 1 to %d (a large one if the run is meant to go on), or leave the key out for the default, %d", int64(MaxTicksCeiling), DefaultMaxTicks)
		case *v < 1 || *v > MaxTicksCeiling:
			c.errorf("limits.max_ticks", "%d: a run always ends: give a tick limit from 1 to %d, or leave the key out for the default, %d", *v, int64(MaxTicksCeiling), DefaultMaxTicks)
		default:
			c.sc.MaxTicks = uint64(*v)
		}
	}
	if v := fl.MaxTurnsPerAgent; v != nil {
		if *v < 1 || *v > MaxTurnsCeiling {
			c.errorf("limits.max_turns_per_agent", "%d: every agent's turns are limited: give a limit from 1 to %d model turns, or leave the key out for the default, %d", *v, MaxTurnsCeiling, defaultTurnLimit)
		} else {
			c.sc.MaxTurnsPerAgent = uint32(*v)
		}
	}
	for _, b := range [...]struct {
		key string
		v   *int64
		to  *int64
	}{{"max_tokens_per_agent", fl.MaxTokensPerAgent, &c.sc.Budgets.TokensPerAgent}, {"max_tokens_per_run", fl.MaxTokensPerRun, &c.sc.Budgets.TokensPerRun}} {
		if b.v == nil {
			continue
		}
		if *b.v < 1 || *b.v > 1e15 {
			c.errorf("limits."+b.key, "%d: give a number of tokens from 1 to 1000000000000000, or leave the key out for no limit", *b.v)
			continue
		}
		*b.to = *b.v
	}
	if v := fl.MaxCostUSD; v != nil {
		if !(*v > 0 && *v <= 1e6) {
			c.errorf("limits.max_cost_usd", "%v: give an amount of US dollars above 0 and up to 1000000, or leave the key out for no limit", *v)
		} else {
			c.sc.Budgets.CostUSD = *v
		}
	}
}

// Budgets bound what a run's live model turns may spend (zero fields: no limit). Every limit is
// checked before a turn is sent, against that turn's worst case, so none is passed.
type Budgets struct {
	// TokensPerAgent and TokensPerRun bound the tokens (prompt and completion) of one agent and of
	// the whole run.
	TokensPerAgent, TokensPerRun int64
	// CostUSD bounds the run's cost in US dollars, priced by the pools' prices.
	CostUSD float64
}

// Set reports whether any budget is set.
func (b Budgets) Set() bool { return b != Budgets{} }

// budgetModels checks that a budget can plan with every live model: one whose answers have no
// completion cap (max_tokens) has no worst case, so no turn of it could be admitted safely.
func (c *compiler) budgetModels() {
	if !c.sc.Budgets.Set() {
		return
	}
	for _, key := range slices.Sorted(maps.Keys(c.models)) {
		if lm, ok := c.models[key].(models.Live); ok && lm.Live() && lm.Spec().MaxTokens <= 0 {
			c.errorf("models."+key, "a live model under a budget ([limits] max_tokens_per_agent, max_tokens_per_run or max_cost_usd) needs max_tokens: without a cap on its answers no turn's worst case is known, so none could be checked before it is sent")
		}
	}
}

func (c *compiler) clock() {
	fc := c.file.Clock
	mode, err := ecs.ParseClockMode(fc.Mode)
	if err != nil {
		c.errorf("clock.mode", "%q: valid modes are virtual, wall", fc.Mode)
	}
	c.sc.Clock.Mode = mode
	if fc.Tick != "" {
		d, err := time.ParseDuration(fc.Tick)
		if err != nil || d <= 0 {
			c.errorf("clock.tick", "%q: want a positive duration such as \"1s\" or \"250ms\"", fc.Tick)
		}
		c.sc.Clock.TickLength = d
	}
	lat := resources.Latency{Model: 1, Tool: 1}
	check := func(path string, v int64) uint64 {
		if v < 1 || v > 1_000_000 {
			c.errorf(path, "%d: a latency is a number of ticks from 1 to 1000000", v)
			return 1
		}
		return uint64(v)
	}
	if fc.ModelLatency != nil {
		lat.Model = check("clock.model_latency", *fc.ModelLatency)
	}
	if fc.ToolLatency != nil {
		lat.Tool = check("clock.tool_latency", *fc.ToolLatency)
	}
	if len(fc.ToolLatencies) > 0 {
		lat.PerTool = map[string]uint64{}
		for _, name := range sortedKeys(fc.ToolLatencies) {
			path := tomlfile.JoinKey("clock.tool_latencies", name)
			if !slices.Contains(c.known, name) {
				c.errorf(path, "unknown tool %q; known tools: %s", name, strings.Join(c.known, ", "))
			}
			lat.PerTool[name] = check(path, fc.ToolLatencies[name])
		}
	}
	c.sc.Latency = lat
}

// The lanes' default capacities, for a scenario that does not size them.
const (
	defaultModelCapacity = 64
	defaultToolCapacity  = 256
)

func (c *compiler) lanes() {
	fl := c.file.Lanes
	check := func(path string, v, def int) int {
		if v == 0 {
			return def
		}
		if v < 1 || v > 1_000_000 {
			c.errorf(path, "%d: must be between 1 and 1000000", v)
			return def
		}
		return v
	}
	c.sc.Lanes = LaneSizes{
		ModelCapacity: check("lanes.model_capacity", fl.ModelCapacity, defaultModelCapacity),
		ToolCapacity:  check("lanes.tool_capacity", fl.ToolCapacity, defaultToolCapacity),
		ToolWorkers:   check("lanes.tool_workers", fl.ToolWorkers, 0),
	}
}

// scripts discovers the script tools the scenario offers, before its blueprints are loaded so
// that their available_tools may name them: the *.js files of the tools/ folder beside each
// blueprint and of the host's [scripting] tools_dir. Every file must compile; no two tools may
// share a name, and none may take a built-in or sub-agent tool's name. Their names join the
// known tools, and their sources the scenario's hash.
func (c *compiler) scripts(hash interface{ Write([]byte) (int, error) }) {
	type folder struct{ dir, key string }
	var folders []folder
	for _, key := range sortedKeys(c.file.Blueprints) {
		at := tomlfile.JoinKey("blueprints", key)
		path, ok := c.resolveAt(at, c.file.Blueprints[key])
		if tools := filepath.Join(filepath.Dir(path), "tools"); ok && c.allowed(at, tools) {
			folders = append(folders, folder{tools, at})
		}
	}
	switch h := c.file.Host; {
	case c.hostOverride != nil:
		if dir := c.hostOverride.Scripting.ToolsDir; dir != "" {
			folders = append(folders, folder{dir, ""})
		}
	case h != nil && h.Scripting.ToolsDir != nil && *h.Scripting.ToolsDir != "":
		if dir, ok := c.resolveAt("host.scripting.tools_dir", *h.Scripting.ToolsDir); ok {
			folders = append(folders, folder{dir, "host.scripting.tools_dir"})
		}
	}
	builtin := map[string]bool{}
	for _, name := range c.known {
		builtin[name] = true
	}
	byName := map[string]*scripting.Script{}
	seen := map[string]bool{}
	for _, f := range folders {
		dir := filepath.Clean(f.dir)
		if seen[dir] {
			continue // blueprints side by side share one tools/ folder
		}
		seen[dir] = true
		found, err := scripting.Discover(dir)
		if err != nil {
			c.folderError(f.key, "script tools in %s:\n%w", dir, err)
			continue
		}
		for _, sc := range found {
			switch prev, dup := byName[sc.Name]; {
			case builtin[sc.Name]:
				c.folderError(f.key, "%s: script tool %q takes the name of a built-in tool; rename it", sc.File, sc.Name)
			case dup:
				c.folderError(f.key, "script tool %q is defined twice: in %s and in %s", sc.Name, prev.File, sc.File)
			default:
				byName[sc.Name] = sc
			}
		}
	}
	for _, name := range sortedKeys(byName) {
		sc := byName[name]
		c.sc.Scripts = append(c.sc.Scripts, sc)
		c.known = append(c.known, name)
		src, err := os.ReadFile(sc.File)
		if err == nil {
			fmt.Fprintf(hash, "\nscript %s %x\n", name, sha256.Sum256(src))
		}
	}
	slices.Sort(c.known)
}

// blueprints loads every blueprint once, relative to the scenario, and folds its bytes into the
// scenario hash in key order.
func (c *compiler) blueprints(hash interface{ Write([]byte) (int, error) }) {
	if len(c.file.Blueprints) == 0 {
		c.errorf("blueprints", "missing: name at least one blueprint file, e.g. [blueprints] worker = \"blueprints/worker.toml\"")
		return
	}
	cache := blueprint.NewCache(c.known)
	for _, key := range sortedKeys(c.file.Blueprints) {
		rel := c.file.Blueprints[key]
		path, ok := c.resolveAt(tomlfile.JoinKey("blueprints", key), rel)
		if !ok {
			continue
		}
		bp, err := cache.Load(path)
		if err != nil {
			c.errs = append(c.errs, c.doc.Errorf(tomlfile.JoinKey("blueprints", key), "blueprint %q could not be loaded:\n%w", rel, err))
			continue
		}
		c.sc.Blueprints[key] = bp
		fmt.Fprintf(hash, "\nblueprint %s %s\n", key, bp.Hash)
	}
}

// compileModels compiles every [models.<key>] table through the kind it names, looked up in the
// models registry (models.LookupKind): the kind's own table type says which keys are valid, and
// its Compile builds the model from the decoded table. The loader knows no kind by name.
func (c *compiler) compileModels(hash io.Writer) {
	c.models = map[string]models.Model{}
	names := kindNames()
	valid := strings.Join(names, ", ")
	if len(c.file.Models) == 0 {
		c.errorf("models", "missing: define at least one model, e.g. [models.worker] kind = \"scripted\" (valid kinds: %s)", valid)
		return
	}
	for _, key := range sortedKeys(c.file.Models) {
		table := c.file.Models[key]
		path := tomlfile.JoinKey("models", key)
		kindPath := tomlfile.JoinKey(path, "kind")
		raw, written := table["kind"]
		name, isString := raw.(string)
		switch {
		case !written || isString && name == "":
			c.errorf(path, "missing kind; valid kinds: %s", valid)
			continue
		case !isString:
			c.errorf(kindPath, "%v is not a kind: name one as a string; valid kinds: %s", raw, valid)
			continue
		}
		kind, ok := models.LookupKind(models.KindNamespace + name)
		if !ok {
			c.errorf(kindPath, "%q: valid kinds: %s", name, valid)
			continue
		}
		cfg := kind.New()
		if errs := c.doc.DecodeTable(path, table, cfg, "kind"); len(errs) > 0 {
			c.errs = append(c.errs, otherKindsKeys(path, kind, errs)...)
			continue
		}
		m, err := cfg.Compile(&models.KindEnv{
			Key: key, Path: path, ID: kind.Name() + ":" + key,
			Resolve:    c.resolve,
			Confine:    c.confine,
			LookupEnv:  c.keys,
			HTTPClient: c.httpClient,
			Scripting:  models.ScriptingLimits{MaxMemory: c.sc.Host.Scripting.MaxMemory},
			Hash:       hash,
			Params:     c.sc.Params,
		})
		switch {
		case err != nil:
			c.kindErrors(path, err)
		case m == nil:
			c.errorf(path, "kind %q compiled no model and gave no reason (a bug in the kind)", name)
		default:
			c.models[key] = m
		}
	}
}

// kindNames lists the names of the registered model kinds, sorted.
func kindNames() []string {
	ids := models.Kinds()
	names := make([]string, len(ids))
	for i, id := range ids {
		k, _ := models.LookupKind(id)
		names[i] = k.Name()
	}
	return names
}

// kindErrors reports what a kind's Compile returned: each KeyError at its key, anything else
// at the model's table.
func (c *compiler) kindErrors(path string, err error) {
	at := func(ke *models.KeyError) {
		key := path
		if ke.Key != "" {
			key = path + "." + ke.Key
		}
		c.errorf(key, "%w", ke.Err)
	}
	switch e := err.(type) {
	case models.KeyErrors:
		for _, ke := range e {
			at(ke)
		}
	case *models.KeyError:
		at(e)
	default:
		c.errorf(path, "%w", err)
	}
}

// otherKindsKeys adds to each unknown key of a model table of kind the other kinds that accept
// it, so that a key written for the wrong kind says which kind it belongs to.
func otherKindsKeys(path string, kind models.Kind, errs tomlfile.Errors) tomlfile.Errors {
	for _, e := range errs {
		rel, ok := strings.CutPrefix(e.Key, path+".")
		if !ok || !errors.Is(e, tomlfile.ErrUnknownKey) || strings.ContainsAny(rel, ".[\"") {
			continue
		}
		var owners []string
		for _, id := range models.Kinds() {
			other, _ := models.LookupKind(id)
			if id != kind.ID && slices.Contains(tomlfile.Keys(other.New()), rel) {
				owners = append(owners, strconv.Quote(other.Name()))
			}
		}
		switch len(owners) {
		case 0:
		case 1:
			e.Msg += " (" + rel + " is a key of kind " + owners[0] + ")"
		default:
			e.Msg += " (" + rel + " is a key of kinds " + strings.Join(owners, ", ") + ")"
		}
	}
	return errs
}

func (c *compiler) groups() {
	if len(c.file.Groups) == 0 {
		c.errorf("groups", "missing: add at least one [[groups]] entry with name, blueprint, model and count")
		return
	}
	seen := map[string]bool{}
	for i, fg := range c.file.Groups {
		path := tomlfile.JoinIndex("groups", i)
		g := Group{Name: fg.Name, BlueprintKey: fg.Blueprint, ModelKey: fg.Model, Count: fg.Count, params: c.sc.Params}
		switch {
		case fg.Name == "":
			c.errorf(path, "missing name")
		case !namePattern.MatchString(fg.Name):
			c.errorf(tomlfile.JoinKey(path, "name"), "%q: use lower-case letters, digits, '-' and '_'", fg.Name)
		case seen[fg.Name]:
			c.errorf(tomlfile.JoinKey(path, "name"), "group %q is defined twice", fg.Name)
		}
		seen[fg.Name] = true
		if bp, ok := c.sc.Blueprints[fg.Blueprint]; ok {
			g.Blueprint = bp
		} else if _, failed := c.file.Blueprints[fg.Blueprint]; !failed && len(c.file.Blueprints) > 0 {
			c.errorf(tomlfile.JoinKey(path, "blueprint"), "unknown blueprint %q; defined in [blueprints]: %s", fg.Blueprint, strings.Join(sortedKeys(c.file.Blueprints), ", "))
		}
		if m, ok := c.models[fg.Model]; ok {
			g.Model = m
		} else if _, failed := c.file.Models[fg.Model]; !failed && len(c.file.Models) > 0 {
			c.errorf(tomlfile.JoinKey(path, "model"), "unknown model %q; defined in [models]: %s", fg.Model, strings.Join(sortedKeys(c.file.Models), ", "))
		}
		g.StageModels = c.stageModels(tomlfile.JoinKey(path, "stage_models"), fg.StageModels, g.Blueprint)
		g.Inputs = c.inputs(tomlfile.JoinKey(path, "inputs"), fg.Inputs, c.hash)
		c.itemCount(path, &g, fg.Count != 0)
		switch {
		case fg.Count == 0 && g.Inputs != nil && g.Inputs.Items != nil:
			fg.Count = g.Count
		case fg.Count == 0 && fg.Inputs != nil && fg.Inputs.Items != "":
			fg.Count = 1 // the items file's own error says what is wrong; no count is not
		}
		if fg.Count < 1 || fg.Count > 10_000_000 {
			c.errorf(tomlfile.JoinKey(path, "count"), "%d: a group has 1 to 10000000 agents", fg.Count)
		}
		g.agentName = c.agentName(tomlfile.JoinKey(path, "agent_name"), fg.AgentName, g.item(0))
		if fg.SafetyMode != "" {
			mode, err := tools.ParseSafetyMode(fg.SafetyMode)
			if err != nil {
				c.errorf(tomlfile.JoinKey(path, "safety_mode"), "%q: valid modes: default, read-only, auto", fg.SafetyMode)
			}
			g.SafetyMode = mode
		}
		if fg.PlanFile != "" {
			if !filepath.IsLocal(fg.PlanFile) {
				c.errorf(tomlfile.JoinKey(path, "plan_file"), "%q: the plan file is a path inside the agent's workdir", fg.PlanFile)
			}
			g.PlanFile = filepath.Clean(fg.PlanFile)
		}
		g.workdir = c.template(tomlfile.JoinKey(path, "workdir"), fg.Workdir, g.item(0))
		g.task = c.template(tomlfile.JoinKey(path, "task"), fg.Task, g.item(0))
		c.sc.Groups = append(c.sc.Groups, g)
	}
}

// spawnables compiles the [spawn] table and checks that every blueprint key a blueprint names
// (spawnable, a fan-out stage's workers) is one of its entries.
func (c *compiler) spawnables() {
	c.sc.Spawn = map[string]*Spawnable{}
	for _, key := range sortedKeys(c.file.Spawn) {
		fs := c.file.Spawn[key]
		path := tomlfile.JoinKey("spawn", key)
		sp := &Spawnable{Key: key, ModelKey: fs.Model}
		bp, ok := c.sc.Blueprints[key]
		if _, failed := c.file.Blueprints[key]; !ok && !failed {
			c.errorf(path, "unknown blueprint %q; a [spawn] entry is named after a key of [blueprints]: %s", key, strings.Join(sortedKeys(c.file.Blueprints), ", "))
		}
		sp.Blueprint = bp
		switch m, ok := c.models[fs.Model]; {
		case fs.Model == "":
			c.errorf(path, "missing model: name the [models] entry sub-agents of %q run", key)
		case ok:
			sp.Model = m
		default:
			if _, failed := c.file.Models[fs.Model]; !failed {
				c.errorf(tomlfile.JoinKey(path, "model"), "unknown model %q; defined in [models]: %s", fs.Model, strings.Join(sortedKeys(c.file.Models), ", "))
			}
		}
		sp.StageModels = c.stageModels(tomlfile.JoinKey(path, "stage_models"), fs.StageModels, bp)
		c.sc.Spawn[key] = sp
	}
	for _, key := range sortedKeys(c.sc.Blueprints) {
		for _, r := range c.sc.Blueprints[key].SpawnRefs {
			if _, ok := c.file.Spawn[r.Key]; !ok {
				c.errs = append(c.errs, c.doc.Errorf(tomlfile.JoinKey("blueprints", key), "%s: blueprint key %q has no [spawn.%s] entry in this scenario (entries: %s)", r.Where, r.Key, r.Key, listOrNone(sortedKeys(c.file.Spawn))))
			}
		}
	}
}

// resolve returns path as the scenario means it: relative paths are relative to the scenario
// file's folder.
func (c *compiler) resolve(path string) string {
	if filepath.IsAbs(path) {
		return path
	}
	return filepath.Join(c.sc.Dir, path)
}

// resolveAt is resolve for the path the scenario's key names, asked of LoadOptions.Confine
// first: false (the refusal reported at key, once) when it refuses the path.
func (c *compiler) resolveAt(key, path string) (string, bool) {
	p := c.resolve(path)
	return p, c.allowed(key, p)
}

// allowed asks LoadOptions.Confine about p, which key names, reporting a refusal at key once.
func (c *compiler) allowed(key, p string) bool {
	if c.confine == nil {
		return true
	}
	if refused, asked := c.refused[key+"\x00"+p]; asked {
		return !refused
	}
	err := c.confine(p)
	if c.refused == nil {
		c.refused = map[string]bool{}
	}
	c.refused[key+"\x00"+p] = err != nil
	if err != nil {
		c.errorf(key, "%w", err)
	}
	return err == nil
}

// listOrNone joins names for a message.
func listOrNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// template parses a group template; "" means the built-in default. It is tried with item, the
// group's first item (nil without items).
func (c *compiler) template(path, text string, item any) *template.Template {
	if text == "" {
		return nil
	}
	const fields = "fields: {{.Name}}, {{.Index}}, {{.Group}}, {{.Params.<name>}}, {{.Item}} (with inputs.items)"
	t, err := template.New(path).Option("missingkey=error").Parse(text)
	if err != nil {
		c.errorf(path, "bad template: %v (%s)", err, fields)
		return nil
	}
	if err := t.Execute(discard{}, templateData{Name: "x", Group: "g", Params: c.sc.Params, Item: item}); err != nil {
		c.errorf(path, "bad template: %v (%s)", err, fields)
		return nil
	}
	return t
}

// agentNamePattern is what an agent name may look like: it becomes a folder name and part of
// call ids, so no separators, no "..", nothing empty.
var agentNamePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// agentName parses a group's agent_name template. It may use {{.Index}} and {{.Group}} (the name
// does not exist yet while it is being made) and must give names of agentNamePattern.
func (c *compiler) agentName(path, text string, item any) *template.Template {
	if text == "" {
		return nil
	}
	if strings.Contains(text, ".Name") {
		c.errorf(path, "an agent_name template cannot use {{.Name}} (it is the name being made); use {{.Index}} and {{.Group}}")
		return nil
	}
	t := c.template(path, text, item)
	if t == nil {
		return nil
	}
	if sample := expand(t, templateData{Index: 0, Group: "g", Params: c.sc.Params, Item: item}); !validAgentName(sample) {
		c.errorf(path, "gives the agent name %q; a name is letters, digits, '.', '_' and '-', starting with a letter or digit, and never \"..\"", sample)
		return nil
	}
	return t
}

// validAgentName reports whether name is usable as an agent name.
func validAgentName(name string) bool {
	return agentNamePattern.MatchString(name) && !strings.Contains(name, "..")
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

func (c *compiler) expectations() {
	groups := map[string]bool{}
	for _, g := range c.file.Groups {
		groups[g.Name] = true
	}
	for key := range c.file.Spawn {
		groups[key] = true // sub-agents spawned from [spawn.<key>] form group <key>
	}
	for i, fe := range c.file.Expect {
		path := tomlfile.JoinIndex("expect", i)
		line, _, _ := c.doc.Pos(path)
		e := Expectation{Where: fmt.Sprintf("%s:%d", c.sc.Path, line), Label: path, Group: fe.Group, Agent: fe.Agent,
			Stage: fe.Stage, Reason: fe.Reason, ModelTurns: fe.ModelTurns, ToolErrors: fe.ToolErrors}
		if fe.ModelTurns != nil && *fe.ModelTurns < 0 {
			c.errorf(tomlfile.JoinKey(path, "model_turns"), "%d: a turn count is zero or more", *fe.ModelTurns)
		}
		if fe.ToolErrors != nil && *fe.ToolErrors < 0 {
			c.errorf(tomlfile.JoinKey(path, "tool_errors"), "%d: an error count is zero or more", *fe.ToolErrors)
		}
		e.Results = c.results(path, fe)
		e.Memory = c.expectMemory(tomlfile.JoinKey(path, "memory"), fe.Memory)
		switch {
		case fe.Group == "" && fe.Agent == "":
			c.errorf(path, "name the group or the agent this expectation is about (group = \"...\" or agent = \"...\")")
		case fe.Group != "" && fe.Agent != "":
			c.errorf(path, "give group or agent, not both")
		case fe.Group != "" && !groups[fe.Group]:
			c.errorf(tomlfile.JoinKey(path, "group"), "unknown group %q; groups: %s", fe.Group, strings.Join(sortedKeys(groups), ", "))
		}
		if fe.Status != "" {
			kind, ok := components.ParseStatus(fe.Status)
			if !ok {
				c.errorf(tomlfile.JoinKey(path, "status"), "%q: valid statuses: %s", fe.Status, strings.Join(components.StatusNames, ", "))
			}
			e.Status = &kind
		}
		for _, tool := range sortedKeys(fe.ToolCalls) {
			n := fe.ToolCalls[tool]
			if n < 0 {
				c.errorf(tomlfile.JoinKey(tomlfile.JoinKey(path, "tool_calls"), tool), "%d: a call count is zero or more", n)
			}
			e.ToolCalls = append(e.ToolCalls, components.ToolCount{Tool: tool, N: uint32(max(n, 0))})
		}
		c.sc.Expect = append(c.sc.Expect, e)
	}
	if fr := c.file.ExpectRun; fr != nil {
		re := &RunExpectation{Where: c.where("expect_run"), ToolCalls: fr.ToolCalls, ToolErrors: fr.ToolErrors}
		if fr.ToolCalls != nil && *fr.ToolCalls < 0 {
			c.errorf("expect_run.tool_calls", "%d: a call count is zero or more", *fr.ToolCalls)
		}
		if fr.ToolErrors != nil && *fr.ToolErrors < 0 {
			c.errorf("expect_run.tool_errors", "%d: an error count is zero or more", *fr.ToolErrors)
		}
		for _, name := range sortedKeys(fr.Status) {
			path := tomlfile.JoinKey("expect_run.status", name)
			kind, ok := components.ParseStatus(name)
			if !ok {
				c.errorf(path, "unknown status %q; valid statuses: %s", name, strings.Join(components.StatusNames, ", "))
				continue
			}
			want := StatusCount{Status: kind}
			switch v := fr.Status[name].(type) {
			case int64:
				if v < 0 {
					c.errorf(path, "%d: a count is zero or more, or \"all\"", v)
				}
				want.N = int(v)
			case string:
				if v != "all" {
					c.errorf(path, "%q: a count is a number or \"all\"", v)
				}
				want.All = true
			default:
				c.errorf(path, "a count is a number or \"all\"")
			}
			re.Status = append(re.Status, want)
		}
		c.sc.ExpectRun = re
	}
}

// expectMemory compiles an expectation's memory table: each key must be a memory key and each
// value one JSON can hold (no dates), kept as the canonical JSON memory compares with.
func (c *compiler) expectMemory(path string, table map[string]any) []memory.Entry {
	var out []memory.Entry
	for _, key := range sortedKeys(table) {
		at := tomlfile.JoinKey(path, key)
		if err := memory.CheckKey(key); err != nil {
			c.errorf(at, "%v", err)
			continue
		}
		var check memory.Store
		if err := check.Set(key, table[key]); err != nil || !jsonKinds(table[key]) {
			c.errorf(at, "%v is not a value memory can hold: write a string, number, boolean, array or table (no dates)", table[key])
			continue
		}
		text, _ := check.Get(key)
		out = append(out, memory.Entry{Key: key, JSON: text})
	}
	return out
}

// jsonKinds reports whether v, as TOML decoded it, is made only of what JSON has: TOML's dates
// and times would encode as strings and never equal what an agent stored.
func jsonKinds(v any) bool {
	switch v := v.(type) {
	case string, bool, int64, float64:
		return true
	case []any:
		for _, x := range v {
			if !jsonKinds(x) {
				return false
			}
		}
		return true
	case map[string]any:
		for _, x := range v {
			if !jsonKinds(x) {
				return false
			}
		}
		return true
	}
	return false
}

// results compiles the [[expect.results]] of the expectation at path and gives each a watch,
// added to every group (and [spawn] entry) whose agents it may concern: the group it names, or,
// for an expectation about one agent, every group, limited to that agent's name.
func (c *compiler) results(path string, fe fileExpect) []ResultExpectation {
	var out []ResultExpectation
	for j, fr := range fe.Results {
		if fr.Tool == "" {
			c.errorf(tomlfile.JoinIndex(tomlfile.JoinKey(path, "results"), j), "missing tool: name the tool whose result this expects, e.g. { tool = \"read_file\", contains = \"hello\", ok = true }")
			continue
		}
		x := ResultExpectation{ID: c.watches, Tool: fr.Tool, Contains: fr.Contains, OK: fr.OK}
		c.watches++
		w := components.ResultWatch{ID: x.ID, Agent: fe.Agent, Tool: x.Tool, Contains: x.Contains, Want: x.want()}
		for i := range c.sc.Groups {
			if g := &c.sc.Groups[i]; fe.Agent != "" || g.Name == fe.Group {
				g.Watches = append(g.Watches, w)
			}
		}
		for _, key := range sortedKeys(c.sc.Spawn) {
			if sp := c.sc.Spawn[key]; fe.Agent != "" || key == fe.Group {
				sp.Watches = append(sp.Watches, w)
			}
		}
		out = append(out, x)
	}
	return out
}

// folderError reports a problem with a folder of script tools: at the scenario's key, or (key
// "") in the host config that replaced its [host] table.
func (c *compiler) folderError(key, format string, args ...any) {
	if key == "" {
		err := fmt.Errorf(format, args...)
		c.errs = append(c.errs, &tomlfile.Error{File: c.hostOverride.Path, Key: "scripting.tools_dir", Msg: err.Error(), Err: err})
		return
	}
	c.errorf(key, format, args...)
}

// host compiles the [host] table, or takes the defaults; a host config given to LoadUnder
// replaces both.
func (c *compiler) host() {
	if c.hostOverride != nil {
		c.sc.Host = c.hostOverride
		return
	}
	if c.file.Host == nil {
		c.sc.Host = hostconfig.Default()
		return
	}
	cfg, errs := hostconfig.CompileWith(c.doc, "host", c.file.Host, c.known, c.serverTools)
	c.errs = append(c.errs, errs...)
	cfg.Path = c.sc.Path + " [host]"
	c.sc.Host = cfg
}

// sandboxCeilings checks that no blueprint's [sandbox] (nor a stage's) loosens the host's
// sandbox: a blueprint may only tighten it.
func (c *compiler) sandboxCeilings() {
	ceiling := c.sc.Host.SandboxCeiling()
	for _, key := range sortedKeys(c.sc.Blueprints) {
		if err := c.sc.Blueprints[key].CheckSandboxCeiling(ceiling); err != nil {
			c.errs = append(c.errs, c.doc.Errorf(tomlfile.JoinKey("blueprints", key), "blueprint %q under this scenario's host config:\n%w", key, err))
		}
	}
}

// scriptCeilings checks that no blueprint's [tool_script_permissions] loosens the host's: Layer 3
// may only be tightened by a blueprint.
func (c *compiler) scriptCeilings() {
	for _, key := range sortedKeys(c.sc.Blueprints) {
		if err := c.sc.Blueprints[key].CheckScriptCeiling(c.sc.Host.ScriptPermissions); err != nil {
			c.errs = append(c.errs, c.doc.Errorf(tomlfile.JoinKey("blueprints", key), "blueprint %q under this scenario's host config:\n%w", key, err))
		}
	}
}

// launch compiles the [launch] overrides.
func (c *compiler) launch() {
	fl := c.file.Launch
	c.sc.Launch = policy.Launch{Yolo: fl.Yolo, Allow: fl.Allow, Ask: fl.Ask, Deny: fl.Deny}
	c.sc.Unattended = fl.Unattended
	for _, list := range [...]struct {
		key   string
		names []string
	}{{"allow", fl.Allow}, {"ask", fl.Ask}, {"deny", fl.Deny}} {
		for i, name := range list.names {
			if err := policy.CheckName(name, c.known); name != "" && err != nil {
				c.errorf(tomlfile.JoinIndex(tomlfile.JoinKey("launch", list.key), i), "%w", err)
			}
		}
	}
	if err := c.sc.Launch.Validate(); err != nil {
		c.errorf("launch", "%w", err)
	}
}

func (c *compiler) where(path string) string {
	line, _, _ := c.doc.Pos(path)
	return fmt.Sprintf("%s:%d", c.sc.Path, line)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// HasLiveModels reports whether any group or spawnable blueprint of the scenario runs a live
// model (models.Live): one whose turns go through inference pools.
func (s *Scenario) HasLiveModels() bool {
	isLive := func(m models.Model) bool {
		lm, ok := m.(models.Live)
		return ok && lm.Live()
	}
	anyLive := func(m models.Model, stages []StageModel) bool {
		return isLive(m) || slices.ContainsFunc(stages, func(sm StageModel) bool { return isLive(sm.Model) })
	}
	for i := range s.Groups {
		if anyLive(s.Groups[i].Model, s.Groups[i].StageModels) {
			return true
		}
	}
	for _, sp := range s.Spawn {
		if anyLive(sp.Model, sp.StageModels) {
			return true
		}
	}
	return false
}
