package serve

import (
	"strconv"

	"github.com/warrenhq/warren/telemetry"
)

// telemetrySource is the server as Prometheus sees it (telemetry.Source): each run's figures,
// read from its view and console at scrape time.
type telemetrySource struct{ s *Server }

var _ telemetry.Source = telemetrySource{}

// Runs implements telemetry.Source.
func (t telemetrySource) Runs() []telemetry.Run {
	runs := t.s.Runs()
	out := make([]telemetry.Run, 0, len(runs))
	for _, r := range runs {
		info := r.Info()
		c := r.view.Counts()
		p := r.view.Progress()
		cost, _ := strconv.ParseFloat(c.CostUSD, 64)
		lanes, pools := r.queueDepths()
		out = append(out, telemetry.Run{
			ID: r.id, Scenario: r.scenario, State: info.State,
			AgentsByPhase: c.ByPhase, AgentsByStatus: c.ByStatus,
			Ticks: uint64(max(p.LastTick+1, 0)), Events: uint64(max(p.Events, 0)),
			ModelTurns: uint64(c.ModelTurns), ToolCallsByVerdict: c.ToolCallsByVerdict, ToolErrors: uint64(c.ToolErrors),
			TokensPrompt: uint64(c.PromptTokens), TokensCompletion: uint64(c.Tokens - c.PromptTokens), CostUSD: cost,
			PromptsOpen: info.Prompts, LaneQueue: lanes, PoolQueue: pools,
		})
	}
	return out
}
