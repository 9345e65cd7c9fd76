package scripting

import (
	"fmt"
	"reflect"
	"sync"
	"time"

	"github.com/dop251/goja"
)

// sandboxSource builds what every runtime needs before it is locked down: a few intrinsics Go
// cannot reach (the iterator prototypes whose next the guards wrap, a no-op JS function that
// surfaces a pending interrupt), and the lockdown itself, which
//
//   - removes code from strings: eval, and the Function, AsyncFunction and GeneratorFunction
//     constructors (the globals and every prototype's constructor, which now throw an EvalError;
//     instanceof Function still works);
//   - removes binary data (ArrayBuffer, DataView, the typed arrays): host functions speak
//     strings, and those constructors allocate lazily-zeroed memory no interrupt can stop;
//   - tames the "override mistake": a few inherited data properties scripts commonly assign on
//     their own objects (toString, constructor, valueOf; an Error's name and message) become
//     accessors whose setter defines an own property, so freezing the prototypes does not break
//     `this.name = "MyError"`;
//   - freezes the global object and everything reachable from it or from the extra roots (the
//     host object, defineTool, the iterator prototypes), so that nothing a call does to a built-in can
//     be seen by the next call served by the same runtime.
const sandboxSource = `({
  intrinsics: {
    arrayIterator: Object.getPrototypeOf([][Symbol.iterator]()),
    mapIterator: Object.getPrototypeOf(new Map()[Symbol.iterator]()),
    setIterator: Object.getPrototypeOf(new Set()[Symbol.iterator]()),
    stringIterator: Object.getPrototypeOf(""[Symbol.iterator]()),
    regexpStringIterator: Object.getPrototypeOf(/x/g[Symbol.matchAll]("")),
    mapSize: Object.getOwnPropertyDescriptor(Map.prototype, "size").get,
    setSize: Object.getOwnPropertyDescriptor(Set.prototype, "size").get,
    checkpoint: function () {},
  },
  lockdown: function (extraRoots) {
    "use strict";
    const g = globalThis;
    const { getPrototypeOf, getOwnPropertyDescriptor, defineProperty, freeze } = Object;
    const ownKeys = Reflect.ownKeys;

    delete g.eval;
    const functionPrototypes = [
      Function.prototype,
      getPrototypeOf(async function () {}),
      getPrototypeOf(function* () {}),
    ];
    for (let i = 0; i < functionPrototypes.length; i++) {
      const proto = functionPrototypes[i];
      const name = proto.constructor.name;
      const refuse = function () {
        throw new EvalError(name + " is disabled in script tools: code cannot be built from strings");
      };
      defineProperty(refuse, "name", { value: name });
      defineProperty(refuse, "prototype", { value: proto, writable: false });
      defineProperty(proto, "constructor", { value: refuse, writable: true, enumerable: false, configurable: true });
    }
    defineProperty(g, "Function", { value: functionPrototypes[0].constructor, writable: true, enumerable: false, configurable: true });

    const binary = ["ArrayBuffer", "SharedArrayBuffer", "DataView", "Int8Array", "Uint8Array",
      "Uint8ClampedArray", "Int16Array", "Uint16Array", "Int32Array", "Uint32Array", "Float16Array",
      "Float32Array", "Float64Array", "BigInt64Array", "BigUint64Array"];
    for (let i = 0; i < binary.length; i++) {
      delete g[binary[i]];
    }

    const tame = function (obj, key) {
      const d = getOwnPropertyDescriptor(obj, key);
      if (d === undefined || !("value" in d) || !d.configurable) {
        return;
      }
      const value = d.value;
      defineProperty(obj, key, {
        get: function () { return value; },
        set: function (v) {
          if (this === obj) {
            throw new TypeError("Cannot assign to read only property '" + String(key) + "' of a built-in");
          }
          defineProperty(this, key, { value: v, writable: true, enumerable: true, configurable: true });
        },
        enumerable: d.enumerable,
        configurable: false,
      });
    };
    tame(Object.prototype, "constructor");
    tame(Object.prototype, "toString");
    tame(Object.prototype, "valueOf");
    const errors = [Error, EvalError, RangeError, ReferenceError, SyntaxError, TypeError, URIError, AggregateError];
    for (let i = 0; i < errors.length; i++) {
      tame(errors[i].prototype, "constructor");
      tame(errors[i].prototype, "name");
      tame(errors[i].prototype, "message");
    }

    // Walked with index loops and a hand-made stack: the iterators' next and the array methods
    // are guarded by now, and this runs for every runtime.
    const todo = [g, async function () {}, function* () {}, (function* () {})()];
    let top = todo.length;
    for (let i = 0; i < extraRoots.length; i++) {
      todo[top++] = extraRoots[i];
    }
    const seen = new Set();
    while (top > 0) {
      const o = todo[--top];
      if ((typeof o !== "object" && typeof o !== "function") || o === null || seen.has(o)) {
        continue;
      }
      seen.add(o);
      freeze(o);
      todo[top++] = getPrototypeOf(o);
      const keys = ownKeys(o);
      for (let i = 0; i < keys.length; i++) {
        const d = getOwnPropertyDescriptor(o, keys[i]);
        if ("value" in d) {
          todo[top++] = d.value;
        } else {
          todo[top++] = d.get;
          todo[top++] = d.set;
        }
      }
    }
  },
})`

