package otelgenai

import (
	"context"
	"strconv"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	oteltrace "go.opentelemetry.io/otel/trace"

	"github.com/warrenhq/warren/trace"
)

// runSpans turns one run's records into spans, on the exporter's builder goroutine: a workflow
// span for the run, an agent span per agent under it (a sub-agent's under its parent's), and
// under each agent its chat spans (model turns) and execute_tool spans (tool calls). Only the
// builder touches it after newRun.
type runSpans struct {
	x    *Exporter
	q    *queue
	span oteltrace.Span
	ctx  context.Context
	// done: the run's end event was applied, or the exporter closed; seen: an event was applied
	// (a run that never wrote one, as one whose setup failed, has no span at all).
	done, seen bool
	agents     map[int64]*agentState
	// chatNames and toolNames hold the span names made of a model or tool, once each.
	chatNames, toolNames map[string]string
	attrs                []attribute.KeyValue
	// last holds the chunks of records applied last, handed back to the queue for reuse.
	last [][]record
}

// agentState is what an agent's spans need between its events.
type agentState struct {
	span oteltrace.Span
	ctx  context.Context
	id   int64
	name string
	// mark is when the agent became ready for its next model turn (its spawn, its entry into a
	// stage, its last tool result or model turn), the wall time a chat span starts at; markTick
	// its tick.
	mark     time.Time
	markTick int64
	status   string
	calls    []openCall
}

// openCall is a tool call dispatched and not yet answered by its tool_result. Its span is made
// when the call ends, from the start kept here: a call's span has no children, and a span given
// its attributes at once costs one copy of them instead of one per event.
type openCall struct {
	id, tool, stage, verdict, layer string
	promptVerdict, promptBy         string
	tick                            int64
	start                           time.Time
}

// newRun starts a run's workflow span, on the run's goroutine when its Writer or Tap is made, so
// that the sampler decides at once whether the run is read at all. scenario may be "" when a
// header line is to name it.
func newRun(x *Exporter, id, scenario string) *runSpans {
	r := &runSpans{x: x, agents: map[int64]*agentState{}, chatNames: map[string]string{}, toolNames: map[string]string{}}
	r.ctx, r.span = x.tracer.Start(context.Background(), opWorkflow, oteltrace.WithSpanKind(oteltrace.SpanKindInternal))
	if !r.span.IsRecording() {
		return nil
	}
	r.attrs = append(r.attrs[:0], semconv.GenAIOperationNameInvokeWorkflow)
	if id != "" {
		r.attrs = append(r.attrs, keyRunID.String(id))
	}
	r.span.SetAttributes(r.attrs...)
	r.setScenario(scenario)
	r.q = newQueue(x.wake)
	return r
}

// setScenario names the run's span after its scenario, as the conventions name a workflow span.
func (r *runSpans) setScenario(scenario string) {
	if scenario == "" {
		return
	}
	r.span.SetName(opWorkflow + " " + scenario)
	r.span.SetAttributes(semconv.GenAIWorkflowName(scenario))
}

// apply starts or ends the spans one event marks.
func (r *runSpans) apply(rec *record) {
	if r.done {
		return
	}
	r.seen = true
	switch rec.kind {
	case kHeader:
		r.setScenario(rec.name)
		return
	case kEnd:
		r.end(rec)
		return
	case kSpawn:
		r.spawn(rec)
		return
	}
	a := r.agents[rec.agent]
	if a == nil {
		return // an agent spawned before the exporter saw the run (a resumed trace)
	}
	switch rec.kind {
	case kStageEnter:
		a.mark, a.markTick = rec.at, rec.tick
	case kModelTurn:
		r.modelTurn(rec, a)
	case kToolCall:
		a.calls = append(a.calls, openCall{id: rec.callID, tool: rec.tool, stage: rec.stage, verdict: rec.verdict,
			layer: rec.layer, tick: rec.tick, start: rec.at})
	case kAnswer:
		for i := range a.calls {
			if c := &a.calls[i]; c.id == rec.callID {
				c.promptVerdict, c.promptBy = rec.verdict, rec.by
			}
		}
	case kToolResult:
		r.toolResult(rec, a)
	case kTerminal:
		a.status = rec.status
	case kReap:
		a.status = rec.status
		r.endAgent(a, rec.tick, rec.at, keyAgentTurns.Int64(rec.counts[0]), keyAgentCalls.Int64(rec.counts[1]),
			keyAgentErrors.Int64(rec.counts[2]))
		delete(r.agents, rec.agent)
	}
}

// spanName returns op + " " + of from names, made once per distinct value.
func spanName(names map[string]string, op, of string) string {
	if s, ok := names[of]; ok {
		return s
	}
	s := op + " " + of
	names[of] = s
	return s
}

