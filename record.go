package warren

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/warrenhq/warren/ecs"
	"github.com/warrenhq/warren/gate"
	"github.com/warrenhq/warren/hostconfig"
	"github.com/warrenhq/warren/mcp"
	"github.com/warrenhq/warren/mcp/mcpconfig"
	"github.com/warrenhq/warren/policy"
	"github.com/warrenhq/warren/recording"
	"github.com/warrenhq/warren/scenarios"
	"github.com/warrenhq/warren/tools"
)

// Recording and Tape are the recording package's writer and reader, for embedders that record
// or replay runs through Options.
type (
	Recording = recording.Writer
	Tape      = recording.Tape
)

// ErrDivergence marks a replay that asked for an input its recording does not have as asked
// (recording.ErrDivergence): the error names the agent, turn and call, and shows the first
// difference.
var ErrDivergence = recording.ErrDivergence

// ReadRecording reads the recording at path (host replay): a complete one, or an error wrapping
// recording.ErrBadRecording that names the line.
func ReadRecording(path string) (*Tape, error) { return recording.ReadFile(path) }

// LoadReplay loads what tape recorded: the scenario (from scenario when it is not empty, else
// from the file the recording names) under the recorded host config, with every MCP server's
// tools as the recording listed them (no server starts), and the options that run it again the
// way it was run, answering every outside input from tape. The caller sets Trace (and may set
// Events, Log, Progress); Options.Answerer must stay nil.
func LoadReplay(tape *Tape, scenario string) (*Scenario, Options, error) {
	h := &tape.Header
	if scenario == "" {
		// A relative path is relative to the recording's folder (ReadFile resolves it); a tape
		// read from elsewhere is taken to live in the working directory.
		scenario = absPath(h.ScenarioFile)
	}
	discover := recordedTools(h.MCPTools)
	var host *hostconfig.Config
	if h.ConfigFile != "" {
		var err error
		if host, err = scenarios.LoadHostConfigWith(absPath(h.ConfigFile), discover); err != nil {
			return nil, Options{}, fmt.Errorf("the recorded host config %s: %w", h.ConfigFile, err)
		}
	}
	sc, err := scenarios.LoadWith(scenario, KnownTools(), host, discover)
	if err != nil {
		return nil, Options{}, err
	}
	seed := h.Seed
	opt := Options{Seed: &seed, Agents: h.Agents, Host: host, Unattended: h.Unattended, Replay: tape,
		RecordFile: h.Recording,
		Launch:     policy.Launch{Yolo: h.Launch.Yolo, Allow: h.Launch.Allow, Ask: h.Launch.Ask, Deny: h.Launch.Deny}}
	if h.FaultsSeed != nil {
		fs := *h.FaultsSeed
		opt.FaultsSeed = &fs
	}
	return sc, opt, nil
}

// recordedTools lists a server's tools from the recording instead of asking it.
func recordedTools(listed []recording.MCPTool) scenarios.Discovery {
	return func(s *mcpconfig.Server) ([]mcp.ToolInfo, error) {
		var infos []mcp.ToolInfo
		for _, t := range listed {
			if t.Server == s.Name {
				infos = append(infos, mcp.ToolInfo{Server: t.Server, Tool: t.Tool, Name: t.Name, Description: t.Description,
					Parameters: t.Parameters, Effects: tools.Effects(t.Effects)})
			}
		}
		return infos, nil
	}
}

