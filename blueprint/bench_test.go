package blueprint

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/expr-lang/expr/vm"
)

func loadWorker(b *testing.B) *Blueprint {
	b.Helper()
	bp, err := Load(filepath.Join("testdata", "good", "worker.toml"), testTools)
	if err != nil {
		b.Fatal(err)
	}
	return bp
}

// BenchmarkStageAdvertises is the tool gate's visibility check, run for
// every tool call of every agent.
func BenchmarkStageAdvertises(b *testing.B) {
	st, _ := loadWorker(b).Stage("gather")
	for b.Loop() {
		if !st.Advertises("shell") || st.Advertises("write_file") {
			b.Fatal("wrong answer")
		}
	}
}

// BenchmarkStageNext is the transition system's lookup, run whenever an
// agent's stage ends.
func BenchmarkStageNext(b *testing.B) {
	st, _ := loadWorker(b).Stage("gather")
	for b.Loop() {
		if to, ok := st.Next(OutcomeError); !ok || to != 1 {
			b.Fatal("wrong answer")
		}
	}
}

// BenchmarkCacheLoadHit is a spawn naming an already compiled blueprint.
func BenchmarkCacheLoadHit(b *testing.B) {
	data, err := os.ReadFile(filepath.Join("testdata", "good", "worker.toml"))
	if err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(b.TempDir(), "worker.toml")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		b.Fatal(err)
	}
	cache := NewCache(testTools)
	if _, err := cache.Load(path); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := cache.Load(path); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParse is the one-off compile of a realistic blueprint.
func BenchmarkParse(b *testing.B) {
	data, err := os.ReadFile(filepath.Join("testdata", "good", "worker.toml"))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse("worker.toml", data, testTools); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMaySpawn is the spawnable check every spawn_agent and fan_out
// worker makes.
func BenchmarkMaySpawn(b *testing.B) {
	sa := Subagents{Spawnable: []string{"critic", "planner", "reviewer", "worker"}}
	for b.Loop() {
		if !sa.MaySpawn("worker") || sa.MaySpawn("writer") {
			b.Fatal("wrong answer")
		}
	}
}

// BenchmarkConditionFire is the cost of resolving a stage visit's end through conditions: the
// review stage of the shipped pipeline, whose grader answered revise, so Fire evaluates both
// conditions (a JSON field, memory arithmetic) before the fallback fires. "decoded" is the
// evaluation alone; "with decode" adds decoding the grader's JSON result, as the host does once
// per transition.
func BenchmarkConditionFire(b *testing.B) {
	bp, err := Load(filepath.Join("..", "scenarios", "examples", "review", "pipeline.toml"), append(testTools, "grade"))
	if err != nil {
		b.Fatal(err)
	}
	st, _ := bp.Stage("review")
	const result = `{"verdict":"revise","missing":["## Limits"],"words":25}`
	env := ConditionEnv{Outcome: "done", Stage: "review", Visit: 1, Memory: map[string]any{"rounds": 1.0}}
	var machine vm.VM
	fire := func(b *testing.B) {
		if k, err := st.Fire(OutcomeDone, &machine, &env); err != nil || k != 2 {
			b.Fatalf("Fire = %d, %v", k, err)
		}
	}
	b.Run("decoded", func(b *testing.B) {
		var v any
		if err := json.Unmarshal([]byte(result), &v); err != nil {
			b.Fatal(err)
		}
		env.Tools = map[string]any{"grade": v}
		b.ReportAllocs()
		for b.Loop() {
			fire(b)
		}
	})
	b.Run("with decode", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var v any
			if err := json.Unmarshal([]byte(result), &v); err != nil {
				b.Fatal(err)
			}
			env.Tools = map[string]any{"grade": v}
			fire(b)
		}
	})
}
