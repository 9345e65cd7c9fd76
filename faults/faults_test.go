package faults

import (
	"testing"
)

func rate(p float64) *float64 { return &p }

// count draws n tool calls of one agent and counts each kind.
func count(in *Injector, group, tool string, n int) map[Kind]int {
	got := map[Kind]int{}
	for i := range n {
		got[in.Tool(group, tool, true, uint64(i%97)+1, uint64(i/97), i%3)]++
	}
	return got
}

func TestRatesAndOverrides(t *testing.T) {
	spec := &Spec{
		Rates:  Rates{ToolError: rate(0.1), Timeout: rate(0.05), Slow: rate(0.2), ModelError: rate(0.3)},
		Groups: map[string]Rates{"careful": {ToolError: rate(0.5)}},
		Tools:  map[string]Rates{"read_file": {Timeout: rate(0), ToolError: rate(1)}},
	}
	in := New(spec, 42)
	const n = 20000
	for _, tc := range []struct {
		name, group, tool string
		kind              Kind
		want              float64 // the share of calls that draw kind (of those not drawn earlier)
	}{
		{"the run's tool_error", "bold", "write_file", ToolError, 0.1},
		{"a group's override", "careful", "write_file", ToolError, 0.5},
		{"the run's timeout, after tool_error", "bold", "write_file", Timeout, 0.9 * 0.05},
		{"a tool's rate of 1", "bold", "read_file", ToolError, 1},
		{"a tool's rate of 0", "bold", "read_file", Timeout, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := float64(count(in, tc.group, tc.tool, n)[tc.kind]) / n
			if d := got - tc.want; d > 0.015 || d < -0.015 {
				t.Fatalf("share %.3f, want %.3f", got, tc.want)
			}
		})
	}
	fails := 0
	for a := range uint64(n) {
		if fail, _ := in.Model("bold", a, 3); fail {
			fails++
		}
	}
	if share := float64(fails) / n; share < 0.285 || share > 0.315 {
		t.Fatalf("model_error share %.3f, want 0.3", share)
	}
	crash := New(&Spec{Rates: Rates{MCPCrash: rate(1)}}, 1)
	if k := crash.Tool("g", "kv__get", true, 1, 1, 1); k != MCPCrash {
		t.Fatalf("an MCP tool at mcp_crash 1 drew %v", k)
	}
	if k := crash.Tool("g", "shell", false, 1, 1, 1); k != None {
		t.Fatalf("a tool of no MCP server drew %v", k)
	}
}

// TestDrawsArePure: a decision depends on the seed and where it is taken only, not on which
// decisions were taken before or in which order; another seed draws another pattern.
func TestDrawsArePure(t *testing.T) {
	spec := &Spec{Rates: Rates{ToolError: rate(0.3)}}
	a, b := New(spec, 7), New(spec, 7)
	for i := range 500 {
		b.Tool("g", "shell", false, uint64(i), 1, 0) // b answers other questions first
	}
	same, other := 0, 0
	c := New(spec, 8)
	for i := 499; i >= 0; i-- {
		if a.Tool("g", "shell", false, uint64(i), 2, 1) == b.Tool("g", "shell", false, uint64(i), 2, 1) {
			same++
		}
		if a.Tool("g", "shell", false, uint64(i), 2, 1) != c.Tool("g", "shell", false, uint64(i), 2, 1) {
			other++
		}
	}
	if same != 500 {
		t.Fatalf("%d of 500 decisions agree between two injectors of one seed", same)
	}
	if other == 0 {
		t.Fatal("another seed drew the same pattern")
	}
}

func TestNilInjectsNothing(t *testing.T) {
	var in *Injector
	if New(nil, 1) != nil {
		t.Fatal("no spec must give no injector")
	}
	if k := in.Tool("g", "shell", true, 1, 1, 1); k != None {
		t.Fatalf("nil injector drew %v", k)
	}
	if fail, slow := in.Model("g", 1, 1); fail || slow {
		t.Fatal("nil injector failed a model turn")
	}
	if d := New(&Spec{}, 1); d.SlowTicks() != DefaultSlowTicks || d.TimeoutTicks() != DefaultTimeoutTicks {
		t.Fatalf("defaults: %d, %d", d.SlowTicks(), d.TimeoutTicks())
	}
}
