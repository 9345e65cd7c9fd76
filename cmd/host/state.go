package main

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/warrenhq/warren"
)

// runWithState runs sc keeping its durable state in --state DIR.
func (r *runCmd) runWithState(e *env, sc *warren.Scenario, opt warren.Options) error {
	if r.Record != "" {
		fmt.Fprintf(e.stderr, "host: --record with --state: a run with a state directory records into it (%s/recording.jsonl, which host replay reads)\n", r.State)
		return errBadInput
	}
	workdir := cmp.Or(r.Workdir, filepath.Join(r.State, "work"))
	if r.Trace != "" && traceInWorkRoot(r.Trace, workdir) {
		fmt.Fprintf(e.stderr, "host: --trace %s lies inside the workdir root %s, where agents write (and may have planted a link): put the trace elsewhere\n", r.Trace, workdir)
		return errBadInput
	}
	opt.TraceFile = r.Trace
	opt.State = &warren.StateOptions{Dir: r.State, CommitEvery: r.CommitEvery, RetryOnResume: r.RetryOnResume, Sync: r.StateSync,
		CrashAfterTick: r.CrashAfterTick, CrashInEffect: r.CrashInEffect, CrashInWrite: r.CrashInWrite, CrashInSnapshot: r.CrashInSnapshot}
	if err := parseSnapshotEvery(r.SnapshotEvery, opt.State); err != nil {
		fmt.Fprintf(e.stderr, "host: run %s: %v\n", r.File, err)
		return errBadInput
	}
	bar := progressBar(e, r.NoProgress, len(sc.Groups), &opt.Progress)
	rt, err := warren.New(sc, opt)
	if err != nil {
		if bar != nil {
			_ = bar.Exit()
		}
		fmt.Fprintf(e.stderr, "host: run %s: %v\n", r.File, err)
		return errBadInput
	}
	sum, err := rt.Run(e.ctx)
	if bar != nil {
		_ = bar.Finish()
	}
	if sum == nil {
		fmt.Fprintf(e.stderr, "host: run %s: %v\n", r.File, err)
		return errIncomplete
	}
	printSummary(e.stdout, sc, sum, cmp.Or(r.Trace, r.State+"/trace.jsonl"))
	fmt.Fprintf(e.stdout, "state        %s\n", r.State)
	return runExit(e, r.File, sum)
}

// parseSnapshotEvery reads --snapshot-every: a tick count, a wall-clock duration, or off.
func parseSnapshotEvery(v string, so *warren.StateOptions) error {
	switch v = strings.TrimSpace(v); {
	case v == "off":
		so.SnapshotEvery = -1
		return nil
	case v == "":
		return nil
	}
	if n, err := strconv.ParseUint(v, 10, 64); err == nil && n > 0 {
		so.SnapshotTicks, so.SnapshotEvery = n, -1
		return nil
	}
	if d, err := time.ParseDuration(v); err == nil && d > 0 {
		so.SnapshotEvery = d
		return nil
	}
	return fmt.Errorf("--snapshot-every %q: give a number of ticks (100), a wall-clock duration (30s, 5m) or off", v)
}

type resumeCmd struct {
	Dir        string `arg:"" help:"The state directory (host run --state DIR)."`
	LogLevel   string `help:"Log level: debug, info, warn, error." default:"warn" enum:"debug,info,warn,error"`
	NoProgress bool   `help:"Never show the progress bar (it only shows on a terminal)."`
	NoSnapshot bool   `help:"Replay from the run's start even when the directory holds a world snapshot."`
	Trace      string `help:"The trace the run was given with host run --trace, when outside the directory: a resume writes outside the directory only where told again." placeholder:"FILE"`
	Workdir    string `help:"The workdir root the run was given with host run --workdir, when outside the directory (as --trace)." placeholder:"DIR"`
	Scenario   string `help:"Resume only if the run is of this scenario file (the directory names its scenario; this checks it)." placeholder:"FILE"`
	stateFlags
}

