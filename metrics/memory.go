package metrics

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/valyala/fastjson"

	"github.com/warrenhq/warren/table"
)

// memorySetTool is the built-in tool that writes the calling agent's memory (tools.NameMemorySet;
// named here so that metrics does not import the tools and all they pull in).
const memorySetTool = "memory_set"

// memKind is what kind of JSON value a memory key holds, which is all the memory table tells
// apart: a number (a boolean read as 0 or 1), a string, or something else (an array or object).
type memKind uint8

const (
	memRemove memKind = iota // null: the write removes the key (never held)
	memNumber                // a JSON number, true (1) or false (0)
	memString                // a JSON string
	memOther                 // an array or an object, counted but not kept
)

// memValue is a memory value reduced to what the memory table needs: its kind, its number, or
// its string's interned id (in Collector.memStrings). An array's or object's JSON is not kept, so
// a value costs the same whatever its size.
type memValue struct {
	kind memKind
	num  float64
	str  uint32
}

// memEntry is one key an agent's memory holds, the key interned in Collector.names.
type memEntry struct {
	key uint32
	val memValue
}

// memWrite is a memory_set call's write, kept with its pendingCall until its tool_result says
// whether it was stored (ok true) or not (a denied call, a bad key, a full memory): the trace's
// tool_call has the value, the tool_result only the outcome. A string value waits as str and is
// interned only once stored, so that values the tool refused (too long, say) never reach the
// interner, which keeps what it is given for the whole run.
type memWrite struct {
	set bool // the call is a memory_set with a key: it writes when its result is ok
	key uint32
	val memValue // for a string, its kind only: the text is str
	str string
}

// memValueOf reduces a parsed JSON value, interning a string (for a write that takes effect at
// once); nil (a memory_set without a value) removes the key, as the tool does.
func (c *Collector) memValueOf(v *fastjson.Value) memValue {
	if v == nil {
		return memValue{kind: memRemove}
	}
	switch v.Type() {
	case fastjson.TypeNumber:
		f, _ := v.Float64() // the parser checked the number's syntax
		return memValue{kind: memNumber, num: f}
	case fastjson.TypeTrue:
		return memValue{kind: memNumber, num: 1}
	case fastjson.TypeFalse:
		return memValue{kind: memNumber, num: 0}
	case fastjson.TypeString:
		return memValue{kind: memString, str: c.memStrings.id(v.GetStringBytes())}
	case fastjson.TypeNull:
		return memValue{kind: memRemove}
	default:
		return memValue{kind: memOther}
	}
}

// memorySetWrite returns the write a tool_call makes when its result is ok: for memory_set, its
// args' key and value; nothing for another tool, or for args without a string key (the tool
// fails such a call, so it never writes).
func (c *Collector) memorySetWrite(tool []byte, v *fastjson.Value) memWrite {
	if string(tool) != memorySetTool {
		return memWrite{}
	}
	args := v.Get("args")
	if args == nil || args.Type() != fastjson.TypeObject {
		return memWrite{} // args the writer could not write as JSON: the tool rejected them
	}
	key := args.Get("key")
	if key == nil || key.Type() != fastjson.TypeString {
		return memWrite{}
	}
	w := memWrite{set: true, key: c.names.id(key.GetStringBytes())}
	if val := args.Get("value"); val != nil && val.Type() == fastjson.TypeString {
		w.val, w.str = memValue{kind: memString}, string(val.GetStringBytes())
	} else {
		w.val = c.memValueOf(val)
	}
	return w
}

// store applies a memory_set write whose result was ok.
func (c *Collector) store(a *agent, w memWrite) {
	val := w.val
	if val.kind == memString {
		val.str = c.memStrings.idString(w.str)
	}
	a.setMemory(w.key, val)
}

// memory applies a transition's set: the memory event's value is the new value's JSON text, as
// a string ("null": removed), parsed with its own parser since the line's parser holds v.
func (c *Collector) memory(a *agent, v *fastjson.Value, _ uint64) error {
	kv, vv := v.Get("key"), v.Get("value")
	if kv == nil || vv == nil || kv.Type() != fastjson.TypeString || vv.Type() != fastjson.TypeString {
		return fmt.Errorf("%w: a memory event's key and value must be strings", ErrMalformed)
	}
	val, err := c.memParser.ParseBytes(vv.GetStringBytes())
	if err != nil {
		return fmt.Errorf("%w: memory value of key %q is not JSON: %w", ErrMalformed, kv.GetStringBytes(), err)
	}
	a.setMemory(c.names.id(kv.GetStringBytes()), c.memValueOf(val))
	return nil
}

