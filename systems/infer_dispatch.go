package systems

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"github.com/warrenhq/warren/blueprint"
	"github.com/warrenhq/warren/components"
	"github.com/warrenhq/warren/ecs"
	"github.com/warrenhq/warren/faults"
	"github.com/warrenhq/warren/inference"
	"github.com/warrenhq/warren/internal/scripthost"
	"github.com/warrenhq/warren/models"
	"github.com/warrenhq/warren/recording"
	"github.com/warrenhq/warren/resources"
	"github.com/warrenhq/warren/subagents"
	"github.com/warrenhq/warren/tools"
)

// InlineModel is implemented by model back ends cheap enough to decide a turn inside the
// dispatch system (scripted turns, small script policies). Others run on the model lane.
type InlineModel interface{ Inline() bool }

func isInline(m models.Model) bool {
	im, ok := m.(InlineModel)
	return ok && im.Inline()
}

// modelOutcome is what a model turn produced, on whichever path it ran. A lane turn works on
// copies of the agent's model state and random source, which come back here to be stored by the
// collect system: nothing on a worker goroutine writes to agent storage.
type modelOutcome struct {
	reply  models.Reply
	err    error
	panic  string
	state  models.State
	source rand.PCG
	// live is set for a live model's turn while the run records: who asked what, for the
	// recording (filled at dispatch, since the agent may be gone when the answer comes back).
	live *recording.ModelTurn
	// ticket is a live model's turn in its inference pool, pool the name of the pool that sent
	// the attempt, and cost the answer's price in picodollars (set by infer_collect).
	ticket *inference.Ticket
	pool   string
	cost   int64
}

// callModel runs one model turn under ctx, turning a panic into a failure of this agent alone.
func callModel(ctx context.Context, m models.Model, st *models.State, v *models.View) (out modelOutcome) {
	defer func() {
		if r := recover(); r != nil {
			out = modelOutcome{panic: fmt.Sprint(r)}
		}
	}()
	out.reply, out.err = m.Turn(ctx, st, v)
	return out
}

// turnApplier applies a finished model turn to an agent; shared by infer_dispatch (inline
// models) and infer_collect (lane models) so both paths behave identically.
type turnApplier struct {
	store
	lanes *resources.Lanes
	rec   *resources.Recording
	maps  agentMaps
}

// resolve resolves the resources a model turn uses, once, in its system's Initialize.
func (a *turnApplier) resolve(w *ecs.World) (err error) {
	if a.store, err = resolveStore(w); err != nil {
		return err
	}
	if a.lanes, err = resources.Get[resources.Lanes](w); err != nil {
		return err
	}
	a.rec, err = resolveRecording(w)
	return err
}

// liveRequest is the hash a live model's turn is recorded and matched by: the body it sends
// (models.Live.Request), so a changed prompt, conversation or tool list is a divergence; for a
// tape of an earlier format version, in the form that version hashed (models.LegacyRequest).
func liveRequest(tape *recording.Tape, modelID string, lm models.Live, v *models.View) string {
	data, err := lm.Request(v)
	if err != nil {
		data = []byte(err.Error())
	}
	if old, ok := lm.(models.LegacyRequest); ok && tape != nil && tape.Header.Version < recording.Version {
		data = old.RecordedAs(tape.Header.Version, data)
	}
	return recording.ModelRequestHash(modelID, data)
}

// replayedLimit is a recorded real-time failure (tools.IsRealTime: a JS policy left waiting past
// its wall-clock backstop) given back in a replay instead of asking the model.
type replayedLimit string

func (e replayedLimit) Error() string  { return string(e) }
func (e replayedLimit) RealTime() bool { return true }

// destination is where an agent goes after its turn is applied.
type destination uint8

const (
	toTools destination = iota
	toResolve
	toTerminal
	toAwait
)

