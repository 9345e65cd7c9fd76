package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/rs/zerolog"
	"github.com/schollz/progressbar/v3"

	"github.com/warrenhq/warren"
	"github.com/warrenhq/warren/otelgenai"
)

type runCmd struct {
	launchFlags
	Config     string   `help:"Host config file: the permission ceiling, safe commands, security switches (replaces the scenario's [host])." placeholder:"FILE"`
	File       string   `arg:"" help:"Scenario file (TOML)."`
	Trace      string   `help:"Write the JSON Lines trace to this file." placeholder:"FILE"`
	Out        string   `help:"Keep a run directory in DIR (new or empty): the trace, a per-tick timeline, the stage graphs, the metrics tables, a manifest and the summary, for host report and host trace export (docs/research.md)." placeholder:"DIR"`
	Record     string   `help:"Record every input from outside the scenario and seed into this file, for host replay (needs --trace)." placeholder:"FILE"`
	RecordNote string   `help:"A line the recording's header keeps for whoever replays it (what the run was made against)." placeholder:"TEXT"`
	Agents     int      `help:"Rescale the groups to N agents in total (proportionally), for quick scale runs." placeholder:"N"`
	Param      []string `sep:"none" help:"Give a value of the scenario another value: name=value, a [params] name or a key path the file sets (limits.max_ticks, groups.voters.count), as a sweep does. Repeatable." placeholder:"NAME=VALUE"`
	Seed       *uint64  `help:"Override the scenario's seed." placeholder:"N"`
	FaultsSeed *uint64  `help:"Draw the scenario's [faults] from seed N (default: its faults.seed, else the run's seed): rerun one fault pattern exactly." placeholder:"N"`
	Workdir    string   `help:"Keep agent workdirs under DIR (default: a temporary folder removed after the run)." placeholder:"DIR"`
	LogLevel   string   `help:"Log level: debug, info, warn, error." default:"warn" enum:"debug,info,warn,error"`
	NoProgress bool     `help:"Never show the progress bar (it only shows on a terminal)."`
	// Interactive: the prompts no [[interactions]] entry answers are asked on the terminal.
	Interactive   bool          `help:"Ask the prompts the scenario's [[interactions]] leave open on the terminal, one at a time; the answers are recorded (--record) so the run replays."`
	PromptTimeout time.Duration `help:"With --interactive: refuse a prompt nobody answered in this long (0: wait)." default:"0s"`
	stateFlags
	State         string        `help:"Keep the run's durable state in DIR (its trace, recording, effect journal and workdirs), so that host resume DIR goes on after a crash (docs/state.md)." placeholder:"DIR"`
	CommitEvery   time.Duration `help:"With --state: the least wall time between two commits of the state (a commit makes the trace and recording durable at a tick boundary; negative: every tick)." default:"50ms"`
	SnapshotEvery string        `help:"With --state: take a world snapshot every N ticks (a number) or every so much wall time (a duration, 30s), or never (off); a resume restores the last one and replays only the ticks after it." default:"30s" placeholder:"N|DURATION|off"`
	RetryOnResume []string      `help:"With --state: side-effecting tools a resume may run again when the host stopped while they ran (idempotent ones); the others are answered as interrupted." placeholder:"TOOL,..."`
	StateSync     string        `help:"With --state: full syncs every commit and intent (the state survives a power cut); process syncs nothing (it survives the host's death, SIGKILL or OOM, not the machine's), far cheaper where agents make many files." default:"full" enum:"full,process"`
}

