package scripting

import (
	"errors"
	"strconv"
	"strings"

	"github.com/dop251/goja"
	"github.com/dop251/goja/parser"
)

// Sentinel errors: the Kind of every *Error this package returns, so callers can tell a broken
// tool file (ErrSyntax, ErrDefinition, ErrDuplicate) from a call that failed (the rest) with
// errors.Is. A cancelled call is the one exception: its Kind is the context's own error.
var (
	// ErrSyntax: the file is not valid JavaScript (or not valid UTF-8).
	ErrSyntax = errors.New("syntax error")
	// ErrDefinition: the file does not define exactly one valid tool with defineTool (missing or
	// repeated call, bad name, empty description, parameters that are not a JSON Schema object, run
	// not a function).
	ErrDefinition = errors.New("invalid tool definition")
	// ErrRuntime: the script threw (or its run promise rejected) and nothing caught it.
	ErrRuntime = errors.New("script error")
	// ErrTimeout: the call ran past Limits.CallTimeout and was interrupted.
	ErrTimeout = errors.New("script timed out")
	// ErrTooLarge: the arguments or the result are larger than the Limits allow.
	ErrTooLarge = errors.New("too large")
	// ErrMemory: the call's built-ins and host functions built more than Limits.MaxMemory, or
	// the heap watch saw its own JavaScript grow the heap past twice that, at least 64 MiB (docs/scripting.md,
	// "Memory").
	ErrMemory = errors.New("script memory budget exhausted")
	// ErrStackOverflow: the script nested calls deeper than Limits.MaxCallStack.
	ErrStackOverflow = errors.New("stack overflow")
	// ErrDuplicate: two files of one directory define tools of the same name.
	ErrDuplicate = errors.New("duplicate script tool name")
	// ErrClosed: Run was called on an Engine after Close.
	ErrClosed = errors.New("script engine closed")
)

// Error is a script problem positioned in its file, so a blueprint author (or a model reading an
// error result) can go straight to the line. Line and Column are 1-based; they are 0 when the
// problem has no place in the source (a timeout, an oversized result).
type Error struct {
	// File is the script's file name as given to Compile.
	File string
	// Line and Column locate the problem; 0 when it has no position.
	Line, Column int
	// Message says what went wrong, in words that read well to a person and a model.
	Message string
	// WallClock is true when a limit measured in wall-clock time ended the call (the backstop of
	// a call left waiting, regexp2's own timeout): the host notes it as a real-time limit.
	WallClock bool
	// Kind is one of the Err* sentinels (or a context error for a cancelled call).
	Kind error
}

// Error renders "file:line:col: message", or "file: message" for a problem without a position.
func (e *Error) Error() string {
	var sb strings.Builder
	sb.Grow(len(e.File) + len(e.Message) + 16)
	sb.WriteString(e.File)
	if e.Line > 0 {
		sb.WriteByte(':')
		sb.WriteString(strconv.Itoa(e.Line))
		sb.WriteByte(':')
		sb.WriteString(strconv.Itoa(e.Column))
	}
	sb.WriteString(": ")
	sb.WriteString(e.Message)
	return sb.String()
}

// Unwrap returns Kind, so errors.Is(err, ErrTimeout) and friends work.
func (e *Error) Unwrap() error { return e.Kind }

// RealTime reports whether a limit measured in real time ended the call (WallClock): the host
// counts such a model turn as a real-time limit and records it as an outside input.
func (e *Error) RealTime() bool { return e.WallClock }

// position is a 1-based place in a script's source.
type position struct{ line, column int }

// newError builds an *Error at pos in file.
func newError(file string, pos position, kind error, message string) *Error {
	return &Error{File: file, Line: pos.line, Column: pos.column, Message: message, Kind: kind}
}

// syntaxError turns what goja's parser or compiler reports into an *Error. shift is how many
// columns the wrapper header added to line 1 (0 for the raw source).
func syntaxError(file string, err error, shift int) *Error {
	var list parser.ErrorList
	var compiler *goja.CompilerSyntaxError
	switch {
	case errors.As(err, &list) && len(list) > 0:
		p := list[0].Position
		return newError(file, unshift(position{p.Line, p.Column}, shift), ErrSyntax, list[0].Message)
	case errors.As(err, &compiler) && compiler.File != nil:
		p := compiler.File.Position(compiler.Offset)
		return newError(file, unshift(position{p.Line, p.Column}, shift), ErrSyntax, compiler.Message)
	}
	return newError(file, position{}, ErrSyntax, err.Error())
}

// unshift maps a position in the wrapped source back to the file: only line 1 carries the
// wrapper's header.
func unshift(p position, shift int) position {
	if p.line == 1 && p.column > shift {
		p.column -= shift
	}
	return p
}

// scriptPosition finds where in file a goja stack points: the first frame that belongs to the
// script (native frames and the sandbox's own helpers have no place in the file).
func scriptPosition(file string, stack []goja.StackFrame) position {
	for i := range stack {
		f := &stack[i]
		if f.SrcName() != file {
			continue
		}
		p := f.Position()
		if p.Line > 0 {
			return unshift(position{p.Line, p.Column}, len(wrapperHeader))
		}
	}
	return position{}
}
