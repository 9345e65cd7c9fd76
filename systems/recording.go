package systems

import (
	"context"
	"encoding/json"
	"fmt"

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
	res := t.replayed(tick, d, turn, i, call)
	t.rec.Writer.Begin(tick, id.ID, recordedCall(d, turn, i, call)) // a resumed run records what it replays
	d.Work.Outstanding++
	t.lanes.Tool.Submit(tick, ecs.Job{Agent: id.ID, Entity: e, Index: i, Latency: latency, Run: func() any { return res }, Recipe: res})
}

// replayed is call i's recorded result, or the divergence (which stops the run) when the
// recording does not have it.
func (t *toolTurn) replayed(tick uint64, d *components.AgentData, turn uint64, i int, call models.ToolCall) components.ToolResult {
	entry, err := t.rec.Tape.Tool(tick, recordedCall(d, turn, i, call))
	if err != nil {
		t.rec.Fail(err)
		return components.ToolResult{Content: err.Error(), IsError: true}
	}
	return fromRecording(entry.Result(), entry.Agent, entry.ID, t.rec.Tape)
}

// resumed settles call i of the turn in a resumed run whose committed recording does not have it
// (resumeDecision): a result the run before the crash got is filed from the effect journal, a
// side-effecting call that was running then is answered as interrupted (a resume note says so),
// both through the tool lane at the call's latency. It returns the action: for RunLive and
// RunAgain the caller runs the call live.
func (t *toolTurn) resumed(tick uint64, e ecs.Entity, id *components.Identity, p *components.Profile, d *components.AgentData, turn uint64, i int, call models.ToolCall, h *tools.Handle, usesHost bool, latency uint64) (resources.ResumeAction, *recording.ToolEntry) {
	action, res, entry := t.resumeDecision(p, d, call, h, usesHost)
	if res == nil {
		return action, entry
	}
	t.rec.Writer.Begin(tick, id.ID, recordedCall(d, turn, i, call))
	d.Work.Outstanding++
	t.lanes.Tool.Submit(tick, ecs.Job{Agent: id.ID, Entity: e, Index: i, Latency: latency, Run: func() any { return *res }, Recipe: *res})
	return action, nil
}

// resumeDecision is what a resumed run does with a call its committed recording does not have
// (Resume.Decide): its result, when the journal's or an interruption's answers it; the journaled
// requests a script tool that runs again answers from (ServeJournaled); neither when it runs
// live (RunLive, RunAgain).
func (t *toolTurn) resumeDecision(p *components.Profile, d *components.AgentData, call models.ToolCall, h *tools.Handle, usesHost bool) (resources.ResumeAction, *components.ToolResult, *recording.ToolEntry) {
	r := t.rec.Resume
	what := d.Name + " " + call.ID + " (" + call.Name + ")"
	action, journaled := r.Decide(resources.ToolEffect(d.Name, call.ID), what,
		!h.Effects().ReadOnly(), r != nil && r.Retry != nil && r.Retry(call.Name))
	var res components.ToolResult
	switch action {
	case resources.RunLive, resources.RunAgain:
		return action, nil, nil
	case resources.ServeJournaled:
		var r recording.Result
		if err := json.Unmarshal(journaled, &r); err != nil {
			t.rec.Fail(fmt.Errorf("the effect journal's result of %s's call %s does not read: %w", d.Name, call.ID, err))
			r = recording.Result{Content: err.Error()}
		}
		if usesHost {
			// A script tool is run again, as a replay runs it: what it does inside the world
			// (a callTool to the checklist, its notes) happens again, and its requests of the
			// world outside are answered from the journaled ones.
			return action, nil, &recording.ToolEntry{Agent: d.Name, ID: call.ID, Tool: call.Name, Ops: r.Ops}
		}
		res = fromRecording(r, d.Name, call.ID, t.rec.Tape)
	case resources.CheckEffect:
		return t.checkEffect(p, d, journaled, what)
	case resources.AnswerInterrupted:
		res = interruptedResult()
	}
	return action, &res, nil
}

