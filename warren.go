// Package warren is Warren's embedding API: the one composition root every way of running a
// world goes through (`host run`, the scenario tests, and the commands to come: replay, resume,
// serve).
//
// A program loads a scenario file (Load), or builds one from Go values (FromSpec), then builds
// its world (New) and runs it under a context (Runtime.Run), which returns the Summary. While it
// runs, Options.Events sees every trace event as it is written and Options.Answerer answers the
// prompts the scenario's own scripted answers leave open; cancelling the context stops the run
// at the end of its tick. Run does all of it in one call.
//
// The lifecycle of a Runtime, in order:
//
//  1. New provisions: the work root, the script engine, the MCP sessions, the tool registry,
//     the world's resources (resources.Set.Install, the one place defaults are applied), the
//     tick's systems (systems.Pipeline) and the agents of every group.
//  2. Run validates nothing more: it ticks to a fixed point, the tick limit or the context's
//     end, stops the MCP sessions, closes the trace and checks the expectations.
//  3. Close cleans up: the scheduler's lanes, the engine, the sessions and a temporary work
//     root. Run calls it; call it yourself only when you never call Run.
package warren

import (
	"time"

	"github.com/warrenhq/warren/blueprint"
	"github.com/warrenhq/warren/components"
	"github.com/warrenhq/warren/hostconfig"
	"github.com/warrenhq/warren/operator"
	"github.com/warrenhq/warren/scenarios"
	"github.com/warrenhq/warren/trace"
)

// Scenario is a loaded, validated and compiled scenario (see docs/scenarios.md).
type Scenario = scenarios.Scenario

// Load reads, validates and compiles the scenario file at path, with the tools this host offers
// (KnownTools). Every problem found is reported at once, each with file, line, key and what would
// be valid.
func Load(path string) (*Scenario, error) {
	return scenarios.Load(path, KnownTools())
}

// LoadUnder is Load with a host config that replaces the scenario's [host] table (host run
// --config); see LoadHostConfig.
func LoadUnder(path string, host *hostconfig.Config) (*Scenario, error) {
	return scenarios.LoadUnder(path, KnownTools(), host)
}

// LoadHostConfig loads a host config file: the known tools, plus the script tools of its own
// [scripting] tools_dir and the tools of its own [[mcp_servers]] (each server is started once to
// list them), which its permission tables may name.
func LoadHostConfig(path string) (*hostconfig.Config, error) {
	return scenarios.LoadHostConfig(path)
}

// KnownTools lists the tools a scenario's blueprints may name on this host, sorted: the built-in
// tools and the sub-agent tools.
func KnownTools() []string { return scenarios.KnownTools() }

// ParseBlueprint compiles a blueprint from its TOML source (name is used in error messages and
// as the blueprint's file), for a scenario built from Go values. Its tools must be known ones.
func ParseBlueprint(name, src string) (*blueprint.Blueprint, error) {
	return blueprint.Parse(name, []byte(src), KnownTools())
}

// ErrAgentNames means a run's agent names are unusable or not unique (a group's agent_name
// template).
var ErrAgentNames = scenarios.ErrAgentNames

// Spec is a scenario described with Go values (see FromSpec); GroupSpec is one of its groups.
type (
	Spec      = scenarios.Spec
	GroupSpec = scenarios.GroupSpec
)

// FromSpec compiles a scenario from Go values, with the defaults a scenario file gets for what it
// leaves out (virtual clock, one-tick latencies, the default lanes and host config).
func FromSpec(s Spec) (*Scenario, error) { return scenarios.FromSpec(s) }

// Input is one file a scenario's load read (Scenario.Inputs): a run's outputs must never
// overwrite one.
type Input = scenarios.Input

// Spend is what live model turns cost: tokens as the providers reported them and their price in
// picodollars (Summary.Spend, its Groups and Trees, FinalRecord.Spend).
type Spend = components.Spend

// Console is how people act on a running world (Options.Console): answer its open prompts, kill
// an agent and its subtree, pause, resume or cancel it, from any goroutine.
type Console = operator.Console

// NewConsole returns a Console whose prompts are refused when nobody answers them within timeout
// of wall time (0: they wait as long as the run does). The timeout is an input like an answer:
// recorded at the tick it fired.
func NewConsole(timeout time.Duration) *Console { return operator.NewConsole(timeout) }

// Dollars writes picodollars (Spend.Cost) as an exact decimal number of US dollars ("0.000042"),
// as summaries and traces show money.
func Dollars(pico int64) string { return trace.DollarsOf(pico) }
