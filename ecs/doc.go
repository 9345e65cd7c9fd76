// Package ecs is Warren's world: arche's entity-component store behind a small, stable surface,
// plus the resources every system shares (the clock, the id allocator, per-agent random streams,
// the latency model and the work lanes) and the scheduler that runs an ordered list of systems
// tick by tick.
//
// Only this package and components/ import arche. Systems reach entities through the aliases and
// views declared here (Entity, Comp, View1, View2, Map, Exchange), so the ECS library could be
// swapped without touching the rest of Warren.
//
// # Lifecycle
//
// A Scheduler drives its systems through three phases, in order:
//
//  1. Initialize, once, in list order: a system resolves its views, maps, exchanges and
//     resources here, so that Update only does the work.
//  2. Update, every tick, in list order. Systems report the entities they moved with
//     World.Touch; a tick that touches nothing while no lane holds work is a fixed point.
//  3. Finalize, once, in reverse list order, after the last tick.
//
// # Clocks
//
// In virtual time (the default for scenarios) every job a tick submits to a lane is finished
// before the next tick starts (a barrier), its completion tick comes from the latency model, and
// collect systems receive due results sorted by (agent id, call index): the same scenario and
// seed give the same trace whatever GOMAXPROCS is. In wall time results are handed over in the
// order they arrive and a scheduler at a fixed point sleeps until a lane wakes it.
package ecs
