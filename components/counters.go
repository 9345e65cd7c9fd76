package components

import "slices"

// Counters tallies an agent's work. Per-tool counts are AgentData.ByTool.
type Counters struct {
	ModelTurns  uint32
	ToolCalls   uint32
	ToolErrors  uint32
	Transitions uint32
}

// ToolCount is how often an agent called one tool.
type ToolCount struct {
	Tool string
	N    uint32
}

// ToolCounts is an agent's per-tool call counts, sorted by tool name. It is allocated on the
// first tool call, so idle agents pay nothing for it.
type ToolCounts []ToolCount

// Add records one call of tool.
func (tc *ToolCounts) Add(tool string) {
	i, found := slices.BinarySearchFunc(*tc, tool, func(c ToolCount, t string) int {
		switch {
		case c.Tool < t:
			return -1
		case c.Tool > t:
			return 1
		}
		return 0
	})
	if !found {
		*tc = slices.Insert(*tc, i, ToolCount{Tool: tool})
	}
	(*tc)[i].N++
}

// Of returns how often tool was called.
func (tc ToolCounts) Of(tool string) uint32 {
	for _, c := range tc {
		if c.Tool == tool {
			return c.N
		}
	}
	return 0
}
