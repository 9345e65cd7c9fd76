package systems

import (
	"github.com/warrenhq/warren/components"
	"github.com/warrenhq/warren/ecs"
	"github.com/warrenhq/warren/models"
	"github.com/warrenhq/warren/recording"
	"github.com/warrenhq/warren/resources"
	"github.com/warrenhq/warren/tools"
)

// The tool lane is where a run meets the world outside: every call that runs there (the file
// tools, the shell, script tools, MCP tools) is recorded whole when the run records
// (resources.Recording.Writer), and answered from the recording, without running, when it
// replays (Recording.Tape). Calls that stay inside the world (the checklist, the sub-agent tools,
// questions) run in a replay as they did; their results are functions of the world.

// recordedCall is call i of an agent's turn as the recording keys it.
func recordedCall(d *components.AgentData, turn uint64, i int, call models.ToolCall) recording.Call {
	return recording.Call{Agent: d.Name, Turn: turn, Index: i, ID: call.ID, Tool: call.Name, Args: call.Args}
}

// replay files call i of the turn from the tape, through the tool lane as if it ran (so it comes
// back at the tick it did), or stops the run when the recording does not have it.
func (t *toolTurn) replay(tick uint64, e ecs.Entity, id *components.Identity, d *components.AgentData, turn uint64, i int, call models.ToolCall, latency uint64) {
	entry, err := t.rec.Tape.Tool(tick, recordedCall(d, turn, i, call))
	var res components.ToolResult
	if err != nil {
		t.rec.Fail(err)
		res = components.ToolResult{Content: err.Error(), IsError: true}
	} else {
		res = fromRecording(entry.Result(), entry.Agent, entry.ID, t.rec.Tape)
	}
	d.Work.Outstanding++
	t.lanes.Tool.Submit(tick, ecs.Job{Agent: id.ID, Entity: e, Index: i, Latency: latency, Run: func() any { return res }})
}

// laneRun is the work of lane call i of the agent's turn. In a recorded run it notes the call in
// the recording and gives a script tool (usesHost) a Recorder its requests go through, whose ops
// join the result; in a replay (only script tools get here: other calls are replayed whole) it
// gives the script a Player answering its requests from the recorded call, and the script runs
// again. A replayed call the recording does not have files the divergence as its result (the run
// stops at the end of the tick).
func (t *toolTurn) laneRun(tick, agent uint64, d *components.AgentData, turn uint64, i int, call models.ToolCall, h *tools.Handle, ec *tools.ExecContext, usesHost bool) func() any {
	args := call.Args
	plain := func() any { return runTool(h, ec, args) }
	switch {
	case t.rec.Tape != nil:
		c := recordedCall(d, turn, i, call)
		entry, err := t.rec.Tape.Tool(tick, c)
		if err != nil {
			t.rec.Fail(err)
			res := components.ToolResult{Content: err.Error(), IsError: true}
			return func() any { return res }
		}
		player := &recording.Player{Tick: tick, Call: c, Ops: entry.Ops}
		ec.Outside = player
		return func() any {
			res := runTool(h, ec, args)
			res.Divergence = player.Err()
			return res
		}
	case t.rec.Writer != nil:
		t.rec.Writer.Begin(tick, agent, recordedCall(d, turn, i, call))
		if usesHost {
			rec := &recording.Recorder{}
			ec.Outside = rec
			return func() any {
				res := runTool(h, ec, args)
				res.Ops = rec.Ops()
				return res
			}
		}
	}
	return plain
}

// toRecording is a filed result in the recording's terms.
func toRecording(r components.ToolResult) recording.Result {
	out := recording.Result{OK: !r.IsError, Content: r.Content, Detached: r.Detached != nil, Panic: r.Panic, Ops: r.Ops}
	if len(r.Notes) > 0 {
		out.Notes = make([]recording.Note, len(r.Notes))
		for i, n := range r.Notes {
			out.Notes[i] = recording.Note{Fn: n.Fn, Text: n.Text, OK: n.OK, Err: n.Err}
		}
	}
	return out
}

// fromRecording is a recorded result as the world files it; a background command's report comes
// from the tape too.
func fromRecording(r recording.Result, agent, callID string, tape *recording.Tape) components.ToolResult {
	out := components.ToolResult{Content: r.Content, IsError: !r.OK, Panic: r.Panic}
	if len(r.Notes) > 0 {
		out.Notes = make([]tools.Note, len(r.Notes))
		for i, n := range r.Notes {
			out.Notes[i] = tools.Note{Fn: n.Fn, Text: n.Text, OK: n.OK, Err: n.Err}
		}
	}
	if r.Detached {
		out.Detached = replayedReport{tape: tape, agent: agent, callID: callID}
	}
	return out
}

// replayedReport is a background command of a replay: its report is the recorded one.
type replayedReport struct {
	tape          *recording.Tape
	agent, callID string
}

var _ tools.Detached = replayedReport{}

// Report implements tools.Detached.
func (r replayedReport) Report() string {
	report, _ := r.tape.Background(r.agent, r.callID)
	return report
}

// resolveRecording resolves the run's recording resource.
func resolveRecording(w *ecs.World) (*resources.Recording, error) {
	return resources.Get[resources.Recording](w)
}
