package systems

import (
	"fmt"

	"github.com/warrenhq/warren/components"
	"github.com/warrenhq/warren/ecs"
	"github.com/warrenhq/warren/gate"
	"github.com/warrenhq/warren/internal/agenttree"
	"github.com/warrenhq/warren/operator"
	"github.com/warrenhq/warren/recording"
	"github.com/warrenhq/warren/resources"
	"github.com/warrenhq/warren/subagents"
	"github.com/warrenhq/warren/trace"
)

// Operator applies what people did to the run (operator.Console), first thing in a tick: it
// holds the tick while the run is paused, then settles the prompts people answered (or that
// timed out), kills the agents they killed with their subtrees, and stops the run they cancelled.
// Each command it applies is recorded with its tick; a replay of a run people watched applies the
// recorded commands at the same ticks instead, so it replays exactly. A command that no longer
// applies when its tick comes (its prompt's agent ended, its agent is gone) is dropped unrecorded.
type Operator struct {
	store
	hub    *gate.Hub
	tree   *agenttree.State
	op     *resources.Operator
	rec    *resources.Recording
	killer killer
	// agents is every live agent, to find a top-level one the tree does not hold yet.
	agents *ecs.View1[components.Identity]
	// replay is what a replay applies (nil unless the recording says people watched the run).
	replay *replayedOperator
	cmds   []operator.Command
}

var _ ecs.System = (*Operator)(nil)

func init() {
	Register(Info{ID: IDPrefix + "operator", Order: 5, New: func() ecs.System { return &Operator{} }})
}

// Name implements ecs.System.
func (*Operator) Name() string { return "operator" }

// Initialize implements ecs.System. It sends the prompts the scripted answers leave open to the
// run's people: the console's, or, in a replay of a run people watched, a stand-in that waits for
// the recorded answers.
func (s *Operator) Initialize(w *ecs.World) (err error) {
	if s.store, err = resolveStore(w); err != nil {
		return err
	}
	if s.hub, err = resources.Get[gate.Hub](w); err != nil {
		return err
	}
	if s.tree, err = resources.Get[agenttree.State](w); err != nil {
		return err
	}
	if s.op, err = resources.Get[resources.Operator](w); err != nil {
		return err
	}
	if s.rec, err = resources.Get[resources.Recording](w); err != nil {
		return err
	}
	s.killer = newKiller(w, s.store, s.tree, s.hub)
	s.agents = ecs.NewView1[components.Identity](w, nil, []ecs.Comp{ecs.T[components.Terminal]()})
	switch tape := s.rec.Tape; {
	case s.op.Console != nil:
		s.hub.SetPeople(s.op.Console)
	case tape != nil && tape.Header.People:
		s.replay = &replayedOperator{entries: tape.Operators, hub: s.hub, rec: s.rec}
		s.hub.SetPeople(s.replay)
		w.AddWaiter(s.replay)
	}
	return nil
}

// Update implements ecs.System.
func (s *Operator) Update(w *ecs.World) {
	tick := w.Tick()
	switch {
	case s.op.Console != nil:
		s.op.Console.Hold(s.run.Context)
		s.cmds = s.op.Console.Take(s.cmds[:0])
	case s.replay != nil:
		s.cmds = s.replay.due(tick, s.cmds[:0])
	default:
		return
	}
	for _, c := range s.cmds {
		if s.apply(w, tick, c) {
			s.rec.Writer.Operator(recording.Operator{Tick: tick, Op: c.Op, CallID: c.CallID, Answer: c.Answer, Agent: c.Agent, By: c.By})
		} else if s.replay != nil {
			s.rec.Fail(fmt.Errorf("%w: at tick %d the recording has %s %q by %s, which no longer applies", recording.ErrDivergence, tick, c.Op, c.Agent+" "+c.CallID, c.By))
		}
	}
	clear(s.cmds)
}

// apply applies c at tick and reports whether it applied.
func (s *Operator) apply(w *ecs.World, tick uint64, c operator.Command) bool {
	switch c.Op {
	case operator.OpAnswer:
		by, who := gate.ByPerson, c.By
		if c.By == gate.ByTimeout {
			by, who = gate.ByTimeout, ""
		}
		_, err := s.hub.Settle(tick, c.Agent, c.CallID, c.Answer, by, who)
		if err == nil {
			w.Touch(1)
		}
		return err == nil
	case operator.OpKill:
		n, ok := s.node(c.Agent)
		if !ok {
			return false
		}
		by := trace.AgentRef{Name: gate.ByPerson + ":" + c.By}
		return s.killer.cascade(w, tick, n, by, "killed by "+by.Name) > 0
	case operator.OpCancel:
		if s.op.Halt != nil {
			s.op.Halt(fmt.Errorf("%w by %s at tick %d", operator.ErrCancelled, c.By, tick))
		}
		return true
	}
	return false
}

// node returns the tree's node of the live agent named name. A top-level agent that never used a
// sub-agent tool is not in the tree yet: it is found among the live agents and made a root, as
// the sub-agent system does on its first call.
func (s *Operator) node(name string) (*subagents.Node, bool) {
	if n, ok := s.tree.Tree.Lookup(name); ok {
		return n, true
	}
	q := s.agents.Query()
	for q.Next() {
		id := q.Get()
		if d := s.store.agents.Get(id.Slot); d.Depth == 0 && d.Name == name {
			e := q.Entity()
			q.Close()
			n := s.tree.Tree.Root(id.ID, d.Name, s.profiles.Get(id.Profile).Blueprint.Subagents.MaxChildDepth)
			n.Data = &agenttree.Node{Entity: e}
			return n, true
		}
	}
	return nil, false
}

// Finalize implements ecs.System.
func (s *Operator) Finalize(*ecs.World) { s.agents.Release() }

// replayedOperator is what people did in a recorded run, for its replay: the commands to apply,
// by tick (an ecs.Waiter, so the replay's clock stops at each), and the stand-in the hub sends
// the prompts that waited for people to.
type replayedOperator struct {
	entries []recording.Operator
	next    int
	hub     *gate.Hub
	rec     *resources.Recording
}

var _ gate.People = (*replayedOperator)(nil)

// Opened implements gate.People: the prompt waits for its recorded answer.
func (*replayedOperator) Opened(*gate.Prompt, uint64, string) {}

// Closed implements gate.People.
func (*replayedOperator) Closed(*gate.Prompt) {}

// WaitsOutside is what the hub asks before the scheduler waits for people: a replay never does.
// A world idle with prompts waiting and no recorded command left had its recorded run stopped
// from outside; the replay stops there, as diverged.
func (r *replayedOperator) WaitsOutside() bool {
	if r.next >= len(r.entries) {
		r.rec.Fail(fmt.Errorf("%w: the recording holds no answer for the %d prompts that wait for people", recording.ErrDivergence, len(r.hub.Waiting())))
	}
	return false
}

// Pending implements ecs.Waiter.
func (r *replayedOperator) Pending() bool { return r.next < len(r.entries) }

// NextDue implements ecs.Waiter.
func (r *replayedOperator) NextDue() (uint64, bool) {
	if r.next >= len(r.entries) {
		return 0, false
	}
	return r.entries[r.next].Tick, true
}

// due appends the commands recorded at tick to buf.
func (r *replayedOperator) due(tick uint64, buf []operator.Command) []operator.Command {
	for ; r.next < len(r.entries) && r.entries[r.next].Tick <= tick; r.next++ {
		e := r.entries[r.next]
		buf = append(buf, operator.Command{Op: e.Op, CallID: e.CallID, Answer: e.Answer, Agent: e.Agent, By: e.By})
	}
	return buf
}
