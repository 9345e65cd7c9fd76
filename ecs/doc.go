// Package ecs is Warren's world: arche's entity-component store behind a small, stable surface,
// what every system shares (the clock, the id allocator, typed resources, the work lanes and
// other waiters), per-agent random streams, and the scheduler that runs an ordered list of
// systems tick by tick.
//
// Only this package imports arche: components/ holds plain Go types and imports no arche at
// all. Systems reach entities through the aliases, wrappers and views declared here (Entity,
// Comp, Map, Exchange, Query1, Query2, Spawner6, View1, View2), so the ECS library could be
// swapped without touching the rest of Warren.
//
// # Resources
//
// A World holds the Clock, the IDAllocator (ids 1, 2, 3, ... in spawn order, so they are as
// deterministic as spawning), the scenario seed, the lanes and the waiters, and any typed
// resource a caller stores with AddResource and reads with Resource (the host stores its
// systems.Host there). AgentRNG derives an agent's PCG stream from (seed, agent id) alone; the
// stream is stored by value in the agent's component, not in the world, so adding an agent never
// perturbs another's numbers. The latency model is not here: the dispatching system puts each
// job's latency, in ticks, on the Job.
//
// # Lifecycle
//
// A Scheduler drives its systems through three phases, in order:
//
//  1. Initialize, once, in list order: a system resolves its views, maps, exchanges and
//     resources here, so that Update only does the work.
//  2. Update, every tick, in list order, after every lane has handed over what is due
//     (Lane.Advance); in virtual time the tick then ends at every lane's Barrier. Systems report
//     what they changed with World.Touch.
//  3. Finalize, once, in reverse list order, after the last tick; then the lanes are closed.
//
// Run ticks until a fixed point (a tick that touched nothing while no lane and no waiter, such
// as the interaction hub's open prompts, owes work), the tick limit, or the context's
// cancellation. A panic that escapes a system stops the run with ErrSystemPanic, naming the
// system and the tick, instead of crashing the process.
//
// # Clocks
//
// In virtual time (the default for scenarios) every job a tick starts on a lane has finished
// executing before the next tick begins (the barrier), its result is due Job.Latency ticks
// after it started (at least one), and collect systems receive due results sorted by (agent id,
// call index): the same scenario and seed give the same trace whatever GOMAXPROCS or the worker
// count is. A tick that touches nothing while work is still owed jumps the clock to the next
// due tick. In wall time results are handed over in the order they arrive, at the start of the
// next tick, and such an idle scheduler sleeps until a lane wakes it (or a tick length passes).
//
// In both, a lane holds at most its capacity of jobs (started and not yet collected; the rest
// wait in submission order), and one agent's jobs never run at the same time: a job whose agent
// has one running or queued is chained behind it, so one turn's calls see each other's effects
// in call order.
package ecs
