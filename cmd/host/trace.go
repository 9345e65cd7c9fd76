package main

import (
	"fmt"

	"github.com/warrenhq/warren"
)

type traceCmd struct {
	Diff traceDiffCmd `cmd:"" help:"Compare two traces and show the first divergent event."`
}

type traceDiffCmd struct {
	Want string `arg:"" type:"existingfile" help:"The expected (golden) trace."`
	Got  string `arg:"" type:"existingfile" help:"The trace to check."`
}

func (d *traceDiffCmd) Run(e *env) error {
	report, err := warren.CompareTraces(d.Want, d.Got)
	if err != nil {
		fmt.Fprintf(e.stderr, "host: %v\n", err)
		return errBadInput
	}
	if report == "" {
		fmt.Fprintln(e.stdout, "traces are identical")
		return nil
	}
	fmt.Fprint(e.stdout, report)
	return errExpectations
}
