package subagents

import "github.com/warrenhq/warren/tools"

// The sub-agent tools change the agent tree, not files: a child of an agent in read-only mode is
// read-only too (the gate's inheritance), so they may run while a plan is drafted. The ones that
// only look declare reads.
var (
	_ tools.Declarer = Spawn{}
	_ tools.Declarer = Check{}
	_ tools.Declarer = Wait{}
	_ tools.Declarer = Send{}
	_ tools.Declarer = Kill{}
	_ tools.Declarer = List{}
	_ tools.Declarer = FanOut{}
)

// Effects implements tools.Declarer: a child starts, under the caller's permissions.
func (Spawn) Effects() tools.Effects { return tools.EffectsDeclared }

// Effects implements tools.Declarer: it reads a descendant's status.
func (Check) Effects() tools.Effects { return tools.EffectsDeclared | tools.EffectReads }

// Effects implements tools.Declarer: it reads a descendant's status once it ends.
func (Wait) Effects() tools.Effects { return tools.EffectsDeclared | tools.EffectReads }

// Effects implements tools.Declarer: a message reaches a descendant's inbox.
func (Send) Effects() tools.Effects { return tools.EffectsDeclared }

// Effects implements tools.Declarer: a descendant's subtree ends.
func (Kill) Effects() tools.Effects { return tools.EffectsDeclared }

// Effects implements tools.Declarer: it reads the caller's subtree.
func (List) Effects() tools.Effects { return tools.EffectsDeclared | tools.EffectReads }

// Effects implements tools.Declarer: workers start, under the caller's permissions.
func (FanOut) Effects() tools.Effects { return tools.EffectsDeclared }
