package blueprint

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/warrenhq/warren/internal/tomlfile"
)

// outcomes returns the outcomes a visit of st can end with: a fan-out stage, whose model is
// never asked, ends done or error; any other stage may also use up its max_iterations.
func (st *Stage) outcomes() []Outcome {
	if st.FanOut != nil {
		return []Outcome{OutcomeDone, OutcomeError}
	}
	return []Outcome{OutcomeDone, OutcomeError, OutcomeMaxIterations}
}

// candidates returns the indices in Transitions of the transitions that may fire when the
// stage ends with o: those whose On matches o, in order, up to and including the first with no
// When (which fires whenever the ones before it do not). Empty when no transition matches,
// and the agent ends.
func (st *Stage) candidates(o Outcome) []int {
	var out []int
	for i := range st.Transitions {
		if st.Transitions[i].On.matches(o) {
			out = append(out, i)
			if st.Transitions[i].When == nil {
				break
			}
		}
	}
	return out
}

// ending computes, for every stage, whether an agent in it can still end: whether some sequence
// of stage outcomes and conditions leads from it to an outcome no transition catches or to a
// transition with end (which ends the agent, done or failed). Those are the stages with such an
// outcome or transition, and, backwards, every stage with a transition that may fire into one.
func (b *Blueprint) ending() []bool {
	n := len(b.Stages)
	ends := make([]bool, n)
	from := make([][]int, n) // from[j]: the stages with a transition to j that may fire
	var queue []int
	mark := func(i int) {
		if !ends[i] {
			ends[i] = true
			queue = append(queue, i)
		}
	}
	for i := range b.Stages {
		st := &b.Stages[i]
		for _, o := range st.outcomes() {
			cands := st.candidates(o)
			if len(cands) == 0 || st.Transitions[cands[len(cands)-1]].When != nil {
				mark(i) // no transition, or none left when the conditions fail
			}
			for _, k := range cands {
				if to := st.Transitions[k].To; to >= 0 {
					from[to] = append(from[to], i)
				} else {
					mark(i)
				}
			}
		}
	}
	for len(queue) > 0 {
		j := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		for _, i := range from[j] {
			mark(i)
		}
	}
	return ends
}

// successors lists the distinct stages a visit of st can lead to, in outcome and then
// transition order.
func (st *Stage) successors() []int {
	var out []int
	for _, o := range st.outcomes() {
		for _, k := range st.candidates(o) {
			if to := st.Transitions[k].To; to >= 0 && !slices.Contains(out, to) {
				out = append(out, to)
			}
		}
	}
	return out
}

// checkEnds reports every loop of stages an agent can reach from the entry and never leave:
// stages whose every outcome has a transition, each into the loop, so that an agent in them
// runs until a limit stops it. Each loop (a strongly connected set of such stages that leads
// nowhere else) is reported once, at the transition that closes it: the one from the loop's
// last stage in file order back to a stage at or before it. A blueprint with endless = true
// is not checked.
func (c *compiler) checkEnds(bp *Blueprint) {
	if bp.Endless || len(bp.Stages) == 0 {
		return
	}
	ends := bp.ending()
	reach := make([]bool, len(bp.Stages))
	reach[bp.Entry] = true
	stack := []int{bp.Entry}
	trapped := 0
	for len(stack) > 0 {
		i := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if !ends[i] {
			trapped++
		}
		for _, j := range bp.Stages[i].successors() {
			if !reach[j] {
				reach[j] = true
				stack = append(stack, j)
			}
		}
	}
	if trapped == 0 {
		return
	}
	in := func(i int) bool { return reach[i] && !ends[i] }
	for _, loop := range bottomComponents(bp, in) {
		c.reportLoop(bp, loop)
	}
}