func (r *resumeCmd) Run(e *env) error {
	level, _ := zerolog.ParseLevel(r.LogLevel)
	log := zerolog.New(zerolog.ConsoleWriter{Out: e.stderr, NoColor: !e.isTerminal, TimeFormat: time.TimeOnly}).
		Level(level).With().Timestamp().Logger()
	ro := warren.ResumeOptions{Log: log, CrashAfterTick: r.CrashAfterTick, CrashInEffect: r.CrashInEffect,
		CrashInWrite: r.CrashInWrite, CrashInSnapshot: r.CrashInSnapshot, NoSnapshot: r.NoSnapshot, Trace: r.Trace, WorkRoot: r.Workdir, Scenario: r.Scenario}
	if err := checkStateApart(e.ctx, r.Dir); err != nil {
		fmt.Fprintf(e.stderr, "host: resume %s: %v\n", r.Dir, err)
		return errBadInput
	}
	bar := progressBar(e, r.NoProgress, 1, &ro.Progress) // its total follows the run's agents
	rt, err := warren.OpenResume(r.Dir, ro)
	if err != nil && bar != nil {
		_ = bar.Exit()
	}
	switch {
	case errors.Is(err, warren.ErrFinished):
		fmt.Fprintf(e.stdout, "nothing to resume: %v\n", err)
		return nil
	case err != nil:
		fmt.Fprintf(e.stderr, "host: resume %s: %v\n", r.Dir, err)
		return errBadInput
	}
	sc := rt.Scenario()
	sum, err := rt.Run(e.ctx)
	if bar != nil {
		_ = bar.Finish()
	}
	if sum == nil {
		fmt.Fprintf(e.stderr, "host: resume %s: %v\n", r.Dir, err)
		return errIncomplete
	}
	info, ierr := warren.InspectState(r.Dir)
	trace := ""
	if ierr == nil {
		trace = info.Trace
	}
	printSummary(e.stdout, sc, sum, trace)
	if ierr == nil && len(info.Resumes) > 0 {
		last := info.Resumes[len(info.Resumes)-1]
		fmt.Fprintf(e.stdout, "resumed      %s: %d journaled results given back, %d calls interrupted, %d run again\n",
			resumedFrom(last.Snapshot, last.Ticks), last.Served, len(last.Interrupted), len(last.Retried))
		for _, c := range last.Interrupted {
			fmt.Fprintf(e.stdout, "  interrupted %s\n", c)
		}
	}
	fmt.Fprintf(e.stdout, "state        %s\n", r.Dir)
	return runExit(e, r.Dir, sum)
}

// resumedFrom says where a resume picked the run up.
func resumedFrom(snapshot *uint64, replayed uint64) string {
	if snapshot != nil {
		return fmt.Sprintf("from the snapshot at tick %d, %s replayed after it", *snapshot, ticks(replayed))
	}
	return "from the run's start, " + ticks(replayed) + " replayed"
}

type stateCmd struct {
	Inspect stateInspectCmd `cmd:"" help:"Show what a state directory holds: its run, last commit, agents by phase, size, resumes."`
	Check   stateCheckCmd   `cmd:"" hidden:"" help:"Read a state directory's state.db whole and rebuild it, under a memory limit (what host resume and host state inspect run first, in a child process)."`
}

type stateInspectCmd struct {
	Dir string `arg:"" help:"The state directory (host run --state DIR)."`
}

func (s *stateInspectCmd) Run(e *env) error {
	if err := checkStateApart(e.ctx, s.Dir); err != nil {
		fmt.Fprintf(e.stderr, "host: state inspect %s: %v\n", s.Dir, err)
		return errBadInput
	}
	info, err := warren.InspectState(s.Dir)
	if err != nil {
		fmt.Fprintf(e.stderr, "host: state inspect %s: %v\n", s.Dir, err)
		return errBadInput
	}
	w := e.stdout
	fmt.Fprintf(w, "run          %s (%s), started %s by Warren %s\n", info.Scenario, info.ScenarioHash, info.Started.Format(time.RFC3339), info.Host)
	status := info.Status
	if info.End != "" {
		status += " (" + info.End + ")"
	}
	fmt.Fprintf(w, "status       %s\n", status)
	if info.Committed {
		c := info.Commit
		fmt.Fprintf(w, "committed    %s: %d trace events, %d recording entries\n", ticks(c.Ticks), c.TraceEvents, c.Entries)
		var parts []string
		for _, p := range slices.Sorted(maps.Keys(c.Phases)) {
			parts = append(parts, fmt.Sprintf("%s %d", p, c.Phases[p]))
		}
		if len(parts) == 0 {
			parts = []string{"none live"}
		}
		fmt.Fprintf(w, "agents       %d finished; live by phase: %s\n", c.Finished, strings.Join(parts, ", "))
	} else {
		fmt.Fprintf(w, "committed    nothing yet: a resume starts from tick 0\n")
	}
	fmt.Fprintf(w, "in flight    %d journaled calls (%d returned, %d may or may not have happened)\n", info.Effects, info.EffectsDone, info.Effects-info.EffectsDone)
	if len(info.Snapshots) == 0 {
		fmt.Fprintf(w, "snapshot     none: a resume replays the committed ticks from the run's start\n")
	}
	for i, sn := range info.Snapshots {
		label := "snapshot"
		if i > 0 {
			label = "earlier"
		}
		use := "a resume restores it and replays the " + ticks(info.Commit.Ticks-min(sn.Done, info.Commit.Ticks)) + " committed after it"
		if sn.Done > info.Commit.Ticks {
			use = "past the last commit: not used"
		}
		fmt.Fprintf(w, "%-12s at tick %d: %d agents, %d bytes; %s\n", label, sn.Tick, sn.Agents, sn.Bytes, use)
	}
	fmt.Fprintf(w, "size         %d bytes (state.db, trace, recording, snapshots; workdirs not counted)\n", info.Size)
	fmt.Fprintf(w, "trace        %s\n", info.Trace)
	for i, r := range info.Resumes {
		fmt.Fprintf(w, "resume %-5d %s: %s, %d served, %d interrupted, %d run again\n", i+1, r.At.Format(time.RFC3339), resumedFrom(r.Snapshot, r.Ticks), r.Served, len(r.Interrupted), len(r.Retried))
	}
	return nil
}
