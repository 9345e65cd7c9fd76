package main

import (
	"fmt"

	"github.com/warrenhq/warren"
)

type traceCmd struct {
	Diff traceDiffCmd `cmd:"" help:"Compare two traces and show the first divergent event; an incomplete trace (no end event, or a last line cut mid-line) is compared up to its last whole line, with a note."`
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