// interruptedResult is the answer to a call the host's stop cut off, which is not run again.
func interruptedResult() components.ToolResult {
	return components.ToolResult{Content: resources.Interrupted, IsError: true,
		Notes: []tools.Note{{Fn: ResumeNote, Text: "interrupted: running when the host stopped; not run again"}}}
}

// checkEffect settles an exactly-once call the host's stop cut off by looking at its target
// (tools.CheckEffect): the effect happened, and the call is answered with the result its
// expectation journaled (its write charged to the agent's budget, as the call charged it), exactly
// as the run before the crash would have been; it did not, and the call runs now (RunLive) with
// the same result; or something else changed the target, and it is answered as interrupted.
func (t *toolTurn) checkEffect(p *components.Profile, d *components.AgentData, journaled json.RawMessage, what string) (resources.ResumeAction, *components.ToolResult, *recording.ToolEntry) {
	var x tools.Expectation
	outcome := tools.EffectUnknown
	if err := json.Unmarshal(journaled, &x); err == nil {
		outcome = tools.CheckEffect(d.Workdir, x)
	}
	action := t.rec.Resume.Checked(what, outcome == tools.EffectHappened, outcome == tools.EffectNotHappened)
	switch action {
	case resources.ServeJournaled:
		if d.Tools.Writes == nil && p.Policy != nil {
			d.Tools.Writes = tools.NewWriteBudget(p.Policy.WritePerCall, p.Policy.WritePerRun)
		}
		_ = d.Tools.Writes.Charge(x.Charged) // it fitted when the call charged it
		res := components.ToolResult{Content: x.Result}
		return action, &res, nil
	case resources.AnswerInterrupted:
		res := interruptedResult()
		return action, &res, nil
	}
	return action, nil, nil
}

// ranAgain marks the result of a call a resumed run ran again (retry_on_resume) with a resume note.
func ranAgain(run func() any) func() any {
	return func() any {
		out := run()
		if res, ok := out.(components.ToolResult); ok {
			res.Notes = append(res.Notes, tools.Note{Fn: ResumeNote, Text: "run again: it was running when the host stopped, and its tool is retry_on_resume", OK: true})
			return res
		}
		return out
	}
}

// ResumeNote is the fn of the tool_note a resumed run writes for a call the host's stop cut off:
// answered as interrupted, or run again (retry_on_resume).
const ResumeNote = "resume"

// laneRun is the work of lane call i of the agent's turn (laneWork), noted in the recording when
// the run records: a resumed run records what it replays too.
func (t *toolTurn) laneRun(tick, agent uint64, d *components.AgentData, turn uint64, i int, call models.ToolCall, h *tools.Handle, ec *tools.ExecContext, usesHost bool, entry *recording.ToolEntry) func() any {
	if entry != nil || t.rec.Writer != nil {
		t.rec.Writer.Begin(tick, agent, recordedCall(d, turn, i, call))
	}
	return t.laneWork(tick, d, turn, i, call, h, ec, usesHost, entry)
}

// laneWork is what runs on the lane for call i. In a recorded run it gives a script tool
// (usesHost) a Recorder its requests go through, whose ops join the result; in a replay (only
// script tools get here: other calls are replayed whole) it gives the script a Player answering
// its requests from entry, the recorded call (or, in a resumed run, the journaled one), and the
// script runs again. A side-effecting call of a run with a state directory runs under the effect
// journal (journaled). A restored snapshot makes a waiting call's work again through it.
func (t *toolTurn) laneWork(tick uint64, d *components.AgentData, turn uint64, i int, call models.ToolCall, h *tools.Handle, ec *tools.ExecContext, usesHost bool, entry *recording.ToolEntry) func() any {
	args := call.Args
	run := func() any { return runTool(h, ec, args) }
	switch {
	case entry != nil:
		player := &recording.Player{Tick: tick, Call: recordedCall(d, turn, i, call), Ops: entry.Ops}
		ec.Outside = player
		return func() any {
			res := runTool(h, ec, args)
			res.Divergence = player.Err()
			res.Ops = entry.Ops
			return res
		}
	case t.rec.Writer != nil && usesHost:
		rec := &recording.Recorder{}
		ec.Outside = rec
		run = func() any {
			res := runTool(h, ec, args)
			res.Ops = rec.Ops()
			return res
		}
	}
	if j := t.rec.Journal; j != nil && !h.Effects().ReadOnly() {
		key := resources.ToolEffect(d.Name, call.ID)
		if _, ok := h.Tool().(tools.ExactlyOnce); ok && entry == nil {
			run = journaledEffect(j, key, tick, t.run.Context, ec, run)
		} else {
			run = journaled(j, key, tick, t.run.Context, run)
		}
	}
	return run
}

