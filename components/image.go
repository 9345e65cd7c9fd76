package components

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/warrenhq/warren/memory"
	"github.com/warrenhq/warren/models"
	"github.com/warrenhq/warren/policy"
	"github.com/warrenhq/warren/recording"
	"github.com/warrenhq/warren/tools"
)

// AgentImage is one agent's AgentData as data, for a snapshot of the world. It shares no memory
// with the agent it was taken from, so the world may go on while it is encoded. What cannot be
// data is left out and made again: the sandbox (its processes die with the host; the next command
// makes one for the current stage), the turn's cancellation (made again with the turn's work),
// and a dynamic-tools agent's compiled registry (compiled again from its files by the dynamic
// tools' owner; the image keeps what the last scan saw).
type AgentImage struct {
	Name, Reason string
	Visits       []uint32
	// Messages, MaxMessages, Dropped and LastUser are the Conversation.
	Messages    []models.Message
	MaxMessages int32
	Dropped     int32
	LastUser    string
	ByTool      ToolCounts
	Seen        []ResultSeen
	Model       models.State
	StageModels []models.State
	Workdir     string
	Work        ToolWorkImage
	// Stage, Grants, Writes, Prompts and Waits are the AgentToolState.
	Stage                       int32
	Grants                      *policy.GrantsImage
	Writes                      *tools.WriteBudgetImage
	Prompts, Waits              int32
	Inbox                       []models.Message
	Parent                      uint64
	Depth                       uint8
	Root                        uint64
	Spend                       Spend
	ContextTokens, ContextBytes int64
	Dynamic                     *DynamicImage
	Memory                      []memory.Entry
	Output                      *StageOutput
}

// ToolWorkImage is the current turn's ToolWork as data.
type ToolWorkImage struct {
	Calls       []models.ToolCall
	Results     []ToolResultImage
	Keys        [][]string
	Outstanding int32
}

// ToolResultImage is a ToolResult as data. A result that left background work running keeps
// only that it did (Detached): the work is a process of the host that made the snapshot, and the
// restore asks its caller what stands in for it.
type ToolResultImage struct {
	Content    string
	IsError    bool
	Notes      []tools.Note
	Panic      string
	Detached   bool
	Ops        []recording.Op
	Divergence string
}

// Image returns the result as data.
func (r *ToolResult) Image() ToolResultImage {
	img := ToolResultImage{Content: r.Content, IsError: r.IsError, Notes: slices.Clone(r.Notes), Panic: r.Panic,
		Detached: r.Detached != nil, Ops: slices.Clone(r.Ops)}
	if r.Divergence != nil {
		img.Divergence = r.Divergence.Error()
	}
	return img
}

// Result returns the ToolResult img holds, with detached standing in for the background work
// the result left running (nil drops it).
func (img *ToolResultImage) Result(detached tools.Detached) ToolResult {
	res := ToolResult{Content: img.Content, IsError: img.IsError, Notes: img.Notes, Panic: img.Panic, Ops: img.Ops}
	if img.Divergence != "" {
		res.Divergence = errors.New(img.Divergence)
	}
	if img.Detached {
		res.Detached = detached
	}
	return res
}

// DynamicImage is what a dynamic-tools agent's last scan saw of its tools folder.
type DynamicImage struct {
	Stamps   map[string]FileStamp
	Reported map[string]string
}

// Image returns the agent's data as data.
func (d *AgentData) Image() AgentImage {
	img := AgentImage{
		Name:          d.Name,
		Reason:        d.Reason,
		Visits:        slices.Clone(d.Visits),
		Messages:      cloneMessages(d.Conversation.Messages),
		MaxMessages:   d.Conversation.Max,
		Dropped:       d.Conversation.Dropped,
		LastUser:      d.Conversation.lastUser,
		ByTool:        slices.Clone(d.ByTool),
		Model:         d.Model,
		StageModels:   slices.Clone(d.StageModels),
		Workdir:       d.Workdir,
		Stage:         d.Tools.Stage,
		Grants:        d.Tools.Grants.Image(),
		Writes:        d.Tools.Writes.Image(),
		Prompts:       d.Tools.Prompts,
		Waits:         d.Tools.Waits,
		Inbox:         cloneMessages(d.Inbox),
		Parent:        d.Parent,
		Depth:         d.Depth,
		Root:          d.Root,
		Spend:         d.Spend,
		ContextTokens: d.ContextTokens,
		ContextBytes:  d.ContextBytes,
		Memory:        d.Memory.Image(),
		Output:        d.Output.Image(),
		Work: ToolWorkImage{
			Calls:       slices.Clone(d.Work.Calls),
			Keys:        slices.Clone(d.Work.Keys),
			Outstanding: d.Work.Outstanding,
		},
	}
	if d.Seen != nil {
		img.Seen = slices.Clone(d.Seen.List)
	}
	for i := range d.Work.Results {
		img.Work.Results = append(img.Work.Results, d.Work.Results[i].Image())
	}
	if d.Dynamic != nil {
		img.Dynamic = &DynamicImage{Stamps: maps.Clone(d.Dynamic.Stamps), Reported: maps.Clone(d.Dynamic.Reported)}
	}
	return img
}

