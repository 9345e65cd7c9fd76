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
	"github.com/valyala/fastjson"
	"golang.org/x/sync/semaphore"
)

// Host is what one call of a script may reach: the script tool builds one per call from the
// agent's context (workdir, Layer 3 permissions, HTTP policy, allowed variables). Every method
// runs on the goroutine executing the script, one at a time. A returned error becomes a JS Error
// the script may catch, with exactly the error's text as its message. The methods that can block
// take a context, cancelled when the call is interrupted (budget or cancellation), and must
// return soon after: the script runs on its caller's goroutine, which waits for them.
type Host interface {
	// ReadFile returns a file of the agent's workdir.
	ReadFile(path string) (string, error)
	// WriteFile writes a file of the agent's workdir and returns what the built-in tool reports.
	WriteFile(path, content string) (string, error)
	// ListDir lists a directory of the agent's workdir ("." when the script gives no path).
	ListDir(path string) (string, error)
	// Shell runs a command in the agent's sandbox.
	Shell(ctx context.Context, command string) (string, error)
	// HTTPGet fetches a URL.
	HTTPGet(ctx context.Context, url string, headers map[string]string) (HTTPResponse, error)
	// HTTPPost posts body to a URL; contentType is "" when the script gives none.
	HTTPPost(ctx context.Context, url, contentType, body string, headers map[string]string) (HTTPResponse, error)
	// Env reads an environment variable the host config lets scripts see.
	Env(name string) (string, error)
	// CallTool calls another tool for the agent through the full permission gate.
	CallTool(ctx context.Context, name string, args json.RawMessage) (string, error)
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
	// CallTimeout is the CPU-time budget of one call: the time the call's own thread spends
	// running, enforced with goja's interrupt. Other processes keeping the machine busy, or the
	// scheduler leaving the call waiting, never count against it, so whether a call fits its
	// budget does not depend on the machine's load. 2s.
	CallTimeout time.Duration
	// WallTimeout bounds a call's wall time, for a call that computes nothing but waits (a host
	// function stuck on the outside world): the CPU budget never ends such a call. It is a
	// backstop far above any call's CPU budget, and its error says the call was waiting.
	// Default: twenty times CallTimeout, and at least 30s.
	WallTimeout time.Duration
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
	// MaxMemory is the memory budget of one call: the bytes its built-ins and host functions may
	// build (counted deterministically, garbage included), and half of the heap growth the heap
	// watch lets its own JavaScript cause. 64 MiB.
	MaxMemory int64
	// MaxTotalMemory is the run-wide total of script memory: each call reserves its whole
	// MaxMemory from it while it runs (a script it runs through callTool shares that), and a
	// call that does not fit waits, before its budget starts, for running calls to finish. So
	// the memory all the engine's calls may build at once never adds up past it, and since a
	// wait changes no result and no budget, a trace never depends on it. 0: no total; one below
	// MaxMemory is raised to it (a call could never start).
	MaxTotalMemory int64
}

// DefaultMaxMemory is the default memory budget of one call: sixteen strings at the 4 MiB cap,
// or four million array elements; the tool lane's eight workers at the heap watch's threshold
// (twice this) stay within 1 GiB.
const DefaultMaxMemory = 64 << 20

// minWallTimeout is the least default WallTimeout: far above what any call computes, so only a
// call that waits on the outside world meets it.
const minWallTimeout = 30 * time.Second

// DefaultLimits are the limits of issues 5 and 12: a 2s budget, 256 frames, 1 MiB of arguments
// and of result, 4 MiB per string, 64 MiB of memory.
func DefaultLimits() Limits {
	return Limits{
		CallTimeout:    2 * time.Second,
		MaxCallStack:   256,
		MaxArgBytes:    1 << 20,
		MaxResultBytes: 1 << 20,
		MaxStringBytes: 4 << 20,
		MaxMemory:      DefaultMaxMemory,
	}
}

