package otelgenai

import (
	"strings"

	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
)

// SemconvVersion is the version of the OpenTelemetry semantic conventions the spans follow, the
// one package go.opentelemetry.io/otel/semconv/v1.41.0 implements (a test checks that its
// SchemaURL names this version). It is pinned because the GenAI conventions are still in
// development and change between versions (v1.37.0 replaced gen_ai.system with
// gen_ai.provider.name; v1.42.0 dropped the gen_ai attributes from the Go package): a collector
// or a dashboard reading Warren's spans can rely on the names of this version, and a move to a
// newer one is a deliberate change with its own entry in docs/opentelemetry.md.
const SemconvVersion = "1.41.0"

// schemaURL is the pinned version's schema, given to the tracer's instrumentation scope so that a
// backend can translate the attribute names if it speaks another version.
const schemaURL = semconv.SchemaURL

// The operations of the span tree, the values of gen_ai.operation.name.
const (
	opWorkflow = "invoke_workflow"
	opAgent    = "invoke_agent"
	opChat     = "chat"
	opTool     = "execute_tool"
)

// The attribute keys Warren adds beside the GenAI conventions, under its own namespace: what a
// run, an agent, a turn or a call is in Warren's terms (its tick, its stage, the gate's verdict).
// The GenAI keys come from the semconv package, never typed here.
const (
	keyRunID          = attribute.Key("warren.run.id")
	keyRunStatus      = attribute.Key("warren.run.status")
	keyRunAgents      = attribute.Key("warren.run.agents")
	keyRunTurns       = attribute.Key("warren.run.model_turns")
	keyRunCalls       = attribute.Key("warren.run.tool_calls")
	keyRunToolErrors  = attribute.Key("warren.run.tool_errors")
	keyAgentID        = attribute.Key("warren.agent.id")
	keyAgentName      = attribute.Key("warren.agent.name")
	keyAgentGroup     = attribute.Key("warren.agent.group")
	keyAgentBlueprint = attribute.Key("warren.agent.blueprint")
	keyAgentDepth     = attribute.Key("warren.agent.depth")
	keyAgentStatus    = attribute.Key("warren.agent.status")
	keyAgentTurns     = attribute.Key("warren.agent.model_turns")
	keyAgentCalls     = attribute.Key("warren.agent.tool_calls")
	keyAgentErrors    = attribute.Key("warren.agent.tool_errors")
	keyStage          = attribute.Key("warren.stage")
	keyIteration      = attribute.Key("warren.iteration")
	keyTickStart      = attribute.Key("warren.tick.start")
	keyTickEnd        = attribute.Key("warren.tick.end")
	keyPool           = attribute.Key("warren.pool")
	keyAttempts       = attribute.Key("warren.attempts")
	keyCost           = attribute.Key("warren.cost_usd")
	keyDropped        = attribute.Key("warren.context_dropped")
	keyVerdict        = attribute.Key("warren.gate.verdict")
	keyLayer          = attribute.Key("warren.gate.layer")
	keyPromptVerdict  = attribute.Key("warren.prompt.verdict")
	keyPromptBy       = attribute.Key("warren.prompt.by")
)

// The values of error.type this package sets: short, fixed words, never an error's text (which
// may quote a provider's answer or a key).
const (
	errModel      = "model_error"
	errTool       = "tool_error"
	errDenied     = "denied"
	errUnfinished = "unfinished"
)

// attrDoc is one attribute the spans carry: its key, the operations of the spans that carry it
// and its type. The table is what docs/opentelemetry.md's attribute table is checked against
// (TestDocsListAttributes), and every attribute a test run's spans carry must be listed here for
// its span's operation (TestSpansMatchTrace), so neither the page nor this list can drift from
// what the code sets.
type attrDoc struct {
	key attribute.Key
	ops []string
	typ string
}

