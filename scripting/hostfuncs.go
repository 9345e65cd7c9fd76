package scripting

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"unicode/utf8"

	"github.com/warrenhq/warren/tools"
)

// Names of the host functions, as Layer 3 ([tool_script_permissions]), FuncsConfig.Permit and the
// trace spell them. Every one but log is gated: Permit is asked before it runs.
const (
	HostFnReadFile  = "read_file"
	HostFnWriteFile = "write_file"
	HostFnListDir   = "list_dir"
	HostFnShell     = "shell"
	HostFnHTTPGet   = "http_get"
	HostFnHTTPPost  = "http_post"
	HostFnEnv       = "env"
	HostFnCallTool  = "call_tool"
	// HostFnLog is the Fn of a log line in Notes. log is not gated: it writes only into the calling
	// agent's own trace, and its volume is capped instead.
	HostFnLog = "log"
)

// Defaults of FuncsConfig's limits, applied where the config leaves a limit at zero (or negative).
const (
	// DefaultMaxStringBytes caps each string a host function takes or returns, and the bytes of
	// log lines one script call may write: large enough for any file the built-in tools return,
	// small enough that one runaway call cannot take the host's memory.
	DefaultMaxStringBytes = 4 << 20
	// DefaultMaxHostCalls caps the host function calls (and, separately, the log lines) of one
	// script call. A script legitimately needs a handful; thousands mean a loop gone wrong, and
	// every call is a trace entry.
	DefaultMaxHostCalls = 10_000
)

// summaryBytes caps the argument summary a HostCall records: enough to recognise a path, URL or
// command in the trace without copying a large argument into it.
const summaryBytes = 200

var (
	// ErrNoSandbox refuses shell on a host that cannot run commands in the agent's sandbox (no
	// FuncsConfig.Shell). Its message is the whole refusal the script sees.
	ErrNoSandbox = errors.New("shell needs the agent's sandbox, and this call has none (the agent has no workdir, or the tool was called outside an agent)")
	// ErrNoCallTool refuses call_tool on a host that gave the script no way to call tools (no
	// FuncsConfig.CallTool). Its message is the whole refusal the script sees.
	ErrNoCallTool = errors.New("this host does not let scripts call tools")
	// ErrEnvNotAllowed refuses env for a variable outside the host config's allow-list.
	ErrEnvNotAllowed = errors.New("environment variable not allowed")
	// ErrStringTooLarge refuses a host function call whose argument or result is longer than
	// FuncsConfig.MaxStringBytes.
	ErrStringTooLarge = errors.New("string too large")
	// ErrTooManyHostCalls refuses every host function call of a script call past
	// FuncsConfig.MaxHostCalls.
	ErrTooManyHostCalls = errors.New("too many host function calls")
)

// FuncsConfig is what one script call's host functions need from the host: the agent's context,
// Layer 3, and the capabilities (HTTP, environment, tools, shell) the host config grants scripts.
type FuncsConfig struct {
	// Tool is the script tool's name, for messages.
	Tool string
	// Exec is the calling agent's context. The file functions run the built-in tools
	// (tools.ReadFile, WriteFile, ListDir) through it, so confinement to Workdir (os.Root), the
	// write budget (Writes) and the result and error texts are exactly the built-ins'. nil behaves
	// like a bare context: no workdir.
	Exec *tools.ExecContext
	// Permit is Layer 3: called with the function's name (HostFn*) before each gated host
	// function runs; a non-nil error refuses the call with exactly that error. nil allows all.
	Permit func(fn string) error
	// HTTP configures http_get and http_post.
	HTTP HTTPConfig
	// Env holds the variables the script may read, already filtered by the host's allow-list.
	Env map[string]string
	// CallTool runs another tool for the agent through the full gate, under the script call's
	// context. nil refuses call_tool with ErrNoCallTool.
	CallTool func(ctx context.Context, name string, args json.RawMessage) (string, error)
	// Shell runs a command in the agent's sandbox, under the script call's context. nil refuses
	// shell with ErrNoSandbox.
	Shell func(ctx context.Context, command string) (string, error)
	// MaxStringBytes caps each argument and result of a host function, and the total bytes of log
	// lines. 0 means DefaultMaxStringBytes.
	MaxStringBytes int
	// MaxHostCalls caps the gated host function calls of one script call, and separately its log
	// lines. 0 means DefaultMaxHostCalls.
	MaxHostCalls int
}

