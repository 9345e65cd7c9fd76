package systems

import (
	"context"
	"encoding/gob"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/warrenhq/warren/components"
	"github.com/warrenhq/warren/ecs"
	"github.com/warrenhq/warren/inference"
	"github.com/warrenhq/warren/models"
	"github.com/warrenhq/warren/recording"
	"github.com/warrenhq/warren/resources"
	"github.com/warrenhq/warren/tools"
)

// A live model's turns are held in three places at a tick boundary: parked in an inference pool
// (a ticket in its queue or waiting out a back-off), sent and waiting for a model-lane slot (a
// liveSend), or answered and due later (a modelOutcome with its ticket). Each ticket's Value is
// its liveJob; the images below turn them into data and back, the pools' own state being
// inference.Pool's image.

// liveJobImage is a liveJob as data.
type liveJobImage struct {
	Entity          ecs.EntityRef
	Agent, Group    string
	Root, Turn      uint64
	ModelID         string
	View            viewImage
	State           models.State
	Source          rand.PCG
	Latency         uint64
	Bytes, Prompt   int64
	Reserved        inference.Cost
	SentFrom        string
	Dropped         int
	Copied          bool
	ContextCanceled bool
}

// viewImage is a models.View as data: every field but the random stream, which a restore points
// at the job's own source again.
type viewImage struct {
	Agent                              models.AgentInfo
	Stage                              string
	StageIndex, Iteration, Visit, Turn int
	System                             string
	Messages                           []models.Message
	Tools                              []models.ToolInfo
	// Memory is the view's memory as JSON text ("" when empty): gob cannot carry its any values,
	// and JSON is what the memory held them as.
	Memory string
}

// liveSendImage is a live send waiting for a model-lane slot, as data.
type liveSendImage struct {
	Tick   uint64
	Ticket inference.TicketImage
}

// liveDue is what a due live outcome adds to modelDue: who asked what (for the recording), the
// ticket in flight and the pool that sent it, and how its error classifies.
type liveDue struct {
	Live   *recording.ModelTurn
	Ticket inference.TicketImage
	Pool   string
	Err    errImage
}

// errImage is a live attempt's error as data: the retry policy and the recording read only what
// attemptFailure returns, a cancellation, and the message.
type errImage struct {
	Kind       uint8 // 0 none, 1 an attempt's failure, 2 a cancellation, 3 the host's own
	Msg        string
	Status     int
	RetryAfter time.Duration
	Timeout    bool
	RealTime   bool
}

func init() {
	gob.RegisterName("warren/systems.liveJobImage", &liveJobImage{})
	gob.RegisterName("warren/systems.liveSendImage", &liveSendImage{})
}

func imageErr(err error) errImage {
	switch {
	case err == nil:
		return errImage{}
	case errors.Is(err, context.Canceled):
		return errImage{Kind: 2, Msg: err.Error()}
	}
	if f, ok := attemptFailure(err); ok {
		return errImage{Kind: 1, Msg: err.Error(), Status: f.status, RetryAfter: f.retryAfter, Timeout: f.timeout}
	}
	return errImage{Kind: 3, Msg: err.Error(), RealTime: tools.IsRealTime(err)}
}

func (e errImage) err() error {
	switch e.Kind {
	case 1:
		return &recordedFailure{msg: e.Msg, status: e.Status, retryAfter: e.RetryAfter, timeout: e.Timeout}
	case 2:
		return &canceledError{msg: e.Msg}
	case 3:
		return &restoredError{msg: e.Msg, realTime: e.RealTime}
	}
	return nil
}

// canceledError is a restored cancellation: its message, and errors.Is(context.Canceled).
type canceledError struct{ msg string }

func (e *canceledError) Error() string        { return e.msg }
func (e *canceledError) Is(target error) bool { return target == context.Canceled }

// TicketValueImage is the image of a live ticket's Value (its liveJob), for
// resources.Inference.Image.
func TicketValueImage(t *inference.Ticket) (any, error) {
	job, ok := t.Value.(*liveJob)
	if !ok {
		return nil, fmt.Errorf("%w: a ticket holds a %T", ErrNotImageable, t.Value)
	}
	img := job.image()
	return &img, nil
}

func (j *liveJob) image() liveJobImage {
	v := j.view
	img := liveJobImage{Entity: ecs.RefOf(j.entity), Agent: j.agent, Group: j.group, Root: j.root, Turn: j.turn, ModelID: j.modelID,
		View: viewImage{Agent: v.Agent, Stage: v.Stage, StageIndex: v.StageIndex, Iteration: v.Iteration, Visit: v.Visit, Turn: v.Turn,
			System: v.System, Messages: slices.Clone(v.Messages), Tools: slices.Clone(v.Tools), Memory: memoryJSON(v.Memory)},
		State: j.state, Source: j.source, Latency: j.latency, Bytes: j.bytes, Prompt: j.prompt, Reserved: j.reserved,
		Dropped: j.dropped, Copied: j.copied, ContextCanceled: j.ctx != nil && j.ctx.Err() != nil}
	if j.sentFrom != nil {
		img.SentFrom = j.sentFrom.Name()
	}
	return img
}

