// Package otelgenai exports a run's model turns and tool calls as OpenTelemetry spans, following
// the GenAI semantic conventions of the version SemconvVersion pins, to the OTLP/HTTP collector
// the standard environment names (OTEL_EXPORTER_OTLP_ENDPOINT). It is optional: with no endpoint
// set, FromEnv returns a nil *Exporter, whose methods do nothing, and a run pays nothing.
//
// The spans are read from the run's trace as it is written, never from the world: an Exporter's
// Tap (for warren.Options.Events) or Writer (for warren.Options.Trace) sees each JSON line the
// trace writer writes, recognizes the few kinds it needs by their bytes, parses only those (with
// fastjson, on the run's goroutine), and leaves the trace itself untouched. Each run makes one
// tree:
//
//	invoke_workflow {scenario}           the run: its status and counts at the end event
//	└── invoke_agent {agent}             spawn to reap (a sub-agent's under its parent's)
//	    ├── chat {model}                 a model turn: from the moment the agent was ready for it
//	    │                                (spawn, stage_enter, its last tool_result) to model_turn
//	    └── execute_tool {tool}          a tool call: tool_call (the gate's verdict) to tool_result
//
// Spans start and end at the wall time the exporter sees those events; the virtual ticks they
// stand for are attributes (warren.tick.start, warren.tick.end). Content is never exported: no
// prompt, answer, task or message text, no tool arguments or results, no gate reason or
// permission keys (they quote arguments), no error text (a provider's may quote a key). The GenAI
// conventions make content capture opt-in, and Warren does not opt in. docs/opentelemetry.md has
// the attribute table, which a test checks against this package.
package otelgenai