// finish ends a span at t and counts it when it is sampled (to be exported).
func (r *runSpans) finish(s oteltrace.Span, t time.Time) {
	s.End(oteltrace.WithTimestamp(t))
	if s.SpanContext().IsSampled() {
		r.x.ended++
	}
}

// spawn starts an agent's span, under its parent agent's when the parent is known, else under the
// run's.
func (r *runSpans) spawn(rec *record) {
	if old := r.agents[rec.agent]; old != nil {
		r.endAgent(old, rec.tick, rec.at)
	}
	provider, _ := providerOf(rec.model)
	parent := r.ctx
	if p := r.agents[rec.parent]; p != nil {
		parent = p.ctx
	}
	a := &agentState{id: rec.agent, name: rec.name, mark: rec.at, markTick: rec.tick}
	a.ctx, a.span = r.x.tracer.Start(parent, opAgent+" "+rec.name, oteltrace.WithTimestamp(rec.at),
		oteltrace.WithSpanKind(oteltrace.SpanKindInternal))
	r.attrs = append(r.attrs[:0], semconv.GenAIOperationNameInvokeAgent, semconv.GenAIAgentName(rec.name),
		semconv.GenAIAgentID(strconv.FormatInt(rec.agent, 10)), semconv.GenAIProviderNameKey.String(provider),
		semconv.GenAIRequestModel(rec.model), keyAgentGroup.String(rec.group), keyAgentBlueprint.String(rec.blueprint),
		keyAgentDepth.Int64(rec.depth), keyTickStart.Int64(rec.tick))
	a.span.SetAttributes(r.attrs...)
	r.agents[rec.agent] = a
}

// tokenKeys are the GenAI attributes of record.tokens, in tokenFields order.
var tokenKeys = [len(tokenFields)]attribute.Key{semconv.GenAIUsageInputTokensKey, semconv.GenAIUsageOutputTokensKey,
	semconv.GenAIUsageCacheReadInputTokensKey, semconv.GenAIUsageCacheCreationInputTokensKey}

// The finish reasons Warren knows of a turn: it asked for tool calls, or one of Warren's own
// models answered without them.
var (
	finishToolCalls = semconv.GenAIResponseFinishReasons("tool_calls")
	finishStop      = semconv.GenAIResponseFinishReasons("stop")
)

// modelTurn records a model turn as a chat span, from the moment the agent became ready for it to
// the moment its event was written.
func (r *runSpans) modelTurn(rec *record, a *agentState) {
	provider, live := providerOf(rec.model)
	spanKind := oteltrace.SpanKindInternal
	if live {
		spanKind = oteltrace.SpanKindClient
	}
	_, span := r.x.tracer.Start(a.ctx, spanName(r.chatNames, opChat, rec.model), oteltrace.WithTimestamp(a.mark),
		oteltrace.WithSpanKind(spanKind))
	r.attrs = append(r.attrs[:0], semconv.GenAIOperationNameChat, semconv.GenAIProviderNameKey.String(provider),
		semconv.GenAIRequestModel(rec.model), keyAgentID.Int64(a.id), keyAgentName.String(a.name),
		keyStage.String(rec.stage), keyIteration.Int64(rec.iteration), keyTickStart.Int64(a.markTick), keyTickEnd.Int64(rec.tick))
	if rec.pool != "" {
		r.attrs = append(r.attrs, keyPool.String(rec.pool))
	}
	if rec.attempts != absent {
		r.attrs = append(r.attrs, keyAttempts.Int64(rec.attempts))
	}
	for i, n := range rec.tokens {
		if n != absent {
			r.attrs = append(r.attrs, tokenKeys[i].Int64(n))
		}
	}
	if rec.cost != "" {
		r.attrs = append(r.attrs, keyCost.String(rec.cost))
	}
	if rec.dropped != absent {
		r.attrs = append(r.attrs, keyDropped.Int64(rec.dropped))
	}
	switch {
	case rec.failed:
		r.attrs = append(r.attrs, semconv.ErrorTypeKey.String(errModel))
	case rec.calls > 0:
		r.attrs = append(r.attrs, finishToolCalls)
	case rec.pool == "":
		// Warren's own models (scripted, js) stop when they answer without calls; a live
		// provider's own reason (stop, length, content_filter) is not in the trace, so a live
		// answer without calls gets none rather than a guess.
		r.attrs = append(r.attrs, finishStop)
	}
	span.SetAttributes(r.attrs...)
	if rec.failed {
		span.SetStatus(codes.Error, "the model turn failed")
	}
	r.finish(span, rec.at)
	a.mark, a.markTick = rec.at, rec.tick
}

