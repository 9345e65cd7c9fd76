package trace

import (
	"bytes"
	"slices"
	"strconv"
	"strings"
)

// FieldType is what kind of JSON value a trace field holds. A field name has one type across
// every event kind, so a whole trace loads into one table without mixed columns.
type FieldType string

// The types of trace fields.
const (
	// TypeInteger is a JSON number without a fraction (ticks, ids, counts): a 64-bit integer.
	TypeInteger FieldType = "integer"
	// TypeString is a JSON string.
	TypeString FieldType = "string"
	// TypeBoolean is true or false.
	TypeBoolean FieldType = "boolean"
	// TypeDecimal is an exact decimal number written as a JSON string ("0.00045585"): money,
	// which a trace never writes as a float.
	TypeDecimal FieldType = "decimal"
	// TypeStrings is a JSON array of strings.
	TypeStrings FieldType = "strings"
	// TypeJSON is any JSON value, kept as its text (a tool call's args).
	TypeJSON FieldType = "json"
)

// Field is one field of an event kind: its name, its type, and whether every event of the kind
// has it (Optional: written only when it has a value, or only by one of the kind's writers).
type Field struct {
	Name     string
	Type     FieldType
	Optional bool
}

// KindSchema is one event kind's own fields, in the order the Writer writes them, after the
// common fields (CommonFields).
type KindSchema struct {
	Kind   string
	Fields []Field
}

// commonFields start every event, in this order.
var commonFields = []Field{
	{Name: "tick", Type: TypeInteger},
	{Name: "seq", Type: TypeInteger},
	{Name: "agent", Type: TypeInteger},
	{Name: "name", Type: TypeString},
	{Name: "kind", Type: TypeString},
}

// req and opt build the fields of the schema below: a field every event of the kind has, and
// one only some have.
func req(name string, t FieldType) Field { return Field{Name: name, Type: t} }
func opt(name string, t FieldType) Field { return Field{Name: name, Type: t, Optional: true} }

// The types of the fields that appear in many kinds, named once.
var (
	fStage  = req("stage", TypeString)
	fCallID = req("call_id", TypeString)
	fTool   = req("tool", TypeString)
	fStatus = req("status", TypeString)
	fReason = req("reason", TypeString)
	fText   = req("text", TypeString)
)

