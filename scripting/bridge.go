package scripting

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/dop251/goja"
)

// newHostObject builds the host object run receives: the host functions in camelCase, each
// bound to whatever Host the worker's current call has. It is built once per runtime and frozen
// by the lockdown, so a script can neither replace a function nor leave anything on it.
func (w *worker) newHostObject() goja.Value {
	host := w.vm.NewObject()
	methods := []struct {
		name   string
		length int
		fn     func(goja.FunctionCall) goja.Value
	}{
		{"readFile", 1, w.hostReadFile},
		{"writeFile", 2, w.hostWriteFile},
		{"listDir", 1, w.hostListDir},
		{"shell", 1, w.hostShell},
		{"httpGet", 2, w.hostHTTPGet},
		{"httpPost", 3, w.hostHTTPPost},
		{"env", 1, w.hostEnv},
		{"callTool", 2, w.hostCallTool},
		{"log", 1, w.hostLog},
	}
	for _, m := range methods {
		w.must(host.DefineDataProperty(m.name, w.native(m.name, m.length, m.fn), goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_TRUE))
	}
	return host
}

// reach returns the call's Host for host function fn, or throws when there is none to reach or
// the call has been interrupted (a script that catches the interrupt's error inside a guarded
// built-in must not reach the host after its budget).
func (w *worker) reach(fn string) Host {
	if w.stop.Load() {
		panic(w.jsError(w.errorCtor, fn+" is unavailable: the call has been stopped (out of time or memory)"))
	}
	if w.host == nil {
		panic(w.jsError(w.errorCtor, fn+" is unavailable: this call has no host"))
	}
	return w.host
}

// stringArg reads a string argument of a host function, throwing a TypeError for anything else
// and a RangeError over MaxStringBytes.
func (w *worker) stringArg(v goja.Value, fn, what string) string {
	s, ok := v.(goja.String)
	if !ok {
		panic(w.jsError(w.typeErrorCtor, fmt.Sprintf("%s: %s must be a string", fn, what)))
	}
	return w.capped(s, fn, what)
}

// capped converts a JS string crossing to the host, throwing a RangeError over MaxStringBytes.
func (w *worker) capped(s goja.String, fn, what string) string {
	limit := w.limits.MaxStringBytes
	if s.Length() > limit {
		panic(w.overCap(fn, what, s.Length(), "characters"))
	}
	out := s.String()
	if len(out) > limit {
		panic(w.overCap(fn, what, len(out), "bytes"))
	}
	return out
}

// overCap is the RangeError of a string over MaxStringBytes.
func (w *worker) overCap(fn, what string, n int, unit string) *goja.Object {
	return w.jsError(w.rangeErrorCtor, fmt.Sprintf("%s: %s is %d %s, over the %d-byte cap on strings",
		fn, what, n, unit, w.limits.MaxStringBytes))
}

// hostString hands a host function's result back to the script: an error becomes a thrown
// Error with the error's text; a string over MaxStringBytes a RangeError.
func (w *worker) hostString(fn, out string, err error) goja.Value {
	if err != nil {
		panic(w.jsError(w.errorCtor, err.Error()))
	}
	if len(out) > w.limits.MaxStringBytes {
		panic(w.overCap(fn, "the result", len(out), "bytes"))
	}
	w.chargeHostString(out, fn)
	return w.vm.ToValue(out)
}

// waiting marks the call as waiting in a blocking host function until the returned function is
// called: the heap watch gives a waiting call no share of what the rest of the host allocates.
func (w *worker) waiting() func() {
	w.watch.inHost.Add(1)
	return func() { w.watch.inHost.Add(-1) }
}

// hostReadFile is host.readFile(path).
func (w *worker) hostReadFile(call goja.FunctionCall) goja.Value {
	path := w.stringArg(call.Argument(0), "readFile", "path")
	out, err := w.reach("readFile").ReadFile(path)
	return w.hostString("readFile", out, err)
}

// hostWriteFile is host.writeFile(path, content).
func (w *worker) hostWriteFile(call goja.FunctionCall) goja.Value {
	path := w.stringArg(call.Argument(0), "writeFile", "path")
	content := w.stringArg(call.Argument(1), "writeFile", "content")
	out, err := w.reach("writeFile").WriteFile(path, content)
	return w.hostString("writeFile", out, err)
}

// hostListDir is host.listDir(path?): no path lists the workdir itself.
func (w *worker) hostListDir(call goja.FunctionCall) goja.Value {
	path := "."
	if arg := call.Argument(0); !goja.IsUndefined(arg) {
		path = w.stringArg(arg, "listDir", "path")
	}
	out, err := w.reach("listDir").ListDir(path)
	return w.hostString("listDir", out, err)
}

// hostShell is host.shell(command).
func (w *worker) hostShell(call goja.FunctionCall) goja.Value {
	command := w.stringArg(call.Argument(0), "shell", "command")
	done := w.waiting()
	out, err := w.reach("shell").Shell(w.hostContext(), command)
	done()
	return w.hostString("shell", out, err)
}

// hostEnv is host.env(name).
func (w *worker) hostEnv(call goja.FunctionCall) goja.Value {
	name := w.stringArg(call.Argument(0), "env", "name")
	out, err := w.reach("env").Env(name)
	return w.hostString("env", out, err)
}

