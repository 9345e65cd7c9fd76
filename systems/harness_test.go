package systems_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/warrenhq/warren/blueprint"
	"github.com/warrenhq/warren/components"
	"github.com/warrenhq/warren/ecs"
	"github.com/warrenhq/warren/gate"
	"github.com/warrenhq/warren/internal/leases"
	"github.com/warrenhq/warren/models"
	"github.com/warrenhq/warren/policy"
	"github.com/warrenhq/warren/recording"
	"github.com/warrenhq/warren/resources"
	"github.com/warrenhq/warren/subagents"
	"github.com/warrenhq/warren/systems"
	"github.com/warrenhq/warren/tools"
	"github.com/warrenhq/warren/trace"
)

// testSeed is the scenario seed of every harness unless a test sets another.
const testSeed = 42

// ghostTool is a tool name blueprints may list (it is "known") that no registry holds, to reach
// the "not registered" visibility refusal.
const ghostTool = "ghost"

// errDiskOnFire is what the failing test tool returns.
var errDiskOnFire = errors.New("disk on fire")

// textSchema is the argument schema of every test tool: one required string.
var textSchema = json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"],"additionalProperties":false}`)

// textArgs decodes the argument of a test tool.
func textArgs(args json.RawMessage) (string, error) {
	var a struct {
		Text string `json:"text"`
	}
	if err := json.Unmarshal(args, &a); err != nil {
		return "", fmt.Errorf("%w: %w", tools.ErrInvalidArguments, err)
	}
	return a.Text, nil
}

// laneEcho echoes its argument on the tool lane (it does not implement tools.Inline). Its name is
// configurable so that tests can give calls different per-tool latencies.
type laneEcho struct {
	name string
	runs *atomic.Int64
}

var _ tools.Tool = laneEcho{}

func (t laneEcho) Spec() tools.Spec {
	return tools.Spec{Name: t.name, Description: "echoes text on the tool lane", Parameters: textSchema}
}

func (t laneEcho) Execute(_ *tools.ExecContext, args json.RawMessage) (tools.Result, error) {
	t.runs.Add(1)
	text, err := textArgs(args)
	if err != nil {
		return tools.Result{}, err
	}
	return tools.TextResult(t.name + ": " + text), nil
}

// detachTool leaves work running past its call, on the tool lane: its report is "<text> ended",
// and every Report it gives is counted.
type detachTool struct{ reports *atomic.Int64 }

var _ tools.Tool = detachTool{}

func (detachTool) Spec() tools.Spec {
	return tools.Spec{Name: "detach", Description: "starts background work", Parameters: textSchema}
}

func (t detachTool) Execute(_ *tools.ExecContext, args json.RawMessage) (tools.Result, error) {
	text, err := textArgs(args)
	if err != nil {
		return tools.Result{}, err
	}
	return tools.Result{Content: "started " + text, Detached: detachedWork{text: text, reports: t.reports}}, nil
}

// detachedWork is detachTool's background work.
type detachedWork struct {
	text    string
	reports *atomic.Int64
}

func (w detachedWork) Report() string {
	w.reports.Add(1)
	return w.text + " ended"
}

// inlineEcho echoes its argument inside tool_dispatch.
type inlineEcho struct{ runs *atomic.Int64 }

var (
	_ tools.Tool   = inlineEcho{}
	_ tools.Inline = inlineEcho{}
)

func (inlineEcho) Spec() tools.Spec {
	return tools.Spec{Name: "echo_inline", Description: "echoes text inline", Parameters: textSchema}
}

func (inlineEcho) Inline() bool { return true }

func (t inlineEcho) Execute(_ *tools.ExecContext, args json.RawMessage) (tools.Result, error) {
	t.runs.Add(1)
	text, err := textArgs(args)
	if err != nil {
		return tools.Result{}, err
	}
	return tools.TextResult("echo: " + text), nil
}

// failTool always returns errDiskOnFire, inline.
type failTool struct{ runs *atomic.Int64 }

var (
	_ tools.Tool   = failTool{}
	_ tools.Inline = failTool{}
)

