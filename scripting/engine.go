package scripting

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dop251/goja"
)

// Host is what one call of a script may reach: the script tool builds one per call from the
// agent's context (workdir, Layer 3 permissions, HTTP policy, allowed variables). Every method
// runs on the goroutine executing the script, one at a time. A returned error becomes a JS Error
// the script may catch, with exactly the error's text as its message.
type Host interface {
	// ReadFile returns a file of the agent's workdir.
	ReadFile(path string) (string, error)
	// WriteFile writes a file of the agent's workdir and returns what the built-in tool reports.
	WriteFile(path, content string) (string, error)
	// ListDir lists a directory of the agent's workdir ("." when the script gives no path).
	ListDir(path string) (string, error)
	// Shell runs a command in the agent's sandbox.
	Shell(command string) (string, error)
	// HTTPGet fetches a URL.
	HTTPGet(url string, headers map[string]string) (HTTPResponse, error)
	// HTTPPost posts body to a URL; contentType is "" when the script gives none.
	HTTPPost(url, contentType, body string, headers map[string]string) (HTTPResponse, error)
	// Env reads an environment variable the host config lets scripts see.
	Env(name string) (string, error)
	// CallTool calls another tool for the agent through the full permission gate.
	CallTool(name string, args json.RawMessage) (string, error)
	// Log records a message in the agent's trace.
	Log(message string)
}

// HTTPResponse is what httpGet and httpPost resolve to in the script: {status, body, headers}.
type HTTPResponse struct {
	// Status is the HTTP status code.
	Status int
	// Body is the response body as text.
	Body string
	// Headers are the response headers, one value per name (the script sees them sorted by name).
	Headers map[string]string
}

// Limits bound what one script call may cost, so a runaway script fails its call, not the host.
// A zero (or negative) field takes its DefaultLimits value.
type Limits struct {
	// CallTimeout is the wall-time budget of one call, enforced with goja's interrupt. 2s.
	CallTimeout time.Duration
	// MaxCallStack is the deepest JavaScript call nesting allowed. 256.
	MaxCallStack int
	// MaxArgBytes caps the JSON arguments of a call (checked before it runs). 1 MiB.
	MaxArgBytes int
	// MaxResultBytes caps the text a call returns. 1 MiB.
	MaxResultBytes int
	// MaxStringBytes caps any string crossing from JS to a host function or back, and what one
	// built-in call may build inside JS: a string (repeat, padStart, join, replace,
	// JSON.stringify...) or the length of an array-like a built-in walks. 4 MiB.
	MaxStringBytes int
}

// DefaultLimits are the limits of issue 5: a 2s budget, 256 frames, 1 MiB of arguments and of
// result, 4 MiB per string.
func DefaultLimits() Limits {
	return Limits{
		CallTimeout:    2 * time.Second,
		MaxCallStack:   256,
		MaxArgBytes:    1 << 20,
		MaxResultBytes: 1 << 20,
		MaxStringBytes: 4 << 20,
	}
}

// withDefaults fills every unset limit from DefaultLimits.
func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	if l.CallTimeout <= 0 {
		l.CallTimeout = d.CallTimeout
	}
	if l.MaxCallStack <= 0 {
		l.MaxCallStack = d.MaxCallStack
	}
	if l.MaxArgBytes <= 0 {
		l.MaxArgBytes = d.MaxArgBytes
	}
	if l.MaxResultBytes <= 0 {
		l.MaxResultBytes = d.MaxResultBytes
	}
	if l.MaxStringBytes <= 0 {
		l.MaxStringBytes = d.MaxStringBytes
	}
	return l
}

// CallEnv is what makes a call deterministic: the virtual clock's time (Date.now() and new Date()
// return exactly Now) and the agent's seeded random source (Math.random() returns Rand()).
// A nil Rand makes Math.random throw rather than fall back to a source the trace cannot replay.
type CallEnv struct {
	Now  time.Time
	Rand func() float64
}

// loaderEnv is the environment of Compile's run of a file's top level: fixed, so loading a file
// is as deterministic as calling it.
func loaderEnv() CallEnv {
	return CallEnv{Now: time.Unix(0, 0).UTC(), Rand: func() float64 { return 0 }}
}

// Engine runs script calls. It keeps a pool of sandboxed runtimes sized by demand (see the
// package documentation for why a pool rather than a runtime per agent); no state survives a
// call, whichever runtime serves it. An Engine is safe for concurrent use by the tool lane's
// workers.
type Engine struct {
	limits Limits
	idle   sync.Pool // of *pooled, each ready for a call
	closed atomic.Bool
}

// pooled is what the Engine's pool holds: a handle on a worker. The worker's goroutine does not
// reference the handle, so when the pool drops an idle runtime (sync.Pool does at garbage
// collection) the handle becomes unreachable and its cleanup stops the goroutine.
type pooled struct{ w *worker }

// acquire takes an idle worker or builds one.
func (e *Engine) acquire() *pooled {
	if p, _ := e.idle.Get().(*pooled); p != nil {
		return p
	}
	w := newWorker(e.limits)
	p := &pooled{w: w}
	runtime.AddCleanup(p, (*worker).retire, w)
	return p
}

