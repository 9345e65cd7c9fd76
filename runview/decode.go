package runview

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/valyala/fastjson"

	"github.com/warrenhq/warren/trace"
)

// columns are every field a trace of this version may have, in trace.Columns order; a field's
// column id (its index here) is what a log entry stores instead of its name. Taking them from
// package trace, which a test checks against what the Writer writes, keeps this reader from
// drifting from the format.
var columns = trace.Columns()

// columnID finds a field's column id by name.
var columnID = func() map[string]uint8 {
	if len(columns) > 255 {
		panic("runview: more trace columns than a byte holds")
	}
	m := make(map[string]uint8, len(columns))
	for i, c := range columns {
		m[c.Name] = uint8(i)
	}
	return m
}()

// col returns the column id of a field this package reads by name; a name the format lacks is
// a programming error, caught by the first test that loads the package.
func col(name string) uint8 {
	id, ok := columnID[name]
	if !ok {
		panic("runview: the trace format has no field " + strconv.Quote(name))
	}
	return id
}

// The columns the View reads to build its state (every column goes into the agent's log).
var (
	cTick, cSeq, cAgent, cName, cKind                 = col("tick"), col("seq"), col("agent"), col("name"), col("kind")
	cStage, cCallID, cTool, cText, cCalls, cStatus    = col("stage"), col("call_id"), col("tool"), col("text"), col("calls"), col("status")
	cReason, cVerdict, cOK, cPrompt, cKeys, cDeadline = col("reason"), col("verdict"), col("ok"), col("prompt"), col("keys"), col("deadline")
	cGroup, cBlueprint, cModel, cTask, cParent        = col("group"), col("blueprint"), col("model"), col("task"), col("parent")
	cDepth                                            = col("depth")
	cFrom, cTo, cOn, cWhen, cEnd, cCascade            = col("from"), col("to"), col("on"), col("when"), col("end"), col("cascade")
	cPromptTokens, cCompletionTokens, cCost, cTicks   = col("prompt_tokens"), col("completion_tokens"), col("cost_usd"), col("ticks")
)

// kindSpec is one event kind as this version writes it: which fields it may have and which
// every event of the kind has.
type kindSpec struct {
	name     string
	id       uint8
	allowed  []bool  // by column id
	required []uint8 // column ids
	// world says the kind is a world event (agent 0): it belongs to no agent's log.
	world bool
}

// kinds are every kind of the version, sorted by name (trace.Schema's order); kindByName finds
// one by name. A log entry stores a kind as its index here.
var kinds, kindByName = func() ([]kindSpec, map[string]*kindSpec) {
	schema := trace.Schema()
	out := make([]kindSpec, len(schema))
	by := make(map[string]*kindSpec, len(schema))
	for i, k := range schema {
		s := kindSpec{name: k.Kind, id: uint8(i), allowed: make([]bool, len(columns))}
		for _, f := range k.Fields {
			s.allowed[col(f.Name)] = true
			if !f.Optional {
				s.required = append(s.required, col(f.Name))
			}
		}
		switch k.Kind {
		case trace.KindEnd, trace.KindMCPServer, trace.KindPoolBreaker:
			s.world = true
		}
		out[i] = s
	}
	for i := range out {
		by[out[i].name] = &out[i]
	}
	return out, by
}()

// fieldValue is one field of the event being applied, typed by its column. Its byte slices
// point into the parser's memory or the value's own buffer: valid until the next line only,
// so whatever the View keeps is copied out of them.
type fieldValue struct {
	col  uint8
	str  []byte   // string, decimal and json columns (json: compact JSON text)
	num  int64    // integer columns
	flag bool     // boolean columns
	list [][]byte // strings columns
	buf  []byte   // holds a json column's text between lines, so it is not allocated again
}

// event is one decoded event line: the common fields, and the kind's own fields in the order
// the line gives them. One event is reused for every line.
type event struct {
	tick, seq, agent int64
	name             []byte
	kind             *kindSpec
	vals             []fieldValue
	// pos gives, by column id, the index in vals plus one (0: the line lacks the field).
	pos []int8
}

