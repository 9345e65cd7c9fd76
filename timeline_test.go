package warren_test

import (
	"path/filepath"
	"testing"

	"github.com/warrenhq/warren"
	"github.com/warrenhq/warren/recording"
)

// TestTimelineQueues checks the queue depths a tick reports (what host serve's /metrics exports
// as warren_lane_queued_jobs and warren_inference_pool_queued_turns): wait_storm's one-slot tool
// lane keeps jobs waiting, and live.rec's pool of two requests keeps one of its three analysts'
// turns queued; both queues are empty once the run has finished.
func TestTimelineQueues(t *testing.T) {
	t.Run("tool lane", func(t *testing.T) {
		sc, err := warren.Load(filepath.Join("scenarios", "examples", "wait_storm.toml"))
		if err != nil {
			t.Fatal(err)
		}
		var most int
		var last warren.TickStats
		opt := warren.Options{Agents: 40, Timeline: func(s warren.TickStats) {
			most = max(most, s.ToolLaneWaiting)
			last = s
		}}
		if _, err := warren.Run(t.Context(), sc, opt); err != nil {
			t.Fatal(err)
		}
		if most == 0 {
			t.Error("no tick saw a job wait for wait_storm's one tool slot")
		}
		if last.ToolLaneWaiting != 0 || last.ModelLaneWaiting != 0 {
			t.Errorf("the last tick reports queued jobs: %+v", last)
		}
		if last.Pools != nil {
			t.Errorf("a scripted run reports pools: %+v", last.Pools)
		}
	})
	t.Run("pool", func(t *testing.T) {
		tape, err := recording.ReadFile(filepath.Join("scenarios", "examples", "live.rec"))
		if err != nil {
			t.Fatal(err)
		}
		sc, opt, err := warren.LoadReplay(tape, "")
		if err != nil {
			t.Fatal(err)
		}
		most := map[string]int{}
		var last warren.TickStats
		opt.Timeline = func(s warren.TickStats) {
			for _, p := range s.Pools {
				most[p.Pool] = max(most[p.Pool], p.Queued)
			}
			last = s
		}
		if _, err := warren.Run(t.Context(), sc, opt); err != nil {
			t.Fatal(err)
		}
		if most["local"] == 0 {
			t.Errorf("pool local never had a turn queued (cap 2, three analysts): %v", most)
		}
		if len(last.Pools) == 0 || last.Pools[0].Pool != "local" || last.Pools[0].Queued != 0 {
			t.Errorf("the last tick's pools: %+v, want local with none queued", last.Pools)
		}
	})
}