// hostCallTool is host.callTool(name, args): args is an object (JSON-encoded here), a JSON
// string, or absent ({}).
func (w *worker) hostCallTool(call goja.FunctionCall) goja.Value {
	name := w.stringArg(call.Argument(0), "callTool", "name")
	args := "{}"
	switch arg := call.Argument(1).(type) {
	case goja.String:
		args = w.capped(arg, "callTool", "args")
	default:
		if !goja.IsUndefined(arg) {
			encoded, err := w.jsonStringify(goja.Undefined(), arg)
			w.must(err)
			text, ok := encoded.(goja.String)
			if !ok {
				panic(w.jsError(w.typeErrorCtor, "callTool: args must be an object or a JSON string"))
			}
			args = w.capped(text, "callTool", "args")
		}
	}
	done := w.waiting()
	out, err := w.reach("callTool").CallTool(w.hostContext(), name, json.RawMessage(args))
	done()
	return w.hostString("callTool", out, err)
}

// hostLog is host.log(message): any value, rendered like String(value).
func (w *worker) hostLog(call goja.FunctionCall) goja.Value {
	msg, ok := call.Argument(0).(goja.String)
	if !ok {
		text, err := w.stringOf(goja.Undefined(), call.Argument(0))
		w.must(err)
		msg = text.(goja.String)
	}
	message := w.capped(msg, "log", "message")
	w.reach("log").Log(message)
	return goja.Undefined()
}

// hostHTTPGet is host.httpGet(url, {headers}): a promise of {status, body, headers}. The request
// blocks the script (the promise is settled before it returns); a failed request rejects it.
func (w *worker) hostHTTPGet(call goja.FunctionCall) goja.Value {
	url := w.stringArg(call.Argument(0), "httpGet", "url")
	headers, _ := w.httpOptions(call.Argument(1), "httpGet")
	done := w.waiting()
	resp, err := w.reach("httpGet").HTTPGet(w.hostContext(), url, headers)
	done()
	return w.settled("httpGet", resp, err)
}

// hostHTTPPost is host.httpPost(url, body, {headers, contentType}): like httpGet. Without a
// contentType the Host gets "" and picks the type (a Content-Type header, or text).
func (w *worker) hostHTTPPost(call goja.FunctionCall) goja.Value {
	url := w.stringArg(call.Argument(0), "httpPost", "url")
	body := w.stringArg(call.Argument(1), "httpPost", "body")
	headers, contentType := w.httpOptions(call.Argument(2), "httpPost")
	done := w.waiting()
	resp, err := w.reach("httpPost").HTTPPost(w.hostContext(), url, contentType, body, headers)
	done()
	return w.settled("httpPost", resp, err)
}

// httpOptions reads {headers, contentType} (both optional; header values must be strings).
func (w *worker) httpOptions(v goja.Value, fn string) (map[string]string, string) {
	var contentType string
	if goja.IsUndefined(v) || goja.IsNull(v) {
		return nil, contentType
	}
	opts, ok := v.(*goja.Object)
	if !ok {
		panic(w.jsError(w.typeErrorCtor, fn+": options must be an object"))
	}
	if ct := opts.Get("contentType"); ct != nil && !goja.IsUndefined(ct) {
		contentType = w.stringArg(ct, fn, "contentType")
	}
	hv := opts.Get("headers")
	if hv == nil || goja.IsUndefined(hv) || goja.IsNull(hv) {
		return nil, contentType
	}
	hobj, ok := hv.(*goja.Object)
	if !ok {
		panic(w.jsError(w.typeErrorCtor, fn+": headers must be an object of strings"))
	}
	keys := hobj.Keys()
	headers := make(map[string]string, len(keys))
	for _, k := range keys {
		headers[k] = w.stringArg(hobj.Get(k), fn, "header "+k)
	}
	return headers, contentType
}

// settled returns a promise already resolved with the response object, or rejected with an
// Error carrying the host's error text.
func (w *worker) settled(fn string, resp HTTPResponse, err error) goja.Value {
	promise, resolve, reject := w.vm.NewPromise()
	if err != nil {
		w.must(reject(w.jsError(w.errorCtor, err.Error())))
	} else {
		w.must(resolve(w.responseObject(fn, resp)))
	}
	return w.vm.ToValue(promise)
}

// responseObject is {status, body, headers} with the headers' names in sorted order, so what a
// script sees (Object.keys) does not depend on map iteration.
func (w *worker) responseObject(fn string, resp HTTPResponse) *goja.Object {
	if len(resp.Body) > w.limits.MaxStringBytes {
		panic(w.overCap(fn, "the response body", len(resp.Body), "bytes"))
	}
	w.chargeHostString(resp.Body, fn)
	headers := w.vm.NewObject()
	names := make([]string, 0, len(resp.Headers))
	for name := range resp.Headers {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		w.must(headers.Set(name, resp.Headers[name]))
	}
	out := w.vm.NewObject()
	w.must(out.Set("status", resp.Status))
	w.must(out.Set("body", resp.Body))
	w.must(out.Set("headers", headers))
	return out
}