func (a *turnApplier) apply(tick uint64, e ecs.Entity, id *components.Identity, cur *components.Cursor, out modelOutcome) destination {
	p := a.profiles.Get(id.Profile)
	d := a.agents.Get(id.Slot)
	stage := &p.Blueprint.Stages[cur.Stage]
	_, modelID, _ := p.ModelOf(cur.Stage)
	iteration := int(cur.Iteration)
	turn := cur.Turn
	cur.Turn++
	cur.Iteration++
	a.maps.counters.Get(e).ModelTurns++
	a.run.CountModelTurn(modelID, out.err != nil || out.panic != "")
	if out.panic != "" {
		reason := "panic in model " + modelID + ": " + out.panic
		a.run.Trace.ModelTurn(tick, ref(id, d), stage.Name, modelID, iteration, "", 0, reason, nil)
		terminate(a.run.Trace, tick, id, d, a.maps.status.Get(e), stage.Name, components.Failed, reason)
		return toTerminal
	}
	if out.err != nil {
		if tools.IsRealTime(out.err) {
			a.run.RealTimeLimits++
			if out.ticket == nil { // a live turn's attempts are recorded whole, timeouts included
				a.rec.Writer.ModelLimit(tick, d.Name, uint64(turn), out.err.Error())
			}
		}
		a.run.Trace.ModelTurn(tick, ref(id, d), stage.Name, modelID, iteration, out.reply.Text, 0, out.err.Error(), liveTrace(&out))
		cur.Outcome = blueprint.OutcomeError
		d.Reason = "model error: " + out.err.Error()
		return toResolve
	}
	calls := out.reply.Calls // the host's once Turn returns (see models.Reply)
	for i := range calls {
		if calls[i].ID == "" {
			calls[i].ID = callID(d.Name, turn, i)
		}
	}
	d.Conversation.Append(models.Message{Role: models.RoleAssistant, Content: out.reply.Text, Calls: calls})
	if p.Blueprint.Reads.Text {
		if d.Output == nil {
			d.Output = &components.StageOutput{}
		}
		d.Output.Text = out.reply.Text
	}
	a.run.Trace.ModelTurn(tick, ref(id, d), stage.Name, modelID, iteration, out.reply.Text, len(calls), "", liveTrace(&out))
	if len(calls) == 0 {
		cur.Outcome = blueprint.OutcomeDone
		return toResolve
	}
	d.Work.Reset()
	d.Work.Calls = calls
	return toTools
}

// callID names a call the model left unnamed: "<agent>-t<turn>-c<index>", deterministic and
// unique within the agent's run.
func callID(agent string, turn int32, i int) string {
	b := make([]byte, 0, len(agent)+16)
	b = append(b, agent...)
	b = append(b, "-t"...)
	b = strconv.AppendInt(b, int64(turn), 10)
	b = append(b, "-c"...)
	b = strconv.AppendInt(b, int64(i), 10)
	return string(b)
}

// buildView fills v with what the model sees for one turn.
func buildView(v *models.View, id *components.Identity, p *components.Profile, d *components.AgentData, cur *components.Cursor, rnd *rand.Rand) {
	*v = models.View{
		Agent:      models.AgentInfo{ID: id.ID, Name: d.Name, Group: p.Group, Index: int(id.Index)},
		Stage:      p.Blueprint.Stages[cur.Stage].Name,
		StageIndex: int(cur.Stage),
		Iteration:  int(cur.Iteration),
		Visit:      int(d.Visits[cur.Stage]),
		Memory:     d.Memory.Map(),
		Turn:       int(cur.Turn),
		Messages:   d.Conversation.Messages,
		Tools:      scripthost.StageTools(d, p, cur.Stage),
		Rand:       rnd,
	}
}

// InferDispatch starts a model turn for every agent in ReadyToInfer. Messages waiting in the
// agent's inbox join its conversation first, when its stage accepts messages. An agent that has
// used its stage's max_iterations ends the visit with outcome max_iterations instead; one that has
// had its life's model turns (resources.AgentLimits) ends failed; an agent in a fan-out stage is
// not asked at all (see fanOutStage). Inline models decide
// on the spot; others are submitted to the model lane and the agent waits in AwaitingInference.
type InferDispatch struct {
	turnApplier
	view     *ecs.View2[components.Cursor, components.Identity]
	tools    *mover
	resolve  *mover
	await    *mover
	terminal *mover
	scratch  models.View
	rngRef   pcgRef
	rnd      *rand.Rand
	dynamic  *scripthost.Dynamic
	faults   *faults.Injector
	inf      *resources.Inference
	// maxTurns is the run's turn limit per agent, and turnLimit the reason of an agent it ends.
	maxTurns  uint32
	turnLimit string
}

