package systems_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/warrenhq/warren/blueprint"
	"github.com/warrenhq/warren/components"
	"github.com/warrenhq/warren/ecs"
	"github.com/warrenhq/warren/models"
	"github.com/warrenhq/warren/resources"
	"github.com/warrenhq/warren/systems"
)

const oneStageBlueprint = `
name = "one"

[[stages]]
name = "work"
available_tools = ["echo_inline", "echo", "fail", "boom", "boom_lane", "ctx_probe", "jitter", "fast", "medium", "slow", "park"]
max_iterations = 5
`

// dispatchOnly is the part of the pipeline that brings an agent to its first model decision.
func dispatchOnly() []ecs.System {
	return []ecs.System{&systems.SyncStage{}, &systems.InferDispatch{}}
}

func TestInferDispatchRoutesAnInlineTurn(t *testing.T) {
	unnamed := inlineModel{id: "inline:unnamed", turn: func(*models.State, *models.View) (models.Reply, error) {
		return models.Reply{Text: "two calls", Calls: []models.ToolCall{
			{ID: "mine", Name: "echo_inline", Args: []byte(`{"text":"a"}`)},
			{Name: "echo_inline", Args: []byte(`{"text":"b"}`)},
		}}, nil
	}}
	cases := []struct {
		name        string
		model       func(t *testing.T) models.Model
		wantPhase   string
		wantOutcome blueprint.Outcome
		wantCallIDs []string
		wantReason  string
		wantError   string // the model_turn event's error field
		wantText    string // the last assistant message ("" when none was appended)
	}{
		{
			name: "tool calls wait for tool dispatch",
			model: func(t *testing.T) models.Model {
				return scripted(t, "scripted:calls", turn("let me look", call("echo_inline", "x"), call("echo", "y")))
			},
			wantPhase:   "ReadyForTools",
			wantCallIDs: []string{"g-0-t0-c0", "g-0-t0-c1"},
			wantText:    "let me look",
		},
		{
			name:        "calls the model left unnamed get host ids",
			model:       func(*testing.T) models.Model { return unnamed },
			wantPhase:   "ReadyForTools",
			wantCallIDs: []string{"mine", "g-0-t0-c1"},
			wantText:    "two calls",
		},
		{
			name:        "no calls ends the visit done",
			model:       func(t *testing.T) models.Model { return scripted(t, "scripted:done", turn("finished")) },
			wantPhase:   "ResolveTransition",
			wantOutcome: blueprint.OutcomeDone,
			wantText:    "finished",
		},
		{
			name: "a model error ends the visit with outcome error",
			model: func(t *testing.T) models.Model {
				return scripted(t, "scripted:err", models.ScriptedTurn{Error: "backend unreachable"})
			},
			wantPhase:   "ResolveTransition",
			wantOutcome: blueprint.OutcomeError,
			wantReason:  "model error: scripted model failure: backend unreachable",
			wantError:   "scripted model failure: backend unreachable",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, options{systems: dispatchOnly()})
			e := h.spawn(h.profile("g", h.blueprint(oneStageBlueprint), tc.model(t), "do it"), 1)[0]
			h.step()

			if got := h.phase(e); got != tc.wantPhase {
				t.Fatalf("phase %s, want %s", got, tc.wantPhase)
			}
			cur, d := h.cursor.Get(e), h.data(e)
			if cur.Outcome != tc.wantOutcome {
				t.Errorf("outcome %v, want %v", cur.Outcome, tc.wantOutcome)
			}
			if d.Reason != tc.wantReason {
				t.Errorf("reason %q, want %q", d.Reason, tc.wantReason)
			}
			var ids []string
			for _, c := range d.Work.Calls {
				ids = append(ids, c.ID)
			}
			if !slices.Equal(ids, tc.wantCallIDs) {
				t.Errorf("call ids %v, want %v", ids, tc.wantCallIDs)
			}
			if cur.Iteration != 1 || cur.Turn != 1 || h.counters.Get(e).ModelTurns != 1 {
				t.Errorf("iteration %d turn %d model turns %d, want 1 each", cur.Iteration, cur.Turn, h.counters.Get(e).ModelTurns)
			}
			last := d.Conversation.Messages[len(d.Conversation.Messages)-1]
			if tc.wantText == "" {
				if len(d.Conversation.Messages) != 1 {
					t.Errorf("a failed turn was appended to the conversation: %+v", d.Conversation.Messages)
				}
			} else {
				if last.Role != models.RoleAssistant || last.Content != tc.wantText {
					t.Errorf("last message %+v, want the assistant's %q", last, tc.wantText)
				}
				var kept []string
				for _, c := range last.Calls {
					kept = append(kept, c.ID)
				}
				if !slices.Equal(kept, tc.wantCallIDs) {
					t.Errorf("conversation call ids %v, want %v", kept, tc.wantCallIDs)
				}
			}
			turns := h.events("model_turn", "g-0")
			if len(turns) != 1 {
				t.Fatalf("model_turn events %+v", turns)
			}
			if ev := turns[0]; ev.Calls != len(tc.wantCallIDs) || ev.Error != tc.wantError || ev.Stage != "work" || ev.Iteration != 0 {
				t.Errorf("model_turn %+v, want %d calls, error %q, stage work, iteration 0", ev, len(tc.wantCallIDs), tc.wantError)
			}
		})
	}
}

