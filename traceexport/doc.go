// Package traceexport turns a trace (package trace, version 5) into tables: the data out of a
// run, for DuckDB, pandas or any reader of Parquet or CSV (host trace export, warren.ExportTrace).
//
// [Export] writes, into one folder:
//
//   - events: one row per event, in trace order, with the fields every event starts with (tick,
//     seq, agent, name, kind);
//   - one table per event kind of the trace schema, named after the kind (tool_call, spawn, ...):
//     the common fields, then the kind's own, in the order the trace writes them, each typed from
//     the schema (trace.Schema) and null where an event leaves an optional field out. Every kind
//     of the version has its table, empty or not, so every export of a version has the same files
//     and columns ([Tables]);
//   - any extra tables the caller gives ([Options].Extra: a run's metrics);
//   - the manifest, tables.json ([Manifest]): the trace's header, whether it was complete, and each
//     table's file, rows and typed columns.
//
// The tables are written by package table, in Parquet or CSV; docs/analysis.md gives the types of
// each format and answers questions of a run over them. Export streams (events are written as
// they are read; each table holds at most one row group in memory), writes every file under a
// temporary name and renames them into place once all are whole, and refuses to replace another
// export's files unless told to ([Options].Force).
package traceexport
