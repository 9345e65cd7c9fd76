package components

import (
	"context"
	"slices"

	"github.com/warrenhq/warren/memory"
	"github.com/warrenhq/warren/models"
	"github.com/warrenhq/warren/recording"
	"github.com/warrenhq/warren/sandbox"
	"github.com/warrenhq/warren/tools"
)

// AgentData is what an agent owns that holds references, kept out of arche (see the package
// documentation) in the Agents store at the agent's Slot.
type AgentData struct {
	// Name is the agent's stable, human-readable name.
	Name string
	// Reason says why the agent's status or current stage outcome is what it is.
	Reason string
	// Visits counts entries per stage index.
	Visits []uint32
	// Conversation is the bounded message history.
	Conversation Conversation
	// ByTool counts calls per tool.
	ByTool ToolCounts
	// Seen holds what the agent's tool results showed of its profile's Watches: nil until a
	// watched tool returns, and a pointer so that an agent no expectation watches pays 8 bytes.
	Seen *ResultsSeen
	// Model is the agent's own state in its model back end.
	Model models.State
	// StageModels is the agent's state in the models its stages have of their own, by slot - 1
	// (Profile.StageModels): nil for an agent whose stages all use the profile's model. Use
	// ModelState.
	StageModels []models.State
	// Workdir is the agent's absolute workdir, worked out from its profile on first use.
	Workdir string
	// Work holds the tool calls of the current turn.
	Work ToolWork
	// Tools is the agent's own tool state: synced stage, grants, write budget, prompts.
	Tools AgentToolState
	// Inbox holds messages sent to the agent (send_to_agent, a child's end) until its next
	// model turn in a stage that accepts messages.
	Inbox []models.Message
	// Parent is the id of the agent that spawned this one (0 for a top-level agent); Depth is
	// how far below a top-level agent it sits.
	Parent uint64
	Depth  uint8
	// Root is the id of the top-level agent of this one's tree (its own id at the top), the key
	// the tree's spend is counted under.
	Root uint64
	// Spend is what the agent's live model turns cost so far.
	Spend Spend
	// ContextTokens and ContextBytes are what the agent's last answered live turn said about its
	// conversation (inference.Context), so the next turn's token estimate is tight.
	ContextTokens, ContextBytes int64
	// Dynamic holds the script tools an agent whose blueprint sets dynamic_tools found in its
	// own workdir (nil for every other agent).
	Dynamic *DynamicTools
	// Memory is the agent's own key-value memory (memory_set, memory_get, a transition's set).
	Memory memory.Store
	// Output is what the agent's stage visits produced that its blueprint's conditions read
	// (nil when they read none of it).
	Output *StageOutput
	// Sandbox runs the agent's shell commands; made on its first command, pointed at each
	// stage's boundary by sync_stage, closed (every process killed) at reap.
	Sandbox *sandbox.Manager
}

// ModelState returns the agent's state in the model of slot (Profile.ModelOf): slot 0 is
// Model, the others StageModels, grown on first use.
func (d *AgentData) ModelState(slot uint8) *models.State {
	if slot == 0 {
		return &d.Model
	}
	for int(slot) > len(d.StageModels) {
		d.StageModels = append(d.StageModels, models.State{})
	}
	return &d.StageModels[slot-1]
}

// DynamicTools are the script tools an agent with dynamic_tools wrote into its workdir's tools/
// folder: a tool scope of their own on a ScopedToolRegistry (rebuilt when a file changes), what
// the model is shown of them, and what the last scan saw.
type DynamicTools struct {
	// Registry resolves the agent's dynamic tools (its one scope); Scope is that scope.
	Registry *tools.ScopedToolRegistry
	Scope    tools.ScopeID
	// Infos describe the dynamic tools to the model, sorted by name.
	Infos []models.ToolInfo
	// Names are the dynamic tools' names, sorted (the stage's visibility check admits them).
	Names []string
	// Stamps hold each file's size and modification time at the last scan, so an unchanged
	// folder costs a directory read; Reported holds the problem last told to the agent per
	// file, so a broken file is reported once per version.
	Stamps   map[string]FileStamp
	Reported map[string]string
}

