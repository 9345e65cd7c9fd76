// Package gate is Warren's tool gate: the one decision function every tool call passes, from an
// agent's turn (tool_dispatch), from inside a script tool (call_tool) and from host explain, so a
// run and an explanation never disagree.
//
// [Decide] is total and takes a call through the layers in order: visibility (the stage offers
// the tool and it is registered), the argument schema, the read-only floor (decided from what the
// tool declares it does, [tools.Effects]), the permission layers of the policy package under the
// ceilings a sub-agent inherits from its ancestors, safe keys and grants, auto mode's classifier,
// and the unattended rule. [Explain] is the same function recording each layer's step.
//
// A [Policy] is what a group of agents shares: [Build] and [ForGroup] assemble it from a blueprint
// under a host config and launch flags, and [Inherit] builds a sub-agent's from its parent's, so a
// child can never hold a permission an ancestor does not hold. The package knows nothing of the
// ECS world: it is tested with plain values.
package gate