// decoder turns event lines into the reused event, checking each against the version's schema.
// Lines are parsed with fastjson (already a dependency, used the same way by packages metrics and
// traceexport): it reads a line in place, so a line costs its parse and no allocation; see
// BenchmarkDecode for the comparison with encoding/json.
type decoder struct {
	p  fastjson.Parser
	ev event
}

func newDecoder() *decoder {
	return &decoder{ev: event{pos: make([]int8, len(columns))}}
}

// errLine is a problem with one line, before the View adds which line it was.
type errLine struct {
	seq  int64
	kind string
	why  string
}

func (e *errLine) Error() string { return e.why }

// bad builds an errLine for the event decoded so far.
func (ev *event) bad(format string, a ...any) error {
	e := &errLine{seq: ev.seq, why: fmt.Sprintf(format, a...)}
	if ev.kind != nil {
		e.kind = ev.kind.name
	}
	return e
}

// Common-field bits, to tell which of the five a line had.
const (
	hasTick = 1 << iota
	hasSeq
	hasAgent
	hasName
	hasKind
	hasCommon = hasTick | hasSeq | hasAgent | hasName | hasKind
)

// decode parses line into d.ev and checks it against the format: a JSON object whose five
// common fields are there with their types, a known kind, only fields of that kind, each of its
// type, and every field the kind requires.
func (d *decoder) decode(line []byte) error {
	ev := &d.ev
	for i := range ev.vals {
		ev.pos[ev.vals[i].col] = 0
	}
	ev.vals = ev.vals[:0]
	ev.tick, ev.seq, ev.agent, ev.name, ev.kind = 0, 0, 0, nil, nil

	v, err := d.p.ParseBytes(line)
	if err != nil {
		return ev.bad("not JSON: %v", err)
	}
	obj, err := v.Object()
	if err != nil {
		return ev.bad("not a JSON object")
	}
	var seen int
	var kindName []byte
	obj.Visit(func(key []byte, fv *fastjson.Value) {
		if err != nil {
			return
		}
		c, ok := columnID[string(key)]
		if !ok {
			if string(key) == "format" {
				err = errors.New("a trace header where an event was expected (the trace already has its header)")
			} else {
				err = fmt.Errorf("unknown field %q", key)
			}
			return
		}
		switch c {
		case cTick:
			ev.tick, err = intField(fv, "tick", &seen, hasTick)
		case cSeq:
			ev.seq, err = intField(fv, "seq", &seen, hasSeq)
		case cAgent:
			ev.agent, err = intField(fv, "agent", &seen, hasAgent)
		case cName:
			ev.name, err = strField(fv, "name", &seen, hasName)
		case cKind:
			kindName, err = strField(fv, "kind", &seen, hasKind)
		default:
			err = ev.add(c, fv)
		}
	})
	if err != nil {
		return ev.bad("%v", err)
	}
	if seen != hasCommon {
		for i, n := range []string{"tick", "seq", "agent", "name", "kind"} {
			if seen&(1<<i) == 0 {
				return ev.bad("no %q field: every event starts with tick, seq, agent, name and kind", n)
			}
		}
	}
	if ev.tick < 0 || ev.seq < 1 || ev.agent < 0 {
		return ev.bad("tick %d, seq %d, agent %d: want tick and agent >= 0, seq >= 1", ev.tick, ev.seq, ev.agent)
	}
	k, ok := kindByName[string(kindName)]
	if !ok {
		return ev.bad("unknown kind %q", kindName)
	}
	ev.kind = k
	for i := range ev.vals {
		if c := ev.vals[i].col; !k.allowed[c] {
			return ev.bad("field %q is not a field of %s", columns[c].Name, k.name)
		}
	}
	for _, c := range k.required {
		if ev.pos[c] == 0 {
			return ev.bad("%s without its %q field", k.name, columns[c].Name)
		}
	}
	return nil
}