// journaledEffect is journaled for an exactly-once tool's call (tools.ExactlyOnce): the tool
// journals its intent itself, with what its effect will be, through ec.Journal once it knows it
// and before it makes it; a call that fails before (bad arguments, a missing file) changes
// nothing and journals nothing.
func journaledEffect(j resources.EffectJournal, key string, tick uint64, runCtx context.Context, ec *tools.ExecContext, run func() any) func() any {
	return func() any {
		rec := &callJournal{j: j, key: key, tick: tick}
		ec.Journal = rec
		var raw []byte
		defer func() {
			if rec.wrote {
				j.Done(key, tick, raw)
			}
		}()
		out := run()
		if res, ok := out.(components.ToolResult); ok && runCtx.Err() == nil {
			raw, _ = json.Marshal(toRecording(res))
		}
		return out
	}
}

// callJournal is one exactly-once call's tools.EffectRecorder over the run's effect journal.
type callJournal struct {
	j     resources.EffectJournal
	key   string
	tick  uint64
	wrote bool
}

// Expect implements tools.EffectRecorder: the intent, with x, on disk.
func (c *callJournal) Expect(x tools.Expectation) error {
	raw, err := json.Marshal(x)
	if err != nil {
		return err
	}
	if err := c.j.Intent(c.key, c.tick, raw); err != nil {
		return err
	}
	c.wrote = true
	return nil
}

// Applying implements tools.EffectRecorder.
func (c *callJournal) Applying() { c.j.Applying() }

// journaled runs a side-effecting call's work under the effect journal: its intent is on disk
// before it runs (a journal that cannot take it fails the call, which then never ran), and its
// result once it returns, unless the run's own stop cut it off (the run's context ended), which
// leaves it "may or may not have happened" for a resume. A call its agent's kill cut off keeps
// the result it got, as the recording does.
func journaled(j resources.EffectJournal, key string, tick uint64, runCtx context.Context, run func() any) func() any {
	return func() any {
		if err := j.Intent(key, tick, nil); err != nil {
			return components.ToolResult{Content: "the call did not run: the state directory could not journal it: " + err.Error(), IsError: true}
		}
		var raw []byte
		// A result that is not journaled (a panic, the run's stop) leaves the call interrupted:
		// the safe side.
		defer func() { j.Done(key, tick, raw) }()
		out := run()
		if res, ok := out.(components.ToolResult); ok && runCtx.Err() == nil {
			raw, _ = json.Marshal(toRecording(res))
		}
		return out
	}
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
	report, ok := r.tape.Background(r.agent, r.callID)
	if !ok && r.tape.Resuming() {
		// Delivered after the last commit: the command died with the host that ran it.
		return LostReport
	}
	return report
}

// LostReport is what an agent is told of its background command when a resumed run goes on
// without it: the command's process did not survive the host.
const LostReport = "[background command lost] the host stopped while this command ran in the background, and its process did not survive; whether it finished is unknown"

// resolveRecording resolves the run's recording resource.
func resolveRecording(w *ecs.World) (*resources.Recording, error) {
	return resources.Get[resources.Recording](w)
}