func (failTool) Spec() tools.Spec {
	return tools.Spec{Name: "fail", Description: "always fails", Parameters: textSchema}
}

func (failTool) Inline() bool { return true }

func (t failTool) Execute(*tools.ExecContext, json.RawMessage) (tools.Result, error) {
	t.runs.Add(1)
	return tools.Result{}, errDiskOnFire
}

// panicTool panics; inline or on the lane.
type panicTool struct {
	name   string
	inline bool
	runs   *atomic.Int64
}

var (
	_ tools.Tool   = panicTool{}
	_ tools.Inline = panicTool{}
)

func (t panicTool) Spec() tools.Spec {
	return tools.Spec{Name: t.name, Description: "panics", Parameters: textSchema}
}

func (t panicTool) Inline() bool { return t.inline }

func (t panicTool) Execute(*tools.ExecContext, json.RawMessage) (tools.Result, error) {
	t.runs.Add(1)
	panic("tool exploded")
}

// jitterTool runs on the lane and sleeps a wall-time amount that depends on its argument, so that
// workers finish in an order unrelated to submission; nothing of the sleep reaches its result.
type jitterTool struct{ runs *atomic.Int64 }

var _ tools.Tool = jitterTool{}

func (jitterTool) Spec() tools.Spec {
	return tools.Spec{Name: "jitter", Description: "sleeps, then echoes", Parameters: textSchema}
}

func (t jitterTool) Execute(_ *tools.ExecContext, args json.RawMessage) (tools.Result, error) {
	t.runs.Add(1)
	text, err := textArgs(args)
	if err != nil {
		return tools.Result{}, err
	}
	sum := 0
	for i := range len(text) {
		sum += int(text[i])
	}
	time.Sleep(time.Duration(sum%4) * 150 * time.Microsecond)
	return tools.TextResult("jitter: " + text), nil
}

// execRecord is what ctxProbe saw of one call's ExecContext.
type execRecord struct {
	CallID       string
	TurnID       uint64
	Agent        tools.AgentRef
	Workdir      string
	ModelID      string
	MessageIndex int
	Tasks        *tools.TaskBroker
	Origin       tools.CheckpointOrigin
	Intent       string
	Context      int
}

// ctxProbe records the ExecContext of every call, inline. Only the world's goroutine runs it.
type ctxProbe struct{ seen *[]execRecord }

var (
	_ tools.Tool   = ctxProbe{}
	_ tools.Inline = ctxProbe{}
)

func (ctxProbe) Spec() tools.Spec {
	return tools.Spec{Name: "ctx_probe", Description: "records its context", Parameters: textSchema}
}

func (ctxProbe) Inline() bool { return true }

func (t ctxProbe) Execute(ec *tools.ExecContext, _ json.RawMessage) (tools.Result, error) {
	*t.seen = append(*t.seen, execRecord{
		CallID: ec.CallID, TurnID: ec.TurnID, Agent: ec.Agent, Workdir: ec.Workdir,
		ModelID: ec.ModelID, MessageIndex: ec.MessageIndex, Tasks: ec.Tasks,
		Origin: ec.CheckpointOrigin(), Intent: ec.Intent, Context: ec.ContextPercent,
	})
	return tools.TextResult("recorded"), nil
}

// turnFunc decides one model turn.
type turnFunc func(st *models.State, v *models.View) (models.Reply, error)

// laneModel is a model without an Inline method: it runs on the model lane.
type laneModel struct {
	id   string
	turn turnFunc
}

var _ models.Model = laneModel{}

func (m laneModel) ID() string { return m.id }

func (m laneModel) Turn(_ context.Context, st *models.State, v *models.View) (models.Reply, error) {
	return m.turn(st, v)
}

// inlineModel runs the same kind of turn inside infer_dispatch.
type inlineModel struct {
	id   string
	turn turnFunc
}

var (
	_ models.Model        = inlineModel{}
	_ systems.InlineModel = inlineModel{}
)

func (m inlineModel) ID() string { return m.id }

func (inlineModel) Inline() bool { return true }

