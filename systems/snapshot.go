package systems

import (
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/warrenhq/warren/components"
	"github.com/warrenhq/warren/ecs"
	"github.com/warrenhq/warren/internal/scripthost"
	"github.com/warrenhq/warren/models"
	"github.com/warrenhq/warren/policy"
	"github.com/warrenhq/warren/recording"
	"github.com/warrenhq/warren/resources"
	"github.com/warrenhq/warren/tools"
)

// ErrNotImageable is wrapped by ImageLanes' error when what the lanes hold at this boundary
// cannot be saved as data yet (a live model's turn, background work a result left running, a
// waiting call of an agent that is gone): a snapshot then waits for a later boundary.
var ErrNotImageable = errors.New("not imageable at this tick")

// ComponentCodecs are the world's components as a snapshot stores them (ecs.World.Image): every
// component an agent entity can carry, its phase markers included.
func ComponentCodecs() []ecs.ComponentCodec {
	return []ecs.ComponentCodec{
		ecs.Codec[components.Identity]("identity"), ecs.Codec[components.Status]("status"),
		ecs.Codec[components.Cursor]("cursor"), ecs.Codec[components.Counters]("counters"),
		ecs.Codec[components.RNG]("rng"),
		ecs.Codec[components.Entering]("entering"), ecs.Codec[components.ReadyToInfer]("ready_to_infer"),
		ecs.Codec[components.AwaitingInference]("awaiting_inference"), ecs.Codec[components.ReadyForTools]("ready_for_tools"),
		ecs.Codec[components.AwaitingTools]("awaiting_tools"), ecs.Codec[components.ResolveTransition]("resolve_transition"),
		ecs.Codec[components.Terminal]("terminal"),
	}
}

// LanesImage is the world's two lanes at a tick boundary as data: each held job's Value is one
// of this file's image types (a due result, or the recipe of a job waiting for a slot).
type LanesImage struct {
	Model, Tool ecs.LaneImage
}

// toolRecipe is a tool-lane job waiting for a slot, as data: what tool_dispatch decided when it
// submitted the call, from which the same work is made again.
type toolRecipe struct {
	// Fixed is the call's result when it was decided at dispatch (a replayed result, an injected
	// fault, a recording that could not answer): the job only hands it over.
	Fixed *components.ToolResultImage
	// Tick, Turn, Call and MsgIndex place the call; Now is the clock's time at dispatch, which
	// the call's context carries.
	Tick, Turn uint64
	Call       int
	MsgIndex   int
	Now        time.Time
	// UsesHost marks a script tool that calls back into the host; Grants are the grants it
	// judges its nested calls by, as they were at dispatch.
	UsesHost bool
	Grants   *policy.GrantsImage
	// Again marks a call a resume runs again (retry_on_resume); Entry is the recording entry a
	// replayed script tool's requests are answered from.
	Again bool
	Entry *recording.ToolEntry
}

// modelRecipe is an infer_dispatch lane turn waiting for a slot: the model state and random
// source it works on (whether a replay gives back a recorded real-time limit instead is decided
// again on restore, from the resumed run's recording).
type modelRecipe struct {
	Tick   uint64
	State  models.State
	Source rand.PCG // gob encodes it through its MarshalBinary
}

// toolDue is a tool-lane result waiting for its due tick.
type toolDue struct{ Result components.ToolResultImage }

// modelDue is a lane model turn's outcome waiting for its due tick.
type modelDue struct {
	Reply    models.Reply
	Err      string
	HasErr   bool
	RealTime bool
	Panic    string
	State    models.State
	Source   rand.PCG
	// Live is set for a live model's attempt.
	Live *liveDue
}

func init() {
	gob.RegisterName("warren/systems.toolRecipe", &toolRecipe{})
	gob.RegisterName("warren/systems.modelRecipe", &modelRecipe{})
	gob.RegisterName("warren/systems.toolDue", &toolDue{})
	gob.RegisterName("warren/systems.modelDue", &modelDue{})
}

// restoredError is a model failure given back by a restored snapshot: its message, and whether a
// limit measured in real time decided it (tools.IsRealTime).
type restoredError struct {
	msg      string
	realTime bool
}