// toolResult ends a call's span with its outcome.
func (r *runSpans) toolResult(rec *record, a *agentState) {
	a.mark, a.markTick = rec.at, rec.tick
	for i := range a.calls {
		if a.calls[i].id != rec.callID {
			continue
		}
		c := a.calls[i]
		a.calls = append(a.calls[:i], a.calls[i+1:]...)
		why := ""
		if !rec.ok {
			why = errTool
			if c.promptVerdict == "deny" || c.promptVerdict == "" && c.verdict == "deny" {
				why = errDenied
			}
		}
		r.endCall(a, &c, rec.tick, why, rec.at)
		return
	}
}

// endCall makes a call's execute_tool span, from the gate's decision to t. tick < 0: the call
// never returned (its agent or the run ended first); why is its error.type ("" for none).
func (r *runSpans) endCall(a *agentState, c *openCall, tick int64, why string, t time.Time) {
	_, span := r.x.tracer.Start(a.ctx, spanName(r.toolNames, opTool, c.tool), oteltrace.WithTimestamp(c.start),
		oteltrace.WithSpanKind(oteltrace.SpanKindInternal))
	r.attrs = append(r.attrs[:0], semconv.GenAIOperationNameExecuteTool, semconv.GenAIToolName(c.tool),
		semconv.GenAIToolCallID(c.id), keyAgentID.Int64(a.id), keyAgentName.String(a.name),
		keyStage.String(c.stage), keyTickStart.Int64(c.tick), keyVerdict.String(c.verdict), keyLayer.String(c.layer))
	if c.promptVerdict != "" {
		r.attrs = append(r.attrs, keyPromptVerdict.String(c.promptVerdict), keyPromptBy.String(c.promptBy))
	}
	if tick >= 0 {
		r.attrs = append(r.attrs, keyTickEnd.Int64(tick))
	}
	if why != "" {
		r.attrs = append(r.attrs, semconv.ErrorTypeKey.String(why))
	}
	span.SetAttributes(r.attrs...)
	switch {
	case why == errUnfinished:
		span.SetStatus(codes.Error, "the call never returned a result")
	case why != "":
		span.SetStatus(codes.Error, "the call's result is an error")
	}
	r.finish(span, t)
}

// endAgent ends an agent's span at t, with the spans of its calls that never got a result (it was
// killed, or the run ended, while they ran), its status (running when the run ended first), the
// tick (none when tick < 0: the trace stopped short) and extra attributes (the reap's counts).
func (r *runSpans) endAgent(a *agentState, tick int64, t time.Time, extra ...attribute.KeyValue) {
	for i := range a.calls {
		r.endCall(a, &a.calls[i], -1, errUnfinished, t)
	}
	a.calls = nil
	status := a.status
	if status == "" {
		status = "running"
	}
	r.attrs = append(r.attrs[:0], keyAgentStatus.String(status))
	if tick >= 0 {
		r.attrs = append(r.attrs, keyTickEnd.Int64(tick))
	}
	if status == "failed" || status == "killed" {
		r.attrs = append(r.attrs, semconv.ErrorTypeKey.String(status))
	}
	r.attrs = append(r.attrs, extra...)
	a.span.SetAttributes(r.attrs...)
	if status == "failed" {
		a.span.SetStatus(codes.Error, "the agent failed")
	}
	r.finish(a.span, t)
}

// end closes the run at its end event: the agents still alive, then the run's span with its
// status and counts.
func (r *runSpans) end(rec *record) {
	for id, a := range r.agents {
		r.endAgent(a, rec.tick, rec.at)
		delete(r.agents, id)
	}
	r.attrs = append(r.attrs[:0], keyRunStatus.String(rec.status), keyTickEnd.Int64(rec.tick),
		keyRunTurns.Int64(rec.counts[0]), keyRunCalls.Int64(rec.counts[1]), keyRunToolErrors.Int64(rec.counts[2]),
		keyRunAgents.Int64(rec.counts[3]))
	if rec.status == trace.RunFailed {
		r.attrs = append(r.attrs, semconv.ErrorTypeKey.String(rec.status))
	}
	r.span.SetAttributes(r.attrs...)
	if rec.status == trace.RunFailed {
		r.span.SetStatus(codes.Error, "the run failed")
	}
	r.finish(r.span, rec.at)
	r.done = true
}

// abandon ends every open span of a run whose end event never came (the exporter is closing):
// its trace stopped short, so the run span says so.
func (r *runSpans) abandon(t time.Time) {
	if r.done {
		return
	}
	r.done = true
	if !r.seen {
		return // never ended, never sent: no run took place
	}
	for id, a := range r.agents {
		r.endAgent(a, -1, t)
		delete(r.agents, id)
	}
	r.span.SetAttributes(semconv.ErrorTypeKey.String(errUnfinished))
	r.span.SetStatus(codes.Error, "the trace ended without its end event")
	r.finish(r.span, t)
}