// stateFlags are the durability tests' kill switches (hidden): host run --state and host resume
// take them.
type stateFlags struct {
	CrashAfterTick  *uint64 `hidden:"" help:"Kill the host with SIGKILL after committing the first tick at or past N, once no side-effecting call is running (durability tests)."`
	CrashInEffect   int     `hidden:"" help:"Kill the host with SIGKILL inside the N-th side-effecting call, after its intent is journaled and before it runs (durability tests)."`
	CrashInWrite    int     `hidden:"" help:"Kill the host with SIGKILL inside the N-th write of write_file or edit_file, its new content in a temporary file and not yet renamed over the target (durability tests)."`
	CrashInSnapshot int     `hidden:"" help:"Kill the host with SIGKILL inside the N-th world snapshot's write, its file written and not yet indexed (durability tests)."`
}

func stderrIsTerminal() bool {
	fd := os.Stderr.Fd()
	return isatty.IsTerminal(fd) || isatty.IsCygwinTerminal(fd)
}

func (r *runCmd) Run(e *env) error {
	if r.Agents < 0 {
		fmt.Fprintf(e.stderr, "host: --agents %d: give a positive number of agents\n", r.Agents)
		return errBadInput
	}
	host, err := loadHostConfig(e, r.Config)
	if err != nil {
		return err
	}
	params, err := warren.ParseParams(r.Param)
	if err != nil {
		fmt.Fprintf(e.stderr, "host: %v\n", err)
		return errBadInput
	}
	sc, err := warren.LoadParams(r.File, host, params)
	if err != nil {
		fmt.Fprintf(e.stderr, "host: %s is not a valid scenario:\n%v\n", r.File, err)
		return errBadInput
	}
	level, _ := zerolog.ParseLevel(r.LogLevel)
	log := zerolog.New(zerolog.ConsoleWriter{Out: e.stderr, NoColor: !e.isTerminal, TimeFormat: time.TimeOnly}).
		Level(level).With().Timestamp().Logger()
	opt := warren.Options{Seed: r.Seed, Agents: r.Agents, WorkRoot: r.Workdir, Log: log,
		Launch: r.launch(), Unattended: r.Unattended, FaultsSeed: r.FaultsSeed}
	if err := r.check(); err != nil {
		fmt.Fprintf(e.stderr, "host: %v\n", err)
		return errBadInput
	}

	// OpenTelemetry spans, when the environment names a collector (docs/opentelemetry.md): read
	// from the trace's events as they are written, so they flow whether or not the run keeps its
	// trace, and flushed when the command returns.
	spans, err := otelgenai.FromEnv(log.WithContext(e.ctx))
	if err != nil {
		fmt.Fprintf(e.stderr, "host: %v\n", err)
		return errBadInput
	}
	defer closeSpans(spans, log)
	opt.Events = spans.Tap("", sc.Name, opt.Events)

	if err := checkOutputs(sc.Inputs(), output{"--trace", r.Trace}, output{"--record", r.Record}, output{"--out", r.Out}); err != nil {
		fmt.Fprintf(e.stderr, "host: %v\n", err)
		return errBadInput
	}
	switch {
	case r.Out != "" && r.Trace != "":
		fmt.Fprintf(e.stderr, "host: --out %s keeps the trace in %s: leave --trace out\n", r.Out, filepath.Join(r.Out, warren.RunTraceFile))
		return errBadInput
	case r.Out != "" && r.State != "":
		fmt.Fprintf(e.stderr, "host: --out and --state both keep the run's trace: give one (a state directory's trace can be reported on with host report DIR)\n")
		return errBadInput
	case r.Out != "" && traceInWorkRoot(r.Out, r.Workdir):
		fmt.Fprintf(e.stderr, "host: --out %s lies inside --workdir %s, where agents write: put the run directory elsewhere\n", r.Out, r.Workdir)
		return errBadInput
	}
	if r.Interactive {
		if r.State != "" {
			fmt.Fprintln(e.stderr, "host: --interactive and --state: a run with a state directory takes no answers from people yet (they could not be resumed)")
			return errBadInput
		}
		console := warren.NewConsole(r.PromptTimeout)
		opt.Console = console
		r.NoProgress = true // the questions own the terminal
		go askOnTerminal(e.ctx, console, e.stdin, e.stdout)
	}
	if r.State != "" {
		return r.runWithState(e, sc, opt)
	}
	if r.Record != "" && r.Trace == "" && r.Out == "" {
		fmt.Fprintf(e.stderr, "host: --record %s needs --trace (or --out): a recording is replayed against the trace it was recorded with\n", r.Record)
		return errBadInput
	}
	var runDir *warren.RunDir
	if r.Out != "" {
		if runDir, err = warren.OpenRunDir(r.Out, sc, &opt); err != nil {
			fmt.Fprintf(e.stderr, "host: --out: %v\n", err)
			return errBadInput
		}
		defer runDir.Close()
	}
	traceFile, err := r.createOutput(e, "--trace", "trace", r.Trace)
	if err != nil {
		return err
	}
	if traceFile != nil {
		defer traceFile.Close()
		// The trace writer buffers (64 KiB) and writes straight to the file, so a write error
		// reaches the run within that much trace, and the run stops at the end of the tick.
		opt.Trace = traceFile
	}
	recFile, err := r.createOutput(e, "--record", "recording", r.Record)
	if err != nil {
		return err
	}
	if recFile != nil {
		defer recFile.Close()
		opt.Record, opt.RecordFile, opt.RecordNote = recFile, r.Record, r.RecordNote
		if r.Trace != "" {
			opt.TraceFile = r.Trace
		}
	}
	bar := progressBar(e, r.NoProgress, len(sc.Groups), &opt.Progress)
	rt, err := warren.New(sc, opt)
	if err != nil {
		if bar != nil {
			_ = bar.Exit()
		}
		if errors.Is(err, warren.ErrLaunch) || errors.Is(err, warren.ErrAgentNames) || errors.Is(err, warren.ErrItems) {
			fmt.Fprintf(e.stderr, "host: %v\n", err)
		} else {
			fmt.Fprintf(e.stderr, "host: run %s: %v\n", r.File, err)
		}
		return errBadInput
	}
	sum, err := rt.Run(e.ctx)
	if bar != nil {
		_ = bar.Finish()
	}
	if traceFile != nil {
		// The runtime flushed what it traced, even when the run failed: the trace is the account
		// of it. Closing the file is the last write that can fail.
		if cerr := traceFile.Close(); cerr != nil && sum != nil && sum.Err == nil {
			sum.Status, sum.Err = warren.RunFailed, fmt.Errorf("%w: %w", warren.ErrTrace, cerr)
		}
	}
	if recFile != nil {
		if cerr := recFile.Close(); cerr != nil && sum != nil && sum.Err == nil {
			sum.Status, sum.Err = warren.RunFailed, fmt.Errorf("%w: %w", warren.ErrRecording, cerr)
		}
	}
	if sum == nil {
		fmt.Fprintf(e.stderr, "host: run %s: %v\n", r.File, err)
		return errIncomplete
	}
	tracePath := r.Trace
	if runDir != nil {
		tracePath = filepath.Join(r.Out, warren.RunTraceFile)
		if ferr := runDir.Finish(rt, sum, params, r.Record); ferr != nil {
			fmt.Fprintf(e.stderr, "host: --out: %v\n", ferr)
			printSummary(e.stdout, sc, sum, tracePath)
			return errIncomplete
		}
	}
	printSummary(e.stdout, sc, sum, tracePath)
	if runDir != nil {
		fmt.Fprintf(e.stdout, "run dir      %s (host report %s; host trace export %s)\n", r.Out, r.Out, tracePath)
	}
	return runExit(e, r.File, sum)
}

