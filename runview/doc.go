// Package runview is the read model of one run, built incrementally from its trace (format
// version 5, docs/trace.md): what a page or an API shows of a run without ever loading every
// agent or every event.
//
// A View is fed the trace's lines in order with Apply, the header first: every line of a live
// run as the run writes it (warren.Options.Events), or the lines of a finished trace file. It
// keeps aggregates (Counts, Progress, Graph, Series), one small record per agent with its last
// events (Agent), the sub-agent tree (Tree) and the open prompts (Prompts). Readers may run
// while Apply does; each returns copies.
//
// The trace is the only input, and the truth: an agent's phase is the phase its events show
// (PhaseNames says which event moves it where), its counters are counted from its events (and
// equal its reap event's), and the run's totals equal the end event's. Nothing depends on the
// wall clock or on a map's order: lists are in id order, trace order or sorted by name, so the
// same trace gives the same View.
//
// Memory is bounded per agent, not per event: an agent's log keeps its last Options.MaxEntries
// events, each string field cut to Options.MaxContent bytes, encoded compactly (varints, and
// repeated names such as stages, tools and gate reasons stored once for the whole View); the
// series keeps at most Options.MaxSeries points, halving its resolution when full.
package runview