// NewEngine returns an engine enforcing limits (unset fields take their defaults).
func NewEngine(limits Limits) *Engine {
	return &Engine{limits: limits.withDefaults()}
}

// Run calls s's run function with args (a JSON object; empty means {}) and the host functions
// of host, under the engine's limits, with Date and Math.random taken from env. The result is
// run's return value (awaited if it is a promise): a string as is, undefined as "", anything
// else JSON-encoded. Failures are an *Error: ErrRuntime (with the file, line and column of the
// throw), ErrTimeout, ErrStackOverflow, ErrTooLarge, ErrDefinition; a call cancelled through ctx
// has the context's error as its Kind. Run returns within the budget plus a short grace even if
// the script is stuck in a built-in that does not observe interrupts: such a runtime is
// abandoned to finish on its own and never reused.
func (e *Engine) Run(ctx context.Context, s *Script, args json.RawMessage, host Host, env CallEnv) (string, error) {
	if s == nil || s.program == nil {
		return "", &Error{Message: "no compiled script (use Compile)", Kind: ErrDefinition}
	}
	if e.closed.Load() {
		return "", &Error{File: s.File, Message: "the script engine is closed", Kind: ErrClosed}
	}
	if len(args) > e.limits.MaxArgBytes {
		return "", &Error{File: s.File, Kind: ErrTooLarge,
			Message: fmt.Sprintf("arguments are %d bytes, over the %d-byte cap", len(args), e.limits.MaxArgBytes)}
	}
	if ctx == nil {
		ctx = context.Background()
	}
	if err := ctx.Err(); err != nil {
		return "", interruptError(s.File, err, e.limits.CallTimeout)
	}
	p := e.acquire()
	w := p.w
	w.begin(s, args, host, env, modeRun)
	result, err := w.supervise(ctx)
	if w.reusable() && !e.closed.Load() {
		w.end()
		e.idle.Put(p)
	}
	return result, err
}

// Close stops pooling: the idle runtimes are released to the garbage collector, calls in flight
// finish normally, and later calls fail with ErrClosed.
func (e *Engine) Close() {
	e.closed.Store(true)
	for {
		p, _ := e.idle.Get().(*pooled)
		if p == nil {
			return
		}
		p.w.retire()
	}
}

// callMode says what a worker's call does with the file's definition.
type callMode uint8

const (
	// modeLoad reads the definition (Compile).
	modeLoad callMode = iota
	// modeRun calls the definition's run function (Engine.Run).
	modeRun
)

// errBudget is the interrupt value of a call that ran out of time (a cancelled call is
// interrupted with its context's error instead).
var errBudget = errors.New("budget exhausted")

// interruptError describes an interrupted call: a timeout, or a cancellation whose Kind is the
// context's error. It carries no position: where the interrupt landed depends on timing, and
// nothing that depends on timing may reach a trace.
func interruptError(file string, reason any, budget time.Duration) *Error {
	if err, ok := reason.(error); ok && err != errBudget {
		return &Error{File: file, Message: "script call cancelled: " + err.Error(), Kind: err}
	}
	return &Error{File: file, Message: fmt.Sprintf("script ran past its %v budget", budget), Kind: ErrTimeout}
}

// graceAfterInterrupt is how long a caller waits for an interrupted runtime to stop before it
// abandons it: a quarter of the budget, at least 10ms.
func graceAfterInterrupt(budget time.Duration) time.Duration {
	return max(budget/4, 10*time.Millisecond)
}

// worker is one sandboxed runtime and the state of the call it is serving. A worker serves one
// call at a time, on a goroutine of its own (loop) so the caller can give up on it (supervise);
// the goroutine lives as long as the worker, so its stack, grown by goja, is reused.
type worker struct {
	vm      *goja.Runtime
	limits  Limits
	timer   *time.Timer
	jobs    chan struct{} // a call to serve; closed to stop the goroutine
	done    chan struct{} // the call is served
	retired sync.Once

	// Set up once, by newWorker.
	defineTool, hostObject, visit goja.Value
	jsonParse, jsonStringify,
	stringOf, start, finish, surface goja.Callable
	errorCtor, rangeErrorCtor, typeErrorCtor, syntaxErrorCtor *goja.Object
	frames                                                    []goja.StackFrame

	// The call being served; set by begin, cleared by end.
	mode    callMode
	script  *Script
	args    json.RawMessage
	host    Host
	env     CallEnv
	defs    int          // defineTool calls so far
	def     *goja.Object // the first call's definition object
	defAt   position     // the first defineTool call (load mode)
	again   position     // the second defineTool call, if any
	loaded  definition
	nested  []*goja.Object    // arrays being joined, innermost last (cycles and depth)
	tracker *stringifyTracker // the innermost JSON.stringify running
	result  string
	err     error

	// stop is set by the supervisor once it has interrupted the call: the sandbox's own
	// built-ins check it and surface the interrupt (goja checks it only between instructions).
	stop atomic.Bool
	// abandoned is set when the supervisor gave up waiting: the runtime may still be running
	// and must not reach the host any more, nor be reused.
	abandoned atomic.Bool
	// broken is set when execute recovered a Go panic: the runtime's state is unknown.
	broken bool
}