// schema is every kind's fields, sorted by kind. TestSchemaMatchesWriter drives every Writer
// method and checks that each writes exactly these fields, in this order, with these types, and
// that the optional ones are the ones some events leave out.
var schema = []KindSchema{
	{KindAnswer, []Field{fStage, fCallID, fTool, req("answer", TypeString), req("by", TypeString), req("verdict", TypeString)}},
	{KindEnd, []Field{fStatus, req("ticks", TypeInteger), req("agents", TypeInteger), req("events", TypeInteger),
		req("model_turns", TypeInteger), req("tool_calls", TypeInteger), req("tool_errors", TypeInteger),
		opt("tokens", TypeInteger), opt("cost_usd", TypeDecimal)}},
	{KindFanOutStart, []Field{fCallID, req("blueprint", TypeString), req("items", TypeInteger), req("max_workers", TypeInteger),
		req("on_worker_failure", TypeString), req("mode", TypeString)}},
	{KindKill, []Field{req("killer", TypeInteger), req("killer_name", TypeString), fReason, req("cascade", TypeStrings)}},
	{KindMCPServer, []Field{req("server", TypeString), req("event", TypeString), req("session", TypeInteger), req("transport", TypeString), fReason}},
	{KindMemory, []Field{fStage, req("key", TypeString), req("value", TypeString)}},
	{KindMerge, []Field{fCallID, req("done", TypeInteger), req("failed", TypeInteger), req("killed", TypeInteger),
		req("not_run", TypeInteger), req("chars", TypeInteger), req("ok", TypeBoolean)}},
	{KindMessage, []Field{req("sender", TypeInteger), req("sender_name", TypeString), req("via", TypeString), fText}},
	{KindModelFallback, []Field{req("turn", TypeInteger), req("from", TypeString), req("to", TypeString), fReason}},
	{KindModelRetry, []Field{fStage, req("turn", TypeInteger), req("attempt", TypeInteger), req("pool", TypeString),
		req("error", TypeString), opt("http_status", TypeInteger), req("wait_ms", TypeInteger)}},
	{KindModelTurn, []Field{fStage, req("model", TypeString), req("iteration", TypeInteger), fText, req("calls", TypeInteger),
		opt("error", TypeString), opt("pool", TypeString), opt("attempts", TypeInteger), opt("prompt_tokens", TypeInteger),
		opt("completion_tokens", TypeInteger), opt("cache_read_tokens", TypeInteger), opt("cache_write_tokens", TypeInteger),
		opt("cost_usd", TypeDecimal), opt("context_dropped", TypeInteger)}},
	{KindPoolBreaker, []Field{req("pool", TypeString), req("state", TypeString), req("failures", TypeInteger)}},
	{KindPrompt, []Field{fStage, fCallID, fTool, req("prompt", TypeString), req("keys", TypeStrings), fText, req("deadline", TypeInteger)}},
	{KindReap, []Field{fStatus, req("model_turns", TypeInteger), req("tool_calls", TypeInteger), req("tool_errors", TypeInteger),
		opt("tokens", TypeInteger), opt("cost_usd", TypeDecimal)}},
	{KindSpawn, []Field{req("group", TypeString), req("index", TypeInteger), req("blueprint", TypeString), req("model", TypeString),
		req("task", TypeString), opt("parent", TypeInteger), opt("parent_name", TypeString), opt("depth", TypeInteger),
		opt("detached", TypeBoolean), opt("call", TypeString), opt("item", TypeInteger)}},
	{KindStageEnter, []Field{fStage, req("visit", TypeInteger)}},
	{KindTerminal, []Field{fStatus, fReason, fStage}},
	{KindToolCall, []Field{fStage, fCallID, fTool, req("args", TypeJSON), req("keys", TypeStrings), req("verdict", TypeString),
		req("layer", TypeString), fReason}},
	{KindToolNote, []Field{fStage, fCallID, fTool, req("fn", TypeString), fText, req("ok", TypeBoolean), req("err", TypeString)}},
	{KindToolResult, []Field{fStage, fCallID, fTool, req("ok", TypeBoolean), req("content", TypeString)}},
	{KindTransition, []Field{req("from", TypeString), req("to", TypeString), req("on", TypeString), opt("when", TypeString), opt("end", TypeString)}},
	{KindWaitEnd, []Field{fCallID, req("target", TypeInteger), req("target_name", TypeString), fStatus}},
	{KindWaitStart, []Field{fCallID, req("target", TypeInteger), req("target_name", TypeString)}},
	{KindWorkerEnd, []Field{fCallID, req("item", TypeInteger), req("worker", TypeInteger), req("worker_name", TypeString), fStatus}},
}

// CommonFields returns the fields every event starts with, in order: tick, seq, agent, name,
// kind. The slice is the caller's.
func CommonFields() []Field { return slices.Clone(commonFields) }

// Schema returns every event kind's own fields, in written order, sorted by kind: what a reader
// needs to make one table per kind (host trace export) without sampling the trace. The slices
// are the caller's.
func Schema() []KindSchema {
	out := make([]KindSchema, len(schema))
	for i, k := range schema {
		out[i] = KindSchema{Kind: k.Kind, Fields: slices.Clone(k.Fields)}
	}
	return out
}

// KindFields returns the fields of one kind (nil, false for a kind this version does not write).
func KindFields(kind string) ([]Field, bool) {
	i, ok := slices.BinarySearchFunc(schema, kind, func(k KindSchema, kind string) int {
		switch {
		case k.Kind < kind:
			return -1
		case k.Kind > kind:
			return 1
		}
		return 0
	})
	if !ok {
		return nil, false
	}
	return slices.Clone(schema[i].Fields), true
}

// Columns returns every field of every kind, once, with its type: the common fields first, then
// the others sorted by name. It is the one table a whole trace loads into (each event fills the
// columns of its kind), and what the header's "fields" object lists, so that a reader such as
// DuckDB's read_json is given every column instead of guessing them from the first lines.
func Columns() []Field {
	seen := map[string]bool{}
	for _, c := range commonFields {
		seen[c.Name] = true
	}
	var rest []Field
	for _, k := range schema {
		for _, fl := range k.Fields {
			if !seen[fl.Name] {
				seen[fl.Name] = true
				rest = append(rest, Field{Name: fl.Name, Type: fl.Type, Optional: true})
			}
		}
	}
	slices.SortFunc(rest, func(a, b Field) int { return strings.Compare(a.Name, b.Name) })
	return append(slices.Clone(commonFields), rest...)
}

// headerFields is the header's "fields" object: every column and its type, in Columns order.
var headerFields = func() []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, c := range Columns() {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Quote(c.Name))
		b.WriteByte(':')
		b.WriteString(strconv.Quote(string(c.Type)))
	}
	b.WriteByte('}')
	return b.Bytes()
}()
