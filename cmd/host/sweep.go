package main

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/warrenhq/warren"
	"github.com/warrenhq/warren/sweep"
)

type sweepCmd struct {
	File     string   `arg:"" help:"Scenario file (TOML)."`
	Param    []string `sep:"none" help:"A parameter of the grid and its values: name=v1,v2,... (a [params] name, or a key path the file sets: limits.max_ticks, groups.voters.count). Repeat for more axes." placeholder:"NAME=V1,V2"`
	Seeds    string   `help:"The seeds every point of the grid runs with: 1..20, 1,2,5, or both (1..5,9)." default:"1" placeholder:"LIST"`
	Parallel int      `help:"Runs going at once (default: the number of CPUs)." placeholder:"N"`
	Out      string   `required:"" help:"The sweep directory: sweep.json, results.csv and a run directory per run under runs/. Run the same sweep into it again to resume." placeholder:"DIR"`
	Agents   int      `help:"Rescale every run to N agents in total (as host run --agents)." placeholder:"N"`
	Config   string   `help:"Host config file every run is compiled under (as host run --config)." placeholder:"FILE"`
	LogLevel string   `help:"Log level: debug, info, warn, error." default:"warn" enum:"debug,info,warn,error"`
}

func (s *sweepCmd) Run(e *env) error {
	spec := sweep.Spec{Scenario: s.File, Dir: s.Out, Agents: s.Agents, Parallel: s.Parallel}
	if spec.Parallel <= 0 {
		spec.Parallel = runtime.GOMAXPROCS(0)
	}
	if s.Agents < 0 {
		fmt.Fprintf(e.stderr, "host: --agents %d: give a positive number of agents\n", s.Agents)
		return errBadInput
	}
	for _, p := range s.Param {
		a, err := sweep.ParseAxis(p)
		if err != nil {
			fmt.Fprintf(e.stderr, "host: %v\n", err)
			return errBadInput
		}
		spec.Axes = append(spec.Axes, a)
	}
	var err error
	if spec.Seeds, err = sweep.ParseSeeds(s.Seeds); err != nil {
		fmt.Fprintf(e.stderr, "host: %v\n", err)
		return errBadInput
	}
	if spec.Host, err = loadHostConfig(e, s.Config); err != nil {
		return err
	}
	// Every value of every axis must load before any run starts: a typo in the last value of the
	// grid is found now, not after the rest of the sweep ran.
	runs, err := sweep.Plan(spec.Axes, spec.Seeds)
	if err != nil {
		fmt.Fprintf(e.stderr, "host: %v\n", err)
		return errBadInput
	}
	checked := map[int]bool{}
	for _, r := range runs {
		if checked[r.Cell] {
			continue
		}
		checked[r.Cell] = true
		if _, err := warren.LoadParams(s.File, spec.Host, r.Params); err != nil {
			fmt.Fprintf(e.stderr, "host: %s with %s is not a valid scenario:\n%v\n", s.File, paramList(r.Params), err)
			return errBadInput
		}
	}
	level, _ := zerolog.ParseLevel(s.LogLevel)
	spec.Log = zerolog.New(zerolog.ConsoleWriter{Out: e.stderr, NoColor: !e.isTerminal, TimeFormat: time.TimeOnly}).
		Level(level).With().Timestamp().Logger()
	// The directory must be new, empty or this same sweep's before anything is said of it.
	if _, _, err := sweep.Open(spec); err != nil {
		fmt.Fprintf(e.stderr, "host: sweep %s: %v\n", s.File, err)
		return errBadInput
	}
	total := len(runs)
	fmt.Fprintf(e.stdout, "sweep        %s: %d points x %d seeds = %d runs into %s (%d at a time)\n",
		s.File, total/len(spec.Seeds), len(spec.Seeds), total, s.Out, spec.Parallel)
	n := 0
	spec.Progress = func(o sweep.Outcome) {
		n++
		printOutcome(e.stdout, n, total, o)
	}
	rep, err := sweep.Carry(e.ctx, spec)
	if err != nil {
		fmt.Fprintf(e.stderr, "host: sweep %s: %v\n", s.File, err)
		if errors.Is(err, sweep.ErrOtherSweep) || errors.Is(err, sweep.ErrSpec) || rep == nil {
			return errBadInput
		}
		return errIncomplete
	}
	return sweepExit(e, rep, filepath.Join(s.Out, sweep.ResultsFile))
}

// paramList writes a run's parameters as name=value pairs.
func paramList(params []warren.Param) string {
	if len(params) == 0 {
		return "no parameters"
	}
	var parts []string
	for _, p := range params {
		parts = append(parts, p.Name+"="+p.Value)
	}
	return strings.Join(parts, " ")
}

// printOutcome writes one line about a run that ended or was skipped.
func printOutcome(w io.Writer, n, total int, o sweep.Outcome) {
	what := o.Status
	switch {
	case o.Skipped:
		what = "finished in an earlier sweep (kept)"
		if len(o.Failures) > 0 {
			what += fmt.Sprintf(", %d failed expectations", len(o.Failures))
		}
	case o.Summary != nil:
		what = fmt.Sprintf("%s: %d agents, %d ticks, %d model turns, %d failed expectations, %s",
			o.Status, o.Summary.Agents, o.Summary.Ticks, o.Summary.ModelTurns, len(o.Summary.Failures), o.Elapsed.Round(time.Millisecond))
	}
	if o.Err != nil && !o.Done() {
		what += ": " + o.Err.Error()
	}
	fmt.Fprintf(w, "run %d/%d %s seed %d (%s): %s\n", n, total, paramList(o.Params), o.Seed, o.Dir, what)
}

// sweepExit sums the sweep up and gives its exit: 3 when a run did not finish (a rerun runs it
// again), 1 when a run failed its expectations (a run kept from an earlier sweep too), else 0.
func sweepExit(e *env, rep *sweep.Report, results string) error {
	var finished, skipped, unfinished, failedExpect int
	for _, o := range rep.Outcomes {
		switch {
		case !o.Done():
			unfinished++
		default:
			finished++
			if o.Skipped {
				skipped++
			}
			if len(o.Failures) > 0 {
				failedExpect++
			}
		}
	}
	fmt.Fprintf(e.stdout, "sweep done   %d runs: %d finished (%d kept from an earlier sweep), %d did not finish, %d failed expectations\n",
		len(rep.Outcomes), finished, skipped, unfinished, failedExpect)
	fmt.Fprintf(e.stdout, "results      %s (host report %s)\n", results, filepath.Dir(results))
	switch {
	case unfinished > 0:
		fmt.Fprintf(e.stderr, "host: %d runs did not finish: run the same sweep again to run them\n", unfinished)
		return errIncomplete
	case failedExpect > 0:
		return errExpectations
	}
	return nil
}
