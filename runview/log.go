package runview

import (
	"bytes"
	"encoding/binary"
	"strconv"
	"unicode/utf8"

	"github.com/warrenhq/warren/trace"
)

// Entry is one event in an agent's log, as the trace gave it: its tick, seq and kind, and the
// kind's own fields in the order the trace writes them. A log shows every event of the agent
// (spawn to reap), since any of them can be the one that explains what the agent did.
type Entry struct {
	Tick   int64   `json:"tick"`
	Seq    int64   `json:"seq"`
	Kind   string  `json:"kind"`
	Fields []Field `json:"fields"`
}

// Field is one field of a log entry. Value is a string (the trace's string, decimal and json
// fields: a tool call's args is its JSON text), an int64, a bool or a []string, by Type. A long
// value is cut to Options.MaxContent bytes, so that one chatty agent cannot hold the view's memory:
// Cut is then the number of bytes cut, and a string ends with " …[truncated N bytes]" (the
// trace's own marker); a list keeps the items that fit in MaxContent bytes and More counts the
// items left out, with a last item "…[N more]".
type Field struct {
	Name  string          `json:"name"`
	Type  trace.FieldType `json:"type"`
	Value any             `json:"value"`
	Cut   int             `json:"cut,omitempty"`
	More  int             `json:"more,omitempty"`
}

// Get returns the entry's field called name, so a caller reads one field without walking them.
func (e Entry) Get(name string) (Field, bool) {
	for _, f := range e.Fields {
		if f.Name == name {
			return f, true
		}
	}
	return Field{}, false
}

// internable marks the columns whose values repeat across agents (stage, tool, verdict, a
// gate's reason...): a log stores them as an index into the View's string table instead of
// their bytes, which is most of what keeps 10^5 agents' logs small.
var internable = func() []bool {
	m := make([]bool, len(columns))
	for _, n := range []string{"stage", "model", "tool", "verdict", "layer", "reason", "prompt", "by", "via",
		"status", "on", "from", "to", "when", "end", "fn", "pool", "state", "event", "transport", "server",
		"mode", "on_worker_failure", "blueprint", "group", "keys", "answer", "key", "cost_usd", "error",
		"killer_name"} {
		m[col(n)] = true
	}
	return m
}()

// maxInternLen is the longest value a log interns; a longer one is likely unique, and stored
// inline.
const maxInternLen = 256

// interner maps strings to small ids, so repeated names cost one copy. Id 0 is "". The names an
// agent's state holds (group, stage, status...) are always interned (intern); log values only
// while the table is under its budget (tryIntern), so unique values cannot grow it without bound.
type interner struct {
	strs   []string
	ids    map[string]uint32
	budget int // bytes tryIntern may still add
}

// internBudget bounds the bytes tryIntern adds to the table: past it, log values are stored
// inline, which costs memory per entry but no more than that.
const internBudget = 4 << 20

func newInterner() interner {
	return interner{strs: []string{""}, ids: map[string]uint32{"": 0}, budget: internBudget}
}

// intern returns b's id, adding a copy of b when it is new.
func (in *interner) intern(b []byte) uint32 {
	if id, ok := in.ids[string(b)]; ok {
		return id
	}
	return in.add(string(b))
}

// internString is intern for a string.
func (in *interner) internString(s string) uint32 {
	if id, ok := in.ids[s]; ok {
		return id
	}
	return in.add(s)
}

func (in *interner) add(s string) uint32 {
	id := uint32(len(in.strs))
	in.strs = append(in.strs, s)
	in.ids[s] = id
	return id
}

// tryIntern returns b's id when it has one or the budget allows adding it.
func (in *interner) tryIntern(b []byte) (uint32, bool) {
	if id, ok := in.ids[string(b)]; ok {
		return id, true
	}
	if len(b) > maxInternLen || in.budget < len(b)+16 {
		return 0, false
	}
	in.budget -= len(b) + 16
	return in.add(string(b)), true
}

// lookup returns s's id without adding it.
func (in *interner) lookup(s string) (uint32, bool) {
	id, ok := in.ids[s]
	return id, ok
}

// str returns the string of id.
func (in *interner) str(id uint32) string { return in.strs[id] }