// withDefaults fills every unset limit from DefaultLimits.
func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	if l.CallTimeout <= 0 {
		l.CallTimeout = d.CallTimeout
	}
	if l.WallTimeout <= 0 {
		l.WallTimeout = max(20*l.CallTimeout, minWallTimeout)
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
	if l.MaxMemory <= 0 {
		l.MaxMemory = d.MaxMemory
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
	idle   sync.Pool // of *worker, each ready for a call
	closed atomic.Bool
	// total holds the running calls' reservations of Limits.MaxTotalMemory (nil: no total).
	total *semaphore.Weighted
}

// acquire takes an idle worker or builds one.
func (e *Engine) acquire() *worker {
	if w, _ := e.idle.Get().(*worker); w != nil {
		return w
	}
	return newWorker(e.limits)
}

// NewEngine returns an engine enforcing limits (unset fields take their defaults).
func NewEngine(limits Limits) *Engine {
	e := &Engine{limits: limits.withDefaults()}
	if t := e.limits.MaxTotalMemory; t > 0 {
		e.total = semaphore.NewWeighted(max(t, e.limits.MaxMemory))
	}
	return e
}

// Run calls s's run function with args (a JSON object; empty means {}) and the host functions
// of host, under the engine's limits, with Date and Math.random taken from env. The result is
// run's return value (awaited if it is a promise): a string as is, undefined as "", anything
// else JSON-encoded. Failures are an *Error: ErrRuntime (with the file, line and column of the
// throw), ErrTimeout, ErrMemory, ErrStackOverflow, ErrTooLarge, ErrDefinition; a call cancelled through ctx
// has the context's error as its Kind.
//
// The call runs on the caller's goroutine. Once its budget is spent or ctx is cancelled, the
// script is interrupted at its next instruction or guarded built-in step, and the context the
// host functions were given is cancelled; the package documentation bounds how long a single
// built-in step can run past that.
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
		return "", interruptError(s.File, err, e.limits)
	}
	outer, _ := ctx.Value(budgetKey{}).(*worker)
	if outer == nil && e.total != nil {
		// The call's reservation of the run-wide total, taken before its budget starts: a wait
		// here costs the call no CPU time and changes nothing it computes.
		if err := e.total.Acquire(ctx, e.limits.MaxMemory); err != nil {
			return "", interruptError(s.File, context.Cause(ctx), e.limits)
		}
		defer e.total.Release(e.limits.MaxMemory)
	}
	w := e.acquire()
	w.begin(s, args, host, env, modeRun)
	if outer != nil {
		w.used = outer.used // a script called through call_tool builds on its caller's budget
	}
	result, err := w.call(ctx)
	if outer != nil {
		outer.used = w.used
	}
	if !w.broken && !e.closed.Load() {
		w.end()
		e.idle.Put(w)
	}
	return result, err
}

