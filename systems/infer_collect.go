package systems

import (
	"github.com/warrenhq/warren/components"
	"github.com/warrenhq/warren/ecs"
	"github.com/warrenhq/warren/recording"
)

// InferCollect applies model turns the model lane has finished, in canonical order, exactly as
// infer_dispatch applies inline turns.
type InferCollect struct {
	turnApplier
	// awaiting tells whether a result's agent still waits for it.
	awaiting ecs.Map[components.AwaitingInference]
	tools    *mover
	resolve  *mover
	terminal *mover
}

var _ ecs.System = (*InferCollect)(nil)

func init() {
	Register(Info{ID: IDPrefix + "infer_collect", Order: 40, New: func() ecs.System { return &InferCollect{} }})
}

// Name implements ecs.System.
func (*InferCollect) Name() string { return "infer_collect" }

// Initialize implements ecs.System.
func (s *InferCollect) Initialize(w *ecs.World) (err error) {
	if err := s.turnApplier.resolve(w); err != nil {
		return err
	}
	s.maps = newAgentMaps(w)
	s.awaiting = ecs.NewMap[components.AwaitingInference](w)
	s.tools = newMover[components.AwaitingInference, components.ReadyForTools](w)
	s.resolve = newMover[components.AwaitingInference, components.ResolveTransition](w)
	s.terminal = newMover[components.AwaitingInference, components.Terminal](w)
	return nil
}

// Update implements ecs.System.
func (s *InferCollect) Update(w *ecs.World) {
	if s.lanes.Model == nil {
		return
	}
	tick := w.Tick()
	for _, d := range s.lanes.Model.Collect() {
		if o, ok := d.Value.(*modelOutcome); ok && o.live != nil {
			s.recordLive(tick, o)
		}
		if !w.Alive(d.Entity) || !s.awaiting.Has(d.Entity) {
			continue // the agent ended while its model call ran
		}
		id := s.maps.identity.Get(d.Entity)
		cur := s.maps.cursor.Get(d.Entity)
		if work := &s.agents.Get(id.Slot).Work; work.Cancel != nil {
			work.Cancel() // the turn is back: its context (infer_dispatch) has served
			work.Ctx, work.Cancel = nil, nil
		}
		out := modelOutcome{panic: d.Panic}
		if d.Panic == "" {
			out = *d.Value.(*modelOutcome)
			s.agents.Get(s.maps.identity.Get(d.Entity).Slot).Model = out.state
			s.maps.rng.Get(d.Entity).Source = out.source
		}
		switch s.apply(tick, d.Entity, id, cur, out) {
		case toTools:
			s.tools.add(d.Entity)
		case toResolve:
			s.resolve.add(d.Entity)
		default:
			s.terminal.add(d.Entity)
		}
	}
	w.Touch(s.tools.apply() + s.resolve.apply() + s.terminal.apply())
}

// recordLive writes a live model's turn into the recording.
func (s *InferCollect) recordLive(tick uint64, o *modelOutcome) {
	m := *o.live
	m.Text = o.reply.Text
	for _, c := range o.reply.Calls {
		m.Calls = append(m.Calls, recording.ModelCall{ID: c.ID, Name: c.Name, Args: c.Args})
	}
	if o.err != nil {
		m.Err = o.err.Error()
	}
	s.rec.Writer.Model(tick, m)
}

// Finalize implements ecs.System.
func (*InferCollect) Finalize(*ecs.World) {}
