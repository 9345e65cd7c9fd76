// Package trace writes and compares Warren's run trace: a deterministic JSON Lines log
// of every decision a run makes, meant to be diffed against a golden trace in scenario
// replay tests and loaded straight into pandas or DuckDB.
//
// # Format (version 1)
//
// Line 1 is a header:
//
//	{"format":"warren-trace","version":2,"scenario":"<name>","scenario_hash":"sha256:<hex>","seed":<n>,"clock":"virtual"}
//
// Every other line is one event. Each event starts with the same five fields, in this
// order: "tick" (the scheduler tick), "seq" (1, 2, 3, ... assigned by the writer),
// "agent" (the agent id), "name" (the agent name) and "kind", followed by the kind's
// own fields:
//
//	spawn        group, index, blueprint, model
//	stage_enter  stage, visit
//	model_turn   stage, iteration, text, calls (the number of tool calls), error (only when the model failed)
//	tool_call    call_id, tool, args (JSON), verdict, layer, reason
//	tool_result  call_id, tool, ok, content
//	transition   from, to, on
//	terminal     status, reason, stage
//	reap         status, model_turns, tool_calls, tool_errors
//
// Values are only integers, strings, booleans and, for args, JSON: never floats or
// times, so equal runs give byte-identical traces. Field order is fixed, lines end in
// "\n", and strings are JSON-escaped (invalid UTF-8 becomes U+FFFD).
//
// tool_call args is the call's arguments compacted onto one line; arguments that are
// not valid UTF-8 JSON are recorded as a JSON string holding the raw text, and empty
// arguments as null. tool_result content longer than [MaxContentBytes] bytes keeps its
// first MaxContentBytes bytes (cut back to a UTF-8 boundary) followed by
// " …[truncated N bytes]", where N is the number of bytes dropped.
//
// The events are encoded by github.com/rs/zerolog (no timestamp, no level, no message
// field). zerolog's global level is honoured like any zerolog logger: if a program sets
// zerolog.SetGlobalLevel(zerolog.Disabled), events cannot be written and [Writer.Flush]
// reports [ErrSuppressed] rather than leaving a silently incomplete trace.
//
// [Diff] and [Compare] report the first divergent event between two traces in a form
// meant to be read in a failing test's output.
package trace