// HostCall is one host function call a script made, as the trace records it.
type HostCall struct {
	// Fn is the function's name (HostFn*).
	Fn string
	// Arg is a short summary of the argument: the path, the URL without credentials or query,
	// the command, the variable or tool name. At most 200 bytes.
	Arg string
	// OK is true when the call succeeded.
	OK bool
	// Err says why it failed. OK false with an empty Err is a call still in flight when the
	// record was read (a script interrupted while it awaited an HTTP request).
	Err string
}

// Funcs are the host functions of one script call, for one agent: built per call from its
// context, so the permissions, workdir and budget are the agent's own and the record (Calls,
// Logs) is the call's. Funcs is safe for concurrent use: an async script may have HTTP requests in
// flight on other goroutines while it logs.
type Funcs struct {
	cfg    FuncsConfig
	client http.Client

	mu sync.Mutex
	// notes are the log lines and host calls in the order the script made them; a host call's
	// entry is written when it starts and completed when it ends, so the order is the script's,
	// not the order concurrent calls happened to finish in.
	notes []tools.Note
	// noteBuf backs notes for the first few entries: most script calls make only a few host
	// calls, and then recording them allocates nothing.
	noteBuf     [4]tools.Note
	hostCalls   int
	logLines    int
	logBytes    int
	logsDropped bool
}

var _ Host = (*Funcs)(nil)

// NewFuncs builds the host functions of one script call, applying the defaults of every limit
// cfg leaves at zero.
func NewFuncs(cfg FuncsConfig) *Funcs {
	if cfg.MaxStringBytes <= 0 {
		cfg.MaxStringBytes = DefaultMaxStringBytes
	}
	if cfg.MaxHostCalls <= 0 {
		cfg.MaxHostCalls = DefaultMaxHostCalls
	}
	cfg.HTTP = cfg.HTTP.withDefaults()
	f := &Funcs{cfg: cfg, client: newClient(cfg.HTTP)}
	f.notes = f.noteBuf[:0]
	return f
}

// Logs returns the script's log lines in order, for the host to write into the trace after the
// call. When the call logged past its caps, the last line says how the rest was dropped.
func (f *Funcs) Logs() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	logs := make([]string, 0, f.logLines)
	for _, n := range f.notes {
		if n.Fn == HostFnLog {
			logs = append(logs, n.Text)
		}
	}
	return logs
}

// Calls returns every host function call of the script in the order it made them, refused ones
// included, for the host to trace.
func (f *Funcs) Calls() []HostCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	calls := make([]HostCall, 0, len(f.notes)-f.logLines)
	for _, n := range f.notes {
		if n.Fn != HostFnLog {
			calls = append(calls, HostCall{Fn: n.Fn, Arg: n.Text, OK: n.OK, Err: n.Err})
		}
	}
	return calls
}

// Notes returns the log lines (Fn HostFnLog, OK true) and host calls interleaved in the order
// the script made them: what a script tool's tools.Result.Notes carries to the trace.
func (f *Funcs) Notes() []tools.Note {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]tools.Note(nil), f.notes...)
}

// ReadFile is read_file: the built-in read_file tool's result for path (the first
// tools.MaxReadBytes of the file, with its note when cut).
func (f *Funcs) ReadFile(path string) (string, error) {
	return invokeOutside(f, HostFnReadFile, summarize(path), path, func() (string, error) {
		if err := f.checkString(HostFnReadFile, "path", path); err != nil {
			return "", err
		}
		return f.runBuiltin(HostFnReadFile, tools.ReadFile{}, pathArgs{Path: path})
	})
}

// WriteFile is write_file: the built-in write_file tool, charged to the agent's write budget.
func (f *Funcs) WriteFile(path, content string) (string, error) {
	return invokeOutside(f, HostFnWriteFile, summarize(path), path+"\x00"+content, func() (string, error) {
		if err := f.checkString(HostFnWriteFile, "path", path); err != nil {
			return "", err
		}
		if err := f.checkString(HostFnWriteFile, "content", content); err != nil {
			return "", err
		}
		return f.runBuiltin(HostFnWriteFile, tools.WriteFile{}, writeArgs{Path: path, Content: content})
	})
}

