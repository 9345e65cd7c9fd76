package trace

// KindToolNote is the kind of a tool_note event.
const KindToolNote = "tool_note"

// ToolNote records one thing a call did besides its result, written just before the call's
// tool_result (with the same stage, the call's): a script tool's log line (fn "log", text the line) or a host function the script
// called (fn its name, text a short summary of its argument such as the path or URL, ok whether
// it succeeded, err why not). Text is truncated like tool_result content.
func (w *Writer) ToolNote(tick uint64, a AgentRef, stage, callID, tool, fn, text string, ok bool, err string) {
	e := w.begin(tick, a, KindToolNote)
	if e == nil {
		return
	}
	e.Str("stage", stage).Str("call_id", callID).Str("tool", tool).Str("fn", fn)
	w.appendText(e, "text", text)
	e.Bool("ok", ok).Str("err", err).Msg("")
}