// intField reads a common integer field once.
func intField(v *fastjson.Value, name string, seen *int, bit int) (int64, error) {
	if *seen&bit != 0 {
		return 0, fmt.Errorf("field %q twice", name)
	}
	*seen |= bit
	n, err := v.Int64()
	if err != nil || v.Type() != fastjson.TypeNumber {
		return 0, fmt.Errorf("field %q: want an integer, got %s", name, clip(v.String(), 40))
	}
	return n, nil
}

// strField reads a common string field once.
func strField(v *fastjson.Value, name string, seen *int, bit int) ([]byte, error) {
	if *seen&bit != 0 {
		return nil, fmt.Errorf("field %q twice", name)
	}
	*seen |= bit
	b, err := v.StringBytes()
	if err != nil {
		return nil, fmt.Errorf("field %q: want a string, got %s", name, clip(v.String(), 40))
	}
	return b, nil
}

// add stores one of the kind's own fields, checking its type against its column's.
func (ev *event) add(c uint8, v *fastjson.Value) error {
	name := columns[c].Name
	if ev.pos[c] != 0 {
		return fmt.Errorf("field %q twice", name)
	}
	if len(ev.vals) == cap(ev.vals) {
		ev.vals = append(ev.vals, fieldValue{})[:len(ev.vals)]
	}
	ev.vals = ev.vals[:len(ev.vals)+1]
	f := &ev.vals[len(ev.vals)-1]
	f.col, f.str, f.num, f.flag, f.list = c, nil, 0, false, f.list[:0]
	want := columns[c].Type
	var err error
	switch want {
	case trace.TypeInteger:
		if v.Type() != fastjson.TypeNumber {
			err = errors.New("not a number")
		} else {
			f.num, err = v.Int64()
		}
	case trace.TypeBoolean:
		f.flag, err = v.Bool()
	case trace.TypeString, trace.TypeDecimal:
		f.str, err = v.StringBytes()
	case trace.TypeStrings:
		var items []*fastjson.Value
		if items, err = v.Array(); err == nil {
			for _, it := range items {
				s, e := it.StringBytes()
				if e != nil {
					err = e
					break
				}
				f.list = append(f.list, s)
			}
		}
	case trace.TypeJSON:
		f.buf = v.MarshalTo(f.buf[:0])
		f.str = f.buf
	default:
		err = fmt.Errorf("type %s unknown to this reader", want)
	}
	if err != nil {
		ev.vals = ev.vals[:len(ev.vals)-1]
		return fmt.Errorf("field %q: want %s, got %s", name, article(want), clip(v.String(), 40))
	}
	ev.pos[c] = int8(len(ev.vals))
	return nil
}

// article names a field type in an error ("an integer", "a string").
func article(t trace.FieldType) string {
	switch t {
	case trace.TypeInteger:
		return "an integer"
	case trace.TypeStrings:
		return "an array of strings"
	case trace.TypeJSON:
		return "JSON"
	case trace.TypeDecimal:
		return "a decimal string"
	}
	return "a " + string(t)
}

// field returns the event's value of column c, or nil when the line lacks it.
func (ev *event) field(c uint8) *fieldValue {
	if p := ev.pos[c]; p > 0 {
		return &ev.vals[p-1]
	}
	return nil
}

// has reports whether the line has column c.
func (ev *event) has(c uint8) bool { return ev.pos[c] > 0 }

// str returns a string column's bytes ("" when absent).
func (ev *event) str(c uint8) []byte {
	if f := ev.field(c); f != nil {
		return f.str
	}
	return nil
}

// num returns an integer column's value (0 when absent).
func (ev *event) num(c uint8) int64 {
	if f := ev.field(c); f != nil {
		return f.num
	}
	return 0
}

// flag returns a boolean column's value (false when absent).
func (ev *event) flag(c uint8) bool {
	if f := ev.field(c); f != nil {
		return f.flag
	}
	return false
}

// list returns a strings column's items (nil when absent).
func (ev *event) list(c uint8) [][]byte {
	if f := ev.field(c); f != nil {
		return f.list
	}
	return nil
}

// clip shortens s for an error message.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