// spanFlushTimeout bounds how long host run waits, after the run, for its last spans to reach the
// collector: a collector that is down or slow must not hold the exit for the exporter's retries.
const spanFlushTimeout = 5 * time.Second

// closeSpans flushes the run's OpenTelemetry spans (nothing when spans is nil) and logs, at warn,
// a flush that failed or ran out of time: the run, its trace and its exit code stand whatever
// the collector did.
func closeSpans(spans *otelgenai.Exporter, log zerolog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), spanFlushTimeout)
	defer cancel()
	if err := spans.Close(ctx); err != nil {
		log.Warn().Err(err).Msg("OpenTelemetry: the last spans were not all sent")
	}
}

// runExit reports how a run ended as the command's exit: 3 for a run that did not finish, 1 for
// failed expectations.
func runExit(e *env, what string, sum *warren.Summary) error {
	if sum.Status == warren.RunFailed {
		fmt.Fprintf(e.stderr, "host: run %s failed: %v\n", what, sum.Err)
	}
	switch {
	case sum.Status == warren.RunInterrupted || sum.Status == warren.RunFailed || sum.Status == warren.RunStopped:
		// The summary's last line says why; a run that did not finish is not judged by its
		// expectations.
		return errIncomplete
	case len(sum.Failures) > 0:
		return errExpectations
	}
	return nil
}