// attributeDocs is every attribute the package sets, GenAI keys first, then Warren's.
var attributeDocs = []attrDoc{
	{semconv.GenAIOperationNameKey, []string{opWorkflow, opAgent, opChat, opTool}, "string"},
	{semconv.GenAIWorkflowNameKey, []string{opWorkflow}, "string"},
	{semconv.GenAIAgentNameKey, []string{opAgent}, "string"},
	{semconv.GenAIAgentIDKey, []string{opAgent}, "string"},
	{semconv.GenAIProviderNameKey, []string{opAgent, opChat}, "string"},
	{semconv.GenAIRequestModelKey, []string{opAgent, opChat}, "string"},
	{semconv.GenAIUsageInputTokensKey, []string{opChat}, "int"},
	{semconv.GenAIUsageOutputTokensKey, []string{opChat}, "int"},
	{semconv.GenAIUsageCacheReadInputTokensKey, []string{opChat}, "int"},
	{semconv.GenAIUsageCacheCreationInputTokensKey, []string{opChat}, "int"},
	{semconv.GenAIResponseFinishReasonsKey, []string{opChat}, "string[]"},
	{semconv.GenAIToolNameKey, []string{opTool}, "string"},
	{semconv.GenAIToolCallIDKey, []string{opTool}, "string"},
	{semconv.ErrorTypeKey, []string{opWorkflow, opAgent, opChat, opTool}, "string"},
	{keyRunID, []string{opWorkflow}, "string"},
	{keyRunStatus, []string{opWorkflow}, "string"},
	{keyRunAgents, []string{opWorkflow}, "int"},
	{keyRunTurns, []string{opWorkflow}, "int"},
	{keyRunCalls, []string{opWorkflow}, "int"},
	{keyRunToolErrors, []string{opWorkflow}, "int"},
	{keyAgentID, []string{opChat, opTool}, "int"},
	{keyAgentName, []string{opChat, opTool}, "string"},
	{keyAgentGroup, []string{opAgent}, "string"},
	{keyAgentBlueprint, []string{opAgent}, "string"},
	{keyAgentDepth, []string{opAgent}, "int"},
	{keyAgentStatus, []string{opAgent}, "string"},
	{keyAgentTurns, []string{opAgent}, "int"},
	{keyAgentCalls, []string{opAgent}, "int"},
	{keyAgentErrors, []string{opAgent}, "int"},
	{keyStage, []string{opChat, opTool}, "string"},
	{keyIteration, []string{opChat}, "int"},
	{keyTickStart, []string{opAgent, opChat, opTool}, "int"},
	{keyTickEnd, []string{opWorkflow, opAgent, opChat, opTool}, "int"},
	{keyPool, []string{opChat}, "string"},
	{keyAttempts, []string{opChat}, "int"},
	{keyCost, []string{opChat}, "string"},
	{keyDropped, []string{opChat}, "int"},
	{keyVerdict, []string{opTool}, "string"},
	{keyLayer, []string{opTool}, "string"},
	{keyPromptVerdict, []string{opTool}, "string"},
	{keyPromptBy, []string{opTool}, "string"},
}

// The providers of gen_ai.provider.name for the model kinds that ask one; Warren's own kinds
// (scripted, js, and any an embedder registers) are named "warren.<kind>", as the conventions
// ask of a provider they do not list.
var providers = map[string]string{
	"openai":    semconv.GenAIProviderNameOpenAI.Value.AsString(),
	"anthropic": semconv.GenAIProviderNameAnthropic.Value.AsString(),
}

// providerOf returns gen_ai.provider.name for a model id as a trace writes it ("<kind>:<key>",
// such as "openai:live"), and whether the kind asks a provider over the network (a live model,
// whose span is a client span).
func providerOf(model string) (provider string, live bool) {
	kind, _, ok := strings.Cut(model, ":")
	if !ok || kind == "" {
		return "warren", false
	}
	if p, ok := providers[kind]; ok {
		return p, true
	}
	return "warren." + kind, false
}