func (e *restoredError) Error() string  { return e.msg }
func (e *restoredError) RealTime() bool { return e.realTime }

// ImageLanes returns the world's lanes as data at a tick boundary (ecs.Scheduler.SetBoundary).
// It fails with ErrNotImageable when a lane holds what has no image yet; the lanes are unchanged
// either way.
func ImageLanes(w *ecs.World) (LanesImage, error) {
	lanes, err := resources.Get[resources.Lanes](w)
	if err != nil {
		return LanesImage{}, err
	}
	var img LanesImage
	if img.Model, err = lanes.Model.Image(); err != nil {
		return LanesImage{}, fmt.Errorf("%w: %w", ErrNotImageable, err)
	}
	if img.Tool, err = lanes.Tool.Image(); err != nil {
		return LanesImage{}, fmt.Errorf("%w: %w", ErrNotImageable, err)
	}
	for i := range img.Model.Due {
		h := &img.Model.Due[i]
		if h.Panic != "" {
			continue
		}
		o, _ := h.Value.(*modelOutcome)
		if o == nil {
			continue // an agent that was gone when the turn ran: nothing is read from it
		}
		due := &modelDue{Reply: o.reply, Panic: o.panic, State: o.state, Source: o.source}
		due.Reply.Calls = slices.Clone(o.reply.Calls)
		if o.err != nil {
			due.Err, due.HasErr, due.RealTime = o.err.Error(), true, tools.IsRealTime(o.err)
		}
		if o.ticket != nil {
			job, ok := o.ticket.Value.(*liveJob)
			if !ok {
				return LanesImage{}, fmt.Errorf("%w: agent %d's live turn has a ticket of a %T", ErrNotImageable, h.Agent, o.ticket.Value)
			}
			ji := job.image()
			due.Live = &liveDue{Ticket: o.ticket.Image(&ji), Pool: o.pool, Err: imageErr(o.err)}
			if o.live != nil {
				m := *o.live
				due.Live.Live = &m
			}
		}
		h.Value = due
	}
	for i := range img.Model.Waiting {
		h := &img.Model.Waiting[i]
		switch r := h.Value.(type) {
		case *modelRecipe:
			c := *r
			h.Value = &c
		case *liveSend:
			job, ok := r.ticket.Value.(*liveJob)
			if !ok {
				return LanesImage{}, fmt.Errorf("%w: agent %d's live send has a ticket of a %T", ErrNotImageable, h.Agent, r.ticket.Value)
			}
			ji := job.image()
			h.Value = &liveSendImage{Tick: r.tick, Ticket: r.ticket.Image(&ji)}
		case *liveSendImage: // restored from a snapshot and still waiting: already data
		default:
			return LanesImage{}, fmt.Errorf("%w: agent %d's model turn waits for a slot with no recipe", ErrNotImageable, h.Agent)
		}
	}
	for i := range img.Tool.Due {
		h := &img.Tool.Due[i]
		if h.Panic != "" {
			continue
		}
		res, ok := h.Value.(components.ToolResult)
		if !ok {
			return LanesImage{}, fmt.Errorf("%w: agent %d's tool call %d is due with a %T", ErrNotImageable, h.Agent, h.Index, h.Value)
		}
		if res.Detached != nil {
			return LanesImage{}, fmt.Errorf("%w: agent %d's tool call %d left background work running", ErrNotImageable, h.Agent, h.Index)
		}
		h.Value = &toolDue{Result: res.Image()}
	}
	for i := range img.Tool.Waiting {
		h := &img.Tool.Waiting[i]
		if res, ok := h.Value.(components.ToolResult); ok {
			// A result fixed at dispatch, kept as the result itself (no cost at submission).
			if res.Detached != nil {
				return LanesImage{}, fmt.Errorf("%w: agent %d's tool call %d left background work running", ErrNotImageable, h.Agent, h.Index)
			}
			fixed := res.Image()
			h.Value = &toolRecipe{Fixed: &fixed}
			continue
		}
		r, ok := h.Value.(*toolRecipe)
		if !ok {
			return LanesImage{}, fmt.Errorf("%w: agent %d's tool call %d waits for a slot with no recipe", ErrNotImageable, h.Agent, h.Index)
		}
		if !w.Alive(h.Entity.Entity()) {
			// Its work would still run (and may change files someone reads): it needs the agent.
			return LanesImage{}, fmt.Errorf("%w: agent %d, gone, has tool call %d waiting for a slot", ErrNotImageable, h.Agent, h.Index)
		}
		c := *r
		h.Value = &c
	}
	return img, nil
}