func (m inlineModel) Turn(_ context.Context, st *models.State, v *models.View) (models.Reply, error) {
	return m.turn(st, v)
}

// panicModel panics on every turn.
func panicModel(_ *models.State, _ *models.View) (models.Reply, error) {
	panic("model exploded")
}

// gateFunc adapts a function to gate.Decider.
type gateFunc func(pol *gate.Policy, req *gate.Request) gate.Decision

var _ gate.Decider = gateFunc(nil)

func (g gateFunc) Decide(pol *gate.Policy, req *gate.Request) gate.Decision { return g(pol, req) }

// allowAll is a policy under which every call that passes visibility and schema is allowed:
// --yolo and nothing denied.
var allowAll = func() *gate.Policy {
	r, err := policy.NewResolver(policy.HostLayer{}, policy.BlueprintLayer{}, policy.Launch{Yolo: true})
	if err != nil {
		panic(err)
	}
	return &gate.Policy{Resolver: r}
}()

// testGate decides visibility and the schema as the standard gate does, then lets decide settle
// the permission of every call that passes them (with the keys the gate found).
func testGate(decide func(pol *gate.Policy, req *gate.Request, keys []string) gate.Decision) gate.Decider {
	return gateFunc(func(pol *gate.Policy, req *gate.Request) gate.Decision {
		d := gate.Decide(allowAll, req)
		if d.Layer == gate.LayerVisibility || d.Layer == gate.LayerSchema {
			return d
		}
		return decide(pol, req, d.Keys)
	})
}

// verdictGate returns the same decision for every call that passes visibility and the schema.
func verdictGate(v policy.Verdict, layer, reason string) gate.Decider {
	return testGate(func(_ *gate.Policy, _ *gate.Request, keys []string) gate.Decision {
		return gate.Decision{Verdict: v, Layer: layer, Reason: reason, Keys: keys}
	})
}

// probe is a test-only system that calls fn on every tick at its place in the pipeline.
type probe struct{ fn func(w *ecs.World) }

var _ ecs.System = (*probe)(nil)

func (*probe) Name() string                { return "probe" }
func (*probe) Initialize(*ecs.World) error { return nil }
func (p *probe) Update(w *ecs.World)       { p.fn(w) }
func (*probe) Finalize(*ecs.World)         {}

// options shapes a harness.
type options struct {
	seed    uint64
	latency resources.Latency
	gate    gate.Decider
	// systems replaces the default systems.Pipeline().
	systems []ecs.System
	// noTrace disables the trace (benchmarks).
	noTrace bool
	// toolCapacity and modelCapacity size the lanes (0: the lane default).
	toolCapacity, modelCapacity int
	// initialCapacity pre-sizes the world.
	initialCapacity int
	// defaultGate leaves Host.Gate nil, so the host picks its own gate (gate.Standard).
	defaultGate bool
	// answerer answers the hub's prompts (nil: the host's default hub, which nobody answers).
	answerer gate.Answerer
	// limits, inboxCap and maxFanOutItems set the host's sub-agent caps.
	limits                   subagents.Limits
	inboxCap, maxFanOutItems int
	// servers stands in for the world's MCP sessions (nil: none).
	servers leases.Servers
	// maxTurns is each agent's turn limit (0: the default, resources.DefaultMaxModelTurns).
	maxTurns uint32
	// record and tape make the run record its outside inputs, or replay them.
	record *recording.Writer
	tape   *recording.Tape
}

// harness is one world with its resources, lanes, real registries and a trace in memory, assembled the
// way scenarios.Run assembles a run.
type harness struct {
	tb       testing.TB
	w        *ecs.World
	host     *resources.Set
	sched    *ecs.Scheduler
	buf      *bytes.Buffer
	tw       *trace.Writer
	scoped   *tools.ScopedToolRegistry
	known    []string
	spawner  *systems.Spawner
	root     string
	runs     map[string]*atomic.Int64
	execSeen []execRecord
	identity ecs.Map[components.Identity]
	cursor   ecs.Map[components.Cursor]
	status   ecs.Map[components.Status]
	counters ecs.Map[components.Counters]
	rng      ecs.Map[components.RNG]
	all      *ecs.View1[components.Identity]
	closed   bool
	// offspring is what sub-agents are spawned from: add profiles with spawnable.
	offspring *testOffspring
}