// sandboxName is the file name of the sandbox's own code in stacks; positions skip its frames.
const sandboxName = "<sandbox>"

// sandboxProgram is sandboxSource compiled once for every runtime of the process.
var sandboxProgram = sync.OnceValue(func() *goja.Program {
	return goja.MustCompile(sandboxName, sandboxSource, true)
})

// newWorker builds a sandboxed runtime: virtual clock and random source bound to the worker's
// current call, guarded built-ins, the host object and defineTool, then the lockdown. Building
// one costs milliseconds (see the package documentation), which is why runtimes are pooled.
func newWorker(limits Limits) *worker {
	vm := goja.New()
	w := &worker{vm: vm, limits: limits, frames: make([]goja.StackFrame, 0, 4)}
	w.watchdog = time.AfterFunc(time.Hour, w.expire)
	w.watchdog.Stop()
	vm.SetTimeSource(func() time.Time { return w.env.Now })
	vm.SetRandSource(w.random)

	sandbox, err := vm.RunProgram(sandboxProgram())
	if err != nil {
		panic(fmt.Sprintf("scripting: the sandbox does not load: %v", err)) // a bug in sandboxSource
	}
	parts := sandbox.(*goja.Object)
	intrinsics := parts.Get("intrinsics").(*goja.Object)
	global := vm.GlobalObject()
	w.errorCtor = global.Get("Error").(*goja.Object)
	w.rangeErrorCtor = global.Get("RangeError").(*goja.Object)
	w.typeErrorCtor = global.Get("TypeError").(*goja.Object)
	w.syntaxErrorCtor = global.Get("SyntaxError").(*goja.Object)
	w.stringOf = mustCallable(global.Get("String"))
	w.surface = mustCallable(intrinsics.Get("checkpoint"))

	w.visit = w.native("visit", 2, func(call goja.FunctionCall) goja.Value { return w.tracker.visit(call) })
	w.defaultOrder = w.native("compare", 2, w.compareAsStrings)
	w.installGuards(intrinsics)
	json := global.Get("JSON").(*goja.Object)
	w.jsonParse = mustCallable(json.Get("parse"))
	w.jsonStringify = mustCallable(json.Get("stringify"))
	w.start = mustCallable(w.native("start", 0, w.startCall))
	w.finish = mustCallable(w.native("finish", 1, w.finishCall))
	w.defineTool = w.native("defineTool", 1, w.defineToolCall)
	w.hostObject = w.newHostObject()

	lockdown := mustCallable(parts.Get("lockdown"))
	if _, err := lockdown(goja.Undefined(), vm.NewArray(w.defineTool, w.hostObject, w.defaultOrder, intrinsics)); err != nil {
		panic(fmt.Sprintf("scripting: the sandbox lockdown fails: %v", err)) // a bug in sandboxSource
	}
	vm.SetMaxCallStackSize(limits.MaxCallStack)
	w.watch = theHeapWatch.watch(w)
	return w
}