// agentLog is an agent's last entries, encoded one after another in buf from start:
// uvarint(len) then the entry. Encoding (varints, interned names) keeps an entry at a few bytes
// beyond its free text, and one buffer per agent costs one slice header rather than one per
// entry.
type agentLog struct {
	buf     []byte
	start   int32  // offset of the oldest kept entry
	n       int32  // entries kept
	dropped uint32 // entries dropped off the front to keep MaxEntries
}

// push appends an encoded entry, dropping the oldest while more than max are kept. The
// dropped bytes are reclaimed once they are half the buffer, so the copy costs O(1) per entry.
func (l *agentLog) push(entry []byte, max int) {
	l.buf = binary.AppendUvarint(l.buf, uint64(len(entry)))
	l.buf = append(l.buf, entry...)
	l.n++
	for int(l.n) > max {
		size, k := binary.Uvarint(l.buf[l.start:])
		l.start += int32(k) + int32(size)
		l.n--
		l.dropped++
	}
	if l.start > 0 && int(l.start) >= len(l.buf)/2 {
		n := copy(l.buf, l.buf[l.start:])
		l.buf = l.buf[:n]
		l.start = 0
	}
}

// shrink gives the buffer back its slack, once the agent is done and its log will hardly grow.
func (l *agentLog) shrink() {
	if cap(l.buf)-len(l.buf)+int(l.start) > 64 {
		l.buf = bytes.Clone(l.buf[l.start:])
		l.start = 0
	}
}

// each calls f with every kept entry's bytes, oldest first.
func (l *agentLog) each(f func(entry []byte)) {
	for off := int(l.start); off < len(l.buf); {
		size, k := binary.Uvarint(l.buf[off:])
		off += k
		f(l.buf[off : off+int(size)])
		off += int(size)
	}
}

// encodeEntry appends ev's log entry to dst: uvarint seq and tick, the kind, the number of
// fields, then per field its column id and its value by the column's type (zigzag varint, a
// byte, a string, or a count of strings). Strings go through appendStr; name is the agent's.
func (v *View) encodeEntry(dst []byte, ev *event, name string) []byte {
	dst = binary.AppendUvarint(dst, uint64(ev.seq))
	dst = binary.AppendUvarint(dst, uint64(ev.tick))
	dst = append(dst, ev.kind.id, byte(len(ev.vals)))
	for i := range ev.vals {
		f := &ev.vals[i]
		dst = append(dst, f.col)
		switch columns[f.col].Type {
		case trace.TypeInteger:
			dst = binary.AppendVarint(dst, f.num)
		case trace.TypeBoolean:
			b := byte(0)
			if f.flag {
				b = 1
			}
			dst = append(dst, b)
		case trace.TypeStrings:
			kept, size := 0, 0
			for _, s := range f.list {
				if size += len(s); size > v.opts.MaxContent && kept > 0 {
					break
				}
				kept++
			}
			dst = binary.AppendUvarint(dst, uint64(kept))
			for _, s := range f.list[:kept] {
				dst = v.appendStr(dst, f.col, s, name)
			}
			dst = binary.AppendUvarint(dst, uint64(len(f.list)-kept))
		default:
			dst = v.appendStr(dst, f.col, f.str, name)
		}
	}
	return dst
}

// The low two bits of a string value's tag say how it is stored.
const (
	strInline   = 0 // tag>>2 bytes follow, then uvarint(bytes cut)
	strInterned = 1 // tag>>2 is the id in the View's string table
	strNamed    = 2 // the agent's name, then tag>>2 bytes that follow, then uvarint(bytes cut)
)

// appendStr appends one string value: interned when its column repeats across agents and the
// table takes it; else its bytes (at most MaxContent, cut back to a UTF-8 boundary) and how many
// were cut, leaving out the agent's name when the value starts with it, as a call id does
// ("<name>-t3-c0"): most of a log's bytes are such values.
func (v *View) appendStr(dst []byte, c uint8, s []byte, name string) []byte {
	if internable[c] && len(s) <= v.opts.MaxContent {
		if id, ok := v.strs.tryIntern(s); ok {
			return binary.AppendUvarint(dst, uint64(id)<<2|strInterned)
		}
	}
	keep := cutPoint(s, v.opts.MaxContent)
	how := uint64(strInline)
	if len(name) >= 4 && keep >= len(name) && string(s[:len(name)]) == name {
		s, keep, how = s[len(name):], keep-len(name), strNamed
	}
	dst = binary.AppendUvarint(dst, uint64(keep)<<2|how)
	dst = append(dst, s[:keep]...)
	return binary.AppendUvarint(dst, uint64(len(s)-keep))
}

