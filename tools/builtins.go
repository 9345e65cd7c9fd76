package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
)

// Names of the built-in tools, for blueprints, policy defaults and tests.
const (
	NameReadFile  = "read_file"
	NameWriteFile = "write_file"
	NameEditFile  = "edit_file"
	NameListDir   = "list_dir"
	NameTodoAdd   = "todo_add"
	NameTodoDone  = "todo_done"
	NameTodoList  = "todo_list"

	NameAskUserText    = "ask_user_text"
	NameAskUserChoice  = "ask_user_choice"
	NameAskUserConfirm = "ask_user_confirm"
)

// Builtins returns one of each built-in tool of this package (namespace "tools"), sorted by id,
// which within the namespace is name order. It reads the built-in registry, which each tool's
// file fills from its init function (RegisterBuiltin), so the list cannot forget a tool. The
// tools are stateless values: the file tools take their workdir, the checklist tools their broker
// and the interaction tools their question broker from the ExecContext, so one set serves every
// agent of a world.
func Builtins() []Tool { return BuiltinsIn(Namespace) }

// RegisterBuiltins registers every built-in tool of this package in r (Builtins, in that order).
// It fails (registering nothing further) if a name is already taken.
func RegisterBuiltins(r *Registry) error {
	if err := RegisterBuiltinsIn(r, Namespace); err != nil {
		return fmt.Errorf("register built-in tools: %w", err)
	}
	return nil
}

// decodeArguments unmarshals a tool's arguments. Calls through a Handle were validated already;
// this guards direct Execute calls, rejecting unknown fields the way the schemas do.
func decodeArguments(tool string, args json.RawMessage, v any) error {
	args = normalizeArguments(args)
	if string(bytes.TrimSpace(args)) == "{}" {
		return nil // nothing to decode: v keeps its zero value, as decoding {} would leave it
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return &ArgumentError{Tool: tool, Problems: []ArgumentProblem{{Message: "cannot decode the arguments: " + err.Error()}}}
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return &ArgumentError{Tool: tool, Problems: []ArgumentProblem{{Message: "unexpected data after the arguments object"}}}
	}
	return nil
}

// positiveInt reads an optional integer argument that must be at least 1, returning def when it
// is absent. JSON Schema counts 3.0 as an integer, so integral floats are accepted too.
func positiveInt(field string, n *json.Number, def int) (int, error) {
	if n == nil {
		return def, nil
	}
	if v, err := n.Int64(); err == nil {
		if v < 1 || v > math.MaxInt32 {
			return 0, fmt.Errorf("%w: %s must be between 1 and %d (got %s)", ErrInvalidArguments, field, math.MaxInt32, *n)
		}
		return int(v), nil
	}
	f, err := n.Float64()
	if err != nil || f != math.Trunc(f) || f < 1 || f > math.MaxInt32 {
		return 0, fmt.Errorf("%w: %s must be an integer between 1 and %d (got %s)", ErrInvalidArguments, field, math.MaxInt32, *n)
	}
	return int(f), nil
}
