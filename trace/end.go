package trace

// KindEnd is the kind of the end event, the last line of a complete trace.
const KindEnd = "end"

// The run statuses an end event gives: how the run ended.
const (
	// RunFinished: the run reached a fixed point, nothing left to do.
	RunFinished = "finished"
	// RunTickLimit: the run reached its tick limit (limits.max_ticks) first.
	RunTickLimit = "tick_limit"
	// RunInterrupted: the run was stopped from outside (a signal, a cancelled context) at the
	// end of a tick.
	RunInterrupted = "interrupted"
	// RunFailed: the host could not go on (a panic escaping a system); a trace that could not be
	// written has no end event at all.
	RunFailed = "failed"
)

// End records the end of the run, the world's event (agent 0, name ""), written last: the run's
// status (RunFinished, RunTickLimit, RunInterrupted or RunFailed), how many ticks ran, how many
// agents took part, how many events came before this one ("events", which the writer counts
// itself), and the run's model turns, tool calls and tool errors. A trace without it is
// incomplete: its run was killed, or its trace stopped being written, and Read says so.
func (w *Writer) End(tick uint64, status string, ticks uint64, agents int, modelTurns, toolCalls, toolErrors uint64, spent *Spent) {
	before := w.Events()
	e := w.begin(tick, AgentRef{}, KindEnd)
	if e == nil {
		return
	}
	e.Str("status", status).Uint64("ticks", ticks).Int("agents", agents).Uint64("events", before).
		Uint64("model_turns", modelTurns).Uint64("tool_calls", toolCalls).Uint64("tool_errors", toolErrors)
	spent.append(e)
	e.Msg("")
}