// testOffspring hands out one profile per blueprint key, whoever the parent is (the scenario
// runner's offspring adds the parent's permission ceilings; systems tests use a plain gate).
type testOffspring struct {
	profiles map[string]*components.Profile
}

func (o *testOffspring) Profile(parent *components.Profile, stage int32, key string) (*components.Profile, error) {
	p, ok := o.profiles[key]
	if !ok {
		return nil, fmt.Errorf("%w %q", subagents.ErrUnknownBlueprint, key)
	}
	return p, nil
}

// spawnable lets agents spawn sub-agents of blueprint key: they form group key and run model.
// Children's workdirs are set at spawn, under their parent's.
func (h *harness) spawnable(key string, bp *blueprint.Blueprint, model models.Model) *components.Profile {
	p := h.profile(key, bp, model, "")
	p.Workdir = nil
	h.offspring.profiles[key] = p
	return p
}

// newHarness builds a world ready to spawn agents into.
func newHarness(tb testing.TB, opt options) *harness {
	tb.Helper()
	if opt.seed == 0 {
		opt.seed = testSeed
	}
	h := &harness{tb: tb, buf: &bytes.Buffer{}, root: tb.TempDir(), runs: map[string]*atomic.Int64{}}
	if !opt.noTrace {
		tw, err := trace.NewWriter(h.buf, trace.Header{Scenario: "systems-test", ScenarioHash: "sha256:test", Clock: trace.ClockVirtual, Seed: opt.seed})
		if err != nil {
			tb.Fatal(err)
		}
		h.tw = tw
	}
	reg := tools.NewRegistry()
	for _, t := range tools.Builtins() {
		if t.Spec().Name == tools.NameShell {
			continue // the gate tests use fakeShell, which runs nothing; shell_test.go runs the real one
		}
		if err := reg.Register(t); err != nil {
			tb.Fatal(err)
		}
	}
	counter := func(name string) *atomic.Int64 {
		c := &atomic.Int64{}
		h.runs[name] = c
		return c
	}
	extra := []tools.Tool{
		inlineEcho{runs: counter("echo_inline")},
		laneEcho{name: "echo", runs: counter("echo")},
		laneEcho{name: "fast", runs: counter("fast")},
		laneEcho{name: "medium", runs: counter("medium")},
		laneEcho{name: "slow", runs: counter("slow")},
		laneEcho{name: "park", runs: counter("park")},
		failTool{runs: counter("fail")},
		panicTool{name: "boom", inline: true, runs: counter("boom")},
		panicTool{name: "boom_lane", runs: counter("boom_lane")},
		jitterTool{runs: counter("jitter")},
		ctxProbe{seen: &h.execSeen},
		fakeShell{runs: counter(policy.ShellTool)},
		detachTool{reports: counter("detach")},
	}
	for _, t := range extra {
		if err := reg.Register(t); err != nil {
			tb.Fatal(err)
		}
	}
	if err := subagents.Register(reg); err != nil {
		tb.Fatal(err)
	}
	h.scoped = tools.NewScoped(reg)
	h.known = append(reg.Names(), ghostTool)

	h.w = ecs.NewWorld(ecs.Config{Seed: opt.seed, InitialCapacity: opt.initialCapacity})
	decider := opt.gate
	if decider == nil && !opt.defaultGate {
		decider = verdictGate(policy.Allow, "test", "the harness allows every call unless a test sets a gate")
	}
	h.offspring = &testOffspring{profiles: map[string]*components.Profile{}}
	h.host = &resources.Set{
		Run:      resources.Run{Context: context.Background(), Trace: h.tw},
		Gate:     decider,
		Records:  &components.Records{},
		Spawning: resources.Spawning{Offspring: h.offspring, Limits: opt.limits, InboxCap: opt.inboxCap, MaxFanOutItems: opt.maxFanOutItems},
		Servers:  opt.servers,
		Limits:   resources.AgentLimits{MaxModelTurns: opt.maxTurns},
	}
	h.host.Recording.Writer, h.host.Recording.Tape = opt.record, opt.tape
	if opt.answerer != nil {
		h.host.Hub = gate.NewHub(opt.answerer)
	}
	list := opt.systems
	if list == nil {
		list = systems.Pipeline()
	}
	h.sched = ecs.NewScheduler(h.w, list...)
	h.host.Lanes = resources.Lanes{Latency: opt.latency,
		Model: h.sched.AddLane(ecs.LaneConfig{Name: "model", Capacity: opt.modelCapacity}),
		Tool:  h.sched.AddLane(ecs.LaneConfig{Name: "tool", Capacity: opt.toolCapacity})}
	h.host.Install(h.w)
	tb.Cleanup(h.close)
	if err := h.sched.Initialize(); err != nil {
		tb.Fatal(err)
	}
	sp, err := systems.NewSpawner(h.w)
	if err != nil {
		tb.Fatal(err)
	}
	h.spawner = sp
	h.identity = ecs.NewMap[components.Identity](h.w)
	h.cursor = ecs.NewMap[components.Cursor](h.w)
	h.status = ecs.NewMap[components.Status](h.w)
	h.counters = ecs.NewMap[components.Counters](h.w)
	h.rng = ecs.NewMap[components.RNG](h.w)
	h.all = ecs.NewView1[components.Identity](h.w, nil, nil)
	return h
}