// cutPoint returns how many bytes of s to keep under a limit of max bytes: all of it when it
// fits, else max moved back to the start of a UTF-8 sequence, so a cut never splits a character.
func cutPoint(s []byte, max int) int {
	if len(s) <= max {
		return len(s)
	}
	k := max
	for k > 0 && k > max-utf8.UTFMax && !utf8.RuneStart(s[k]) {
		k--
	}
	return k
}

// truncated is s cut as the log cuts a value, with the marker: for the state a View keeps
// outside the log (a prompt's text, an agent's task and reason).
func truncated(s []byte, max int) (string, int) {
	keep := cutPoint(s, max)
	if keep == len(s) {
		return string(s), 0
	}
	return withMarker(string(s[:keep]), len(s)-keep), len(s) - keep
}

// withMarker appends the marker the trace itself uses for cut text.
func withMarker(s string, cut int) string {
	return s + " …[truncated " + strconv.Itoa(cut) + " bytes]"
}

// entryReader decodes the bytes encodeEntry wrote. The bytes are the View's own, so a short
// read cannot happen; it still stops at the end rather than panic.
type entryReader struct {
	b   []byte
	off int
}

func (r *entryReader) uvarint() uint64 {
	n, k := binary.Uvarint(r.b[r.off:])
	if k <= 0 {
		r.off = len(r.b)
		return 0
	}
	r.off += k
	return n
}

func (r *entryReader) varint() int64 {
	n, k := binary.Varint(r.b[r.off:])
	if k <= 0 {
		r.off = len(r.b)
		return 0
	}
	r.off += k
	return n
}

func (r *entryReader) byte() byte {
	if r.off >= len(r.b) {
		return 0
	}
	r.off++
	return r.b[r.off-1]
}

// str reads a string value and how many bytes of it were cut; name is the agent's.
func (r *entryReader) str(in *interner, name string) (string, int) {
	tag := r.uvarint()
	if tag&3 == strInterned {
		return in.str(uint32(tag >> 2)), 0
	}
	n := int(tag >> 2)
	if n > len(r.b)-r.off {
		n = len(r.b) - r.off
	}
	s := string(r.b[r.off : r.off+n])
	if tag&3 == strNamed {
		s = name + s
	}
	r.off += n
	cut := int(r.uvarint())
	if cut > 0 {
		s = withMarker(s, cut)
	}
	return s, cut
}

// decodeEntry turns an encoded entry of the agent called name back into an Entry.
func (v *View) decodeEntry(b []byte, name string) Entry {
	r := entryReader{b: b}
	e := Entry{Seq: int64(r.uvarint()), Tick: int64(r.uvarint())}
	k := int(r.byte())
	if k < len(kinds) {
		e.Kind = kinds[k].name
	}
	n := int(r.byte())
	e.Fields = make([]Field, 0, n)
	for range n {
		c := int(r.byte())
		if c >= len(columns) {
			break
		}
		f := Field{Name: columns[c].Name, Type: columns[c].Type}
		switch f.Type {
		case trace.TypeInteger:
			f.Value = r.varint()
		case trace.TypeBoolean:
			f.Value = r.byte() == 1
		case trace.TypeStrings:
			items := make([]string, int(r.uvarint()))
			for i := range items {
				items[i], _ = r.str(&v.strs, name)
			}
			if f.More = int(r.uvarint()); f.More > 0 {
				items = append(items, "…["+strconv.Itoa(f.More)+" more]")
			}
			f.Value = items
		default:
			f.Value, f.Cut = r.str(&v.strs, name)
		}
		e.Fields = append(e.Fields, f)
	}
	return e
}