// liveRestorer makes live jobs again in a restored world.
type liveRestorer struct {
	w   *ecs.World
	st  store
	inf *resources.Inference
}

func newLiveRestorer(w *ecs.World) (*liveRestorer, error) {
	st, err := resolveStore(w)
	if err != nil {
		return nil, err
	}
	inf, err := resources.Get[resources.Inference](w)
	if err != nil {
		return nil, err
	}
	return &liveRestorer{w: w, st: st, inf: inf}, nil
}

// RestoreTicketValue makes a live ticket's Value again from its image, for
// resources.Inference.Restore; call it once the world and the agents are restored.
func RestoreTicketValue(w *ecs.World) (func(*inference.Ticket, any) (any, error), error) {
	lr, err := newLiveRestorer(w)
	if err != nil {
		return nil, err
	}
	return func(_ *inference.Ticket, v any) (any, error) {
		img, ok := v.(*liveJobImage)
		if !ok {
			return nil, fmt.Errorf("a ticket's value image is a %T", v)
		}
		return lr.job(img)
	}, nil
}

func (lr *liveRestorer) pool(name string) (*inference.Pool, error) {
	for _, p := range lr.inf.Pools {
		if p.Name() == name {
			return p, nil
		}
	}
	return nil, fmt.Errorf("no pool %q", name)
}

// job is the liveJob img holds, with its route, its pool and its agent's turn context.
func (lr *liveRestorer) job(img *liveJobImage) (*liveJob, error) {
	route, err := lr.inf.Route(img.ModelID, nil)
	if err != nil {
		return nil, err
	}
	j := &liveJob{entity: img.Entity.Entity(), agent: img.Agent, group: img.Group, root: img.Root, turn: img.Turn, modelID: img.ModelID,
		route: route, state: img.State, latency: img.Latency, bytes: img.Bytes, prompt: img.Prompt, reserved: img.Reserved,
		dropped: img.Dropped, copied: img.Copied, source: img.Source}
	v := img.View
	j.view = &models.View{Agent: v.Agent, Stage: v.Stage, StageIndex: v.StageIndex, Iteration: v.Iteration, Visit: v.Visit, Turn: v.Turn,
		System: v.System, Messages: v.Messages, Tools: v.Tools, Rand: rand.New(&j.source)}
	if v.Memory != "" {
		if err := json.Unmarshal([]byte(v.Memory), &j.view.Memory); err != nil {
			return nil, fmt.Errorf("live job of %s: memory: %w", img.Agent, err)
		}
	}
	if img.SentFrom != "" {
		if j.sentFrom, err = lr.pool(img.SentFrom); err != nil {
			return nil, err
		}
	}
	alive := lr.w.Alive(j.entity) && !img.ContextCanceled
	if alive {
		ids := ecs.NewMap[components.Identity](lr.w)
		d := lr.st.agents.Get(ids.Get(j.entity).Slot)
		if d.Work.Cancel == nil {
			d.Work.Ctx, d.Work.Cancel = context.WithCancel(lr.st.run.Context)
		}
		j.ctx = d.Work.Ctx
	} else {
		ctx, cancel := context.WithCancel(lr.st.run.Context)
		cancel() // its agent was killed: pool_admit drops it, infer_collect counts nothing
		j.ctx = ctx
	}
	return j, nil
}

// ticket is the in-flight ticket img holds, with its job.
func (lr *liveRestorer) ticket(img *inference.TicketImage) (*inference.Ticket, error) {
	ji, ok := img.Value.(*liveJobImage)
	if !ok {
		return nil, fmt.Errorf("a ticket's value image is a %T", img.Value)
	}
	job, err := lr.job(ji)
	if err != nil {
		return nil, err
	}
	p, err := lr.pool(img.Pool)
	if err != nil {
		return nil, err
	}
	return img.Ticket(p, job), nil
}

// rebuildSend makes a live send waiting for a model-lane slot again, as pool_admit sent it: its
// answer decided again from the resumed run's recording and effect journal.
func (s *PoolAdmit) rebuildSend(lr *liveRestorer, img *liveSendImage) (func() any, error) {
	t, err := lr.ticket(&img.Ticket)
	if err != nil {
		return nil, err
	}
	job := t.Value.(*liveJob)
	if job.sentFrom == nil {
		return nil, errors.New("a live send without the pool that sent it")
	}
	return s.sendWork(img.Tick, t.Attempt, t, job, job.route.Model(job.sentFrom)), nil
}

// memoryJSON is a view's memory as JSON text, "" when empty.
func memoryJSON(m map[string]any) string {
	if len(m) == 0 {
		return ""
	}
	text, err := json.Marshal(m) // every value was decoded from JSON, so it encodes again
	if err != nil {
		return ""
	}
	return string(text)
}