// close finalizes the scheduler (stopping the lanes' workers); safe to call twice.
func (h *harness) close() {
	if h.closed {
		return
	}
	h.closed = true
	h.sched.Finalize()
}

// blueprint compiles src; the known tools are the built-ins, the test tools and ghostTool.
func (h *harness) blueprint(src string) *blueprint.Blueprint {
	h.tb.Helper()
	bp, err := blueprint.Parse("test.toml", []byte(src), h.known)
	if err != nil {
		h.tb.Fatalf("blueprint: %v", err)
	}
	return bp
}

// profile builds a group's profile the way the scenario runner does: stage tools from the
// registry, workdirs under the test's temporary folder, and an optional task message.
func (h *harness) profile(group string, bp *blueprint.Blueprint, model models.Model, task string) *components.Profile {
	stageTools := make([][]models.ToolInfo, len(bp.Stages))
	for i := range bp.Stages {
		for _, name := range bp.Stages[i].AvailableTools {
			if t, ok := h.scoped.Get(name); ok {
				spec := t.Spec()
				stageTools[i] = append(stageTools[i], models.ToolInfo{Name: spec.Name, Description: spec.Description, Parameters: spec.Parameters})
			}
		}
	}
	groupDir := filepath.Join(h.root, group)
	p := &components.Profile{
		Group: group, Blueprint: bp, Model: model, ModelID: model.ID(),
		Tools: h.scoped, StageTools: stageTools,
		Workdir: func(name string, _ int) string { return filepath.Join(groupDir, name) },
	}
	if task != "" {
		p.Task = func(name string, index int) string { return task + " (" + name + ")" }
	}
	return p
}

// spawn creates count agents of p named "<group>-<index>" and returns their entities in id order.
func (h *harness) spawn(p *components.Profile, count int) []ecs.Entity {
	first := h.w.IDs().Last() + 1
	h.spawner.SpawnGroup(h.w, p, count, func(i int) string { return p.Group + "-" + strconv.Itoa(i) })
	var out []ecs.Entity
	for _, e := range h.entities() {
		if h.identity.Get(e).ID >= first {
			out = append(out, e)
		}
	}
	return out
}

// entities lists the live agents in id order.
func (h *harness) entities() []ecs.Entity {
	var out []ecs.Entity
	q := h.all.Query()
	for q.Next() {
		out = append(out, q.Entity())
	}
	slices.SortFunc(out, func(a, b ecs.Entity) int {
		ia, ib := h.identity.Get(a).ID, h.identity.Get(b).ID
		switch {
		case ia < ib:
			return -1
		case ia > ib:
			return 1
		}
		return 0
	})
	return out
}

