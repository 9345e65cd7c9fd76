package tools

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/warrenhq/warren/memory"
)

// Names of the memory tools.
const (
	NameMemorySet = "memory_set"
	NameMemoryGet = "memory_get"
)

// ErrNoMemory is the error of a memory tool called where the calling agent's memory is not at
// hand: from inside another tool (a script's callTool), or in a bare context. Memory is the
// world's, written only by the agent's own calls in the world's order, so a replay writes it
// alike.
var ErrNoMemory = errors.New("memory tools run only as the model's own calls")

var (
	_ Tool   = MemorySet{}
	_ Tool   = MemoryGet{}
	_ Inline = MemorySet{}
	_ Inline = MemoryGet{}
)

// init registers the memory tools as built-ins (see RegisterBuiltin).
func init() {
	RegisterBuiltin(BuiltinInfo{ID: "tools.memory_set", New: func() Tool { return MemorySet{} }})
	RegisterBuiltin(BuiltinInfo{ID: "tools.memory_get", New: func() Tool { return MemoryGet{} }})
}

// MemorySet is the memory_set tool: it stores a JSON value under a key of the calling agent's
// memory (null removes the key), which conditions, templates, JS policies and expectations read.
type MemorySet struct{}

var memorySetSchema = json.RawMessage(fmt.Sprintf(`{
	"type": "object",
	"properties": {
		"key": {"type": "string", "pattern": "^[A-Za-z_][A-Za-z0-9_]{0,%d}$", "description": "The key: letters, digits and _, not starting with a digit."},
		"value": {"description": "Any JSON value to keep under the key; null removes the key."}
	},
	"required": ["key", "value"],
	"additionalProperties": false
}`, memory.MaxKeyBytes-1))

// Spec describes memory_set.
func (MemorySet) Spec() Spec {
	return Spec{
		Name: NameMemorySet,
		Description: "Remember a value under a key, replacing what was there (null forgets the key). " +
			"Your memory outlives stages: use it for what later stages or the stage graph must know, such as a verdict or a count.",
		Parameters: memorySetSchema,
	}
}

// Inline reports true: memory is the agent's own data, written in the world's order.
func (MemorySet) Inline() bool { return true }

type memorySetArgs struct {
	Key   string          `json:"key"`
	Value json.RawMessage `json:"value"`
}

// Execute stores the value, answering "Remembered <key>." (or "Forgot <key>.").
func (MemorySet) Execute(ec *ExecContext, args json.RawMessage) (Result, error) {
	var a memorySetArgs
	if err := decodeArguments(NameMemorySet, args, &a); err != nil {
		return Result{}, err
	}
	if ec.Memory == nil {
		return Result{}, ErrNoMemory
	}
	if err := ec.Memory.SetJSON(a.Key, a.Value); err != nil {
		if errors.Is(err, memory.ErrBadKey) || errors.Is(err, memory.ErrBadValue) {
			return Result{}, fmt.Errorf("%w: %v", ErrInvalidArguments, err)
		}
		return Result{}, err
	}
	if v := strings.TrimSpace(string(a.Value)); v == "" || v == "null" {
		return TextResult("Forgot " + a.Key + "."), nil
	}
	return TextResult("Remembered " + a.Key + "."), nil
}

// MemoryGet is the memory_get tool: it returns the JSON value under a key of the calling
// agent's memory, or, with no key, every key and value as one JSON object.
type MemoryGet struct{}

var memoryGetSchema = json.RawMessage(`{
	"type": "object",
	"properties": {
		"key": {"type": "string", "description": "The key to read; leave it out to read every key."}
	},
	"additionalProperties": false
}`)

// Spec describes memory_get.
func (MemoryGet) Spec() Spec {
	return Spec{
		Name:        NameMemoryGet,
		Description: "Read what you remembered: the JSON value under key (null if nothing is), or with no key an object of every key and value.",
		Parameters:  memoryGetSchema,
	}
}

// Inline reports true: memory is the agent's own data.
func (MemoryGet) Inline() bool { return true }

type memoryGetArgs struct {
	Key *string `json:"key"`
}

// Execute reads the memory. The whole memory is written in key order, so its text is the same
// in every run.
func (MemoryGet) Execute(ec *ExecContext, args json.RawMessage) (Result, error) {
	var a memoryGetArgs
	if err := decodeArguments(NameMemoryGet, args, &a); err != nil {
		return Result{}, err
	}
	if ec.Memory == nil {
		return Result{}, ErrNoMemory
	}
	if a.Key != nil {
		if v, ok := ec.Memory.Get(*a.Key); ok {
			return TextResult(v), nil
		}
		return TextResult("null"), nil
	}
	var b strings.Builder
	b.WriteByte('{')
	for i, e := range ec.Memory.Entries() {
		if i > 0 {
			b.WriteByte(',')
		}
		key, _ := json.Marshal(e.Key)
		b.Write(key)
		b.WriteByte(':')
		b.WriteString(e.JSON)
	}
	b.WriteByte('}')
	return TextResult(b.String()), nil
}
