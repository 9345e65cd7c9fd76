package systems

import (
	"github.com/warrenhq/warren/components"
	"github.com/warrenhq/warren/ecs"
	"github.com/warrenhq/warren/resources"
)

// ToolCollect takes finished tool calls from the tool lane, in canonical order (agent id, call
// index), files each into its agent's turn, and finishes the turn of every agent whose last call
// came back.
type ToolCollect struct {
	toolTurn
	// awaiting tells whether a result's agent still waits for it.
	awaiting ecs.Map[components.AwaitingTools]
}

var _ ecs.System = (*ToolCollect)(nil)

func init() {
	Register(Info{ID: IDPrefix + "tool_collect", Order: 70, New: func() ecs.System { return &ToolCollect{} }})
}

// Name implements ecs.System.
func (*ToolCollect) Name() string { return "tool_collect" }

// Initialize implements ecs.System.
func (s *ToolCollect) Initialize(w *ecs.World) (err error) {
	if err := s.resolveTurn(w); err != nil {
		return err
	}
	s.maps = newAgentMaps(w)
	s.awaiting = ecs.NewMap[components.AwaitingTools](w)
	s.ready = newMover[components.AwaitingTools, components.ReadyToInfer](w)
	s.terminal = newMover[components.AwaitingTools, components.Terminal](w)
	return nil
}

// Update implements ecs.System.
func (s *ToolCollect) Update(w *ecs.World) {
	if s.lanes.Tool == nil {
		return
	}
	tick := w.Tick()
	for _, done := range s.lanes.Tool.Collect() {
		var res components.ToolResult
		if done.Panic != "" {
			res = components.ToolResult{Content: "tool panicked", IsError: true, Panic: done.Panic}
		} else {
			res = done.Value.(components.ToolResult)
		}
		if s.rec.Writer != nil {
			c, ok := s.rec.Writer.Finish(tick, done.Agent, done.Index, toRecording(res))
			if ok && s.rec.Journal != nil {
				s.rec.Journal.Filed(resources.ToolEffect(c.Agent, c.ID))
			}
		}
		if res.Divergence != nil {
			s.rec.Fail(res.Divergence)
		}
		if !w.Alive(done.Entity) || !s.awaiting.Has(done.Entity) {
			continue // the agent ended while its call ran
		}
		id := s.maps.identity.Get(done.Entity)
		d := s.agents.Get(id.Slot)
		d.Work.Results[done.Index] = res
		d.Work.Outstanding--
		if d.Work.Outstanding > 0 {
			continue
		}
		cur := s.maps.cursor.Get(done.Entity)
		s.finish(tick, done.Entity, id, d, &s.profiles.Get(id.Profile).Blueprint.Stages[cur.Stage])
	}
	w.Touch(s.ready.apply() + s.terminal.apply())
}

// Finalize implements ecs.System.
func (*ToolCollect) Finalize(*ecs.World) {}
