package warren

import (
	"slices"

	"github.com/warrenhq/warren/components"
	"github.com/warrenhq/warren/gate"
	"github.com/warrenhq/warren/hostconfig"
	"github.com/warrenhq/warren/models"
	"github.com/warrenhq/warren/sandbox"
	"github.com/warrenhq/warren/scenarios"
	"github.com/warrenhq/warren/subagents"
	"github.com/warrenhq/warren/tools"
)

// profile builds the shared Profile of a group's agents: what each stage advertises and the
// registry its calls resolve through. In an unattended run a stage that does not require an
// interaction tool neither advertises it nor lets it block: its registry pushes a scope in which
// a stand-in answers with the unattended answer at once. servers are the MCP servers its agents
// lease (see Scenario.LeasedServers).
func profile(g *scenarios.Group, scoped *tools.ScopedToolRegistry, root string, pol *gate.Policy, ceiling sandbox.Boundary, servers []string) (*components.Profile, error) {
	bp := g.Blueprint
	stageTools := make([][]models.ToolInfo, len(bp.Stages))
	registries := make([]*tools.ScopedToolRegistry, len(bp.Stages))
	boundaries := make([]sandbox.Boundary, len(bp.Stages))
	for i := range bp.Stages {
		st := &bp.Stages[i]
		registries[i] = scoped
		boundaries[i] = bp.StageBoundary(ceiling, i)
		var standIns *tools.ScopedToolRegistry
		var scope tools.ScopeID
		for _, name := range st.AvailableTools {
			t, ok := scoped.Get(name)
			if !ok {
				continue
			}
			if pol.Unattended && tools.IsInteraction(name) && !slices.Contains(st.RequiredTools, name) {
				if standIns == nil {
					standIns = tools.NewScoped(scoped.Base())
					scope = standIns.PushScope()
				}
				if _, err := standIns.RegisterInScope(scope, tools.UnattendedStandIn(t)); err != nil {
					return nil, err
				}
				continue // not advertised
			}
			spec := t.Spec()
			stageTools[i] = append(stageTools[i], models.ToolInfo{Name: spec.Name, Description: spec.Description, Parameters: spec.Parameters})
		}
		if standIns != nil {
			registries[i] = standIns
		}
	}
	p := &components.Profile{
		Group: g.Name, Blueprint: bp, Model: g.Model, ModelID: g.Model.ID(),
		Tools: scoped, StageTools: stageTools, StageRegistries: registries, Policy: pol,
		Sandbox: boundaries, MCPServers: servers, WorkRoot: root, Watches: g.Watches,
	}
	if len(g.StageModels) > 0 {
		p.StageModels = make([]components.StageModel, len(bp.Stages))
		slots := map[string]uint8{}
		for _, sm := range g.StageModels {
			id := sm.Model.ID()
			if id == p.ModelID {
				continue // the group's own model: its agents keep one state in it
			}
			slot, ok := slots[id]
			if !ok {
				slot = uint8(len(slots) + 1)
				slots[id] = slot
			}
			p.StageModels[sm.Index] = components.StageModel{Model: sm.Model, ID: id, Slot: slot}
		}
	}
	p.Workdir = g.WorkdirFunc(root)
	p.Task = g.TaskFunc()
	if g.Inputs != nil && g.Inputs.Items != nil {
		p.Item, p.ItemKey = g.Inputs.Item, scenarios.ItemKey
	}
	return p, nil
}

// subagentLimits are the host's caps on agent trees.
func subagentLimits(host *hostconfig.Config) subagents.Limits {
	return subagents.Limits{MaxDepth: host.Subagents.MaxDepth, MaxChildren: host.Subagents.MaxChildren, MaxLive: host.Subagents.MaxAgents}
}
