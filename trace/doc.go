// Package trace writes and compares Warren's run trace: a deterministic JSON Lines log
// of every decision a run makes, meant to be diffed against a golden trace in scenario
// replay tests and loaded straight into pandas or DuckDB.
//
// # Format (version 3)
//
// Line 1 is a header:
//
//	{"format":"warren-trace","version":3,"scenario":"<name>","scenario_hash":"sha256:<hex>","seed":<n>,"clock":"virtual"}
//
// Every other line is one event. Each event starts with the same five fields, in this
// order: "tick" (the scheduler tick), "seq" (1, 2, 3, ... assigned by the writer),
// "agent" (the agent id), "name" (the agent name) and "kind", followed by the kind's
// own fields:
//
//	spawn         group, index, blueprint, model; for a child agent also parent, parent_name, depth, detached, call
//	stage_enter   stage, visit
//	model_turn    stage, iteration, text, calls (the number of tool calls), error (only when the model failed)
//	tool_call     call_id, tool, args (JSON), keys, verdict, layer, reason
//	prompt        call_id, tool, prompt, keys, text, deadline
//	answer        call_id, tool, answer, by, verdict
//	tool_result   call_id, tool, ok, content
//	transition    from, to, on
//	terminal      status, reason, stage
//	reap          status, model_turns, tool_calls, tool_errors
//	message       sender, sender_name, via, text (the event's agent is the recipient)
//	wait_start    call_id, target, target_name
//	wait_end      call_id, target, target_name, status
//	kill          killer, killer_name, reason, cascade (the event's agent is the top of the cascade)
//	fanout_start  call_id, blueprint, items, max_workers, on_worker_failure, mode
//	worker_end    call_id, item, worker, worker_name, status
//	merge         call_id, done, failed, killed, not_run, chars, ok
//
// Agent ids in other fields (parent, from, target, by, worker) come with the agent's
// name in a "_name" field; id 0 is the host, named [HostName].
//
// Values are only integers, strings, booleans and, for args, JSON: never floats or
// times, so equal runs give byte-identical traces. Field order is fixed, lines end in
// "\n", and strings are JSON-escaped (invalid UTF-8 becomes U+FFFD).
//
// tool_call args is the call's arguments compacted onto one line; arguments that are
// not valid UTF-8 JSON are recorded as a JSON string holding the raw text, and empty
// arguments as null. tool_result content and message text longer than [MaxContentBytes]
// bytes keep their first MaxContentBytes bytes (cut back to a UTF-8 boundary) followed
// by " …[truncated N bytes]", where N is the number of bytes dropped.
//
// The events are encoded by github.com/rs/zerolog (no timestamp, no level, no message
// field). zerolog's global level is honoured like any zerolog logger: if a program sets
// zerolog.SetGlobalLevel(zerolog.Disabled), events cannot be written and [Writer.Flush]
// reports [ErrSuppressed] rather than leaving a silently incomplete trace.
//
// [Diff] and [Compare] report the first divergent event between two traces in a form
// meant to be read in a failing test's output.
package trace
