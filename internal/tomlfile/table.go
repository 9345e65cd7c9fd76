package tomlfile

import (
	"reflect"
	"slices"

	toml "github.com/pelletier/go-toml/v2"
)

// DecodeTable strictly decodes table, the table at path in d as the first decoding read it (into
// a map[string]any), into v, a pointer to a struct, exactly as Decode would have had the
// table's type been v's all along. It serves tables whose shape depends on one of their own keys,
// which the first decoding cannot know: a scenario's model tables, whose keys are their kind's.
//
// The keys named in also are the caller's (a model table's kind): they are skipped, and listed
// among the valid keys of the table itself. Every problem is an Error positioned in d under path,
// as Decode reports it: unknown keys with the keys valid there, a key matched only by ignoring
// case, a value of the wrong kind (at the value). The table is encoded back to TOML and decoded
// from there, so keys and array elements keep their order and their paths.
func (d *Doc) DecodeTable(path string, table map[string]any, v any, also ...string) Errors {
	rest := make(map[string]any, len(table))
	for k, val := range table {
		if !slices.Contains(also, k) {
			rest[k] = val
		}
	}
	data, err := toml.Marshal(rest)
	if err != nil {
		return Errors{d.Errorf(path, "the table cannot be read: %w", err)}
	}
	ix, syntaxErr := index(d.File, data)
	if syntaxErr != nil {
		// go-toml wrote it: it parses.
		return Errors{d.Errorf(path, "the table cannot be read: %w", syntaxErr)}
	}
	ix.also = also
	err = ix.decode(v)
	if err == nil {
		return nil
	}
	sub, ok := err.(Errors)
	if !ok {
		return Errors{d.Errorf(path, "%w", err)}
	}
	out := make(Errors, 0, len(sub))
	for _, e := range sub {
		out = append(out, d.rebase(path, ix, e))
	}
	out.Sort()
	return out
}

// rebase moves e, found in the table at path as ix indexed it, onto d: its key under path, its
// position d's own (the value's for an error at a value, as Decode places those).
func (d *Doc) rebase(path string, ix *indexer, e *Error) *Error {
	out := &Error{Key: path, Msg: e.Msg, Err: e.Err}
	if e.Key != "" {
		out.Key = path + "." + e.Key
	}
	if t, ok := ix.at[position{line: e.Line, col: e.Column}]; ok && t.value && ix.doc.path(t.node) == e.Key {
		if pos, ok := d.valuePos(path + "." + e.Key); ok {
			out.File, out.Line, out.Column = d.File, pos.line, pos.col
			return out
		}
	}
	d.place(out)
	return out
}

// Keys lists the keys a struct accepts (v is the struct or a pointer to it), sorted, by the
// rules Decode follows; nil for anything else. Loaders use it to say which other shape of a
// table accepts a key this one does not (a key of another model kind).
func Keys(v any) []string {
	t := deref(reflect.TypeOf(v))
	if t == nil || t.Kind() != reflect.Struct {
		return nil
	}
	return validKeys(t)
}