// mustCallable asserts that v is a function; the sandbox only asks for built-ins it defines.
func mustCallable(v goja.Value) goja.Callable {
	fn, ok := goja.AssertFunction(v)
	if !ok {
		panic("scripting: the sandbox expected a function") // a bug in the sandbox's setup
	}
	return fn
}

// native wraps a Go function as a JS function with a proper name and length (goja would name
// it after the Go symbol).
func (w *worker) native(name string, length int, f func(goja.FunctionCall) goja.Value) *goja.Object {
	fn := w.vm.ToValue(f).(*goja.Object)
	w.must(fn.DefineDataProperty("name", w.vm.ToValue(name), goja.FLAG_FALSE, goja.FLAG_TRUE, goja.FLAG_FALSE))
	w.must(fn.DefineDataProperty("length", w.vm.ToValue(length), goja.FLAG_FALSE, goja.FLAG_TRUE, goja.FLAG_FALSE))
	return fn
}

// must rethrows a JS error met while the sandbox manipulates objects (a frozen object, a throwing
// getter) into the running script.
func (w *worker) must(err error) {
	if err != nil {
		panic(err)
	}
}

// random is the runtime's Math.random: the call's seeded source, never a global one.
func (w *worker) random() float64 {
	if w.env.Rand == nil {
		panic(w.jsError(w.typeErrorCtor, "Math.random is unavailable: the call has no random source"))
	}
	return w.env.Rand()
}

// jsError builds an error object of the given constructor, to be thrown with panic from a
// native function.
func (w *worker) jsError(ctor *goja.Object, message string) *goja.Object {
	obj, err := w.vm.New(ctor, w.vm.ToValue(message))
	w.must(err)
	return obj
}

// checkpoint surfaces a pending interrupt from inside a native loop: goja only checks for
// interrupts between instructions, so the sandbox's own built-ins call this and, once the
// supervisor has interrupted the call, enter a JS function to let the interrupt fire.
func (w *worker) checkpoint() {
	if !w.stop.Load() {
		return
	}
	if _, err := w.surface(goja.Undefined()); err != nil {
		panic(err)
	}
}

// defineToolCall is defineTool: it records the definition object and where it was given. The
// checks come after the top level has run (startCall), so a script cannot catch them.
func (w *worker) defineToolCall(call goja.FunctionCall) goja.Value {
	w.defs++
	switch w.defs {
	case 1:
		w.def, _ = call.Argument(0).(*goja.Object)
		if w.mode == modeLoad {
			w.defAt = w.callerPosition()
		}
	case 2:
		w.again = w.callerPosition()
	}
	return goja.Undefined()
}

// callerPosition is where in the script the running native function was called from; the start
// of the file when no script is running (the runtime's own set-up, which a tiny memory budget
// can already exceed).
func (w *worker) callerPosition() position {
	if w.script == nil {
		return position{1, 1}
	}
	w.frames = w.vm.CaptureCallStack(4, w.frames[:0])
	return scriptPosition(w.script.File, w.frames)
}

// startCall is the first entry of a call: it runs the file's top level, checks that it defined
// a tool exactly once, and then either reads the definition (load) or calls run with the
// arguments and the host object (run), returning what run returned.
func (w *worker) startCall(goja.FunctionCall) goja.Value {
	file := w.script.File
	wrapper, err := w.vm.RunProgram(w.script.program)
	w.must(err)
	enter := mustCallable(wrapper)
	_, err = enter(goja.Undefined(), w.defineTool)
	w.must(err)
	switch {
	case w.defs == 0:
		w.err = newError(file, position{1, 1}, ErrDefinition, "the file never calls defineTool({name, description, parameters, run})")
	case w.defs > 1:
		w.err = newError(file, w.again, ErrDefinition, "defineTool is called more than once (a file defines exactly one tool)")
	case w.def == nil:
		w.err = newError(file, w.definedAt(""), ErrDefinition, "defineTool takes one object: {name, description, parameters, run}")
	}
	if w.err != nil {
		return goja.Undefined()
	}
	if w.mode == modeLoad {
		w.readDefinition()
		return goja.Undefined()
	}
	run, ok := goja.AssertFunction(w.def.Get("run"))
	if !ok {
		w.err = newError(file, w.definedAt("run"), ErrDefinition, "run must be a function")
		return goja.Undefined()
	}
	value, err := run(w.def, w.argumentsValue(), w.hostObject)
	w.must(err)
	return value
}

