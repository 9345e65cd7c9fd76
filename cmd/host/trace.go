package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/warrenhq/warren"
)

type traceCmd struct {
	Diff   traceDiffCmd   `cmd:"" help:"Compare two traces and show the first divergent event; an incomplete trace (no end event, or a last line cut mid-line) is compared up to its last whole line, with a note."`
	Export traceExportCmd `cmd:"" help:"Write a trace as tables for DuckDB, pandas or any reader of Parquet or CSV: one per event kind, one of every event, and a manifest (tables.json); see docs/analysis.md."`
}

type traceDiffCmd struct {
	Want string `arg:"" type:"existingfile" help:"The expected (golden) trace."`
	Got  string `arg:"" type:"existingfile" help:"The trace to check."`
}

func (d *traceDiffCmd) Run(e *env) error {
	report, notes, err := warren.CompareTraces(d.Want, d.Got)
	if err != nil {
		fmt.Fprintf(e.stderr, "host: %v\n", err)
		return errBadInput
	}
	// What a trace lacks comes first, differences or not: an incomplete trace is compared up to
	// its last whole line, and the reader must know that is all it holds.
	for _, n := range notes {
		fmt.Fprintln(e.stdout, "note: "+n)
	}
	if report == "" {
		fmt.Fprintln(e.stdout, "traces are identical")
		return nil
	}
	fmt.Fprint(e.stdout, report)
	return errExpectations
}

// traceExportCmd is host trace export TRACE --out DIR [--format parquet|csv] [--force].
type traceExportCmd struct {
	Trace  string `arg:"" help:"The trace to export (host run --trace)."`
	Out    string `required:"" placeholder:"DIR" help:"The folder to write the tables into (made when missing)."`
	Format string `default:"parquet" placeholder:"parquet|csv" help:"The tables' format: parquet (typed, compressed) or csv (types in tables.json)."`
	Force  bool   `help:"Replace the files of an earlier export in the folder (without it, the export writes nothing when any is there)."`
}

func (c *traceExportCmd) Run(e *env) error {
	st, err := warren.ExportTrace(e.ctx, c.Trace, c.Out, warren.ExportOptions{Format: warren.ExportFormat(c.Format), Force: c.Force})
	switch {
	case errors.Is(err, context.Canceled):
		fmt.Fprintf(e.stderr, "host: the export was interrupted; nothing was written into %s\n", c.Out)
		return errIncomplete
	case errors.Is(err, warren.ErrExportExists):
		fmt.Fprintf(e.stderr, "host: %v; --force replaces them, or give another --out\n", err)
		return errBadInput
	case errors.Is(err, warren.ErrExportFormat):
		fmt.Fprintf(e.stderr, "host: --format: %v\n", err)
		return errBadInput
	case err != nil:
		fmt.Fprintf(e.stderr, "host: %v\n", err)
		return errBadInput
	}
	for _, n := range st.Notes {
		fmt.Fprintln(e.stdout, "note: "+n)
	}
	fmt.Fprintf(e.stdout, "exported %s (scenario %s, seed %d): %d events into %s as %s\n",
		c.Trace, st.Header.Scenario, st.Header.Seed, st.Events, c.Out, c.Format)
	var empty []string
	for _, t := range st.Tables {
		if t.Rows == 0 {
			empty = append(empty, t.Name)
			continue
		}
		fmt.Fprintf(e.stdout, "  %-20s %9d rows  %s\n", t.Name, t.Rows, filepath.Base(t.File))
	}
	if len(empty) > 0 {
		fmt.Fprintf(e.stdout, "  empty: %s\n", strings.Join(empty, ", "))
	}
	fmt.Fprintf(e.stdout, "%d tables and tables.json: %d bytes, %.1f%% of the trace's %d bytes\n",
		len(st.Tables), st.OutputBytes(), 100*float64(st.OutputBytes())/float64(st.TraceBytes), st.TraceBytes)
	return nil
}