func TestInferDispatchStopsAtMaxIterationsWithoutCallingTheModel(t *testing.T) {
	var calls atomic.Int64
	model := inlineModel{id: "inline:busy", turn: func(*models.State, *models.View) (models.Reply, error) {
		calls.Add(1)
		return models.Reply{Calls: []models.ToolCall{{Name: "echo_inline", Args: []byte(`{"text":"again"}`)}}}, nil
	}}
	h := newHarness(t, options{systems: dispatchOnly()})
	bp := h.blueprint(`
name = "short"
[[stages]]
name = "work"
available_tools = ["echo_inline"]
max_iterations = 2
`)
	e := h.spawn(h.profile("g", bp, model, ""), 1)[0]
	h.step() // iteration 0
	h.moveTo(e, "ReadyToInfer")
	h.step() // iteration 1
	if calls.Load() != 2 || h.cursor.Get(e).Iteration != 2 {
		t.Fatalf("after two turns: model called %d times, iteration %d", calls.Load(), h.cursor.Get(e).Iteration)
	}
	h.moveTo(e, "ReadyToInfer")
	h.step() // the stage is used up

	if calls.Load() != 2 {
		t.Errorf("the model was called %d times, want 2: max_iterations must stop it first", calls.Load())
	}
	if got := h.phase(e); got != "ResolveTransition" {
		t.Errorf("phase %s, want ResolveTransition", got)
	}
	if o := h.cursor.Get(e).Outcome; o != blueprint.OutcomeMaxIterations {
		t.Errorf("outcome %v, want max_iterations", o)
	}
	if want := `stage "work" reached max_iterations (2)`; h.data(e).Reason != want {
		t.Errorf("reason %q, want %q", h.data(e).Reason, want)
	}
	if n := h.counters.Get(e).ModelTurns; n != 2 {
		t.Errorf("model turns %d, want 2", n)
	}
	if n := len(h.events("model_turn", "")); n != 2 {
		t.Errorf("%d model_turn events, want 2", n)
	}
}

func TestModelPanicFailsOnlyThatAgent(t *testing.T) {
	for _, tc := range []struct {
		name  string
		model models.Model
	}{
		{name: "inline", model: inlineModel{id: "inline:panic", turn: panicModel}},
		{name: "lane", model: laneModel{id: "lane:panic", turn: panicModel}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, options{latency: resources.Latency{Model: 2}})
			bp := h.blueprint(oneStageBlueprint)
			calm := h.profile("calm", bp, scripted(t, "scripted:calm", turn("step", call("echo_inline", "x")), turn("all good")), "")
			wild := h.profile("wild", bp, tc.model, "")
			h.spawn(calm, 2)
			h.spawn(wild, 2)
			h.spawn(h.profile("late", bp, scripted(t, "scripted:late", turn("fine")), ""), 1)

			if stop := h.run(100); stop != ecs.FixedPoint {
				t.Fatalf("stop %v, want fixed_point", stop)
			}
			for _, name := range []string{"calm-0", "calm-1", "late-0"} {
				if r := h.record(name); r.Status != components.Done {
					t.Errorf("%s: %v (%s), want done", name, r.Status, r.Reason)
				}
			}
			want := "panic in model " + tc.model.ID() + ": model exploded"
			for _, name := range []string{"wild-0", "wild-1"} {
				r := h.record(name)
				if r.Status != components.Failed || r.Reason != want {
					t.Errorf("%s: %v %q, want failed %q", name, r.Status, r.Reason, want)
				}
				terms := h.events("terminal", name)
				if len(terms) != 1 || terms[0].Status != "failed" || terms[0].Reason != want {
					t.Errorf("%s: terminal events %+v", name, terms)
				}
				turns := h.events("model_turn", name)
				if len(turns) != 1 || !strings.Contains(turns[0].Error, "model exploded") {
					t.Errorf("%s: model_turn events %+v, want one carrying the panic", name, turns)
				}
			}
			if h.w.Entities() != 0 {
				t.Errorf("%d entities left", h.w.Entities())
			}
		})
	}
}

