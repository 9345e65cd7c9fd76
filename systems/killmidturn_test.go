package systems_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/warrenhq/warren/components"
	"github.com/warrenhq/warren/ecs"
	"github.com/warrenhq/warren/models"
	"github.com/warrenhq/warren/subagents"
	"github.com/warrenhq/warren/systems"
)

// errNeverCancelled is how a blockingModel turn ends when nothing cancelled its context within
// blockLimit: the regression these tests look for fails them instead of hanging them.
var errNeverCancelled = errors.New("the turn's context was never cancelled")

// blockLimit bounds how long a blockingModel turn waits for its context.
const blockLimit = 10 * time.Second

// blockingModel is a lane model (no Inline method) whose every turn blocks until its context is
// done, as a live back end waiting on the network would, and then fails with the context's error.
// It records how each agent's turn ended and counts turns started and returned, so a test can
// tell that no worker goroutine is left blocked in it.
type blockingModel struct {
	started, returned atomic.Int64
	// begun receives the agent's name when a turn starts (buffered; a full channel drops it).
	begun chan string

	mu    sync.Mutex
	ended map[string]error // by agent name: ctx.Err() when the turn saw it, else errNeverCancelled
}

var _ models.Model = (*blockingModel)(nil)

func newBlockingModel() *blockingModel {
	return &blockingModel{begun: make(chan string, 16), ended: map[string]error{}}
}

func (*blockingModel) ID() string { return "test:blocking" }

func (m *blockingModel) Turn(ctx context.Context, _ *models.State, v *models.View) (models.Reply, error) {
	m.started.Add(1)
	defer m.returned.Add(1)
	select {
	case m.begun <- v.Agent.Name:
	default:
	}
	err := errNeverCancelled
	select {
	case <-ctx.Done():
		err = ctx.Err()
	case <-time.After(blockLimit):
	}
	m.mu.Lock()
	m.ended[v.Agent.Name] = err
	m.mu.Unlock()
	return models.Reply{}, err
}

// endedBy returns how agent name's turn ended (nil: it never ended, or never started).
func (m *blockingModel) endedBy(name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.ended[name]
}

// settled checks that every turn the model started has returned and the model lane owes nothing:
// no worker goroutine is left blocked in a turn.
func (m *blockingModel) settled(t *testing.T, h *harness) {
	t.Helper()
	if s, r := m.started.Load(), m.returned.Load(); s == 0 || s != r {
		t.Errorf("the model started %d turns and returned from %d; want every started turn returned", s, r)
	}
	if n := h.host.Lanes.Model.Pending(); n != 0 {
		t.Errorf("the model lane still owes %d jobs", n)
	}
}

// An agent killed while its lane model is mid-turn has that turn's context cancelled: by
// kill_agent, by the kill of a subtree above it, and by its parent's end (reap kills the
// orphan). The model returns, the tick's barrier does not wait out the turn, the agent ends
// killed with no model turn recorded, and the run reaches its fixed point. In virtual time a
// kill reaches a turn only in the tick the turn started (the barrier closes every tick), so each
// case kills in that tick.
func TestKillMidTurnCancelsLaneModel(t *testing.T) {
	const byKill = "killed by boss-0 (kill_agent)"
	cases := []struct {
		name string
		boss []models.ScriptedTurn
		// blocked is the agent whose model blocks; killed are all the agents the kill ends.
		blocked string
		killed  []string
		reason  string
	}{
		{
			name: "kill_agent",
			boss: []models.ScriptedTurn{
				turn("", spawnCall("worker", "block", nil)),
				turn("", targetCall(subagents.NameKill, "boss-0/1")), // tick 1: the worker's turn started this tick
				turn("done"),
			},
			blocked: "boss-0/1", killed: []string{"boss-0/1"}, reason: byKill,
		},
		{
			name: "the kill of its subtree",
			boss: []models.ScriptedTurn{
				turn("", spawnCall("lead", "lead", nil)),
				turn("", call("echo_inline", "wait a tick")),
				turn("", targetCall(subagents.NameKill, "boss-0/1")), // tick 2: the lead's child's turn started this tick
				turn("done"),
			},
			blocked: "boss-0/1/1", killed: []string{"boss-0/1", "boss-0/1/1"}, reason: byKill,
		},
		{
			name: "its parent's end",
			boss: []models.ScriptedTurn{
				turn("", spawnCall("worker", "block", nil)),
				turn("boss done"), // tick 1: the boss ends, and reap kills its child mid-turn
			},
			blocked: "boss-0/1", killed: []string{"boss-0/1"}, reason: "parent boss-0 ended (done)",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			blocking := newBlockingModel()
			w := newTree(t, treeSpec{
				boss: scripted(t, "scripted:boss", tc.boss...),
				children: map[string]models.Model{
					"worker": blocking,
					"lead":   scripted(t, "scripted:lead", turn("", spawnCall("worker", "block", map[string]any{"wait": true})), turn("lead done")),
				},
			})
			start := time.Now()
			w.runAll()
			if took := time.Since(start); took > blockLimit/2 {
				t.Errorf("the run took %v: the kill did not stop the blocked turn", took)
			}
			if got := blocking.endedBy(tc.blocked); !errors.Is(got, context.Canceled) {
				t.Errorf("%s's turn ended with %v, want its context cancelled", tc.blocked, got)
			}
			blocking.settled(t, w.harness)
			for _, name := range tc.killed {
				r := w.wantRecord(name, components.Killed, tc.reason)
				if name == tc.blocked && r.Counters.ModelTurns != 0 {
					t.Errorf("%s's record counts %d model turns, want the cancelled turn dropped", name, r.Counters.ModelTurns)
				}
			}
			if turns := w.events("model_turn", tc.blocked); len(turns) != 0 {
				t.Errorf("the killed agent's cancelled turn was applied:%s", describeTree(turns))
			}
			w.wantRecord("boss-0", components.Done, "")
		})
	}
}