// progressBar shows the agents finished on a terminal, through progress (nil when not shown).
func progressBar(e *env, off bool, groups int, progress *func(finished, total int)) *progressbar.ProgressBar {
	if !e.isTerminal || off {
		return nil
	}
	bar := progressbar.NewOptions(groups, progressbar.OptionSetWriter(e.stderr),
		progressbar.OptionSetDescription("agents finished"), progressbar.OptionShowCount(),
		progressbar.OptionThrottle(100*time.Millisecond), progressbar.OptionClearOnFinish())
	*progress = func(finished, total int) {
		bar.ChangeMax(total)
		_ = bar.Set(finished)
	}
	return bar
}

// createOutput creates the output file path names for flag (nil when path is ""), refusing one
// inside the kept workdir root, where agents write.
func (r *runCmd) createOutput(e *env, flag, what, path string) (*os.File, error) {
	if path == "" {
		return nil, nil
	}
	if traceInWorkRoot(path, r.Workdir) {
		fmt.Fprintf(e.stderr, "host: %s %s lies inside --workdir %s, where agents write (and may have planted a link): put the %s elsewhere\n", flag, path, r.Workdir, what)
		return nil, errBadInput
	}
	f, err := os.Create(path)
	if err != nil {
		fmt.Fprintf(e.stderr, "host: %s: %v\n", flag, err)
		return nil, errBadInput
	}
	return f, nil
}

// traceInWorkRoot reports whether the trace file would lie inside the kept workdir root (""
// means a fresh temporary one, which no path given beforehand can lie in). Everything in there is
// the agents' to shape, from this run or a kept earlier one: a link planted where the trace goes,
// or on the way to it, would have the host create or truncate any file the link leads to. The
// path is compared as given and with the links that exist resolved, so an operator's own link
// into the root counts too.
func traceInWorkRoot(trace, root string) bool {
	if root == "" {
		return false
	}
	t, errT := filepath.Abs(trace)
	w, errW := filepath.Abs(root)
	if errT != nil || errW != nil {
		return true // cannot tell: refuse rather than guess
	}
	if within(t, w) {
		return true
	}
	resolvedW, errW := filepath.EvalSymlinks(w)
	resolvedDir, errT := filepath.EvalSymlinks(filepath.Dir(t))
	return errW == nil && errT == nil && within(filepath.Join(resolvedDir, filepath.Base(t)), resolvedW)
}

// within reports whether path is dir or lies under it (both clean and absolute).
func within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && filepath.IsLocal(rel)
}