// bottomComponents returns the strongly connected components of the stages for which in is
// true that have no transition out of themselves (every edge out of such a stage stays among
// such stages, so these are where an agent ends up circling), each sorted by stage index, in
// order of their first stage. Tarjan's algorithm, iterative so that a ring of MaxStages stages
// does not recurse that deep.
func bottomComponents(bp *Blueprint, in func(int) bool) [][]int {
	n := len(bp.Stages)
	index := make([]int, n)
	low := make([]int, n)
	comp := make([]int, n)
	for i := range index {
		index[i], comp[i] = -1, -1
	}
	onStack := make([]bool, n)
	var stack []int
	var comps [][]int
	next := 0
	type frame struct {
		v    int
		succ []int
		k    int
	}
	for root := range n {
		if !in(root) || index[root] >= 0 {
			continue
		}
		frames := []frame{{v: root, succ: bp.Stages[root].successors()}}
		index[root], low[root] = next, next
		next++
		stack = append(stack, root)
		onStack[root] = true
		for len(frames) > 0 {
			f := &frames[len(frames)-1]
			if f.k < len(f.succ) {
				w := f.succ[f.k]
				f.k++
				switch {
				case !in(w):
				case index[w] < 0:
					index[w], low[w] = next, next
					next++
					stack = append(stack, w)
					onStack[w] = true
					frames = append(frames, frame{v: w, succ: bp.Stages[w].successors()})
				case onStack[w]:
					low[f.v] = min(low[f.v], index[w])
				}
				continue
			}
			v := f.v
			frames = frames[:len(frames)-1]
			if len(frames) > 0 {
				p := frames[len(frames)-1].v
				low[p] = min(low[p], low[v])
			}
			if low[v] != index[v] {
				continue
			}
			var members []int
			for {
				w := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				onStack[w] = false
				comp[w] = len(comps)
				members = append(members, w)
				if w == v {
					break
				}
			}
			slices.Sort(members)
			comps = append(comps, members)
		}
	}
	var bottom [][]int
	for id, members := range comps {
		leaves := false
		for _, v := range members {
			for _, w := range bp.Stages[v].successors() {
				if comp[w] != id {
					leaves = true
				}
			}
		}
		if !leaves {
			bottom = append(bottom, members)
		}
	}
	slices.SortFunc(bottom, func(a, b []int) int { return a[0] - b[0] })
	return bottom
}

// reportLoop reports one loop an agent cannot leave at the transition that closes it: from the
// loop's last stage in file order, its first firing transition to a stage of the loop at or
// before it (every cycle has one).
func (c *compiler) reportLoop(bp *Blueprint, loop []int) {
	last := loop[len(loop)-1]
	st := &bp.Stages[last]
	closing := -1
	outs := st.outcomes()
	catches := func(o Outcome, k int) bool { return slices.Contains(st.candidates(o), k) }
	for _, o := range outs {
		for _, k := range st.candidates(o) {
			if to := st.Transitions[k].To; to >= 0 && to <= last && slices.Contains(loop, to) && (closing < 0 || k < closing) {
				closing = k
			}
		}
	}
	if closing < 0 {
		closing = 0 // not reached: a loop's last stage always has a transition back into it
	}
	t := &st.Transitions[closing]
	var caught []string
	for _, o := range outs {
		if catches(o, closing) {
			caught = append(caught, o.String())
		}
	}
	through := fmt.Sprintf("this transition (on %s to %q, catching %s)", t.On, t.ToName, strings.Join(caught, ", "))
	remedy := func(whose string) string {
		return "give an outcome of " + whose + " no transition (that outcome then ends the agent) or a transition with end = \"done\", or set endless = true if the blueprint's agents are meant to run until a limit stops them"
	}
	const limits = "so an agent that enters it runs until the scenario's limits.max_turns_per_agent or limits.max_ticks stops it"
	path := tomlfile.JoinIndex(tomlfile.JoinIndex("stages", last)+".transitions", closing)
	if len(loop) == 1 {
		if len(caught) < len(outs) || len(st.Transitions) > 1 {
			through += " and the stage's other transitions"
		}
		c.errorf(path, "%w: every outcome of stage %q (%s) leads back to it, through %s, %s; %s",
			ErrNoEnd, st.Name, strings.Join(namesOf(outs), ", "), through, limits, remedy("the stage"))
		return
	}
	names := make([]string, len(loop))
	for i, s := range loop {
		names[i] = strconv.Quote(bp.Stages[s].Name)
	}
	c.errorf(path, "%w: stages %s form a loop with no way out: every outcome of each leads to one of them, and %s closes the loop, %s; %s",
		ErrNoEnd, listOrNone(names), through, limits, remedy("one of these stages"))
}

// namesOf names outcomes, in order.
func namesOf(outs []Outcome) []string {
	names := make([]string, len(outs))
	for i, o := range outs {
		names[i] = o.String()
	}
	return names
}