// RestoreLanes gives the world's fresh lanes the jobs img holds: due results come back as they
// were, and each waiting job's work is made again from its recipe and its agent's restored
// state, as tool_dispatch and infer_dispatch made it. Call it once the world, the agents and
// every resource are restored.
func RestoreLanes(w *ecs.World, img *LanesImage) error {
	var t toolTurn
	if err := t.resolveTurn(w); err != nil {
		return err
	}
	t.maps = newAgentMaps(w)
	lr, err := newLiveRestorer(w)
	if err != nil {
		return err
	}
	var pa PoolAdmit
	if err := pa.Initialize(w); err != nil {
		return err
	}
	model, err := restoredModelDue(&img.Model, lr)
	if err != nil {
		return err
	}
	if err := t.lanes.Model.Restore(model, func(h ecs.HeldJob) (func() any, error) {
		if send, ok := h.Value.(*liveSendImage); ok {
			return pa.rebuildSend(lr, send)
		}
		return t.rebuildModel(w, h)
	}); err != nil {
		return err
	}
	return t.lanes.Tool.Restore(restoredToolDue(&img.Tool), func(h ecs.HeldJob) (func() any, error) {
		return t.rebuildTool(w, h)
	})
}

// restoredToolDue is the tool lane's image with its due results made again.
func restoredToolDue(img *ecs.LaneImage) *ecs.LaneImage {
	out := *img
	out.Due = slices.Clone(img.Due)
	for i := range out.Due {
		if d, ok := out.Due[i].Value.(*toolDue); ok {
			out.Due[i].Value = d.Result.Result(nil)
		}
	}
	return &out
}

// restoredModelDue is the model lane's image with its due outcomes made again, live ones with
// their tickets in flight.
func restoredModelDue(img *ecs.LaneImage, lr *liveRestorer) (*ecs.LaneImage, error) {
	out := *img
	out.Due = slices.Clone(img.Due)
	for i := range out.Due {
		d, ok := out.Due[i].Value.(*modelDue)
		if !ok {
			continue
		}
		o := &modelOutcome{reply: d.Reply, panic: d.Panic, state: d.State, source: d.Source}
		if d.HasErr {
			o.err = &restoredError{msg: d.Err, realTime: d.RealTime}
		}
		if l := d.Live; l != nil {
			t, err := lr.ticket(&l.Ticket)
			if err != nil {
				return nil, fmt.Errorf("agent %d's live turn: %w", out.Due[i].Agent, err)
			}
			o.ticket, o.pool, o.live, o.err = t, l.Pool, l.Live, l.Err.err()
		}
		out.Due[i].Value = o
	}
	return &out, nil
}

// rebuildModel makes a waiting lane turn's work again, as infer_dispatch submitted it.
func (t *toolTurn) rebuildModel(w *ecs.World, h ecs.HeldJob) (func() any, error) {
	r, ok := h.Value.(*modelRecipe)
	if !ok {
		return nil, fmt.Errorf("model turn recipe is a %T", h.Value)
	}
	job := &modelOutcome{state: r.State, source: r.Source}
	e := h.Entity.Entity()
	if !w.Alive(e) {
		// Its agent is gone: infer_collect drops what comes back, and a model changes nothing.
		return func() any { return (*modelOutcome)(nil) }, nil
	}
	id := t.maps.identity.Get(e)
	p, d := t.profiles.Get(id.Profile), t.agents.Get(id.Slot)
	cur := t.maps.cursor.Get(e)
	// As infer_dispatch decides it in a resumed run: a real-time limit the recording has for the
	// turn is given back instead of asking the model.
	var replayed error
	if limit, ok := t.rec.Tape.ModelLimit(d.Name, uint64(cur.Turn)); ok {
		replayed = replayedLimit(limit)
	}
	view := &models.View{}
	buildView(view, id, p, d, cur, rand.New(&job.source))
	view.Messages = slices.Clone(view.Messages)
	if d.Work.Cancel == nil {
		d.Work.Ctx, d.Work.Cancel = context.WithCancel(t.run.Context)
	}
	model, _, _ := p.ModelOf(cur.Stage)
	return modelWork(d.Work.Ctx, model, job, view, replayed), nil
}