// printSummary writes the end-of-run report.
func printSummary(w io.Writer, sc *warren.Scenario, s *warren.Summary, tracePath string) {
	fmt.Fprintf(w, "scenario     %s (seed %d, %s clock)\n", s.Scenario, s.Seed, s.Clock)
	if s.FaultsSeed != nil {
		fmt.Fprintf(w, "faults       drawn from seed %d (rerun this pattern with --faults-seed %d)\n", *s.FaultsSeed, *s.FaultsSeed)
	}
	var parts []string
	for k, n := range s.ByStatus {
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", warren.Status(k), n))
		}
	}
	fmt.Fprintf(w, "agents       %d: %s\n", s.Agents, strings.Join(parts, ", "))
	if s.Spawned > 0 {
		fmt.Fprintf(w, "tree         %d spawned as sub-agents\n", s.Spawned)
		for depth, counts := range s.Tree {
			var parts []string
			total := 0
			for k, n := range counts {
				if n > 0 {
					parts = append(parts, fmt.Sprintf("%s %d", warren.Status(k), n))
					total += n
				}
			}
			fmt.Fprintf(w, "  depth %-4d %d: %s\n", depth, total, strings.Join(parts, ", "))
		}
	}
	fmt.Fprintf(w, "ticks        %d (%s)\n", s.Ticks, s.Stop)
	fmt.Fprintf(w, "model turns  %d\n", s.ModelTurns)
	if len(s.Models) > 1 {
		for _, m := range s.Models {
			line := fmt.Sprintf("  model %-20s %d turns (%d failed)", m.ID, m.Turns, m.Failed)
			if m.Spend.Attempts > 0 {
				line += ", tokens " + spendLine(m.Spend)
			}
			fmt.Fprintln(w, line)
		}
	}
	fmt.Fprintf(w, "tool calls   %d (%d errors)\n", s.ToolCalls, s.ToolErrors)
	printSpend(w, s)
	fmt.Fprintf(w, "throughput   %.0f agent-steps/s over %s\n", s.StepsPerSecond(), s.Elapsed.Round(time.Millisecond))
	if tracePath != "" {
		if errors.Is(s.Err, warren.ErrTrace) {
			fmt.Fprintf(w, "trace        %s: incomplete, the writing failed (no end event)\n", tracePath)
		} else {
			fmt.Fprintf(w, "trace        %s (%d events)\n", tracePath, s.TraceEvents)
		}
	}
	if s.Recorded > 0 {
		fmt.Fprintf(w, "recording    %d entries\n", s.Recorded)
	}
	if n := s.Snapshots; n.Taken > 0 {
		fmt.Fprintf(w, "snapshots    %d taken, the world paused %s at most (%s on average) while each was copied; the last %d bytes for %d agents\n",
			n.Taken, n.MaxPause.Round(time.Microsecond), (n.TotalPause / time.Duration(max(n.Copied, 1))).Round(time.Microsecond), n.LastBytes, n.LastAgents)
	}
	if n := s.Snapshots; n.Failed != "" {
		fmt.Fprintf(w, "snapshots    the last write failed: %s (a resume restores an earlier snapshot, or replays from the start)\n", n.Failed)
	}
	if s.RealTimeLimits > 0 {
		fmt.Fprintf(w, "real time    %d calls ended by a limit measured in real time (tool_note fn realtime_limit): there the trace depends on the machine\n", s.RealTimeLimits)
	}
	total := len(sc.Expect)
	if sc.ExpectRun != nil {
		total += len(sc.ExpectRun.Status)
		if sc.ExpectRun.ToolCalls != nil {
			total++
		}
	}
	switch s.Status {
	case warren.RunStopped:
		fmt.Fprintf(w, "expectations not judged (%d): the run did not finish\n", total)
		fmt.Fprintf(w, "stopped      interrupted (%v) after %s: go on with host resume\n", s.Err, ticks(s.Ticks))
		return
	case warren.RunInterrupted:
		// Expectations judge a whole run: a run cut short would fail them for being cut short.
		fmt.Fprintf(w, "expectations not judged (%d): the run did not finish\n", total)
		fmt.Fprintf(w, "stopped      interrupted (%v) after %s: the run did not finish\n", s.Err, ticks(s.Ticks))
		return
	case warren.RunFailed:
		fmt.Fprintf(w, "expectations not judged (%d): the run did not finish\n", total)
		fmt.Fprintf(w, "stopped      failed after %s: %v\n", ticks(s.Ticks), s.Err)
		return
	}
	if len(s.Failures) == 0 {
		fmt.Fprintf(w, "expectations all %d held\n", total)
		return
	}
	fmt.Fprintf(w, "expectations %d failed:\n", len(s.Failures))
	for _, f := range s.Failures {
		fmt.Fprintf(w, "  %s\n", f)
	}
}

