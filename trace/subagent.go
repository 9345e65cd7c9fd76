package trace

// HostName is the name to record with id 0 when the host, not an agent, sent a message or
// killed an agent, so every caller spells the host the same way in a trace.
const HostName = "host"

// SpawnChild records an agent spawned by another agent (by spawn_agent or as a fan-out
// worker): Spawn's fields (task is the child's task: the spawn_agent call's task, or a fan-out
// worker's work item), then the parent ("parent" and "parent_name"), the child's depth below its
// top-level ancestor, whether it outlives its parent ("detached"), the id of the parent's call
// that spawned it ("call"; named so, not "call_id", because the call is the parent's, not the
// event's agent's) and, for a fan-out worker, the 0-based index of its work item ("item", the
// same index the parent's worker_end gives; item < 0 leaves it out), so a worker's spawn and its
// end are joined by (call, item). The kind stays "spawn" so every agent's life starts with the
// same event.
func (w *Writer) SpawnChild(tick uint64, a AgentRef, group string, index int, blueprint, model, task string, parent AgentRef, callID string, depth int, detached bool, item int) {
	e := w.begin(tick, a, KindSpawn)
	if e == nil {
		return
	}
	e.Str("group", group).Int("index", index).Str("blueprint", blueprint).Str("model", model)
	w.appendText(e, "task", task)
	e.Uint64("parent", parent.ID).Str("parent_name", parent.Name).
		Int("depth", depth).Bool("detached", detached).Str("call", callID)
	if item >= 0 {
		e.Int("item", item)
	}
	e.Msg("")
}

// Message records a message put in an agent's inbox; the event's agent is the recipient,
// because that is whose next model turn the message changes. from is the sender ("sender",
// "sender_name"; id 0 and HostName for the host); via says how it came: "send"
// (send_to_agent) or "notify" (a child's end reported to its parent). text is truncated
// like tool_result content.
func (w *Writer) Message(tick uint64, to AgentRef, from AgentRef, via, text string) {
	e := w.begin(tick, to, KindMessage)
	if e == nil {
		return
	}
	e.Uint64("sender", from.ID).Str("sender_name", from.Name).Str("via", via)
	w.appendText(e, "text", text)
	e.Msg("")
}

// WaitStart records the agent parking its call callID until target ends, so a reader can
// see why the agent made no progress until the matching WaitEnd.
func (w *Writer) WaitStart(tick uint64, a AgentRef, callID string, target AgentRef) {
	e := w.begin(tick, a, KindWaitStart)
	if e == nil {
		return
	}
	e.Str("call_id", callID).Uint64("target", target.ID).Str("target_name", target.Name).Msg("")
}

// WaitEnd records the end of the wait started by WaitStart, with target's final status,
// which is what the waiting call returns.
func (w *Writer) WaitEnd(tick uint64, a AgentRef, callID string, target AgentRef, status string) {
	e := w.begin(tick, a, KindWaitEnd)
	if e == nil {
		return
	}
	e.Str("call_id", callID).Uint64("target", target.ID).Str("target_name", target.Name).Str("status", status).Msg("")
}

// Kill records one kill as a single event, so a subtree's end reads as one decision: the
// event's agent is target, the agent at the top of the cascade; by is who killed it ("killer",
// "killer_name"; an agent, or id 0 and HostName for the host); reason says why; cascade names
// every agent the kill ended, target first, in the order they were ended.
func (w *Writer) Kill(tick uint64, target AgentRef, by AgentRef, reason string, cascade []string) {
	e := w.begin(tick, target, KindKill)
	if e == nil {
		return
	}
	e.Uint64("killer", by.ID).Str("killer_name", by.Name).Str("reason", reason).Strs("cascade", cascade).Msg("")
}

// FanOutStart records the agent starting a fan-out (by its call callID): the workers'
// blueprint, the number of work items, how many workers may run at once ("max_workers"),
// the on_worker_failure policy ("continue" or "fail_all"), and mode: "stage" for a fan-out
// stage or "tool" for the fan_out tool.
func (w *Writer) FanOutStart(tick uint64, a AgentRef, callID, blueprint string, items, maxWorkers int, onFailure, mode string) {
	e := w.begin(tick, a, KindFanOutStart)
	if e == nil {
		return
	}
	e.Str("call_id", callID).Str("blueprint", blueprint).Int("items", items).Int("max_workers", maxWorkers).
		Str("on_worker_failure", onFailure).Str("mode", mode).Msg("")
}

// WorkerEnd records one worker of the agent's fan-out callID ending: the work item's
// index ("item"), the worker ("worker", "worker_name") and its final status. It is the
// parent's event, so a fan-out reads in order on the parent's lines.
func (w *Writer) WorkerEnd(tick uint64, a AgentRef, callID string, item int, worker AgentRef, status string) {
	e := w.begin(tick, a, KindWorkerEnd)
	if e == nil {
		return
	}
	e.Str("call_id", callID).Int("item", item).Uint64("worker", worker.ID).Str("worker_name", worker.Name).Str("status", status).Msg("")
}

// Merge records the results of the agent's fan-out callID merged into it: how many items
// were done, failed, killed and never run ("not_run"), the merged text's length in bytes
// ("chars"), and ok, false when fail_all stopped the fan-out or items failed under
// fail_all. The counts, not the text, are recorded: each worker's result is already in
// its own events.
func (w *Writer) Merge(tick uint64, a AgentRef, callID string, done, failed, killed, notRun, chars int, ok bool) {
	e := w.begin(tick, a, KindMerge)
	if e == nil {
		return
	}
	e.Str("call_id", callID).Int("done", done).Int("failed", failed).Int("killed", killed).
		Int("not_run", notRun).Int("chars", chars).Bool("ok", ok).Msg("")
}
