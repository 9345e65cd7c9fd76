package scripting

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/dop251/goja"

	"github.com/warrenhq/warren/models"
)

// A policy file is wrapped like a tool file (see wrapperHeader), with definePolicy as the
// wrapper's parameter. The header is longer than wrapperHeader, so positions on line 1 that
// scriptPosition computes are shifted back by policyShift more.
const (
	policyHeader = "(function(definePolicy,params){"
	policyShift  = len(policyHeader) - len(wrapperHeader)
)

// Sentinel errors of policies, besides the kinds any script call may fail with.
var (
	// ErrPolicyDefinition: the file does not call definePolicy exactly once with a function.
	ErrPolicyDefinition = errors.New("invalid policy definition")
	// ErrPolicyReply: decide returned something that is not a reply ({text, calls}, or nothing).
	ErrPolicyReply = errors.New("invalid policy reply")
)

const (
	// PolicyWindow is how many of the conversation's latest messages obs.messages holds: the last
	// few turns and their results, at a cost that does not grow with the conversation.
	PolicyWindow = 8
	// MaxPolicyCalls bounds the tool calls one decide may return, so a runaway policy cannot hand
	// the host millions of calls in one turn.
	MaxPolicyCalls = 256
	// DefaultPolicyTimeout is a turn's CPU-time budget: policies run inline, on the world's
	// goroutine, so a turn must be quick (a small decide takes microseconds).
	DefaultPolicyTimeout = 100 * time.Millisecond
)

// DefaultPolicyLimits are DefaultLimits with the budget of a turn set to DefaultPolicyTimeout.
// MaxArgBytes caps each call's arguments and MaxResultBytes the reply's text.
func DefaultPolicyLimits() Limits {
	l := DefaultLimits()
	l.CallTimeout = DefaultPolicyTimeout
	return l
}

// policyEpoch is what Date reads in a policy: a View carries no time, so a policy has no clock
// (obs.turn is its sense of time), and a fixed instant keeps its decisions replayable.
var policyEpoch = time.Unix(0, 0).UTC()

// Policy is the JavaScript model back end: a file that calls definePolicy(function decide(obs)
// {...}) once, whose decide receives the agent's observation and returns its reply. It is
// compiled once and shared by every agent of the groups that run it; decide runs inline, on
// the world's goroutine, within a CPU-time budget (Limits.CallTimeout). No state survives a turn: each turn runs
// the file's top level afresh in a frozen runtime, so agents can only influence one another
// through tools, as they would with any model. Per-agent memory is the conversation (and the
// files the agent writes); Policy keeps nothing in models.State.
//
// A Policy is safe for concurrent use: each concurrent turn takes a runtime of its own from a
// small pool (inline use needs exactly one).
type Policy struct {
	id, file string
	// source is the path the policy was read from (the js kind sets it), "" when it was compiled
	// from bytes in hand.
	source string
	pool   *policyPool
}

var _ models.Model = (*Policy)(nil)

// CompilePolicy compiles a policy file once and checks its definition by running its top level
// (with Date at the Unix epoch and Math.random returning 0). id is what ID reports and traces
// record (the scenario loader uses "js:<model key>"); file names the file in errors and
// positions. Unset limits take DefaultPolicyLimits. Problems are an *Error positioned in the
// file: ErrSyntax, ErrPolicyDefinition (no definePolicy call, a second one, an argument that is
// not a function), or the kind of a top level that fails (ErrRuntime, ErrTimeout,
// ErrStackOverflow).
func CompilePolicy(id, file string, src []byte, limits Limits) (*Policy, error) {
	return CompilePolicyParams(id, file, src, limits, nil)
}

// CompilePolicyParams is CompilePolicy for a scenario with parameters ([params], a sweep's
// --param): the policy's file sees them as the object params (params.peers), frozen, at its top
// level and in every turn, so a swept value reaches the code that decides. Values are
// strings, integers, floats and booleans.
func CompilePolicyParams(id, file string, src []byte, limits Limits, params map[string]any) (*Policy, error) {
	if at, ok := firstInvalidUTF8(src); !ok {
		return nil, newError(file, at, ErrSyntax, "the file is not valid UTF-8")
	}
	text := string(src)
	// As in Compile: the raw file must compile on its own, so it cannot close the wrapper early.
	if _, _, err := compile(file, text, 0); err != nil {
		return nil, err
	}
	_, program, err := compile(file, policyHeader+text+wrapperFooter, len(policyHeader))
	if err != nil {
		return nil, err
	}
	if limits.CallTimeout <= 0 {
		limits.CallTimeout = DefaultPolicyTimeout
	}
	limits = limits.withDefaults()
	code := &policyCode{script: &Script{File: file, program: program}, params: params}
	rt := newPolicyRuntime(code, limits)
	if err := rt.load(); err != nil {
		return nil, err
	}
	p := &Policy{id: id, file: file, pool: &policyPool{code: code, limits: limits}}
	p.pool.put(rt) // the loader's runtime serves the first turns: nothing of the load survives
	return p, nil
}

// ID implements models.Model: the id given to CompilePolicy, recorded in traces.
func (p *Policy) ID() string { return p.id }