// ticks says "1 tick" or "n ticks".
func ticks(n uint64) string {
	if n == 1 {
		return "1 tick"
	}
	return fmt.Sprintf("%d ticks", n)
}

// loadHostConfig loads the --config file (nil when none is given), reporting a bad one on
// stderr as the usage error it is.
func loadHostConfig(e *env, path string) (*warren.HostConfig, error) {
	if path == "" {
		return nil, nil
	}
	cfg, err := warren.LoadHostConfig(path)
	if err != nil {
		fmt.Fprintf(e.stderr, "host: --config %s is not a valid host config:\n%v\n", path, err)
		return nil, errBadInput
	}
	return cfg, nil
}

// printSpend writes what live model turns cost and what the inference pools did: the run's
// tokens and cost, each group's, the dearest trees, and each pool's counters.
func printSpend(w io.Writer, s *warren.Summary) {
	if s.Spend.Attempts == 0 && len(s.Pools) == 0 {
		return
	}
	fmt.Fprintf(w, "tokens       %s\n", spendLine(s.Spend))
	for _, g := range slices.Sorted(maps.Keys(s.Groups)) {
		fmt.Fprintf(w, "  group %-12s %s\n", g, spendLine(s.Groups[g]))
	}
	if len(s.Trees) > 1 {
		roots := slices.Sorted(maps.Keys(s.Trees))
		slices.SortStableFunc(roots, func(a, b string) int { return cmp.Compare(s.Trees[b].Tokens.Total(), s.Trees[a].Tokens.Total()) })
		for _, root := range roots[:min(len(roots), 3)] {
			fmt.Fprintf(w, "  tree  %-12s %s\n", root, spendLine(s.Trees[root]))
		}
		if len(roots) > 3 {
			fmt.Fprintf(w, "  (%d trees; the 3 that used the most tokens are shown)\n", len(roots))
		}
	}
	for _, p := range s.Pools {
		st := p.Stats
		limits := fmt.Sprintf("cap %d", p.MaxConcurrency)
		if p.RequestsPerMinute > 0 {
			limits += fmt.Sprintf(", %d req/min", p.RequestsPerMinute)
		}
		if p.TokensPerMinute > 0 {
			limits += fmt.Sprintf(", %d tokens/min", p.TokensPerMinute)
		}
		fmt.Fprintf(w, "pool         %s (%s): %d sent, most %d in flight, %d retried, %d failed, %d fell back, breaker opened %d times\n",
			p.Name, limits, st.Sent, st.MaxInFlight, st.Retried, st.Failed, st.FellBack, st.BreakerOpened)
	}
}

// spendLine is "1234 (prompt 1000, cached 200, completion 234) over 5 turns, $0.0012".
func spendLine(s warren.Spend) string {
	t := s.Tokens
	line := fmt.Sprintf("%d (prompt %d", t.Total(), t.Prompt)
	if t.CacheRead > 0 {
		line += fmt.Sprintf(", cache read %d", t.CacheRead)
	}
	if t.CacheWrite > 0 {
		line += fmt.Sprintf(", cache write %d", t.CacheWrite)
	}
	line += fmt.Sprintf(", completion %d) over %d turns", t.Completion, s.Turns)
	if s.Attempts > s.Turns {
		line += fmt.Sprintf(" (%d attempts)", s.Attempts)
	}
	return line + ", $" + warren.Dollars(s.Cost)
}
