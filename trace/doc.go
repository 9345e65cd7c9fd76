// Package trace writes and compares Warren's run trace: a deterministic JSON Lines log
// of every decision a run makes, meant to be diffed against a golden trace in scenario
// replay tests and loaded straight into pandas or DuckDB.
//
// # Format (version 5)
//
// Line 1 is a header:
//
//	{"format":"warren-trace","version":5,"host_version":"<warren>","scenario":"<name>","scenario_hash":"sha256:<hex>","seed":<n>,"clock":"virtual","fields":{"tick":"integer",...}}
//
// host_version is this build's Warren version (internal/version), whatever the Header says; a
// "recording" field follows the clock when Header.Recording is set. "fields" lists every field an
// event may have and its type ([Columns]), so that a reader knows every column from line 1;
// [Schema] gives each kind's own fields. The writer records
// ScenarioHash as given; the host puts after the hash whatever on its command
// line changed the run (" agents=N", " config=sha256:...", " launch=...", " unattended"), so a
// trace of a changed run is never compared with the golden trace as if it were the same run.
// [ReadAll] rejects a header of another format or version.
//
// Every other line is one event. Each event starts with the same five fields, in this
// order: "tick" (the scheduler tick), "seq" (1, 2, 3, ... assigned by the writer),
// "agent" (the agent id; 0 for a world event), "name" (the agent name) and "kind",
// followed by the kind's own fields. There is one Writer method per event (two for spawn:
// Spawn and SpawnChild), and the kinds, as [Kinds] returns them: answer, end, fanout_start, kill,
// mcp_server, memory, merge, message, model_fallback, model_retry, model_turn, pool_breaker, prompt, reap,
// spawn, stage_enter, terminal, tool_call, tool_note, tool_result, transition, wait_end,
// wait_start, worker_end.
// docs/trace.md gives each kind's fields in order, in a table a test generates from what the
// Writer writes, so it cannot drift from this package.
//
// Agent ids in other fields (parent, sender, target, killer, worker) come with the agent's
// name in a "_name" field; id 0 is the host, named [HostName].
//
// Values are only integers, strings, booleans and, for args, JSON: never floats or
// times, so equal runs give byte-identical traces. Field order is fixed, lines end in
// "\n", and strings are JSON-escaped (invalid UTF-8 becomes U+FFFD).
//
// tool_call args is the call's arguments compacted onto one line; arguments that are
// not valid UTF-8 JSON are recorded as a JSON string holding the raw text, and empty
// arguments as null. tool_result content, message and tool_note text and mcp_server reason
// longer than [MaxContentBytes] bytes keep their first MaxContentBytes bytes (cut back to a
// UTF-8 boundary) followed by " …[truncated N bytes]", where N is the number of bytes dropped.
//
// The events are encoded by github.com/rs/zerolog (no timestamp, no level, no message
// field). zerolog's global level is honoured like any zerolog logger: if a program sets
// zerolog.SetGlobalLevel(zerolog.Disabled), events cannot be written: [NewWriter] fails, or
// [Writer.Flush] and [Writer.Close] report [ErrSuppressed], rather than leaving a silently
// incomplete trace.
//
// A complete trace ends with the end event ([Writer.End], kind "end", agent 0): the run's status
// and counts. [Read] reads a trace that lacks it, or whose last line was cut mid-line, and says
// so in its Notes; [ReadAll] reads a trace expected whole.
//
// [Diff] and [Compare] report the first divergent event between two traces in a form
// meant to be read in a failing test's output; [DiffTraces] and [CompareFiles] keep the notes
// on incomplete traces apart.
package trace