// InputFiles lists the file the policy was read from, as opened (none when it was compiled from
// bytes in hand): the scenario's inputs include it, so that host run never writes an output over
// a policy its run reads.
func (p *Policy) InputFiles() []string {
	if p.source == "" {
		return nil
	}
	return []string{p.source}
}

// File is the file name given to CompilePolicy, as errors name it.
func (p *Policy) File() string { return p.file }

// Inline reports that a policy decides inside the dispatch system, on the world's goroutine
// (systems.InlineModel): a turn costs microseconds and is bounded by the policy's budget.
func (p *Policy) Inline() bool { return true }

// Close releases the policy's idle runtimes; later turns fail with ErrClosed. A Policy dropped
// without Close is reclaimed by the garbage collector like any value.
func (p *Policy) Close() { p.pool.close() }

// Turn implements models.Model: it runs decide(obs) for the agent of v and converts what decide
// returns into the reply: {text, calls: [{tool, args}]}; nothing, {} or no calls ends the stage.
// Math.random draws from a source seeded by two draws of v.Rand (so the agent's stream advances
// by exactly two per turn, and the runtime never touches v.Rand); without v.Rand it throws. A
// failure is an *Error positioned in the file (a runtime error, ErrPolicyReply at the
// definePolicy call), or ErrTimeout when the turn runs past its budget: the host ends the
// agent's stage with outcome error, and the world goes on.
//
// ctx stops the turn besides its budget: once ctx is done, decide is interrupted (goja's
// Interrupt, as for the budget) at its next instruction or guarded built-in step, and the turn
// fails with an *Error whose Kind is ctx's error (a turn asked for with ctx already done does
// not start). So a killed agent or a cancelled run never waits out a policy's budget.
func (p *Policy) Turn(ctx context.Context, _ *models.State, v *models.View) (models.Reply, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	if err := ctx.Err(); err != nil {
		return models.Reply{}, interruptError(p.file, err, p.pool.limits)
	}
	rt := p.pool.get()
	if rt == nil {
		return models.Reply{}, &Error{File: p.file, Message: "the policy is closed", Kind: ErrClosed}
	}
	rt.in.capture(v)
	env := CallEnv{Now: policyEpoch}
	if v.Rand != nil {
		rt.pcg.Seed(v.Rand.Uint64(), v.Rand.Uint64())
		env.Rand = rt.random
	}
	w := rt.w
	w.begin(rt.code.script, nil, nil, env, modeRun)
	_, err := w.call(ctx)
	if w.broken {
		// The runtime's state is unknown: it owns its copies of the turn's input and its own
		// random source, so dropping it here is all that is needed.
		return models.Reply{}, shiftLineOne(err)
	}
	reply := rt.reply
	rt.reply, rt.decide = models.Reply{}, nil
	rt.in.release()
	w.end()
	p.pool.put(rt)
	if err != nil {
		return models.Reply{}, shiftLineOne(err)
	}
	return reply, nil
}

// shiftLineOne corrects the column of a runtime error on the file's first line: scriptPosition
// unshifts by the tool wrapper's header, which is policyShift shorter than the policy's.
func shiftLineOne(err error) error {
	var e *Error
	if errors.As(err, &e) && e.Line == 1 && e.Column > policyShift &&
		(errors.Is(e.Kind, ErrRuntime) || errors.Is(e.Kind, ErrStackOverflow)) {
		e.Column -= policyShift
	}
	return err
}

// policyCode is a compiled policy file, shared by the runtimes of its pool: the file name and
// wrapped program the worker runs, and where the file calls definePolicy (reply errors point
// there).
type policyCode struct {
	script  *Script
	defined position
	// params are the scenario's parameters, the global params of every runtime (nil: none).
	params map[string]any
}

// policyPool holds a policy's idle runtimes. Nothing in it, nor in a runtime, references the
// Policy, so a dropped Policy's cleanup can stop them.
type policyPool struct {
	code   *policyCode // set once, read without the lock
	limits Limits

	mu     sync.Mutex
	idle   []*policyRuntime
	closed bool
}

// get takes an idle runtime or builds one; nil once the pool is closed.
func (p *policyPool) get() *policyRuntime {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	if n := len(p.idle); n > 0 {
		rt := p.idle[n-1]
		p.idle[n-1] = nil
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		return rt
	}
	p.mu.Unlock()
	return newPolicyRuntime(p.code, p.limits)
}

// put returns rt to the pool, keeping at most GOMAXPROCS idle runtimes (the garbage collector
// takes the rest).
func (p *policyPool) put(rt *policyRuntime) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.closed && len(p.idle) < runtime.GOMAXPROCS(0) {
		p.idle = append(p.idle, rt)
	}
}

// close releases the idle runtimes to the garbage collector and refuses later turns.
func (p *policyPool) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	clear(p.idle)
	p.idle = p.idle[:0]
}