// drawingTurn is a model turn that depends on the agent's model state and random stream: it
// reports both in its text, advances its cursor, and calls a tool on its first two turns.
func drawingTurn(st *models.State, v *models.View) (models.Reply, error) {
	draw := v.Rand.Uint64()
	text := fmt.Sprintf("cursor=%d draw=%d", st.Cursor, draw)
	st.Cursor++
	if st.Cursor <= 2 {
		return models.Reply{Text: text, Calls: []models.ToolCall{{Name: "echo_inline", Args: []byte(`{"text":"x"}`)}}}, nil
	}
	return models.Reply{Text: text}, nil
}

// expectedDraws is what an agent's own stream yields for its first n draws.
func expectedDraws(agent uint64, n int) []uint64 {
	src := ecs.AgentRNG(testSeed, agent)
	r := rand.New(&src)
	out := make([]uint64, n)
	for i := range out {
		out[i] = r.Uint64()
	}
	return out
}

// Regression: a lane model turn works on copies of the agent's model state and random source;
// infer_collect stores them back. Nothing on the worker goroutine writes to agent storage, so the
// stored values stay those before the turn until the result is collected (and -race sees no
// conflict with the probe reading them meanwhile).
func TestLaneModelPersistsStateAndRandomStreamBetweenTurns(t *testing.T) {
	const latency = 3
	type sample struct {
		tick   uint64
		agent  uint64
		cursor int32
		turns  uint32
		source rand.PCG
	}
	var samples []sample
	var h *harness
	watch := &probe{fn: func(w *ecs.World) {
		for _, e := range h.entities() {
			if h.phase(e) == "AwaitingInference" {
				samples = append(samples, sample{w.Tick(), h.identity.Get(e).ID, h.data(e).Model.Cursor, h.counters.Get(e).ModelTurns, h.rng.Get(e).Source})
			}
		}
	}}
	h = newHarness(t, options{
		latency: resources.Latency{Model: latency},
		systems: []ecs.System{&systems.SyncStage{}, &systems.InferDispatch{}, watch, &systems.InferCollect{},
			&systems.ToolDispatch{}, &systems.ToolCollect{}, &systems.Transition{}, &systems.Reap{}},
	})
	bp := h.blueprint(oneStageBlueprint)
	h.spawn(h.profile("lane", bp, laneModel{id: "lane:draw", turn: drawingTurn}, ""), 2)
	h.spawn(h.profile("inline", bp, inlineModel{id: "inline:draw", turn: drawingTurn}, ""), 2)
	if stop := h.run(200); stop != ecs.FixedPoint {
		t.Fatalf("stop %v", stop)
	}

	for _, name := range []string{"lane-0", "lane-1", "inline-0", "inline-1"} {
		r := h.record(name)
		if r.Status != components.Done || r.Counters.ModelTurns != 3 {
			t.Errorf("%s: %v after %d turns (%s), want done after 3", name, r.Status, r.Counters.ModelTurns, r.Reason)
		}
		draws := expectedDraws(r.ID, 3)
		turns := h.events("model_turn", name)
		if len(turns) != 3 {
			t.Fatalf("%s: %d model turns", name, len(turns))
		}
		for i, ev := range turns {
			if want := fmt.Sprintf("cursor=%d draw=%d", i, draws[i]); ev.Text != want {
				t.Errorf("%s turn %d: %q, want %q", name, i, ev.Text, want)
			}
		}
		if strings.HasPrefix(name, "lane") {
			// Dispatched at ticks 0, 4 and 8 (the inline tool call returns the agent to
			// ReadyToInfer within the collect tick), collected `latency` ticks later.
			for i, ev := range turns {
				if want := uint64(i*(latency+1) + latency); ev.Tick != want {
					t.Errorf("%s turn %d collected at tick %d, want %d", name, i, ev.Tick, want)
				}
			}
		}
	}

	if len(samples) == 0 {
		t.Fatal("the probe never saw an agent awaiting inference")
	}
	for _, s := range samples {
		if s.cursor != int32(s.turns) {
			t.Errorf("tick %d: stored model cursor %d while %d turns were collected: the lane wrote into agent storage", s.tick, s.cursor, s.turns)
		}
	}
	// While awaiting, the stored stream is the agent's own after one draw per collected turn.
	for _, s := range samples {
		src := ecs.AgentRNG(testSeed, s.agent)
		r := rand.New(&src)
		for range s.turns {
			r.Uint64()
		}
		if src != s.source {
			t.Errorf("tick %d agent %d: stored random source is not its stream after %d draws", s.tick, s.agent, s.turns)
		}
	}
}