// setMemory writes key (replacing what it held, the last write wins) or removes it.
func (a *agent) setMemory(key uint32, val memValue) {
	i := slices.IndexFunc(a.memory, func(e memEntry) bool { return e.key == key })
	switch {
	case val.kind == memRemove && i >= 0:
		a.memory = slices.Delete(a.memory, i, i+1)
	case val.kind == memRemove:
		// removing a key it does not hold: nothing to do
	case i >= 0:
		a.memory[i].val = val
	default:
		a.memory = append(a.memory, memEntry{key: key, val: val})
	}
}

const memoryDoc = "One row per group and memory key that some agent of the group holds at the end of the trace (finished or not), groups in the order the trace first spawned an agent of each, then keys by name."

// memoryRow is one key's final values over the agents of one group that hold it.
type memoryRow struct {
	group, key                       string
	agents, numbers, strings, others int64
	sum, min, max                    float64
	top                              string
	topCount                         int64
	counts                           map[uint32]int64 // string id → agents holding it
	groupRank                        int              // the group's place in first-spawned order
}

var memoryColumns = []column[*memoryRow]{
	{"group", table.String, "the group (the agents' spawn events')", func(r *memoryRow) any { return r.group }},
	{"key", table.String, "the memory key", func(r *memoryRow) any { return r.key }},
	{"agents", table.Integer, "agents of the group holding the key at the end", func(r *memoryRow) any { return r.agents }},
	{"numbers", table.Integer, "of them, those whose value is a number or a boolean (true counts 1, false 0)", func(r *memoryRow) any { return r.numbers }},
	{"mean", table.Float, "the mean of those numbers; nil when numbers is 0", func(r *memoryRow) any { return optFloat(r.sum/float64(r.numbers), r.numbers > 0) }},
	{"min", table.Float, "the least of them; nil when numbers is 0", func(r *memoryRow) any { return optFloat(r.min, r.numbers > 0) }},
	{"max", table.Float, "the greatest of them; nil when numbers is 0", func(r *memoryRow) any { return optFloat(r.max, r.numbers > 0) }},
	{"strings", table.Integer, "those whose value is a string", func(r *memoryRow) any { return r.strings }},
	{"top", table.String, "the most common string value (on a tie, the least by byte order); nil when strings is 0", func(r *memoryRow) any { return optString(r.top, r.strings > 0) }},
	{"top_count", table.Integer, "the agents holding top; 0 when strings is 0", func(r *memoryRow) any { return r.topCount }},
	{"others", table.Integer, "those whose value is an array or an object (counted, not kept)", func(r *memoryRow) any { return r.others }},
}

// memoryRowKey names a memory row: a group and a key (interned names).
type memoryRowKey struct{ group, key uint32 }

// memoryRows sums the agents' final memories per group and key: groups in first-spawned order
// (c.agents is in spawn order), keys by name. The maps only gather; the sort orders.
func (c *Collector) memoryRows() []*memoryRow {
	var rows []*memoryRow
	byKey := map[memoryRowKey]*memoryRow{}
	groupRank := map[uint32]int{}
	for i := range c.agents {
		a := &c.agents[i]
		rank, ok := groupRank[a.group]
		if !ok {
			rank = len(groupRank)
			groupRank[a.group] = rank
		}
		for _, e := range a.memory {
			k := memoryRowKey{group: a.group, key: e.key}
			r := byKey[k]
			if r == nil {
				r = &memoryRow{group: c.names.str(a.group), key: c.names.str(e.key), groupRank: rank}
				byKey[k] = r
				rows = append(rows, r)
			}
			r.add(e.val)
		}
	}
	for _, r := range rows {
		r.pickTop(&c.memStrings)
	}
	slices.SortFunc(rows, func(x, y *memoryRow) int {
		return cmp.Or(cmp.Compare(x.groupRank, y.groupRank), cmp.Compare(x.key, y.key))
	})
	return rows
}

// add counts one agent's value.
func (r *memoryRow) add(v memValue) {
	r.agents++
	switch v.kind {
	case memNumber:
		if r.numbers == 0 {
			r.min, r.max = v.num, v.num
		}
		r.numbers++
		r.sum += v.num
		r.min, r.max = min(r.min, v.num), max(r.max, v.num)
	case memString:
		if r.counts == nil {
			r.counts = map[uint32]int64{}
		}
		r.strings++
		r.counts[v.str]++
	default:
		r.others++
	}
}

// pickTop sets top to the most common string, the least by byte order among the most common, so
// that the answer does not depend on the counts map's order.
func (r *memoryRow) pickTop(strs *interner) {
	for id, n := range r.counts {
		s := strs.str(id)
		if n > r.topCount || n == r.topCount && s < r.top {
			r.top, r.topCount = s, n
		}
	}
	r.counts = nil
}
