package blueprint

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/warrenhq/warren/internal/tomlfile"
)

// stuckStages is the reference the graph check is tested against, written the slow, obvious way:
// the names of the stages reachable from the entry from which no walk over the firing
// transitions reaches an outcome that no transition catches.
func stuckStages(bp *Blueprint) []string {
	canEnd := func(start int) bool {
		seen := map[int]bool{start: true}
		todo := []int{start}
		for len(todo) > 0 {
			st := &bp.Stages[todo[0]]
			todo = todo[1:]
			for _, o := range st.outcomes() {
				to, ok := st.Next(o)
				if !ok {
					return true
				}
				if !seen[to] {
					seen[to] = true
					todo = append(todo, to)
				}
			}
		}
		return false
	}
	reach := map[int]bool{bp.Entry: true}
	todo := []int{bp.Entry}
	for len(todo) > 0 {
		st := &bp.Stages[todo[0]]
		todo = todo[1:]
		for _, o := range st.outcomes() {
			if to, ok := st.Next(o); ok && !reach[to] {
				reach[to] = true
				todo = append(todo, to)
			}
		}
	}
	var stuck []string
	for i := range bp.Stages {
		if reach[i] && !canEnd(i) {
			stuck = append(stuck, bp.Stages[i].Name)
		}
	}
	return stuck
}

// stagesOf builds a blueprint from a compact description: one stage per element, "name:on>to,on>to".
func stagesOf(entry string, endless bool, stages ...string) string {
	var b strings.Builder
	b.WriteString("name = \"graph\"\n")
	if entry != "" {
		fmt.Fprintf(&b, "entry = %q\n", entry)
	}
	if endless {
		b.WriteString("endless = true\n")
	}
	for _, s := range stages {
		name, transitions, _ := strings.Cut(s, ":")
		fmt.Fprintf(&b, "\n[[stages]]\nname = %q\n", name)
		if transitions == "" {
			continue
		}
		for _, t := range strings.Split(transitions, ",") {
			on, to, _ := strings.Cut(t, ">")
			fmt.Fprintf(&b, "[[stages.transitions]]\non = %q\nto = %q\n", on, to)
		}
	}
	return b.String()
}

// TestStageGraphEnds: a stage graph loads when every stage an agent can reach can still end, and
// otherwise each loop with no way out is reported once, at the transition that closes it.
func TestStageGraphEnds(t *testing.T) {
	tests := []struct {
		name    string
		entry   string
		endless bool
		stages  []string
		// want are the keys of the reported loops; none: the blueprint loads.
		want []string
	}{
		{name: "no transitions", stages: []string{"a"}},
		{name: "a self-loop on done ends on error", stages: []string{"a:done>a"}},
		{name: "a self-loop on two outcomes ends on the third", stages: []string{"a:done>a,error>a"}},
		{name: "always to a stage that ends", stages: []string{"a:always>b", "b"}},
		{name: "a cycle with one exit", stages: []string{"a:always>b", "b:done>a,error>a"}},
		{name: "a loop that only unreachable stages form", stages: []string{"a", "b:always>b"}},
		{name: "always shadows later transitions", stages: []string{"a:always>b,done>a", "b"}},
		{name: "always to itself", stages: []string{"a:always>a"}, want: []string{"stages[0].transitions[0]"}},
		{name: "every outcome to itself", stages: []string{"a:done>a,error>a,max_iterations>a"},
			want: []string{"stages[0].transitions[0]"}},
		{name: "a two-stage loop is closed by the later stage", stages: []string{"a:always>b", "b:always>a"},
			want: []string{"stages[1].transitions[0]"}},
		{name: "the closing transition is the first back into the loop", stages: []string{"a:always>b", "b:done>b,always>a"},
			want: []string{"stages[1].transitions[0]"}},
		{name: "an entry that leads into a loop is not reported itself", entry: "in", stages: []string{"in:always>a", "a:always>b", "b:always>a"},
			want: []string{"stages[2].transitions[0]"}},
		{name: "two separate loops are each reported", stages: []string{"a:done>b,error>c,max_iterations>b", "b:always>b", "c:always>c"},
			want: []string{"stages[1].transitions[0]", "stages[2].transitions[0]"}},
		{name: "a loop downstream of another is the one reported", stages: []string{"a:done>a,max_iterations>a,error>b", "b:always>b"},
			want: []string{"stages[1].transitions[0]"}},
		{name: "endless allows a loop", endless: true, stages: []string{"a:always>a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bp, err := Parse("graph.toml", []byte(stagesOf(tt.entry, tt.endless, tt.stages...)), nil)
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("Parse: %v", err)
				}
				if stuck := stuckStages(bp); len(stuck) > 0 && !tt.endless {
					t.Errorf("loaded, but stages %v cannot end", stuck)
				}
				return
			}
			var errs tomlfile.Errors
			if !errors.As(err, &errs) {
				t.Fatalf("Parse: %v, want loops reported at %v", err, tt.want)
			}
			var keys []string
			for _, e := range errs {
				if !errors.Is(e, ErrNoEnd) || e.Line == 0 {
					t.Errorf("problem %q: want ErrNoEnd with a line", e)
				}
				keys = append(keys, e.Key)
			}
			if !slices.Equal(keys, tt.want) {
				t.Errorf("reported at %v, want %v:\n%v", keys, tt.want, err)
			}
		})
	}
}

// TestStageGraphNotCheckedWhenBroken: a transition to an unknown stage leaves the graph
// incomplete; only that problem is reported, not a loop the missing edge would have made.
func TestStageGraphNotCheckedWhenBroken(t *testing.T) {
	_, err := Parse("graph.toml", []byte(stagesOf("", false, "a:always>a,done>nowhere")), nil)
	if err == nil || errors.Is(err, ErrNoEnd) || !errors.Is(err, ErrUnknownStage) {
		t.Fatalf("err = %v, want only the unknown stage", err)
	}
}

// TestStageGraphRing: a ring of MaxStages stages joined by always is one loop, reported once
// with a bounded list of its stages. The blueprint is built in Go (parsing 20,000 stages takes
// seconds; the check itself is linear, and Tarjan's walk is iterative, so the ring's depth
// costs no stack).
func TestStageGraphRing(t *testing.T) {
	bp := &Blueprint{Stages: make([]Stage, MaxStages)}
	for i := range bp.Stages {
		next := (i + 1) % MaxStages
		bp.Stages[i] = Stage{Name: fmt.Sprintf("s%d", i), Index: i,
			Transitions: []Transition{{On: OnAlways, To: next, ToName: fmt.Sprintf("s%d", next)}}}
	}
	var c compiler
	c.checkEnds(bp)
	if len(c.errs) != 1 || !errors.Is(c.errs[0], ErrNoEnd) {
		t.Fatalf("errors = %.300v, want one ErrNoEnd", c.errs)
	}
	if want := fmt.Sprintf("stages[%d].transitions[0]", MaxStages-1); c.errs[0].Key != want {
		t.Errorf("reported at %s, want %s", c.errs[0].Key, want)
	}
	if !strings.Contains(c.errs[0].Msg, fmt.Sprintf("(%d more)", MaxStages-maxListed)) {
		t.Errorf("message does not bound its list of stages: %.400s", c.errs[0].Msg)
	}
	bp.Stages[MaxStages/2].Transitions[0].On = OnDone // now it ends on error and max_iterations
	c = compiler{}
	c.checkEnds(bp)
	if len(c.errs) != 0 {
		t.Errorf("a ring with one exit reported: %.300v", c.errs)
	}
}
