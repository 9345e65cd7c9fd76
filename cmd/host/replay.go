package main

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/rs/zerolog"

	"github.com/warrenhq/warren"
)

type replayCmd struct {
	File     string `arg:"" help:"The recording (host run --record)."`
	Trace    string `help:"Write the replay's trace to this file (default: a temporary file, removed after --check)." placeholder:"FILE"`
	Check    bool   `help:"Compare the replay's trace with the recorded trace; exit 1 when they differ."`
	Scenario string `help:"Replay this scenario file instead of the recorded one (an edited copy, to see what the edit changes)." placeholder:"FILE"`
	LogLevel string `help:"Log level: debug, info, warn, error." default:"warn" enum:"debug,info,warn,error"`
}

func (r *replayCmd) Run(e *env) error {
	tape, err := warren.ReadRecording(r.File)
	if err != nil {
		fmt.Fprintf(e.stderr, "host: %v\n", err)
		return errBadInput
	}
	if note := tape.Header.Note; note != "" {
		fmt.Fprintf(e.stderr, "host: %s: %s\n", r.File, note)
	}
	sc, opt, err := warren.LoadReplay(tape, r.Scenario)
	if err != nil {
		if r.Scenario != "" {
			fmt.Fprintf(e.stderr, "host: the scenario %s does not load:\n%v\n", r.Scenario, err)
		} else {
			fmt.Fprintf(e.stderr, "host: %s: line 1: the recorded scenario (scenario_file) does not load:\n%v\n", r.File, err)
		}
		return errBadInput
	}
	recorded := tape.Header.TraceFile
	if r.Check && recorded == "" {
		fmt.Fprintf(e.stderr, "host: %s names no trace to check against (it was recorded without --trace)\n", r.File)
		return errBadInput
	}
	out := r.Trace
	if out == "" {
		f, err := os.CreateTemp("", "warren-replay-*.jsonl")
		if err != nil {
			return fmt.Errorf("replay trace: %w", err)
		}
		out = f.Name()
		_ = f.Close()
		defer os.Remove(out)
	} else if err := checkOutputs(sc.Inputs(), output{"--trace", r.Trace}, output{"the recording", r.File}); err != nil {
		fmt.Fprintf(e.stderr, "host: %v\n", err)
		return errBadInput
	}
	traceFile, err := os.Create(out)
	if err != nil {
		fmt.Fprintf(e.stderr, "host: --trace: %v\n", err)
		return errBadInput
	}
	defer traceFile.Close()
	level, _ := zerolog.ParseLevel(r.LogLevel)
	opt.Log = zerolog.New(zerolog.ConsoleWriter{Out: e.stderr, NoColor: !e.isTerminal, TimeFormat: time.TimeOnly}).
		Level(level).With().Timestamp().Logger()
	opt.Trace = traceFile
	sum, runErr := warren.Run(e.ctx, sc, opt)
	if err := traceFile.Close(); err != nil && runErr == nil {
		runErr = fmt.Errorf("trace %s: %w", out, err)
	}
	switch {
	case errors.Is(runErr, warren.ErrDivergence):
		fmt.Fprintf(e.stdout, "replay of %s stopped: %v\n", r.File, runErr)
	case sum == nil || sum.Status == warren.RunFailed || sum.Status == warren.RunInterrupted:
		if sum != nil {
			printSummary(e.stdout, sc, sum, r.Trace)
		}
		fmt.Fprintf(e.stderr, "host: replay %s did not finish: %v\n", r.File, runErr)
		return errIncomplete
	default:
		printSummary(e.stdout, sc, sum, r.Trace)
		if n := tape.Unused(); n > 0 {
			fmt.Fprintf(e.stdout, "recording    %d of its %d calls were not made again\n", n, tape.Calls())
		}
	}
	if !r.Check {
		if runErr != nil {
			return errExpectations
		}
		return nil
	}
	report, notes, err := warren.CompareTraces(recorded, out)
	if err != nil {
		fmt.Fprintf(e.stderr, "host: %s: line 1: the recorded trace (trace_file): %v\n", r.File, err)
		return errBadInput
	}
	for _, n := range notes {
		fmt.Fprintln(e.stdout, "note: "+n)
	}
	if report == "" && runErr == nil {
		fmt.Fprintf(e.stdout, "replay       identical to %s\n", recorded)
		return nil
	}
	if report != "" {
		fmt.Fprint(e.stdout, report)
	}
	return errExpectations
}
