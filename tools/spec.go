package tools

import (
	"encoding/json"
	"errors"
)

// Spec is what a model is told about a tool: its name, what it does, and the JSON Schema of its
// arguments object. The registry compiles Parameters once, at registration, so a malformed schema
// is a load error rather than a surprise on the first call.
type Spec struct {
	// Name is the identifier the model calls the tool by. It must match ^[A-Za-z0-9_-]{1,64}$,
	// the rule the OpenAI-compatible and Anthropic function-calling APIs both enforce, so that a
	// registered tool can always be advertised to a live model.
	Name string `json:"name"`
	// Description is the text the model reads to decide when and how to call the tool.
	Description string `json:"description"`
	// Parameters is the JSON Schema (draft 2020-12 unless it names another "$schema") of the
	// arguments object. It must be self-contained: external "$ref"s are refused so that compiling
	// a tool's schema never reads a file or the network. Callers must not modify the bytes.
	Parameters json.RawMessage `json:"parameters"`
}

// Result is what a tool call hands back to the agent. Content is the text the agent reads; IsError
// tells the agent (and the trace) that the call failed, so the model can react to the failure
// instead of mistaking an error message for output.
type Result struct {
	// Content is the text the agent reads back.
	Content string
	// IsError is true for an error result: the agent is told the call failed.
	IsError bool
	// Notes are what the call did that the trace should show besides its result, in order: a
	// script tool's log lines and the host functions it called. The dispatcher writes them into
	// the trace on the world's goroutine when it files the result; most tools have none.
	Notes []Note
	// Detached is work the call started that outlives it (a background command): the host waits
	// for it at a tick fixed by the world, not by the wall clock, and puts its report into the
	// agent's inbox. nil for almost every call.
	Detached Detached
}

// Note is one thing a call did that the trace shows: a log line (Fn "log") or one host function
// a script called (Fn its name, Text a short summary of its argument, OK whether it succeeded,
// Err why not).
type Note struct {
	Fn   string
	Text string
	OK   bool
	Err  string
}

// NoteRealTime is the Fn of the note a call carries when a limit measured in real time decided
// its result (an MCP call_timeout, a command's timeout, a script left waiting past its wall-clock
// backstop): the trace is then a record of the machine as much as of the scenario, and says so.
// The summary counts them.
const NoteRealTime = "realtime_limit"

// RealTimeNote is the note of a real-time limit that fired; limit says which ("mcp call_timeout
// 30s").
func RealTimeNote(limit string) Note { return Note{Fn: NoteRealTime, Text: limit} }

// IsRealTime reports whether err says a limit measured in real time decided it (an error in its
// chain with a RealTime method that returns true): an HTTP timeout, a script's wall-clock backstop.
func IsRealTime(err error) bool {
	var rt interface{ RealTime() bool }
	return errors.As(err, &rt) && rt.RealTime()
}

// TextResult is a successful result carrying text. It exists so tools read the same way at every
// return site.
func TextResult(content string) Result { return Result{Content: content} }

// ErrorResult turns an execution or validation error into the error result the agent reads. The
// dispatcher uses it for every error a Tool or Handle returns, so the text an agent sees for a
// failure is exactly the error's message (documented per tool), never a Go-specific wrapper.
func ErrorResult(err error) Result {
	if err == nil {
		return Result{IsError: true, Content: "the tool failed without a reason"}
	}
	return Result{IsError: true, Content: err.Error()}
}

// Tool is one callable capability. Implementations must be safe for concurrent use: one Tool value
// is shared by every agent whose registry holds it, and calls run in parallel on worker lanes.
type Tool interface {
	// Spec describes the tool to the model. It is read once, at registration; a tool whose spec
	// changes later must be registered again.
	Spec() Spec
	// Execute runs one call. args has already been validated against Spec().Parameters when the
	// call goes through a Handle; a returned error is turned into an error Result by the
	// dispatcher (see ErrorResult), so errors should read well to a model and wrap the sentinels of
	// this package where one applies. Execute must not modify args.
	Execute(ec *ExecContext, args json.RawMessage) (Result, error)
}

// Inline is an optional interface a Tool implements to say it is cheap enough — pure memory, no
// I/O, no blocking — to run inside the world's dispatch system instead of on a worker lane. Inline
// execution saves a lane round trip (and a tick of latency) for tools like the checklist.
type Inline interface {
	// Inline reports whether the tool may run inline. It is read once, at registration.
	Inline() bool
}

