package tomlfile

import (
	"errors"
	"fmt"
)

// MaxTableKeys is how many keys one table (a [table], an array of tables' element, an inline
// table, or the document's root) may have. go-toml's decoder checks each key against the keys
// its table already has one by one, so a table of n keys costs n² comparisons: 100,000 keys in
// one table (1.4 MB) took 19 s to load, 40,000 in an inline table 2.5 s. Warren's files need a
// few dozen a table, and the caps of their own tables (1024 tool_permissions entries) are below
// this one, so their messages speak first; at the cap loading stays linear, under a microsecond
// a byte at the worst (BenchmarkDecodeSize/wide_tables), and the index, which counts as it reads,
// before the decoder runs, refuses the key past it.
const MaxTableKeys = 4096

// ErrTooManyKeys marks a document with a table of more than MaxTableKeys keys; test it with
// errors.Is on what Decode, ReadFile, DecodeTable or Override return.
var ErrTooManyKeys = errors.New("too many keys in one table")

// tooManyKeysMsg is the message of every ErrTooManyKeys error: the cap and what would be valid.
var tooManyKeysMsg = fmt.Sprintf("a table may have at most %d keys: split it, or make its entries an array", MaxTableKeys)

// tooManyKeysError is the error of the key at pos that passes table's MaxTableKeys.
func (d *Doc) tooManyKeysError(table int32, pos position) *Error {
	key := d.path(table)
	if key == "" {
		key = "(the document's root)"
	}
	return &Error{File: d.File, Line: pos.line, Column: pos.col, Key: shortKey(key), Msg: tooManyKeysMsg, Err: ErrTooManyKeys}
}
