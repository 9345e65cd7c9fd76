package systems

import (
	"math/rand/v2"

	"github.com/warrenhq/warren/components"
	"github.com/warrenhq/warren/ecs"
	"github.com/warrenhq/warren/resources"
	"github.com/warrenhq/warren/trace"
)

// store is what most systems resolve: the run (trace, context) and the two agent stores.
type store struct {
	run      *resources.Run
	agents   *components.Agents
	profiles *components.Profiles
}

// resolveStore resolves the run and the agent stores once, in a system's Initialize.
func resolveStore(w *ecs.World) (st store, err error) {
	if st.run, err = resources.Get[resources.Run](w); err != nil {
		return st, err
	}
	if st.agents, err = resources.Get[components.Agents](w); err != nil {
		return st, err
	}
	st.profiles, err = resources.Get[components.Profiles](w)
	return st, err
}

// agentMaps gives a system typed access to an agent's components by entity.
type agentMaps struct {
	identity ecs.Map[components.Identity]
	status   ecs.Map[components.Status]
	cursor   ecs.Map[components.Cursor]
	counters ecs.Map[components.Counters]
	rng      ecs.Map[components.RNG]
}

func newAgentMaps(w *ecs.World) agentMaps {
	return agentMaps{
		identity: ecs.NewMap[components.Identity](w),
		status:   ecs.NewMap[components.Status](w),
		cursor:   ecs.NewMap[components.Cursor](w),
		counters: ecs.NewMap[components.Counters](w),
		rng:      ecs.NewMap[components.RNG](w),
	}
}

// ref is how the trace names an agent.
func ref(id *components.Identity, d *components.AgentData) trace.AgentRef {
	return trace.AgentRef{ID: id.ID, Name: d.Name}
}

// swap builds the exchange that moves an agent from phase From to phase To.
func swap[From, To any](w *ecs.World) *ecs.Exchange {
	return ecs.NewSwap(w, []ecs.Comp{ecs.T[To]()}, []ecs.Comp{ecs.T[From]()})
}

// mover batches phase changes found during a query and applies them once the query is closed,
// since arche forbids structural changes while a query is open.
type mover struct {
	ex       *ecs.Exchange
	entities []ecs.Entity
}

func newMover[From, To any](w *ecs.World) *mover { return &mover{ex: swap[From, To](w)} }

func (m *mover) add(e ecs.Entity) { m.entities = append(m.entities, e) }

// apply moves the collected entities and reports how many moved.
func (m *mover) apply() int {
	for _, e := range m.entities {
		m.ex.Exchange(e)
	}
	n := len(m.entities)
	m.reset()
	return n
}

// maxIdleScratch bounds the capacity a per-tick scratch list keeps between ticks: one tick that
// moved, spawned or reaped 10^5 agents should not pin their list forever.
const maxIdleScratch = 4096

// resetScratch empties a per-tick scratch list for reuse (dropping the references it held), or
// releases it when it grew past maxIdleScratch.
func resetScratch[T any](s []T) []T {
	if cap(s) > maxIdleScratch {
		return nil
	}
	clear(s)
	return s[:0]
}

// reset empties the list after it was applied.
func (m *mover) reset() { m.entities = resetScratch(m.entities) }

// applyIf moves the collected entities for which keep still holds (an agent killed after it
// was collected no longer is where the move starts) and reports how many moved.
func (m *mover) applyIf(keep func(ecs.Entity) bool) int {
	n := 0
	for _, e := range m.entities {
		if keep(e) {
			m.ex.Exchange(e)
			n++
		}
	}
	m.reset()
	return n
}

// terminate records an agent's end: its status and the terminal trace event. The caller moves it
// to the Terminal phase.
func terminate(tw *trace.Writer, tick uint64, id *components.Identity, d *components.AgentData, st *components.Status, stage string, kind components.StatusKind, reason string) {
	st.Kind = kind
	d.Reason = reason
	tw.Terminal(tick, ref(id, d), kind.String(), reason, stage)
}

// pcgRef lets one reusable *rand.Rand draw from whichever agent's PCG it currently points at,
// so inline model turns get the agent's own stream without an allocation per turn.
type pcgRef struct{ src *rand.PCG }

func (r *pcgRef) Uint64() uint64 { return r.src.Uint64() }