var _ ecs.System = (*InferDispatch)(nil)

func init() {
	Register(Info{ID: IDPrefix + "infer_dispatch", Order: 30, New: func() ecs.System { return &InferDispatch{} }})
}

// Name implements ecs.System.
func (*InferDispatch) Name() string { return "infer_dispatch" }

// Initialize implements ecs.System.
func (s *InferDispatch) Initialize(w *ecs.World) (err error) {
	if err := s.turnApplier.resolve(w); err != nil {
		return err
	}
	if s.dynamic, err = resources.Get[scripthost.Dynamic](w); err != nil {
		return err
	}
	f, err := resources.Get[resources.Faults](w)
	if err != nil {
		return err
	}
	s.faults = f.Injector
	if s.inf, err = resources.Get[resources.Inference](w); err != nil {
		return err
	}
	limits, err := resources.Get[resources.AgentLimits](w)
	if err != nil {
		return err
	}
	s.maxTurns, s.turnLimit = limits.MaxModelTurns, limits.TurnLimitReason()
	s.maps = newAgentMaps(w)
	s.view = ecs.NewView2[components.Cursor, components.Identity](w, []ecs.Comp{ecs.T[components.ReadyToInfer]()}, nil)
	s.tools = newMover[components.ReadyToInfer, components.ReadyForTools](w)
	s.resolve = newMover[components.ReadyToInfer, components.ResolveTransition](w)
	s.await = newMover[components.ReadyToInfer, components.AwaitingInference](w)
	s.terminal = newMover[components.ReadyToInfer, components.Terminal](w)
	s.rnd = rand.New(&s.rngRef)
	return nil
}

// Update implements ecs.System.
func (s *InferDispatch) Update(w *ecs.World) {
	tick := w.Tick()
	q := s.view.Query()
	for q.Next() {
		cur, id := q.Get()
		e := q.Entity()
		p := s.profiles.Get(id.Profile)
		d := s.agents.Get(id.Slot)
		stage := &p.Blueprint.Stages[cur.Stage]
		if stage.FanOut != nil {
			s.fanOutStage(e, d, cur, stage)
			continue
		}
		if p.Blueprint.DynamicTools {
			if d.Workdir == "" && p.Workdir != nil {
				d.Workdir = p.Workdir(d.Name, int(id.Index))
			}
			s.dynamic.Scan(tick, uint64(cur.Turn), id, d, p, cur.Stage)
		}
		if len(d.Inbox) > 0 && stage.AcceptsMessages {
			for _, m := range d.Inbox {
				d.Conversation.Append(m)
			}
			clear(d.Inbox)
			d.Inbox = d.Inbox[:0]
		}
		if int(cur.Iteration) >= stage.MaxIterations {
			cur.Outcome = blueprint.OutcomeMaxIterations
			d.Reason = "stage " + strconv.Quote(stage.Name) + " reached max_iterations (" + strconv.Itoa(stage.MaxIterations) + ")"
			s.resolve.add(e)
			continue
		}
		if s.maps.counters.Get(e).ModelTurns >= s.maxTurns {
			// The agent has had every turn its life allows: it ends here, whatever its stage's
			// transitions say, so that no stage graph and no model keeps an agent forever.
			terminate(s.run.Trace, tick, id, d, s.maps.status.Get(e), stage.Name, components.Failed, s.turnLimit)
			s.terminal.add(e)
			continue
		}
		fail, slow := s.faults.Model(p.Group, id.ID, uint64(cur.Turn))
		if fail {
			// An injected model failure: the model is not asked, and the turn fails as a model's would.
			s.route(e, s.apply(tick, e, id, cur, modelOutcome{err: faults.ErrModel}))
			continue
		}
		latency := s.lanes.Latency.Model
		if slow {
			latency += s.faults.SlowTicks() // an inline model goes through the lane to be slow
		}
		model, modelID, slot := p.ModelOf(cur.Stage)
		if lm, ok := model.(models.Live); ok && lm.Live() {
			// A live model's turn waits for its inference pool, parked as data (pool_admit sends it).
			s.route(e, s.queueLive(tick, e, id, cur, p, d, lm, modelID, slot, latency))
			continue
		}
		// A recorded turn that a real-time limit ended: the replay gives that back, on the path
		// (inline or lane) and at the tick the model's answer came, without asking the model.
		var replayed error
		if limit, ok := s.rec.Tape.ModelLimit(d.Name, uint64(cur.Turn)); ok {
			replayed = replayedLimit(limit)
		}
		if replayed != nil && isInline(model) && !slow {
			s.route(e, s.apply(tick, e, id, cur, modelOutcome{err: replayed}))
			continue
		}
		if isInline(model) && !slow {
			s.rngRef.src = &s.maps.rng.Get(e).Source
			buildView(&s.scratch, id, p, d, cur, s.rnd)
			// The run's context: an inline turn ends before anything else can end its agent.
			out := callModel(s.run.Context, model, d.ModelState(slot), &s.scratch)
			s.scratch = models.View{} // it points into the agent's conversation: let it go with the agent
			s.route(e, s.apply(tick, e, id, cur, out))
			continue
		}
		job := &modelOutcome{state: *d.ModelState(slot), source: s.maps.rng.Get(e).Source}
		view := &models.View{}
		buildView(view, id, p, d, cur, rand.New(&job.source))
		view.Messages = slices.Clone(view.Messages)
		// The turn's context is the run's (its cancellation and deadline), cancelled as well when
		// the agent is killed (kill.go cancels d.Work) and once infer_collect has the turn back.
		ctx, cancel := context.WithCancel(s.run.Context)
		d.Work.Ctx, d.Work.Cancel = ctx, cancel
		recipe := &modelRecipe{Tick: tick, State: job.state, Source: s.maps.rng.Get(e).Source}
		s.lanes.Model.Submit(tick, ecs.Job{Agent: id.ID, Entity: e, Latency: latency,
			Run: modelWork(ctx, model, job, view, replayed), Recipe: recipe})
		s.await.add(e)
	}
	w.Touch(s.tools.apply() + s.resolve.apply() + s.await.apply() + s.terminal.apply())
}