// blockingAgent is a harness with one top-level agent, g-0, whose lane model blocks until its
// context is done.
func blockingAgent(t *testing.T) (*harness, *blockingModel) {
	t.Helper()
	h := newHarness(t, options{})
	blocking := newBlockingModel()
	h.spawn(h.profile("g", h.blueprint(`
name = "solo"

[[stages]]
name = "work"
available_tools = ["echo_inline"]
`), blocking, ""), 1)
	return h, blocking
}

// Cancelling the run's context (the Host's Context) unblocks a lane model mid-turn: its turn's
// context is the run's, the barrier does not wait out the turn, and the run stops cancelled with
// no worker left blocked.
func TestRunCancelUnblocksLaneModel(t *testing.T) {
	h, blocking := blockingAgent(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h.host.Run.Context = ctx
	go func() {
		<-blocking.begun
		cancel()
	}()
	start := time.Now()
	stop, err := h.sched.Run(ctx, 100)
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > blockLimit/2 {
		t.Errorf("the run took %v: cancelling it did not stop the blocked turn", took)
	}
	if stop != ecs.Cancelled {
		t.Errorf("stop %v, want cancelled", stop)
	}
	if got := blocking.endedBy("g-0"); !errors.Is(got, context.Canceled) {
		t.Errorf("the turn ended with %v, want the run's cancellation", got)
	}
	if s, r := blocking.started.Load(), blocking.returned.Load(); s != 1 || r != 1 {
		t.Errorf("the model started %d turns and returned from %d, want 1 and 1", s, r)
	}
}

// A deadline on the run's context ends a blocked lane turn too: the turn fails with the
// deadline's error like any model failure (the agent's stage ends with outcome error), and the
// run goes on to its fixed point.
func TestRunDeadlineEndsLaneModelTurn(t *testing.T) {
	h, blocking := blockingAgent(t)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	h.host.Run.Context = ctx
	h.runAll()
	if got := blocking.endedBy("g-0"); !errors.Is(got, context.DeadlineExceeded) {
		t.Errorf("the turn ended with %v, want the run's deadline", got)
	}
	blocking.settled(t, h)
	h.wantRecord("g-0", components.Failed, "model error: "+context.DeadlineExceeded.Error())
}

// An inline model decides under the run's context itself (nothing can kill its agent while it
// decides, since it runs inside infer_dispatch).
func TestInlineModelGetsTheRunContext(t *testing.T) {
	h := newHarness(t, options{})
	h.host.Run.Context = context.WithValue(context.Background(), runKey{}, "the run")
	var seen []any
	h.spawn(h.profile("g", h.blueprint(`
name = "solo"

[[stages]]
name = "work"
available_tools = ["echo_inline"]
`), ctxModel{seen: &seen}, ""), 2)
	h.runAll()
	if len(seen) != 2 || seen[0] != "the run" || seen[1] != "the run" {
		t.Errorf("the inline turns saw %v, want the run's context twice", seen)
	}
}

// runKey marks the run's context in TestInlineModelGetsTheRunContext.
type runKey struct{}

// ctxModel is an inline model that records the runKey value of each turn's context and ends the
// stage.
type ctxModel struct{ seen *[]any }

var (
	_ models.Model        = ctxModel{}
	_ systems.InlineModel = ctxModel{}
)

func (ctxModel) ID() string   { return "test:ctx" }
func (ctxModel) Inline() bool { return true }

func (m ctxModel) Turn(ctx context.Context, _ *models.State, _ *models.View) (models.Reply, error) {
	*m.seen = append(*m.seen, ctx.Value(runKey{}))
	return models.Reply{Text: "done"}, nil
}