// FileStamp is what a scan remembers of a file to notice that it changed.
type FileStamp struct {
	Size    int64
	ModNano int64
}

// Has reports whether name is one of the dynamic tools.
func (t *DynamicTools) Has(name string) bool {
	if t == nil {
		return false
	}
	_, ok := slices.BinarySearch(t.Names, name)
	return ok
}

// ToolResult is one finished call of the current turn.
type ToolResult struct {
	Content string
	IsError bool
	// Notes are what the call did that the trace shows besides its result (a script's logs
	// and host calls), written when the turn's results are filed.
	Notes []tools.Note
	// Panic is set when the tool panicked: the agent fails once its turn is applied.
	Panic string
	// Detached is work the call left running (a background command), delivered to the inbox
	// at a tick the world fixes.
	Detached tools.Detached
	// Ops are the requests a script tool made of the world outside, kept while the run records.
	Ops []recording.Op
	// Divergence, in a replay, is how a script tool's requests left the recording; the run stops
	// when the result is filed (in canonical order, so which divergence is reported is fixed).
	Divergence error
}

// ToolWork holds the tool calls of the agent's current turn and their results as they arrive.
type ToolWork struct {
	Calls   []models.ToolCall
	Results []ToolResult
	// Keys holds each call's permission keys, as the gate judged them.
	Keys [][]string
	// Outstanding counts calls not finished yet: on the tool lane, waiting on a prompt, or
	// handed to the sub-agent system.
	Outstanding int32
	// Ctx is the cancellation of the turn's lane work: made when a lane model's turn starts
	// (infer_dispatch, ended by infer_collect once the turn is back) and again when the turn's
	// first lane tool call starts; Cancel ends it when that work is done or the agent is killed,
	// so kill_agent, a subtree's kill and a parent's reap stop a model mid-turn as they stop
	// tool calls.
	Ctx    context.Context
	Cancel context.CancelFunc
}

// Reset clears the turn's calls and results, keeping the results array for reuse.
func (w *ToolWork) Reset() {
	if w.Cancel != nil {
		w.Cancel()
		w.Ctx, w.Cancel = nil, nil
	}
	clear(w.Results)
	clear(w.Keys)
	w.Calls = nil
	w.Results = w.Results[:0]
	w.Keys = w.Keys[:0]
	w.Outstanding = 0
}

// agentPage is how many agents one page of the store holds. Pages never move, so a pointer
// from Get stays valid while the store grows.
const agentPage = 4096

// Agents is the store of AgentData, paged so that growth never moves existing entries, with a
// free list so that reaped slots are reused. A page whose agents have all been freed is released
// (and made again if one of its slots is reused), so a world that once held 10^5 sub-agents
// gives their memory back. It belongs to the world's goroutine.
type Agents struct {
	pages [][]AgentData
	// live counts the slots in use per page.
	live []uint32
	next uint32
	free []uint32
}

// Alloc reserves a slot and returns it; its data is zero.
func (a *Agents) Alloc() uint32 {
	var slot uint32
	if n := len(a.free); n > 0 {
		slot = a.free[n-1]
		a.free = a.free[:n-1]
	} else {
		slot = a.next
		a.next++
		if int(slot/agentPage) == len(a.pages) {
			a.pages = append(a.pages, nil)
			a.live = append(a.live, 0)
		}
	}
	page := slot / agentPage
	if a.pages[page] == nil {
		a.pages[page] = make([]AgentData, agentPage)
	}
	a.live[page]++
	return slot
}

// Get returns the data at slot.
func (a *Agents) Get(slot uint32) *AgentData { return &a.pages[slot/agentPage][slot%agentPage] }

// Free zeroes the data at slot (dropping its references) and makes the slot reusable; the last
// slot freed on a page releases the page.
func (a *Agents) Free(slot uint32) {
	page := slot / agentPage
	*a.Get(slot) = AgentData{}
	a.free = append(a.free, slot)
	if a.live[page]--; a.live[page] == 0 {
		a.pages[page] = nil
	}
	if len(a.free) == int(a.next) {
		// Nothing is live: start over, so the free list itself is released too.
		*a = Agents{}
	}
}

// Live reports how many slots are in use.
func (a *Agents) Live() int { return int(a.next) - len(a.free) }
