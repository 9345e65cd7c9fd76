package components

import (
	"encoding/json"

	"github.com/warrenhq/warren/blueprint"
	"github.com/warrenhq/warren/gate"
	"github.com/warrenhq/warren/models"
	"github.com/warrenhq/warren/sandbox"
	"github.com/warrenhq/warren/tools"
)

// Profile is what a group of agents is spawned from and shares: the compiled blueprint, the
// model, the tool registry the dispatch path resolves tools through, and the rules that give
// each agent its workdir and task. One Profile serves every agent of a group, so per-agent
// memory holds only what differs.
type Profile struct {
	// Group names the agent group in the scenario.
	Group string
	// Blueprint is the compiled blueprint, shared read-only.
	Blueprint *blueprint.Blueprint
	// Model decides the agents' turns; ModelID names it in traces.
	Model   models.Model
	ModelID string
	// StageModels holds, per stage index, the model of a stage that has one of its own (a
	// group's stage_models): the entry of a stage without one is zero, and the slice is nil when
	// no stage has one. ModelOf resolves it.
	StageModels []StageModel
	// Tools is the registry dispatch resolves calls through (base plus scopes).
	Tools *tools.ScopedToolRegistry
	// StageTools holds, per stage index, what that stage advertises to the model, sorted by
	// name; computed once when the profile is built.
	StageTools [][]models.ToolInfo
	// Task gives an agent's first user message from its name and index (nil: none).
	Task func(name string, index int) string
	// Item gives an agent's item by its index (its group's inputs.items; nil: none), which it
	// finds in its memory under ItemKey from its spawn on.
	Item    func(index int) json.RawMessage
	ItemKey string
	// Workdir gives an agent's absolute workdir from its name and index.
	Workdir func(name string, index int) string
	// WorkRoot is the run's workdir root, the folder every agent's workdir lies under (a
	// sub-agent's inside its parent's), "" when the profile has none: the sandbox manager is told
	// it (sandbox.Manager.SetWorkRoot), so a contained command sees only its own agent's workdir
	// of it, not its siblings' or its parent's.
	WorkRoot string
	// Policy is the group's shared tool policy (permission layers, safe keys, modes).
	Policy *gate.Policy
	// StageRegistries holds, per stage index, the registry calls in that stage resolve through:
	// the group's base tools with the stage's own tool scope pushed on top. sync_stage points
	// an agent at its stage's registry.
	StageRegistries []*tools.ScopedToolRegistry
	// Sandbox holds, per stage index, the boundary the agent's commands run under in that stage:
	// the host's ceiling tightened by the blueprint and the stage, resolved once per profile.
	// sync_stage points an agent's sandbox manager at its stage's boundary.
	Sandbox []sandbox.Boundary
	// MCPServers names, sorted, the MCP servers the profile's agents lease from spawn to reap:
	// those whose tools a stage advertises, and those the sub-agents they may spawn may call. A
	// server's session stops once no agent that may call it, or whose descendants may, is left.
	MCPServers []string
	// Watches are the scenario's result expectations that may concern the profile's agents,
	// checked as each tool result is filed (nil: none, which costs nothing).
	Watches []ResultWatch
	// Origin is how a sub-agent's profile was made, set when the profile store takes it, so that
	// a snapshot's restore makes it again (zero for a group's profile).
	Origin ProfileOrigin
}

// ProfileOrigin is what a sub-agent profile is made from (resources.Offspring.Profile): its
// parent's profile (by index), the stage its parent spawned from and the blueprint key.
type ProfileOrigin struct {
	Child  bool
	Parent uint32
	Stage  int32
	Key    string
}

// StageModel is the model a stage of a profile has of its own, instead of the profile's Model.
type StageModel struct {
	// Model decides the turns made in the stage; ID names it in traces.
	Model models.Model
	ID    string
	// Slot is where an agent keeps its state in this model (AgentData.ModelState): 1, 2, … in
	// the order the profile's stage models were first named; 0 is the profile's Model.
	Slot uint8
}

// ModelOf returns the model that makes an agent's turns in stage, its id and the slot of the
// agent's state in it: the stage's own model when it has one, else the profile's Model (slot 0).
func (p *Profile) ModelOf(stage int32) (models.Model, string, uint8) {
	if int(stage) < len(p.StageModels) {
		if sm := &p.StageModels[stage]; sm.Model != nil {
			return sm.Model, sm.ID, sm.Slot
		}
	}
	return p.Model, p.ModelID, 0
}

// Models returns every model the profile's agents may use, each once: Model first, then the
// stages' own models by slot.
func (p *Profile) Models() []models.Model {
	out := []models.Model{p.Model}
	for i := range p.StageModels {
		if sm := &p.StageModels[i]; sm.Model != nil && int(sm.Slot) >= len(out) {
			out = append(out, sm.Model)
		}
	}
	return out
}

// Registry is the registry calls in stage resolve through: the stage's own registry when the
// profile has one, else the group's.
func (p *Profile) Registry(stage int32) *tools.ScopedToolRegistry {
	if int(stage) < len(p.StageRegistries) && p.StageRegistries[stage] != nil {
		return p.StageRegistries[stage]
	}
	return p.Tools
}

// Profiles is the world's table of profiles; an agent refers to its profile by index.
type Profiles struct{ list []*Profile }

// Add stores p and returns its index.
func (ps *Profiles) Add(p *Profile) uint32 {
	ps.list = append(ps.list, p)
	return uint32(len(ps.list) - 1)
}

// Get returns the profile at index i.
func (ps *Profiles) Get(i uint32) *Profile { return ps.list[i] }

// Len is how many profiles the table holds.
func (ps *Profiles) Len() int { return len(ps.list) }

// Identity names an agent. ID is stable for the whole run and unique in the world; Index is the
// agent's position in its group; Slot is where its reference-holding data lives in Agents;
// Profile is its profile's index in Profiles.
type Identity struct {
	ID      uint64
	Slot    uint32
	Index   int32
	Profile uint32
}