// cloneMessages copies a history whose array the agent trims in place; the messages' own
// contents are never changed once appended, so they are shared.
func cloneMessages(m []models.Message) []models.Message {
	if m == nil {
		return nil
	}
	return slices.Clone(m)
}

// RestoreAgent returns the AgentData img holds. detached stands in for the background work of a
// result that left some running (callID names the call); it may return nil, which drops it.
func RestoreAgent(img *AgentImage, detached func(callID string) tools.Detached) AgentData {
	d := AgentData{
		Name:   img.Name,
		Reason: img.Reason,
		Visits: img.Visits,
		Conversation: Conversation{
			Messages: img.Messages, Max: img.MaxMessages, Dropped: img.Dropped, lastUser: img.LastUser,
		},
		ByTool:      img.ByTool,
		Model:       img.Model,
		StageModels: img.StageModels,
		Workdir:     img.Workdir,
		Tools: AgentToolState{
			Stage:   img.Stage,
			Grants:  policy.RestoreGrants(img.Grants),
			Writes:  tools.RestoreWriteBudget(img.Writes),
			Prompts: img.Prompts,
			Waits:   img.Waits,
		},
		Inbox:         img.Inbox,
		Parent:        img.Parent,
		Depth:         img.Depth,
		Root:          img.Root,
		Spend:         img.Spend,
		ContextTokens: img.ContextTokens,
		ContextBytes:  img.ContextBytes,
		Memory:        memory.Restore(img.Memory),
		Output:        img.Output.Image(),
		Work: ToolWork{
			Calls:       img.Work.Calls,
			Keys:        img.Work.Keys,
			Outstanding: img.Work.Outstanding,
		},
	}
	if img.Seen != nil {
		d.Seen = &ResultsSeen{List: img.Seen}
	}
	for i := range img.Work.Results {
		var work tools.Detached
		if img.Work.Results[i].Detached && detached != nil && i < len(img.Work.Calls) {
			work = detached(img.Work.Calls[i].ID)
		}
		d.Work.Results = append(d.Work.Results, img.Work.Results[i].Result(work))
	}
	if img.Dynamic != nil {
		d.Dynamic = &DynamicTools{Stamps: img.Dynamic.Stamps, Reported: img.Dynamic.Reported}
	}
	return d
}

// AgentsImage is the Agents store as data: every live slot's agent, and the free list in the
// order slots will be reused, so a restored store hands out the same slots.
type AgentsImage struct {
	Next  uint32
	Free  []uint32
	Slots []uint32
	Data  []AgentImage
}

// Image returns the store as data, live slots in ascending order.
func (a *Agents) Image() AgentsImage {
	img := AgentsImage{Next: a.next, Free: slices.Clone(a.free)}
	free := make([]bool, a.next)
	for _, s := range a.free {
		free[s] = true
	}
	live := int(a.next) - len(a.free)
	img.Slots, img.Data = make([]uint32, 0, live), make([]AgentImage, 0, live)
	for slot := range a.next {
		if free[slot] {
			continue
		}
		img.Slots = append(img.Slots, slot)
		img.Data = append(img.Data, a.Get(slot).Image())
	}
	return img
}

// ErrAgentsImage is wrapped by the error RestoreAgents returns for an image that does not fit.
var ErrAgentsImage = errors.New("agent store image does not fit")

// RestoreAgents gives an empty store the agents img holds; detached is as for RestoreAgent.
func (a *Agents) RestoreAgents(img *AgentsImage, detached func(callID string) tools.Detached) error {
	if a.next != 0 {
		return fmt.Errorf("%w: the store is not empty", ErrAgentsImage)
	}
	if len(img.Slots) != len(img.Data) || len(img.Slots)+len(img.Free) != int(img.Next) {
		return fmt.Errorf("%w: %d slots, %d agents and %d free for %d allocated", ErrAgentsImage,
			len(img.Slots), len(img.Data), len(img.Free), img.Next)
	}
	seen := make(map[uint32]bool, img.Next)
	for _, s := range slices.Concat(img.Slots, img.Free) {
		if s >= img.Next || seen[s] {
			return fmt.Errorf("%w: slot %d twice or past %d", ErrAgentsImage, s, img.Next)
		}
		seen[s] = true
	}
	// Allocate every slot in order, then free the free ones in the order that makes Alloc pop
	// them as the original would have.
	for range img.Next {
		a.Alloc()
	}
	for i, s := range img.Slots {
		*a.Get(s) = RestoreAgent(&img.Data[i], detached)
	}
	for _, s := range img.Free {
		page := s / agentPage
		a.free = append(a.free, s)
		if a.live[page]--; a.live[page] == 0 {
			a.pages[page] = nil
		}
	}
	return nil
}