// begin prepares w for one call.
func (w *worker) begin(s *Script, args json.RawMessage, host Host, env CallEnv, mode callMode) {
	w.mode, w.script, w.args, w.host, w.env = mode, s, args, host, env
	w.defs, w.def, w.defAt, w.again = 0, nil, position{}, position{}
	w.result, w.err = "", nil
}

// end drops the call's references so a pooled worker keeps no agent's data alive.
func (w *worker) end() {
	w.script, w.args, w.host, w.env, w.def = nil, nil, nil, CallEnv{}, nil
	w.loaded, w.result, w.err, w.tracker = definition{}, "", nil, nil
	clear(w.nested)
	w.nested = w.nested[:0]
}

// loop serves the worker's calls until retire.
func (w *worker) loop() {
	for range w.jobs {
		w.execute()
	}
}

// retire stops the worker's goroutine once it has finished its current call, if any.
func (w *worker) retire() {
	w.retired.Do(func() { close(w.jobs) })
}

// reusable reports whether the worker may serve another call.
// The order matters: an abandoned worker's goroutine may still write broken.
func (w *worker) reusable() bool { return !w.abandoned.Load() && !w.broken }

// supervise runs the call on its own goroutine and enforces the budget and ctx: on either it
// interrupts the runtime, waits a short grace for the script to stop, and otherwise abandons the
// worker (a built-in stuck in a long native loop cannot be stopped, but the call can return).
// The call's result and error are read only once its goroutine has signalled done.
func (w *worker) supervise(ctx context.Context) (string, error) {
	budget := w.limits.CallTimeout
	w.jobs <- struct{}{}
	w.timer.Reset(budget)
	var reason error
	select {
	case <-w.done:
		w.timer.Stop()
		return w.result, w.err
	case <-w.timer.C:
		reason = errBudget
	case <-ctx.Done():
		w.timer.Stop()
		reason = ctx.Err()
	}
	w.stop.Store(true)
	w.vm.Interrupt(reason)
	w.timer.Reset(graceAfterInterrupt(budget))
	select {
	case <-w.done:
		w.timer.Stop()
		w.vm.ClearInterrupt()
		w.stop.Store(false)
		return w.result, w.err
	case <-w.timer.C:
		w.abandoned.Store(true)
		return "", interruptError(w.script.File, reason, budget)
	}
}

// execute serves the call on the worker's goroutine and signals done. A Go panic out of goja
// (which a hostile script should never cause, but the host must survive) fails the call and
// retires the runtime.
func (w *worker) execute() {
	defer func() {
		if p := recover(); p != nil {
			w.broken, w.result = true, ""
			w.err = &Error{File: w.script.File, Kind: ErrRuntime, Message: fmt.Sprintf("the script engine failed: %v", p)}
		}
		w.done <- struct{}{}
	}()
	w.err = w.serve()
}

// serve runs the two halves of a call as two entries into the runtime: start runs the file's
// top level and then run; between the entries goja drains its job queue, which settles an async
// run; finish then reads the settled value and converts it to the result.
func (w *worker) serve() error {
	value, err := w.start(goja.Undefined())
	if err != nil {
		return w.failure(err)
	}
	if w.err != nil || w.mode == modeLoad {
		return w.err
	}
	if _, err := w.finish(goja.Undefined(), value); err != nil {
		return w.failure(err)
	}
	return w.err
}

// failure converts what goja returned from an entry into an *Error of the script's file.
func (w *worker) failure(err error) error {
	file := w.script.File
	var interrupted *goja.InterruptedError
	var overflow *goja.StackOverflowError
	var exception *goja.Exception
	switch {
	case errors.As(err, &interrupted):
		return interruptError(file, interrupted.Value(), w.limits.CallTimeout)
	case errors.As(err, &overflow):
		return newError(file, scriptPosition(file, overflow.Stack()), ErrStackOverflow,
			fmt.Sprintf("call stack exceeded %d frames", w.limits.MaxCallStack))
	case errors.As(err, &exception):
		return newError(file, scriptPosition(file, exception.Stack()), ErrRuntime, w.describe(exception.Value()))
	}
	return newError(file, position{}, ErrRuntime, err.Error())
}

// maxMessageBytes caps an exception's message in an error: an error is read by a model and
// written to the trace, and a script can throw a megabyte.
const maxMessageBytes = 1024

// describe renders a thrown value the way JavaScript's String() does ("TypeError: x is not a
// function"), running inside the sandbox because a thrown object's toString is script code.
func (w *worker) describe(v goja.Value) string {
	s, err := w.stringOf(goja.Undefined(), v)
	if err != nil {
		return "uncaught exception (its message cannot be read)"
	}
	return truncateUTF8(s.String(), maxMessageBytes)
}

// truncateUTF8 cuts s to at most n bytes on a character boundary, marking the cut.
func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !isRuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// isRuneStart reports whether b begins a UTF-8 sequence.
func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }
