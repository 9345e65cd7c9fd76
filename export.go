package warren

import (
	"context"

	"github.com/warrenhq/warren/table"
	"github.com/warrenhq/warren/traceexport"
)

// ExportOptions say how ExportTrace writes: the tables' Format (ExportParquet or ExportCSV),
// whether it may replace an earlier export's files (Force), and Extra tables to write beside the
// trace's (a run's metrics). See traceexport.Options.
type ExportOptions = traceexport.Options

// ExportStats say what ExportTrace read and wrote: the trace's header, whether it was complete
// and what it lacked, its events and size, and each table's file, rows and size.
type ExportStats = traceexport.Stats

// ExportFormat is the file format of exported tables.
type ExportFormat = table.Format

// The formats ExportTrace writes (docs/analysis.md has their types).
const (
	// ExportParquet writes typed, compressed Parquet files, what DuckDB and pandas read best.
	ExportParquet = table.Parquet
	// ExportCSV writes CSV files, whose column types the export's manifest gives.
	ExportCSV = table.CSV
)

// ErrExportExists means the output folder holds files of an earlier export that ExportTrace
// would replace, and ExportOptions.Force is not set: nothing was written. A caller offers the
// user the choice (host trace export --force).
var ErrExportExists = traceexport.ErrExists

// ErrExportFormat means ExportOptions.Format is not one of the formats: the error lists them.
var ErrExportFormat = table.ErrFormat

// ExportTrace writes the trace file at path into the folder dir as tables, one per event kind and
// one of every event's common fields, with a manifest (tables.json), for DuckDB, pandas or any
// reader of Parquet or CSV: the data out of a run, for analysis (docs/analysis.md). It streams, so
// a trace of any size exports in bounded memory, and it writes every file whole or none: a trace
// that is not a version 5 trace is an error naming the file and line, an export ctx cancels leaves
// nothing. An incomplete trace (a killed run's) is exported up to its last whole line, and
// ExportStats.Notes say what it lacks.
func ExportTrace(ctx context.Context, path, dir string, opts ExportOptions) (ExportStats, error) {
	return traceexport.ExportFile(ctx, path, dir, opts)
}