// recordingHeader is the header of the recording of a run of sc with opt.
func recordingHeader(sc *Scenario, opt Options, seed uint64, hash string) recording.Header {
	// Paths are written relative to the recording's own folder when it has a file, so a recording
	// moves, or ships in a repository, together with its scenario (recording.ReadFile resolves
	// them again).
	at := func(path string) string { return absPath(path) }
	if opt.RecordFile != "" {
		dir := filepath.Dir(absPath(opt.RecordFile))
		at = func(path string) string {
			if path == "" {
				return ""
			}
			if rel, err := filepath.Rel(dir, absPath(path)); err == nil {
				return filepath.ToSlash(rel)
			}
			return absPath(path)
		}
	}
	h := recording.Header{Host: Version, Scenario: sc.Name, ScenarioFile: at(sc.Path), ScenarioHash: hash,
		TraceFile: at(opt.TraceFile), Recording: opt.recordingName(), Answerer: opt.Answerer != nil, People: opt.Console != nil,
		Clock: sc.Clock.Mode.String(), Seed: seed, Agents: opt.Agents, Unattended: opt.Unattended,
		FaultsSeed: opt.FaultsSeed, Note: opt.RecordNote,
		Launch: recording.Launch{Yolo: opt.Launch.Yolo, Allow: opt.Launch.Allow, Ask: opt.Launch.Ask, Deny: opt.Launch.Deny}}
	if opt.Host != nil {
		h.ConfigFile = at(opt.Host.Path)
	}
	for _, t := range sc.MCPTools {
		h.MCPTools = append(h.MCPTools, recording.MCPTool{Server: t.Server, Tool: t.Tool, Name: t.Name,
			Description: t.Description, Parameters: t.Parameters, Effects: uint8(t.Effects)})
	}
	return h
}

// absPath is path made absolute ("" stays "").
func absPath(path string) string {
	if path == "" {
		return ""
	}
	if abs, err := filepath.Abs(path); err == nil {
		return abs
	}
	return path
}

// wallJournal records a wall-clock run's passes and lane hand-overs (ecs.Journal).
type wallJournal struct{ rec *recording.Writer }

func (j wallJournal) Step(tick uint64, now time.Time) {
	j.rec.Pass(recording.Pass{Tick: tick, Now: now.UnixNano()})
}

func (j wallJournal) Handed(lane string, agent uint64, index int, started, handed uint64, rank int) {
	j.rec.Handed(recording.Handed{Lane: lane, Agent: agent, Index: index, Started: started, Handed: handed, Rank: rank})
}

// wallPlan is the plan that replays the wall-clock run tape recorded (its committed passes, for a
// resumed run, which then goes on live).
func wallPlan(tape *recording.Tape) (*ecs.Plan, error) {
	p := &ecs.Plan{Lanes: map[string]ecs.LanePlan{}}
	for _, pass := range tape.Passes {
		p.Ticks = append(p.Ticks, pass.Tick)
		p.Nows = append(p.Nows, time.Unix(0, pass.Now).UTC())
	}
	for _, h := range tape.Handovers {
		lane := p.Lanes[h.Lane]
		if lane == nil {
			lane = ecs.LanePlan{}
			p.Lanes[h.Lane] = lane
		}
		lane[ecs.PlanKey{Agent: h.Agent, Index: h.Index, Started: h.Started}] = ecs.PlanSlot{Handed: h.Handed, Rank: h.Rank}
	}
	if tape.Resuming() {
		// A resumed run's committed passes: past them, the run goes on in wall time.
		p.Live = true
		return p, nil
	}
	for _, stop := range []ecs.Stop{ecs.FixedPoint, ecs.MaxTicks, ecs.Cancelled} {
		if stop.String() == tape.End.Stop {
			p.Stop = stop
			return p, nil
		}
	}
	return nil, fmt.Errorf("%w: the recording of a wall-clock run says it stopped %q (valid: fixed_point, max_ticks, cancelled)", recording.ErrBadRecording, tape.End.Stop)
}

// recordedAnswers records every answer of the embedder's answerer, in the order it gave them.
type recordedAnswers struct {
	inner gate.Answerer
	rec   *recording.Writer
	n     uint64
}

func (a *recordedAnswers) Answer(req *gate.PromptRequest) (string, uint64, bool) {
	answer, delay, ok := a.inner.Answer(req)
	a.n++
	a.rec.Answer(recording.Answer{N: a.n, Agent: req.Agent, Tool: req.Tool, Answer: answer, Delay: delay, OK: ok})
	return answer, delay, ok
}

// replayedAnswers gives the recorded answers in the same order; a prompt the recording did not
// put to the answerer stops the replay.
type replayedAnswers struct {
	tape *recording.Tape
	fail func(error)
	n    uint64
}

func (a *replayedAnswers) Answer(req *gate.PromptRequest) (string, uint64, bool) {
	a.n++
	got, err := a.tape.Answer(a.n, req.Agent, req.Tool)
	if err != nil {
		a.fail(err)
		return "", 0, false
	}
	return got.Answer, got.Delay, got.OK
}