// Close stops pooling: the idle runtimes are released to the garbage collector, calls in flight
// finish normally, and later calls fail with ErrClosed.
func (e *Engine) Close() {
	e.closed.Store(true)
	for e.idle.Get() != nil {
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

// errBudget is the interrupt value of a call that used up its CPU budget, errWaited that of a
// call that waited past its wall-clock backstop (a cancelled call is interrupted with its
// context's error instead).
var (
	errBudget = errors.New("budget exhausted")
	errWaited = errors.New("wall-clock limit reached")
)

// interruptError describes an interrupted call: a timeout, or a cancellation whose Kind is the
// context's error. It carries no position: where the interrupt landed depends on timing, and
// nothing that depends on timing may reach a trace.
func interruptError(file string, reason any, limits Limits) *Error {
	if mem, ok := reason.(*memoryError); ok {
		return &Error{File: file, Line: mem.line, Column: mem.column, Message: mem.message, Kind: ErrMemory}
	}
	if reason == errWaited {
		return &Error{File: file, Message: fmt.Sprintf("script waited past its %v wall-clock limit (a host function did not return)", limits.WallTimeout), Kind: ErrTimeout, WallClock: true}
	}
	if err, ok := reason.(error); ok && err != errBudget {
		if errors.Is(err, errRegexpLimit) || errors.Is(err, errRegexpWaited) {
			return &Error{File: file, Message: err.Error(), Kind: ErrTimeout, WallClock: errors.Is(err, errRegexpWaited)}
		}
		return &Error{File: file, Message: "script call cancelled: " + err.Error(), Kind: err}
	}
	return &Error{File: file, Message: fmt.Sprintf("script ran past its %v CPU budget", limits.CallTimeout), Kind: ErrTimeout}
}

// worker is one sandboxed runtime and the state of the call it is serving. A worker serves one
// call at a time, on its caller's goroutine; its watchdog and the caller's context interrupt the
// call from other goroutines (interrupt), which is all they may touch.
type worker struct {
	vm       *goja.Runtime
	limits   Limits
	watchdog *time.Timer // interrupts the call once its budget is used up

	// Set up once, by newWorker.
	defineTool, hostObject, visit, defaultOrder goja.Value
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
	parser  fastjson.Parser   // reads the arguments; its buffers are reused across calls
	result  string
	err     error

	// What the watchdog and the caller's context share with the call, under mu.
	mu         sync.Mutex
	running    bool
	clock      threadClock             // the CPU clock of the thread the running call is locked to
	cpuStart   int64                   // that clock when the call began
	deadline   time.Time               // when the running call's wall-clock backstop ends
	caller     context.Context         // the running call's context
	reason     error                   // why the call was interrupted; nil while it runs freely
	hostCtx    context.Context         // what blocking host functions observe; made on first use
	cancelHost context.CancelCauseFunc // cancels hostCtx

	// stop is set once the call is interrupted: the sandbox's own built-ins check it and surface
	// the interrupt (goja checks it only between instructions).
	stop atomic.Bool
	// broken is set when execute recovered a Go panic: the runtime's state is unknown.
	broken bool

	// used is what the call's built-ins have charged to its memory budget (memory.go).
	used int64
	// seq numbers the worker's calls (under mu): the heap watch, which finds running calls by
	// their number in watch, interrupts only the call it measured.
	seq   uint64
	watch *callWatch
}

// begin prepares w for one call.
func (w *worker) begin(s *Script, args json.RawMessage, host Host, env CallEnv, mode callMode) {
	w.mode, w.script, w.args, w.host, w.env = mode, s, args, host, env
	w.defs, w.def, w.defAt, w.again = 0, nil, position{}, position{}
	w.result, w.err, w.used = "", nil, 0
}

// end drops the call's references so a pooled worker keeps no agent's data alive.
func (w *worker) end() {
	w.script, w.args, w.host, w.env, w.def = nil, nil, nil, CallEnv{}, nil
	w.loaded, w.result, w.err, w.tracker = definition{}, "", nil, nil
	clear(w.nested)
	w.nested = w.nested[:0]
}

// call serves the call begun with begin, on the caller's goroutine, under the budget and ctx.
// Running inline rather than on a goroutine of the runtime's own saves two goroutine hand-offs
// per call (about half of a small call's cost; see docs/decisions.md); what an inline call gives
// up, returning while a built-in is still stuck, the guards take back by bounding every
// built-in step.
func (w *worker) call(ctx context.Context) (string, error) {
	// The call keeps its thread, so that thread's CPU clock measures the call and nothing else.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	clock := currentThreadClock()
	cpuStart, _ := clock.elapsed()
	now := time.Now()
	w.mu.Lock()
	w.running, w.deadline, w.caller, w.reason = true, now.Add(w.limits.WallTimeout), ctx, nil
	w.clock, w.cpuStart = clock, cpuStart
	w.seq++
	w.watch.active.Store(w.seq)
	w.watch.inHost.Store(0)
	w.mu.Unlock()
	theHeapWatch.callStarted()
	w.watchdog.Reset(w.limits.CallTimeout)
	var stopWatching func() bool
	if ctx.Done() != nil {
		stopWatching = context.AfterFunc(ctx, func() { w.interrupt(ctx, context.Cause(ctx)) })
	}

	w.execute()

	w.watch.active.Store(0)
	w.watchdog.Stop()
	if stopWatching != nil {
		stopWatching()
	}
	w.mu.Lock()
	w.running, w.caller = false, nil
	cancelHost := w.cancelHost
	w.hostCtx, w.cancelHost = nil, nil
	w.mu.Unlock()
	if cancelHost != nil {
		cancelHost(nil)
	}
	// An interrupt that landed after the script's last instruction must not reach the next call.
	w.vm.ClearInterrupt()
	w.stop.Store(false)
	return w.result, w.err
}

// expire is the watchdog. It interrupts the running call once the call's thread has used its
// CPU budget, or once the call's wall-clock backstop has passed; otherwise it sleeps again until
// the earliest moment either could be reached (the thread cannot use CPU time faster than wall
// time passes). A stale firing, armed for a call that has since ended, finds nothing running or
// a later call with its budget ahead.
func (w *worker) expire() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.running || w.reason != nil {
		return
	}
	used := time.Duration(0)
	if now, ok := w.clock.elapsed(); ok {
		used = time.Duration(now - w.cpuStart)
	}
	if used >= w.limits.CallTimeout {
		w.stopLocked(errBudget)
		return
	}
	waitLeft := time.Until(w.deadline)
	if waitLeft <= 0 {
		w.stopLocked(errWaited)
		return
	}
	w.watchdog.Reset(max(min(w.limits.CallTimeout-used, waitLeft), time.Millisecond))
}

// interrupt stops the running call for reason (the first reason wins): the VM stops at its next
// instruction, the guards at their next checkpoint, and blocking host functions see their
// context cancelled. from is the context whose cancellation this is, nil for the watchdog; a
// cancellation of another call's context is ignored.
func (w *worker) interrupt(from context.Context, reason error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if from != nil && from != w.caller {
		return
	}
	w.stopLocked(reason)
}

// stopLocked is interrupt's work, under w.mu.
func (w *worker) stopLocked(reason error) {
	if !w.running || w.reason != nil {
		return
	}
	w.reason = reason
	w.stop.Store(true)
	w.vm.Interrupt(reason)
	if w.cancelHost != nil {
		w.cancelHost(reason)
	}
}

// interruptCall is interrupt for the heap watch: it stops call seq only, so a sample taken
// during one call never stops the next call the worker serves.
func (w *worker) interruptCall(seq uint64, reason error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.seq == seq {
		w.stopLocked(reason)
	}
}

// budgetKey is the context key under which hostContext carries its worker: a script that
// call_tool runs under that context (on the same goroutine, while its caller waits) charges
// the caller's memory budget, so one tool-lane call and every script it calls share one
// max_memory, the amount the call reserved of the run's max_total_memory (docs/scripting.md,
// "Run-wide memory").
type budgetKey struct{}

// hostContext is the context a blocking host function (shell, HTTP, call_tool) runs under: the
// caller's, cancelled as well when the call is interrupted, and carrying the worker's memory
// budget for a script called through call_tool (budgetKey). It is made on the first use in a call.
func (w *worker) hostContext() context.Context {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.hostCtx == nil {
		var cancelable context.Context
		cancelable, w.cancelHost = context.WithCancelCause(w.caller)
		w.hostCtx = context.WithValue(cancelable, budgetKey{}, w)
		if w.reason != nil {
			w.cancelHost(w.reason)
		}
	}
	return w.hostCtx
}

// execute serves the call. A Go panic out of goja (which a hostile script should never cause,
// but the host must survive) fails the call and retires the runtime.
func (w *worker) execute() {
	defer func() {
		if p := recover(); p != nil {
			w.broken, w.result = true, ""
			w.err = &Error{File: w.script.File, Kind: ErrRuntime, Message: fmt.Sprintf("the script engine failed: %v", p)}
		}
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
		return interruptError(file, interrupted.Value(), w.limits)
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