// policyRuntime is one sandboxed worker serving a policy's turns: the worker's two entries are
// replaced by the policy's (run the top level and decide, then read the reply), and definePolicy
// is a frozen native function handed to the file's wrapper.
type policyRuntime struct {
	w      *worker
	code   *policyCode
	define goja.Value
	// params is the scenario's parameters as a frozen object, the wrapper's second argument.
	params goja.Value

	// The turn's random source, seeded from the agent's stream by Turn.
	pcg    rand.PCG
	random func() float64

	// The turn being served.
	in        turnInput
	reply     models.Reply
	defs      int           // definePolicy calls so far
	decide    goja.Callable // the first call's function, if it is one
	definedAt position      // the first definePolicy call (load)
	again     position      // the second definePolicy call, if any
}

// newPolicyRuntime builds a sandboxed runtime for code (see newWorker).
func newPolicyRuntime(code *policyCode, limits Limits) *policyRuntime {
	w := newWorker(limits)
	rt := &policyRuntime{w: w, code: code}
	rt.random = rand.New(&rt.pcg).Float64
	w.start = mustCallable(w.native("start", 0, rt.startTurn))
	w.finish = mustCallable(w.native("finish", 1, rt.finishTurn))
	define := w.native("definePolicy", 1, rt.definePolicy)
	freeze := mustCallable(w.vm.GlobalObject().Get("Object").(*goja.Object).Get("freeze"))
	if _, err := freeze(goja.Undefined(), define); err != nil {
		panic(fmt.Sprintf("scripting: definePolicy cannot be frozen: %v", err)) // a bug in the sandbox
	}
	rt.define = define
	params := w.vm.NewObject()
	for _, k := range slices.Sorted(maps.Keys(code.params)) {
		_ = params.Set(k, w.vm.ToValue(code.params[k])) // scalars: nothing of the host's is shared
	}
	if _, err := freeze(goja.Undefined(), params); err != nil {
		panic(fmt.Sprintf("scripting: params cannot be frozen: %v", err)) // a bug in the sandbox
	}
	rt.params = params
	return rt
}

// load runs the file's top level once (Compile's check) and records where definePolicy is called.
func (rt *policyRuntime) load() error {
	rt.w.begin(rt.code.script, nil, nil, loaderEnv(), modeLoad)
	_, err := rt.w.call(context.Background())
	if err != nil {
		return shiftLineOne(err)
	}
	rt.code.defined = rt.definedAt
	rt.w.end()
	return nil
}

// callerPosition is where the file called the running native function, on the file's own
// columns.
func (rt *policyRuntime) callerPosition() position {
	p := rt.w.callerPosition()
	if p.line == 1 && p.column > policyShift {
		p.column -= policyShift
	}
	return p
}

// definePolicy records the function the file defines; startTurn checks the calls once the top
// level has run, so a script cannot catch the error.
func (rt *policyRuntime) definePolicy(call goja.FunctionCall) goja.Value {
	rt.defs++
	switch rt.defs {
	case 1:
		rt.decide, _ = goja.AssertFunction(call.Argument(0))
		if rt.w.mode == modeLoad {
			rt.definedAt = rt.callerPosition()
		}
	case 2:
		rt.again = rt.callerPosition()
	}
	return goja.Undefined()
}

// startTurn is the first entry of a turn: it runs the file's top level, checks that it defined
// a policy exactly once, and (unless loading) calls decide with the observation.
func (rt *policyRuntime) startTurn(goja.FunctionCall) goja.Value {
	w := rt.w
	rt.defs, rt.decide = 0, nil
	wrapper, err := w.vm.RunProgram(rt.code.script.program)
	w.must(err)
	_, err = mustCallable(wrapper)(goja.Undefined(), rt.define, rt.params)
	w.must(err)
	at := rt.definedAt
	if w.mode != modeLoad {
		at = rt.code.defined
	}
	file := rt.code.script.File
	switch {
	case rt.defs == 0:
		w.err = newError(file, position{1, 1}, ErrPolicyDefinition, "the file never calls definePolicy(function decide(obs) {...})")
	case rt.defs > 1:
		w.err = newError(file, rt.again, ErrPolicyDefinition, "definePolicy is called more than once (a file defines exactly one policy)")
	case rt.decide == nil:
		w.err = newError(file, at, ErrPolicyDefinition, "definePolicy takes one function: definePolicy(function decide(obs) {...})")
	}
	if w.err != nil || w.mode == modeLoad {
		return goja.Undefined()
	}
	value, err := rt.decide(goja.Undefined(), rt.observation())
	w.must(err)
	return value
}

// finishTurn is the second entry: by now an async decide's promise has settled. It reads the
// reply, or rethrows a rejection.
func (rt *policyRuntime) finishTurn(call goja.FunctionCall) goja.Value {
	value, pending := settled(call.Argument(0))
	if pending {
		rt.w.err = rt.replyError("decide returned a promise that never settled")
		return goja.Undefined()
	}
	rt.reply, rt.w.err = rt.readReply(value)
	return goja.Undefined()
}

// replyError is an ErrPolicyReply positioned at the definePolicy call.
func (rt *policyRuntime) replyError(message string) *Error {
	return newError(rt.code.script.File, rt.code.defined, ErrPolicyReply, message)
}