// fanOutStage runs a fan-out stage: its model is not asked. On the first iteration the host
// makes the stage's fan_out call (which passes the gate like any call); once its merged result
// is in, the stage ends done, or with outcome error when the fan-out failed.
func (s *InferDispatch) fanOutStage(e ecs.Entity, d *components.AgentData, cur *components.Cursor, stage *blueprint.Stage) {
	if cur.Iteration > 0 {
		cur.Outcome = blueprint.OutcomeDone
		if msgs := d.Conversation.Messages; len(msgs) > 0 && msgs[len(msgs)-1].IsError {
			cur.Outcome = blueprint.OutcomeError
			d.Reason = "fan_out failed: " + firstLine(msgs[len(msgs)-1].Content)
		}
		s.resolve.add(e)
		return
	}
	cfg := stage.FanOut
	args, _ := json.Marshal(struct {
		Blueprint       string `json:"blueprint"`
		ItemsFile       string `json:"items_file"`
		MaxWorkers      int    `json:"max_workers"`
		OnWorkerFailure string `json:"on_worker_failure"`
	}{cfg.Blueprint, cfg.ItemsFile, cfg.MaxWorkers, failurePolicy(cfg.FailAll)})
	calls := []models.ToolCall{{ID: callID(d.Name, cur.Turn, 0), Name: subagents.NameFanOut, Args: args}}
	cur.Turn++
	cur.Iteration++
	d.Conversation.Append(models.Message{Role: models.RoleAssistant, Calls: calls})
	d.Work.Reset()
	d.Work.Calls = calls
	s.tools.add(e)
}

// failurePolicy spells a fan-out stage's on_worker_failure.
func failurePolicy(failAll bool) string {
	if failAll {
		return subagents.FailAll.String()
	}
	return subagents.FailContinue.String()
}

// firstLine is the first line of text.
func firstLine(text string) string {
	line, _, _ := strings.Cut(text, "\n")
	return line
}

func (s *InferDispatch) route(e ecs.Entity, d destination) {
	switch d {
	case toTools:
		s.tools.add(e)
	case toResolve:
		s.resolve.add(e)
	case toAwait:
		s.await.add(e)
	default:
		s.terminal.add(e)
	}
}

// Finalize implements ecs.System.
func (*InferDispatch) Finalize(*ecs.World) {}
