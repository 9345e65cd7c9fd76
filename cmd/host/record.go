package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/warrenhq/warren"
)

// recordCmd groups the commands that work on a recording (host run --record).
type recordCmd struct {
	ToScripted toScriptedCmd `cmd:"" name:"to-scripted" help:"Turn a recorded run's live model turns into scripted models (kind = \"scripted\", each agent's own turns), to run it again, and edit it, with no provider."`
}

// toScriptedCmd is host record to-scripted REC [--out FILE] [--scenario FILE] [--trace FILE].
type toScriptedCmd struct {
	File     string `arg:"" help:"The recording (host run --record) of a run with live models."`
	Out      string `help:"Write to this file (default: standard output)." placeholder:"FILE"`
	Scenario string `help:"Write a whole copy of this scenario file (the recorded one, or a copy of it) with its live models' tables replaced, ready for host run; without it, only the tables are written." placeholder:"FILE"`
	Trace    string `help:"Read each turn's stage from this trace (default: the trace the recording names, when it is there)." placeholder:"FILE"`
}

func (c *toScriptedCmd) Run(e *env) error {
	bad := func(format string, args ...any) error {
		fmt.Fprintf(e.stderr, "host: "+format+"\n", args...)
		return errBadInput
	}
	tape, err := warren.ReadRecording(c.File)
	if err != nil {
		return bad("%v\nhost record to-scripted reads a whole recording, as host run SCENARIO --trace FILE --record FILE writes it", err)
	}
	script, err := tape.Script(c.File)
	if err != nil {
		return bad("%s: %v", c.File, err)
	}
	traceFile, named := c.Trace, c.Trace != ""
	if !named {
		traceFile = tape.Header.TraceFile
	}
	stages := ""
	switch f, err := os.Open(traceFile); {
	case traceFile == "":
		stages = "the recording names no trace, so the turns assert no stage (give one with --trace)"
	case err != nil && named:
		return bad("--trace: %v", err)
	case err != nil:
		stages = fmt.Sprintf("the recorded trace %s cannot be read (%v), so the turns assert no stage (give it with --trace)", traceFile, errors.Unwrap(err))
	default:
		err := script.AddStages(f)
		f.Close()
		if err != nil && named {
			return bad("--trace %s: %v", traceFile, err)
		}
		if err != nil {
			stages = fmt.Sprintf("the recorded trace %s: %v, so the turns assert no stage", traceFile, err)
		}
	}

	inputs := []warren.Input{{Path: c.File, What: "the recording"}}
	out := script.Tables()
	if c.Scenario != "" {
		inputs = append(inputs, warren.Input{Path: c.Scenario, What: "the scenario"})
		src, err := os.ReadFile(c.Scenario)
		if err != nil {
			return bad("--scenario: %v", err)
		}
		if out, err = script.Splice(c.Scenario, src); err != nil {
			return bad("%v", err)
		}
	}
	if err := checkOutputs(inputs, output{"--out", c.Out}); err != nil {
		return bad("%v", err)
	}
	if c.Out == "" {
		if _, err := e.stdout.Write(out); err != nil {
			return fmt.Errorf("writing the script: %w", err)
		}
	} else if err := os.WriteFile(c.Out, out, 0o644); err != nil {
		return bad("--out: %v", err)
	}

	for _, n := range script.Notes {
		fmt.Fprintln(e.stderr, "note: "+n)
	}
	if stages != "" {
		fmt.Fprintln(e.stderr, "note: "+stages)
	}
	if tape.Header.Answerer {
		fmt.Fprintln(e.stderr, "note: a person (the embedder's answerer) answered prompts in the recorded run; host run has no one to answer them")
	}
	var made []string
	for _, m := range script.Models {
		made = append(made, fmt.Sprintf("[models.%s] (was %s: %d turns of %d agents)", m.Key, m.ID, len(m.Turns), m.Agents))
	}
	where := "standard output"
	if c.Out != "" {
		where = c.Out
	}
	if c.Scenario == "" {
		fmt.Fprintf(e.stderr, "host: wrote the scripted tables %s to %s.\n", strings.Join(made, ", "), where)
		fmt.Fprintf(e.stderr, "Paste them into a copy of the scenario (%s) in place of each table of the same name and its sub-tables, or let --scenario FILE do it.\n", script.ScenarioFile)
		return nil
	}
	fmt.Fprintf(e.stderr, "host: wrote a copy of %s, its live models replaced by the scripted tables %s, to %s.\n", c.Scenario, strings.Join(made, ", "), where)
	if c.Out != "" {
		if filepath.Dir(absPath(c.Out)) != filepath.Dir(absPath(c.Scenario)) {
			fmt.Fprintf(e.stderr, "note: %s is not in %s's folder: the paths the scenario gives (blueprints, scripts) are relative to its own file, so they may not resolve from there\n", c.Out, c.Scenario)
		}
		fmt.Fprintf(e.stderr, "Run it as the recording was run: host %s\n", strings.Join(rerunArgs(c.Out, tape), " "))
	}
	return nil
}

// absPath is path made absolute, or path when it cannot be.
func absPath(path string) string {
	if abs, err := filepath.Abs(path); err == nil {
		return abs
	}
	return path
}

// rerunArgs is the host run command line that runs scenario the way the recorded run was run:
// its seed, agent count, host config and launch flags.
func rerunArgs(scenario string, tape *warren.Tape) []string {
	h := &tape.Header
	args := []string{"run", quoteArg(scenario), "--seed", strconv.FormatUint(h.Seed, 10)}
	if h.Agents > 0 {
		args = append(args, "--agents", strconv.Itoa(h.Agents))
	}
	if h.ConfigFile != "" {
		args = append(args, "--config", quoteArg(h.ConfigFile))
	}
	if h.FaultsSeed != nil {
		args = append(args, "--faults-seed", strconv.FormatUint(*h.FaultsSeed, 10))
	}
	if h.Launch.Yolo {
		args = append(args, "--yolo")
	}
	for _, flag := range []struct {
		name string
		vals []string
	}{{"--allow", h.Launch.Allow}, {"--ask", h.Launch.Ask}, {"--deny", h.Launch.Deny}} {
		for _, v := range flag.vals {
			args = append(args, flag.name, quoteArg(v))
		}
	}
	if h.Unattended {
		args = append(args, "--unattended")
	}
	return args
}

// quoteArg quotes a shell word that needs it.
func quoteArg(s string) string {
	if s != "" && !strings.ContainsFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=@+,", r))
	}) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