// HostUser is implemented by tools that call back into the host while they run (script tools:
// their host functions and call_tool). The dispatcher fills ExecContext.ScriptPermit, CallTool
// and Seed only for them, so other calls pay nothing for it.
type HostUser interface {
	// UsesHost reports whether the tool needs the host callbacks.
	UsesHost() bool
}

// CommandUser is implemented by tools that run commands through ExecContext.Commands (the shell
// tool, script tools through host.shell): the host gives only them the agent's sandbox manager,
// so agents that never run a command never get one.
type CommandUser interface {
	// UsesCommands reports whether the tool runs commands.
	UsesCommands() bool
}

// Interactive is implemented by tools that ask a person. The host does not call Execute on the
// dispatch path when a hub is attached: it builds the Question, parks the agent until an answer
// (or a timeout, or the unattended answer) arrives, and turns the answer into the result. Parking
// the agent instead of a lane worker is what lets a world of waiting agents cost no threads.
// Execute remains the headless path (no hub, a tool run outside a world): it checks the question
// and returns UnattendedAnswer.
type Interactive interface {
	Tool
	// Question builds the question from the call's arguments, which a Handle has validated;
	// Agent and CallID are left for the asker to stamp. Arguments that are unusable anyway (a
	// blank question, repeated choices) are an error wrapping ErrInvalidArguments.
	Question(args json.RawMessage) (Question, error)
	// Answer checks a person's answer to q and formats the result the agent reads (see the package
	// documentation). An answer the question does not accept is an error wrapping
	// ErrInvalidAnswer, so the hub can ask again instead of handing the agent garbage.
	Answer(q Question, answer string) (Result, error)
}

// Sentinel errors callers test with errors.Is. Every error this package returns that falls in one
// of these classes wraps the matching sentinel.
var (
	// ErrNotFound: no tool of that name is visible (in any scope or the base registry).
	ErrNotFound = errors.New("tool not found")
	// ErrInvalidArguments: the call's arguments are not valid JSON, do not satisfy the tool's
	// schema, or are otherwise unusable (for example an offset past the end of a file).
	ErrInvalidArguments = errors.New("invalid arguments")
	// ErrDuplicate: a tool of that name is already registered in the base registry.
	ErrDuplicate = errors.New("duplicate tool name")
	// ErrOutsideWorkdir: a file path escapes the agent's workdir, lexically (.., absolute paths)
	// or through a symbolic link.
	ErrOutsideWorkdir = errors.New("path is outside the workdir")
	// ErrNoScope: the scope id does not name a scope on the stack (never pushed, or already
	// popped).
	ErrNoScope = errors.New("no such scope")
	// ErrInvalidSpec: a tool's spec cannot be registered (nil tool, bad name, or a parameters
	// schema that does not compile).
	ErrInvalidSpec = errors.New("invalid tool spec")
	// ErrNoWorkdir: a file tool ran with an empty or relative ExecContext.Workdir.
	ErrNoWorkdir = errors.New("no usable workdir")
	// ErrNotRegularFile: a file tool was pointed at a directory, device, socket or pipe.
	ErrNotRegularFile = errors.New("not a regular file")
	// ErrNotDirectory: list_dir was pointed at something that is not a directory.
	ErrNotDirectory = errors.New("not a directory")
	// ErrFileTooLarge: edit_file was pointed at a file larger than MaxEditBytes.
	ErrFileTooLarge = errors.New("file is too large")
	// ErrNoMatch: edit_file's old_string does not occur in the file.
	ErrNoMatch = errors.New("old_string not found")
	// ErrAmbiguousMatch: edit_file's old_string occurs more than once and replace_all is unset.
	ErrAmbiguousMatch = errors.New("old_string is not unique")
	// ErrInvalidAnswer: a person's answer does not fit the question (a blank text answer, a choice
	// that is not one of the choices, a confirmation that is not yes or no).
	ErrInvalidAnswer = errors.New("invalid answer")
	// ErrUnknownValue: an enum spelling (safety mode, plan level, approval answer) is not one of
	// the valid ones.
	ErrUnknownValue = errors.New("unknown value")
)