// ListDir is list_dir: the built-in list_dir tool; an empty path lists the workdir.
func (f *Funcs) ListDir(path string) (string, error) {
	return invokeOutside(f, HostFnListDir, summarize(path), path, func() (string, error) {
		if err := f.checkString(HostFnListDir, "path", path); err != nil {
			return "", err
		}
		return f.runBuiltin(HostFnListDir, tools.ListDir{}, pathArgs{Path: path})
	})
}

// Shell is shell: the command run by FuncsConfig.Shell, or ErrNoSandbox without one.
func (f *Funcs) Shell(ctx context.Context, command string) (string, error) {
	return invokeOutside(f, HostFnShell, summarize(command), command, func() (string, error) {
		if f.cfg.Shell == nil {
			return "", ErrNoSandbox
		}
		if err := f.checkString(HostFnShell, "command", command); err != nil {
			return "", err
		}
		out, err := f.cfg.Shell(ctx, command)
		if err != nil {
			return "", err
		}
		return out, f.checkString(HostFnShell, "output", out)
	})
}

// Env is env: the variable's value when the host config's allow-list lets scripts read it,
// ErrEnvNotAllowed otherwise.
func (f *Funcs) Env(name string) (string, error) {
	return invokeOutside(f, HostFnEnv, summarize(name), name, func() (string, error) {
		if err := f.checkString(HostFnEnv, "name", name); err != nil {
			return "", err
		}
		value, ok := f.cfg.Env[name]
		if !ok {
			return "", fmt.Errorf("env: %q is not available to script tool %q: %w (the host config's allow-list decides which variables scripts may read)",
				summarize(name), f.cfg.Tool, ErrEnvNotAllowed)
		}
		return value, f.checkString(HostFnEnv, "value", value)
	})
}

// CallTool is call_tool: another tool run through FuncsConfig.CallTool (the full gate), or
// ErrNoCallTool without one.
func (f *Funcs) CallTool(ctx context.Context, name string, args json.RawMessage) (string, error) {
	return invoke(f, HostFnCallTool, summarize(name), func() (string, error) {
		if f.cfg.CallTool == nil {
			return "", ErrNoCallTool
		}
		if err := f.checkString(HostFnCallTool, "tool name", name); err != nil {
			return "", err
		}
		if len(args) > f.cfg.MaxStringBytes {
			return "", f.tooLarge(HostFnCallTool, "arguments", len(args))
		}
		out, err := f.cfg.CallTool(ctx, name, args)
		if err != nil {
			return "", err
		}
		return out, f.checkString(HostFnCallTool, "result", out)
	})
}

// Log is log: it keeps message for the trace. A call keeps at most MaxHostCalls lines and
// MaxStringBytes bytes of them; the first line past either cap is replaced by a note saying the
// rest was dropped, and later lines are dropped silently.
func (f *Funcs) Log(message string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.logsDropped {
		return
	}
	if f.logLines+1 > f.cfg.MaxHostCalls || f.logBytes+len(message) > f.cfg.MaxStringBytes {
		f.logsDropped = true
		message = fmt.Sprintf("[further log lines dropped: script tool %q may log at most %d lines and %d bytes per call]",
			f.cfg.Tool, f.cfg.MaxHostCalls, f.cfg.MaxStringBytes)
	}
	f.logLines++
	f.logBytes += len(message)
	f.notes = append(f.notes, tools.Note{Fn: HostFnLog, Text: message, OK: true})
}

// invoke runs one gated host function: it records the call, enforces the call cap, asks Permit,
// runs do, and completes the record with the outcome. A generic function rather than a method
// because methods cannot have type parameters.
func invoke[T any](f *Funcs, fn, arg string, do func() (T, error)) (T, error) {
	index, err := f.begin(fn, arg)
	if err == nil && f.cfg.Permit != nil {
		err = f.cfg.Permit(fn)
	}
	var out T
	if err == nil {
		out, err = do()
	}
	f.finish(index, err)
	if err != nil {
		var zero T
		return zero, err
	}
	return out, nil
}