// definedAt is where the definition's property is written, or else where defineTool is called
// (recorded by this load, or by Compile's).
func (w *worker) definedAt(property string) position {
	call := w.defAt
	if w.mode != modeLoad {
		call = w.script.defined
	}
	return w.script.at(property, call)
}

// readDefinition reads name, description and parameters (encoded with JSON.stringify) off the
// definition object and checks their JavaScript types; checkDefinition checks the rest in Go.
func (w *worker) readDefinition() {
	file, at := w.script.File, w.defAt
	name, ok := w.def.Get("name").(goja.String)
	if !ok {
		w.err = newError(file, w.definedAt("name"), ErrDefinition, "name must be a string")
		return
	}
	description, ok := w.def.Get("description").(goja.String)
	if !ok {
		w.err = newError(file, w.definedAt("description"), ErrDefinition, "description must be a non-empty string")
		return
	}
	params, ok := w.def.Get("parameters").(*goja.Object)
	if !ok || params.ClassName() == "Array" || params.ClassName() == "Function" {
		w.err = newError(file, w.definedAt("parameters"), ErrDefinition, "parameters must be a JSON Schema object")
		return
	}
	if _, ok := goja.AssertFunction(w.def.Get("run")); !ok {
		w.err = newError(file, w.definedAt("run"), ErrDefinition, "run must be a function")
		return
	}
	encoded, err := w.jsonStringify(goja.Undefined(), params)
	w.must(err)
	w.loaded = definition{name: name.String(), description: description.String(), parameters: encoded.String(), at: at}
}

// finishCall is the second entry of a call: by now goja has drained its job queue, so a promise
// run returned has settled (or never will). It rethrows a rejection (keeping the error's stack
// for its position) and converts the value into the result.
func (w *worker) finishCall(call goja.FunctionCall) goja.Value {
	value, pending := settled(call.Argument(0))
	if pending {
		w.err = newError(w.script.File, position{}, ErrRuntime,
			"run returned a promise that never settled (it awaits something no host function resolves)")
		return goja.Undefined()
	}
	w.result, w.err = w.resultText(value)
	return goja.Undefined()
}

// settled unwraps what an entry returned once goja has drained its job queue: a promise's value
// when it fulfilled (a rejection is rethrown, keeping the error's stack for its position),
// pending when it never settled, any other value as it is.
func settled(value goja.Value) (goja.Value, bool) {
	obj, ok := value.(*goja.Object)
	if !ok || obj.ExportType() != promiseType {
		return value, false
	}
	promise := obj.Export().(*goja.Promise)
	switch promise.State() {
	case goja.PromiseStateRejected:
		panic(promise.Result())
	case goja.PromiseStatePending:
		return nil, true
	}
	return promise.Result(), false
}

// promiseType is what ExportType says of a promise (cheap, unlike Export of an arbitrary object).
var promiseType = reflect.TypeFor[*goja.Promise]()

// resultText converts run's value into the call's result: a string as is, undefined (or what
// JSON cannot encode) as "", anything else JSON.stringify'd; over MaxResultBytes is ErrTooLarge.
func (w *worker) resultText(value goja.Value) (string, error) {
	if goja.IsUndefined(value) {
		return "", nil
	}
	text, ok := value.(goja.String)
	if !ok {
		encoded, err := w.jsonStringify(goja.Undefined(), value)
		w.must(err)
		if text, ok = encoded.(goja.String); !ok {
			return "", nil
		}
	}
	limit := w.limits.MaxResultBytes
	if text.Length() > limit { // a UTF-16 unit is at least one UTF-8 byte
		return "", w.tooLarge(text.Length(), "characters")
	}
	s := text.String()
	if len(s) > limit {
		return "", w.tooLarge(len(s), "bytes")
	}
	return s, nil
}

// tooLarge reports a result over MaxResultBytes.
func (w *worker) tooLarge(n int, unit string) error {
	return newError(w.script.File, position{}, ErrTooLarge,
		fmt.Sprintf("the result is %d %s, over the %d-byte cap", n, unit, w.limits.MaxResultBytes))
}