// data returns the reference-holding data of the agent at e.
func (h *harness) data(e ecs.Entity) *components.AgentData {
	return h.host.Agents.Get(h.identity.Get(e).Slot)
}

// step runs one tick at the current clock value.
func (h *harness) step() int {
	h.tb.Helper()
	n, err := h.sched.Step()
	if err != nil {
		h.tb.Fatalf("step: %v", err)
	}
	return n
}

// run ticks until a fixed point or maxTicks (0: no limit).
func (h *harness) run(maxTicks uint64) ecs.Stop {
	h.tb.Helper()
	stop, err := h.sched.Run(context.Background(), maxTicks)
	if err != nil {
		h.tb.Fatalf("run: %v", err)
	}
	return stop
}

// phaseMarker is one phase marker component.
type phaseMarker struct {
	name string
	comp ecs.Comp
	has  func(*ecs.World, ecs.Entity) bool
}

var phaseMarkers = []phaseMarker{
	{"Entering", ecs.T[components.Entering](), ecs.Has[components.Entering]},
	{"ReadyToInfer", ecs.T[components.ReadyToInfer](), ecs.Has[components.ReadyToInfer]},
	{"AwaitingInference", ecs.T[components.AwaitingInference](), ecs.Has[components.AwaitingInference]},
	{"ReadyForTools", ecs.T[components.ReadyForTools](), ecs.Has[components.ReadyForTools]},
	{"AwaitingTools", ecs.T[components.AwaitingTools](), ecs.Has[components.AwaitingTools]},
	{"ResolveTransition", ecs.T[components.ResolveTransition](), ecs.Has[components.ResolveTransition]},
	{"Terminal", ecs.T[components.Terminal](), ecs.Has[components.Terminal]},
}

// phase names the phase markers e carries, "+"-joined (an agent must carry exactly one).
func (h *harness) phase(e ecs.Entity) string {
	var names []string
	for _, m := range phaseMarkers {
		if m.has(h.w, e) {
			names = append(names, m.name)
		}
	}
	return strings.Join(names, "+")
}

// moveTo swaps e's phase marker for the one named to.
func (h *harness) moveTo(e ecs.Entity, to string) {
	h.tb.Helper()
	var from, target ecs.Comp
	found := false
	for _, m := range phaseMarkers {
		if m.has(h.w, e) {
			from, found = m.comp, true
		}
		if m.name == to {
			target = m.comp
		}
	}
	if !found {
		h.tb.Fatalf("agent carries no phase marker")
	}
	ecs.NewSwap(h.w, []ecs.Comp{target}, []ecs.Comp{from}).Exchange(e)
}