// invokeOutside is invoke for a host function that reaches the world outside the run: when the
// call's ExecContext has an Outside (the run is recorded or replayed), do goes through it, keyed
// by request (the whole of what is asked), so a replay answers it from the recording. env is a
// secret: the recording keeps only a hash of its value.
func invokeOutside[T any](f *Funcs, fn, arg, request string, do func() (T, error)) (T, error) {
	return invoke(f, fn, arg, func() (T, error) {
		out, err := outside(f, fn, request, do)
		if err != nil && tools.IsRealTime(err) {
			// A limit measured in real time decided the answer (an HTTP timeout): the call's notes
			// say so, live and in a replay, where the recorded error carries the mark.
			f.mu.Lock()
			f.notes = append(f.notes, tools.RealTimeNote(fn+" timeout"))
			f.mu.Unlock()
		}
		return out, err
	})
}

// outside runs do through the call's tools.Outside, when it has one.
func outside[T any](f *Funcs, fn, request string, do func() (T, error)) (T, error) {
	{
		var o tools.Outside
		if f.cfg.Exec != nil {
			o = f.cfg.Exec.Outside
		}
		if o == nil {
			return do()
		}
		if secret, ok := any(do).(func() (string, error)); ok && fn == HostFnEnv {
			v, err := o.Secret(fn, request, secret)
			return any(v).(T), err
		}
		var out T
		err := o.Do(fn, request, &out, func() error {
			var err error
			out, err = do()
			return err
		})
		return out, err
	}
}

// realTimeError marks an error that a limit measured in real time decided (tools.IsRealTime).
type realTimeError struct{ error }

func (realTimeError) RealTime() bool  { return true }
func (e realTimeError) Unwrap() error { return e.error }

// begin records a host call and returns its index in notes, or -1 with ErrTooManyHostCalls past
// the cap. Only the first refused call past the cap is recorded, so the record stays bounded.
func (f *Funcs) begin(fn, arg string) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.hostCalls++
	if f.hostCalls > f.cfg.MaxHostCalls {
		err := fmt.Errorf("%s: %w: script tool %q may make at most %d host function calls per call",
			fn, ErrTooManyHostCalls, f.cfg.Tool, f.cfg.MaxHostCalls)
		if f.hostCalls == f.cfg.MaxHostCalls+1 {
			f.notes = append(f.notes, tools.Note{Fn: fn, Text: arg, Err: err.Error()})
		}
		return -1, err
	}
	f.notes = append(f.notes, tools.Note{Fn: fn, Text: arg})
	return len(f.notes) - 1, nil
}

// finish completes the record begin made (a no-op for index -1).
func (f *Funcs) finish(index int, err error) {
	if index < 0 {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if err != nil {
		f.notes[index].Err = err.Error()
		return
	}
	f.notes[index].OK = true
}

// pathArgs and writeArgs are the arguments of the built-in file tools.
type pathArgs struct {
	Path string `json:"path"`
}

type writeArgs struct {
	Path    string `json:"path"`
	Content string `json:"content"`
}

// runBuiltin runs a built-in tool with the agent's context and returns its text, checked against
// the string cap. A tool may report failure as an error Result instead of an error; both become
// the script's error, with the tool's own text.
func (f *Funcs) runBuiltin(fn string, tool tools.Tool, args any) (string, error) {
	raw, err := json.Marshal(args)
	if err != nil {
		return "", fmt.Errorf("%s: cannot encode the arguments: %w", fn, err)
	}
	res, err := tool.Execute(f.cfg.Exec, raw)
	if err != nil {
		return "", err
	}
	if res.IsError {
		return "", errors.New(res.Content)
	}
	return res.Content, f.checkString(fn, "result", res.Content)
}

// checkString refuses a string longer than the cap; what names it in the message.
func (f *Funcs) checkString(fn, what, s string) error {
	if len(s) > f.cfg.MaxStringBytes {
		return f.tooLarge(fn, what, len(s))
	}
	return nil
}

// tooLarge is the ErrStringTooLarge refusal of an n-byte argument or result.
func (f *Funcs) tooLarge(fn, what string, n int) error {
	return fmt.Errorf("%s: %s too long: %d bytes, over the %d-byte cap on script strings: %w", fn, what, n, f.cfg.MaxStringBytes, ErrStringTooLarge)
}

// summarize shortens s to summaryBytes for a HostCall's Arg, cutting at a character boundary.
func summarize(s string) string {
	if len(s) <= summaryBytes {
		return s
	}
	cut := summaryBytes - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
