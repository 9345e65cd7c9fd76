package scenarios

import (
	"slices"

	"github.com/warrenhq/warren/faults"
	"github.com/warrenhq/warren/internal/tomlfile"
)

// fileFaults is the [faults] table: rates for every agent, then per group and per tool.
type fileFaults struct {
	Seed         *int64               `toml:"seed"`
	SlowTicks    int64                `toml:"slow_ticks"`
	TimeoutTicks int64                `toml:"timeout_ticks"`
	ModelError   *float64             `toml:"model_error"`
	ToolError    *float64             `toml:"tool_error"`
	Timeout      *float64             `toml:"timeout"`
	Slow         *float64             `toml:"slow"`
	MCPCrash     *float64             `toml:"mcp_crash"`
	Groups       map[string]fileRates `toml:"groups"`
	Tools        map[string]fileRates `toml:"tools"`
}

// fileRates is one group's or tool's rates.
type fileRates struct {
	ModelError *float64 `toml:"model_error"`
	ToolError  *float64 `toml:"tool_error"`
	Timeout    *float64 `toml:"timeout"`
	Slow       *float64 `toml:"slow"`
	MCPCrash   *float64 `toml:"mcp_crash"`
}

// faults compiles [faults]: rates between 0 and 1, groups the scenario has, tools the host knows
// (a tool's table takes no model_error: a model turn is no tool's), tick counts of at least one.
func (c *compiler) faults() {
	ff := c.file.Faults
	if ff == nil {
		return
	}
	spec := &faults.Spec{}
	if ff.Seed != nil {
		if *ff.Seed < 0 {
			c.errorf("faults.seed", "%d: the seed must be zero or positive", *ff.Seed)
		}
		seed := uint64(max(*ff.Seed, 0))
		spec.Seed = &seed
	}
	ticks := func(key string, v int64) uint64 {
		if v < 0 {
			c.errorf(key, "%d: give a positive number of ticks (0: the default)", v)
		}
		return uint64(max(v, 0))
	}
	spec.SlowTicks, spec.TimeoutTicks = ticks("faults.slow_ticks", ff.SlowTicks), ticks("faults.timeout_ticks", ff.TimeoutTicks)
	spec.Rates = c.rates("faults", fileRates{ff.ModelError, ff.ToolError, ff.Timeout, ff.Slow, ff.MCPCrash})
	groups := make([]string, len(c.sc.Groups))
	for i, g := range c.sc.Groups {
		groups[i] = g.Name
	}
	for _, name := range sortedKeys(ff.Groups) {
		at := tomlfile.JoinKey("faults.groups", name)
		if !slices.Contains(groups, name) {
			c.errorf(at, "%q is not a group of this scenario; groups: %s", name, listOrNone(groups))
			continue
		}
		if spec.Groups == nil {
			spec.Groups = map[string]faults.Rates{}
		}
		spec.Groups[name] = c.rates(at, ff.Groups[name])
	}
	for _, name := range sortedKeys(ff.Tools) {
		at := tomlfile.JoinKey("faults.tools", name)
		if !slices.Contains(c.known, name) {
			c.errorf(at, "%q is not a tool this host offers; known tools: %s", name, listOrNone(c.known))
			continue
		}
		r := ff.Tools[name]
		if r.ModelError != nil {
			c.errorf(tomlfile.JoinKey(at, "model_error"), "a tool's table takes tool_error, timeout, mcp_crash and slow; model_error belongs in [faults] or [faults.groups.<group>]")
		}
		if spec.Tools == nil {
			spec.Tools = map[string]faults.Rates{}
		}
		spec.Tools[name] = c.rates(at, r)
	}
	c.sc.Faults = spec
}

// rates checks one table's rates.
func (c *compiler) rates(at string, r fileRates) faults.Rates {
	check := func(key string, p *float64) *float64 {
		if p != nil && (*p < 0 || *p > 1) {
			c.errorf(tomlfile.JoinKey(at, key), "%v: a rate is a probability from 0 to 1 (0.05: one in twenty)", *p)
		}
		return p
	}
	return faults.Rates{ModelError: check("model_error", r.ModelError), ToolError: check("tool_error", r.ToolError),
		Timeout: check("timeout", r.Timeout), Slow: check("slow", r.Slow), MCPCrash: check("mcp_crash", r.MCPCrash)}
}