// event is one trace line with every field any kind uses.
type event struct {
	Tick       uint64          `json:"tick"`
	Seq        uint64          `json:"seq"`
	Agent      uint64          `json:"agent"`
	Name       string          `json:"name"`
	Kind       string          `json:"kind"`
	Group      string          `json:"group"`
	Index      int             `json:"index"`
	Blueprint  string          `json:"blueprint"`
	Model      string          `json:"model"`
	Stage      string          `json:"stage"`
	Visit      int             `json:"visit"`
	Iteration  int             `json:"iteration"`
	Text       string          `json:"text"`
	Calls      int             `json:"calls"`
	Error      string          `json:"error"`
	CallID     string          `json:"call_id"`
	Tool       string          `json:"tool"`
	Args       json.RawMessage `json:"args"`
	Verdict    string          `json:"verdict"`
	Layer      string          `json:"layer"`
	Reason     string          `json:"reason"`
	OK         bool            `json:"ok"`
	Content    string          `json:"content"`
	From       string          `json:"from"`
	When       string          `json:"when"`
	End        string          `json:"end"`
	Key        string          `json:"key"`
	Value      string          `json:"value"`
	To         string          `json:"to"`
	On         string          `json:"on"`
	Status     string          `json:"status"`
	ModelTurns int             `json:"model_turns"`
	ToolCalls  int             `json:"tool_calls"`
	ToolErrors int             `json:"tool_errors"`
	Keys       []string        `json:"keys"`
	Prompt     string          `json:"prompt"`
	Deadline   uint64          `json:"deadline"`
	Answer     string          `json:"answer"`
	By         string          `json:"by"`
	// MCP server events.
	Server    string `json:"server"`
	Event     string `json:"event"`
	Session   uint64 `json:"session"`
	Transport string `json:"transport"`
	// Sub-agent events.
	Parent          uint64   `json:"parent"`
	ParentName      string   `json:"parent_name"`
	Depth           int      `json:"depth"`
	Detached        bool     `json:"detached"`
	Call            string   `json:"call"`
	Sender          uint64   `json:"sender"`
	SenderName      string   `json:"sender_name"`
	Via             string   `json:"via"`
	Target          uint64   `json:"target"`
	TargetName      string   `json:"target_name"`
	Killer          uint64   `json:"killer"`
	KillerName      string   `json:"killer_name"`
	Cascade         []string `json:"cascade"`
	Items           int      `json:"items"`
	MaxWorkers      int      `json:"max_workers"`
	OnWorkerFailure string   `json:"on_worker_failure"`
	Mode            string   `json:"mode"`
	Item            int      `json:"item"`
	Worker          uint64   `json:"worker"`
	WorkerName      string   `json:"worker_name"`
	Done            int      `json:"done"`
	Failed          int      `json:"failed"`
	Killed          int      `json:"killed"`
	NotRun          int      `json:"not_run"`
	Chars           int      `json:"chars"`
}

// traceBytes flushes the trace and returns everything written so far.
func (h *harness) traceBytes() []byte {
	h.tb.Helper()
	if err := h.tw.Flush(); err != nil {
		h.tb.Fatalf("trace: %v", err)
	}
	return h.buf.Bytes()
}

// events decodes the trace so far, keeping the events of kind (all when "") of agent name (all
// when "").
func (h *harness) events(kind, name string) []event {
	h.tb.Helper()
	_, raw, err := trace.ReadAll(bytes.NewReader(h.traceBytes()))
	if err != nil {
		h.tb.Fatalf("trace: %v", err)
	}
	var out []event
	for _, line := range raw {
		var ev event
		if err := json.Unmarshal(line, &ev); err != nil {
			h.tb.Fatalf("trace line %s: %v", line, err)
		}
		if (kind == "" || ev.Kind == kind) && (name == "" || ev.Name == name) {
			out = append(out, ev)
		}
	}
	return out
}

// kinds lists the kinds of events, in order.
func kinds(events []event) []string {
	out := make([]string, len(events))
	for i, ev := range events {
		out[i] = ev.Kind
	}
	return out
}

// record returns the final record of the agent called name.
func (h *harness) record(name string) components.FinalRecord {
	h.tb.Helper()
	for _, r := range h.host.Records.All() {
		if r.Name == name {
			return r
		}
	}
	h.tb.Fatalf("no final record for %s", name)
	return components.FinalRecord{}
}

// scripted compiles a scripted model that fails when its turns run out.
func scripted(tb testing.TB, id string, turns ...models.ScriptedTurn) *models.Scripted {
	tb.Helper()
	m, err := models.NewScripted(id, turns, models.ExhaustedFail)
	if err != nil {
		tb.Fatal(err)
	}
	return m
}

// call is a scripted call of tool with {"text": text}.
func call(tool, text string) models.ScriptedCall {
	return models.ScriptedCall{Tool: tool, Args: map[string]any{"text": text}}
}

// turn is a scripted turn with text and calls.
func turn(text string, calls ...models.ScriptedCall) models.ScriptedTurn {
	return models.ScriptedTurn{Text: text, Calls: calls}
}

// turnError is a scripted turn that fails with msg.
func turnError(msg string) models.ScriptedTurn { return models.ScriptedTurn{Error: msg} }
