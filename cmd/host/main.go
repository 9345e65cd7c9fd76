// Command host runs Warren scenarios: many agents in one ECS world, moved tick by tick through
// their blueprints' stage graphs, with a deterministic trace.
//
// Its commands (run, validate, replay, record to-scripted, trace diff, explain, doctor, mcp, models)
// and their flags are what `host --help` prints, and README.md's CLI table, which a test checks
// against the registered commands.
//
// Exit codes: 0 the run finished and every expectation held (or the files are valid, or the
// traces are identical); 1 an expectation failed (each failure is listed) or the traces differ;
// 2 bad input or usage (nothing ran); 3 the run did not finish: it was interrupted (SIGINT,
// SIGTERM or SIGHUP: it stops at the end of the tick, writes the trace's end event, prints the
// summary and cleans up; a second signal kills the host at once) or it failed (its trace could not
// be written, which stops it at the end of that tick, or the host met a bug). A run that did not
// finish exits 3 whatever its expectations say: they judge a whole run.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/alecthomas/kong"

	"github.com/warrenhq/warren"
)

// Exit codes.
const (
	exitOK         = 0
	exitExpect     = 1
	exitBadInput   = 2
	exitIncomplete = 3
)

// errExpectations marks a run whose expectations failed (exit 1).
var errExpectations = errors.New("expectations failed")

// errBadInput marks bad input or usage (exit 2); its message was already printed.
var errBadInput = errors.New("bad input")

// errIncomplete marks a run that did not finish, interrupted or failed (exit 3); the summary
// saying why was already printed.
var errIncomplete = errors.New("the run did not finish")

// stopSignals end a run at the end of its tick, as Ctrl-C does: SIGTERM is what service managers
// and container runtimes send, SIGHUP what a closed terminal sends, and each deserves a run that
// stops cleanly (its trace ended, its summary printed, its commands killed, its temporary work
// root removed) rather than one killed mid-write.
var stopSignals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}

type cli struct {
	Version  kong.VersionFlag `help:"Print Warren's version (the one trace headers carry), the Go version and the VCS revision, and exit."`
	Run      runCmd           `cmd:"" help:"Run a scenario and print a summary."`
	Sweep    sweepCmd         `cmd:"" help:"Run a scenario over a grid of parameters and seeds, each run in a run directory, with a results table; a rerun resumes."`
	Validate validateCmd      `cmd:"" help:"Check scenario files (and the blueprints they use) without running them. Model kinds a scenario may name: ${model_kinds}."`
	Replay   replayCmd        `cmd:"" help:"Run a recording (host run --record) again offline, answering every outside input from it."`
	Resume   resumeCmd        `cmd:"" help:"Go on with a run whose host died or was stopped, from its state directory (host run --state)."`
	State    stateCmd         `cmd:"" help:"Work with state directories (host run --state)."`
	Record   recordCmd        `cmd:"" help:"Work with recordings (host run --record): turn one into scripted models."`
	Trace    traceCmd         `cmd:"" help:"Work with trace files."`
	Explain  explainCmd       `cmd:"" help:"Show how the permission gate decides a call, layer by layer."`
	Doctor   doctorCmd        `cmd:"" help:"Show what this machine supports for sandboxing commands, and what the sandbox ceiling does here."`
	MCP      mcpCmd           `cmd:"" name:"mcp" help:"List MCP servers and their tools, or serve the demo MCP server."`
	Models   modelsCmd        `cmd:"" help:"Work with model back ends: serve a fake provider to try live scenarios without a key."`
	Report   reportCmd        `cmd:"" help:"Write the HTML report of a run directory (host run --out) or a sweep directory (host sweep): one self-contained page of charts."`
	Serve    serveCmd         `cmd:"" help:"Serve runs over HTTP: submit scenarios, watch their agents and events live, answer their prompts (docs/api.md)."`
	Runs     runsCmd          `cmd:"" help:"List the runs of a host serve, a client of its API."`
	Answer   answerCmd        `cmd:"" help:"List a served run's open prompts, or answer one, a client of host serve's API."`
}

// env is what commands write to; tests substitute buffers.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	ctx            context.Context
	isTerminal     bool
}

func main() {
	// First of all: this process may be one of the sandbox's helpers (a contained command's
	// pid 1 or its exec trampoline), or the demo MCP server an "@demo" entry starts (registered
	// by internal/mcpdemo, which this binary links for `host mcp serve`), which run and exit here.
	warren.Init()
	// Local time is UTC in the host: goja's Date reads time.Local for its local-time methods
	// (getHours, toString), and a script's output reaches the trace, which must not depend on
	// the machine's time zone.
	time.Local = time.UTC
	ctx, stop := signal.NotifyContext(context.Background(), stopSignals...)
	defer stop()
	go func() {
		// After the first signal the run is stopping; from then on the signals' default action
		// is back, so a second one kills a host whose clean stop is stuck.
		<-ctx.Done()
		stop()
	}()
	e := &env{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, ctx: ctx, isTerminal: stderrIsTerminal()}
	os.Exit(run(e, os.Args[1:]))
}

// modelKinds lists the model kinds registered in the host (warren.ModelKinds), by the name a
// scenario writes, for the help text: the list comes from the registry, so help cannot drift from
// what a scenario may name. With summaries, each name is followed by what its models do.
func modelKinds(summaries bool) string {
	kinds := warren.ModelKinds()
	parts := make([]string, len(kinds))
	for i, k := range kinds {
		parts[i] = k.Name
		if summaries {
			parts[i] += " (" + k.Summary + ")"
		}
	}
	return strings.Join(parts, ", ")
}

// run parses args, runs the command and maps the outcome to an exit code.
func run(e *env, args []string) int {
	var c cli
	exitCode := -1
	parser, err := kong.New(&c,
		kong.Name("host"),
		kong.Description("Warren: an ECS-architected multi-agent simulation host.\n\nModel kinds ([models.<key>] kind = ...): "+modelKinds(true)+"."),
		kong.Vars{"model_kinds": modelKinds(false), "version": strings.TrimSuffix(versionText(), "\n")},
		kong.UsageOnError(),
		kong.Writers(e.stdout, e.stderr),
		kong.Exit(func(code int) { exitCode = code }),
		kong.BindTo(e, (**env)(nil)),
	)
	if err != nil {
		fmt.Fprintln(e.stderr, "host:", err)
		return exitBadInput
	}
	kctx, err := parser.Parse(args)
	if exitCode >= 0 { // --help, --version
		return exitOK
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "host: %v\nRun 'host --help' for usage.\n", err)
		return exitBadInput
	}
	err = kctx.Run(e)
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, errExpectations):
		return exitExpect
	case errors.Is(err, errPoolsFailed):
		return exitExpect
	case errors.Is(err, errBadInput):
		return exitBadInput
	case errors.Is(err, errIncomplete):
		return exitIncomplete
	default:
		fmt.Fprintln(e.stderr, "host:", err)
		return exitBadInput
	}
}