// modelWork is the work of a lane model turn: replayed gives back a recorded real-time limit,
// else the model is asked on copies of the agent's model state and random source.
func modelWork(ctx context.Context, model models.Model, job *modelOutcome, view *models.View, replayed error) func() any {
	return func() any {
		if replayed != nil {
			return &modelOutcome{err: replayed, state: job.state, source: job.source}
		}
		out := callModel(ctx, model, &job.state, view)
		out.state, out.source = job.state, job.source
		return &out
	}
}

// rebuildTool makes a waiting tool call's work again, as tool_dispatch submitted it.
func (t *toolTurn) rebuildTool(w *ecs.World, h ecs.HeldJob) (func() any, error) {
	r, ok := h.Value.(*toolRecipe)
	if !ok {
		return nil, fmt.Errorf("tool call recipe is a %T", h.Value)
	}
	if r.Fixed != nil {
		res := r.Fixed.Result(nil)
		return func() any { return res }, nil
	}
	e := h.Entity.Entity()
	if !w.Alive(e) {
		return nil, errors.New("its agent is gone")
	}
	id := t.maps.identity.Get(e)
	p, d := t.profiles.Get(id.Profile), t.agents.Get(id.Slot)
	work := &d.Work
	if r.Call >= len(work.Calls) {
		return nil, fmt.Errorf("call %d of a turn of %d calls", r.Call, len(work.Calls))
	}
	call := work.Calls[r.Call]
	hd, ok := scripthost.Lookup(d, p, t.maps.cursor.Get(e).Stage, call.Name)
	if !ok {
		return nil, fmt.Errorf("call %d's tool %q does not resolve", r.Call, call.Name)
	}
	// What the call does is decided again as tool_dispatch decides it in a resumed run: the
	// restored run resumes one, whose recording may have the call (the run before the crash went
	// on past the snapshot) or whose journal may say it ran.
	entry, again := r.Entry, r.Again
	if tape := t.rec.Tape; tape != nil {
		entry, again = nil, false
		switch {
		case tape.Resuming() && !tape.Has(d.Name, call.ID):
			action, res, journaled := t.resumeDecision(p, d, call, hd, r.UsesHost)
			if res != nil {
				fixed := *res
				return func() any { return fixed }, nil
			}
			entry, again = journaled, action == resources.RunAgain
		case !r.UsesHost:
			res := t.replayed(r.Tick, d, r.Turn, r.Call, call)
			return func() any { return res }, nil
		default:
			var err error
			if entry, err = tape.Tool(r.Tick, recordedCall(d, r.Turn, r.Call, call)); err != nil {
				t.rec.Fail(err)
				res := components.ToolResult{Content: err.Error(), IsError: true}
				return func() any { return res }, nil
			}
		}
	}
	ec := &tools.ExecContext{}
	t.fillContext(ec, id, d, p, r.Turn, call.ID, r.MsgIndex)
	ec.Now = r.Now
	if r.UsesHost {
		at := *d
		at.Tools.Grants = policy.RestoreGrants(r.Grants)
		scripthost.Bind(ec, t.gate, t.seed, id, &at, p, d.Tools.Stage)
	}
	if cu, ok := hd.Tool().(tools.CommandUser); ok && cu.UsesCommands() {
		ec.Commands = t.sandbox.Runner(d, p)
	}
	if work.Cancel == nil {
		work.Ctx, work.Cancel = context.WithCancel(t.run.Context)
	}
	ec.Ctx = work.Ctx
	run := t.laneWork(r.Tick, d, r.Turn, r.Call, call, hd, ec, r.UsesHost, entry)
	if again {
		run = ranAgain(run)
	}
	return run, nil
}
