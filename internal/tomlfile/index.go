package tomlfile

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/pelletier/go-toml/v2/unstable"
)

// Doc is a TOML file that parsed, with an index from dotted key paths to the
// line and column where each is first defined. Loaders keep it only while
// validating, to put file:line:col on every semantic error they report.
type Doc struct {
	// File names the document in error messages.
	File    string
	entries map[string]entry
	// data is the document's text; values holds where the value of each key/value and array
	// element starts, for errors about a value in a part of the document decoded later
	// (DecodeTable), indexed from data on the first such decoding so that documents never
	// decoded that way (a 20,000-stage blueprint) do not pay for it.
	data   []byte
	values map[string]position
}

// entry is what the index knows about one path.
type entry struct {
	line, col int
	// kind is the TOML kind of the value at the path (see the kind*
	// constants); intermediate keys of headers and dotted keys are tables.
	kind string
}

// Pos returns where path is first defined: the key of a key/value or table
// header, the header of an array-of-tables element, or the value of an array
// element. Paths use dots between keys and [n] for array elements, as in
// "stages[1].transitions[0].to" or "tool_permissions.write_file"; build keys
// that are not bare TOML keys with JoinKey. Columns count bytes from 1.
func (d *Doc) Pos(path string) (line, col int, ok bool) {
	if d == nil {
		return 0, 0, false
	}
	e, ok := d.entries[path]
	return e.line, e.col, ok
}

// Errorf builds an Error at path, so that semantic checks done after decoding
// point at the offending key just as decode errors do. When path is not in the
// document (a missing key), the error is placed at its nearest existing parent
// (a missing stage name points at its [[stages]] header), and at no line when
// no parent exists; Key is always the requested path. The message is
// fmt.Errorf(format, args...), which Error.Unwrap returns, so %w verbs keep
// sentinel errors visible to errors.Is.
func (d *Doc) Errorf(path string, format string, args ...any) *Error {
	cause := fmt.Errorf(format, args...)
	e := &Error{Key: path, Msg: cause.Error(), Err: cause}
	if d == nil {
		return e
	}
	d.place(e)
	return e
}

// place sets e's file and position from its Key, as Errorf describes.
func (d *Doc) place(e *Error) {
	path := e.Key
	e.File = d.File
	if line, col, ok := d.Pos(path); ok {
		e.Line, e.Column = line, col
		return
	}
	// Try the parents, longest first; a malformed path's valid prefix counts
	// as a parent.
	segs, wellFormed := splitPath(path)
	n := len(segs)
	if wellFormed {
		n--
	}
	for ; n > 0; n-- {
		if line, col, ok := d.Pos(prefixPath(path, segs, n)); ok {
			e.Line, e.Column = line, col
			return
		}
	}
}

// prefixPath returns the path made of the first n segments of path.
func prefixPath(path string, segs []segment, n int) string {
	if n == 0 {
		return ""
	}
	return path[:segs[n-1].end]
}

// position is a 1-based line and byte column, as go-toml reports them.
type position struct{ line, col int }

// target is what sits at a position the decoder may report an error at.
type target struct {
	// path is the key part or value found at the position.
	path string
	// stmt is the full path the statement containing the position defines:
	// for a key part of `[a.b.c]` it is the path of c, so an error reported
	// at a's position can be traced to the key that is really at fault.
	stmt string
	// value is true for value positions, false for key positions.
	value bool
}

// indexer walks the parser's expressions once, filling the Doc's index and
// the position table used to translate decoder errors.
type indexer struct {
	doc        *Doc
	data       []byte
	lineStarts []int
	at         map[position]target
	// arrays counts the elements of each array of tables by its concrete
	// path, so `[[stages]]` opens stages[n] and `[stages.x]` extends the last.
	arrays map[string]int
	// keys and added are scratch space reused across statements.
	keys  []*unstable.Node
	added []position
	// also are keys the caller of a DecodeTable reads itself: valid at the root, never decoded.
	also []string
	// values, when set, receives the position of every value (Doc.values).
	values map[string]position
	// scalars, when set, receives the byte range and kind of every scalar value (Override).
	scalars map[string]scalarSpan
}

// index parses data and builds its Doc. A syntax error is returned as an
// Error positioned where the parser stopped.
func index(file string, data []byte) (*indexer, *Error) {
	ix := newIndexer(file, data)
	if err := ix.walk(); err != nil {
		return nil, ix.syntaxError(err)
	}
	return ix, nil
}

// newIndexer prepares the indexing of data, a document named file.
func newIndexer(file string, data []byte) *indexer {
	return &indexer{
		doc:        &Doc{File: file, entries: make(map[string]entry), data: data},
		data:       data,
		lineStarts: lineStarts(data),
		at:         make(map[position]target),
		arrays:     make(map[string]int),
	}
}

// walk indexes every expression of the document, returning the parser's error if it stops.
func (ix *indexer) walk() error {
	var p unstable.Parser
	p.Reset(ix.data)
	table := ""
	for p.NextExpression() {
		expr := p.Expression()
		switch expr.Kind {
		case unstable.Table, unstable.ArrayTable:
			table = ix.header(expr)
		case unstable.KeyValue:
			ix.keyValue(table, expr)
		}
	}
	return p.Error()
}

// syntaxError positions a parser error. The parser highlights a subslice of
// the input, whose offset follows from the capacities; it is clamped so that
// an unexpected highlight can never cause a panic.
func (ix *indexer) syntaxError(err error) *Error {
	e := &Error{File: ix.doc.File, Msg: err.Error(), Err: ErrSyntax}
	var perr *unstable.ParserError
	if !errors.As(err, &perr) {
		return e
	}
	e.Msg = perr.Message
	offset := min(max(cap(ix.data)-cap(perr.Highlight), 0), len(ix.data))
	pos := ix.position(offset)
	e.Line, e.Column = pos.line, pos.col
	for _, k := range perr.Key {
		e.Key = JoinKey(e.Key, k)
	}
	return e
}

// lineStarts returns the byte offset at which each line begins.
func lineStarts(data []byte) []int {
	starts := make([]int, 1, 1+len(data)/32)
	for i, c := range data {
		if c == '\n' {
			starts = append(starts, i+1)
		}
	}
	return starts
}

// position converts a byte offset to a line and byte column.
func (ix *indexer) position(offset int) position {
	line, found := slices.BinarySearch(ix.lineStarts, offset)
	if !found {
		line--
	}
	return position{line: line + 1, col: offset - ix.lineStarts[line] + 1}
}

// record indexes path at pos unless an earlier statement defined it already:
// Pos reports the first definition.
func (ix *indexer) record(path string, pos position, kind string) {
	if _, ok := ix.doc.entries[path]; !ok {
		ix.doc.entries[path] = entry{line: pos.line, col: pos.col, kind: kind}
	}
}

// mark notes that the decoder may report an error at pos, about path.
func (ix *indexer) mark(pos position, path string, value bool) {
	ix.at[pos] = target{path: path, stmt: path, value: value}
	if !value {
		ix.added = append(ix.added, pos)
	} else if _, ok := ix.values[path]; !ok && ix.values != nil {
		ix.values[path] = pos
	}
}

// valuePos returns where the value at path starts, indexing the document's values on first use.
func (d *Doc) valuePos(path string) (position, bool) {
	if d.values == nil {
		d.values = map[string]position{}
		ix := newIndexer(d.File, d.data)
		ix.values = d.values
		_ = ix.walk() // the document parsed once already
	}
	pos, ok := d.values[path]
	return pos, ok
}

// finishStatement sets the statement path of every key part marked since
// the statement began.
func (ix *indexer) finishStatement(stmt string) {
	for _, pos := range ix.added {
		t := ix.at[pos]
		t.stmt = stmt
		ix.at[pos] = t
	}
	ix.added = ix.added[:0]
}

// keyParts collects the parts of a (possibly dotted) key into scratch space.
func (ix *indexer) keyParts(n *unstable.Node) []*unstable.Node {
	ix.keys = ix.keys[:0]
	for it := n.Key(); it.Next(); {
		ix.keys = append(ix.keys, it.Node())
	}
	return ix.keys
}

// header indexes a [table] or [[array.of.tables]] header and returns the
// concrete path of the table that following key/values belong to. Every key
// part that names an array of tables resolves to its last element, as TOML
// specifies; the last part of a [[header]] appends a new element.
func (ix *indexer) header(n *unstable.Node) string {
	isArray := n.Kind == unstable.ArrayTable
	parts := ix.keyParts(n)
	path := ""
	for i, k := range parts {
		path = JoinKey(path, string(k.Data))
		pos := ix.position(int(k.Raw.Offset))
		ix.mark(pos, path, false)
		switch {
		case i == len(parts)-1 && isArray:
			ix.record(path, pos, kindArrayOfTables)
			count := ix.arrays[path]
			ix.arrays[path] = count + 1
			path = JoinIndex(path, count)
			ix.record(path, pos, kindTable)
		default:
			ix.record(path, pos, kindTable)
			if count, ok := ix.arrays[path]; ok && i < len(parts)-1 {
				path = JoinIndex(path, count-1)
			}
		}
	}
	ix.finishStatement(path)
	return path
}

// keyValue indexes a key/value (possibly with a dotted key) inside table.
func (ix *indexer) keyValue(table string, n *unstable.Node) {
	parts := ix.keyParts(n)
	value := n.Value()
	path := table
	for i, k := range parts {
		path = JoinKey(path, string(k.Data))
		pos := ix.position(int(k.Raw.Offset))
		ix.mark(pos, path, false)
		kind := kindTable
		if i == len(parts)-1 {
			kind = valueKind(value)
		}
		ix.record(path, pos, kind)
	}
	ix.finishStatement(path)
	last := parts[len(parts)-1]
	ix.value(path, value, ix.valueOffset(int(last.Raw.Offset+last.Raw.Length)))
}

// valueOffset finds where a value starts, given the offset just after its
// key: the parser leaves the range of arrays empty, so it is found by skipping
// the `=` and the blanks around it, which the parser has already validated.
func (ix *indexer) valueOffset(afterKey int) int {
	i := afterKey
	for i < len(ix.data) && strings.IndexByte(" \t=", ix.data[i]) >= 0 {
		i++
	}
	return i
}

// value indexes the elements of arrays and the keys of inline tables below
// path. offset is where the value starts when known from outside (-1 if
// not); nodes that carry their own range use it instead.
func (ix *indexer) value(path string, n *unstable.Node, offset int) {
	if n.Raw.Length > 0 {
		offset = int(n.Raw.Offset)
		if ix.scalars != nil && n.Kind != unstable.Array && n.Kind != unstable.InlineTable {
			if _, ok := ix.scalars[path]; !ok {
				ix.scalars[path] = scalarSpan{start: offset, end: offset + int(n.Raw.Length), kind: valueKind(n)}
			}
		}
	}
	var pos position
	if offset >= 0 {
		pos = ix.position(offset)
		ix.mark(pos, path, true)
	} else if e, ok := ix.doc.entries[path]; ok {
		// A nested array has no range of its own; see firstOffset.
		pos = position{line: e.line, col: e.col}
	}
	switch n.Kind {
	case unstable.Array:
		i := 0
		for it := n.Children(); it.Next(); i++ {
			child := it.Node()
			childPath := JoinIndex(path, i)
			childPos := pos
			if offset, ok := firstOffset(child); ok {
				childPos = ix.position(offset)
			}
			ix.record(childPath, childPos, valueKind(child))
			ix.value(childPath, child, -1)
		}
	case unstable.InlineTable:
		for it := n.Children(); it.Next(); {
			if kv := it.Node(); kv.Kind == unstable.KeyValue {
				ix.keyValue(path, kv)
			}
		}
	}
}

// firstOffset returns where a value node starts. The parser gives arrays no
// range, so a nested array is placed at its first element that has one (its
// line is right, its column a bracket or so late); an empty nested array has
// no position of its own and ok is false.
func firstOffset(n *unstable.Node) (offset int, ok bool) {
	if n.Raw.Length > 0 {
		return int(n.Raw.Offset), true
	}
	if n.Kind == unstable.Array {
		if first := n.Child(); first != nil {
			return firstOffset(first)
		}
	}
	return 0, false
}

// valueKind names the TOML kind of a value node for error messages.
func valueKind(n *unstable.Node) string {
	switch n.Kind {
	case unstable.String:
		return kindString
	case unstable.Integer:
		return kindInteger
	case unstable.Float:
		return kindFloat
	case unstable.Bool:
		return kindBoolean
	case unstable.Array:
		return kindArray
	case unstable.InlineTable:
		return kindTable
	case unstable.DateTime:
		return kindDateTime
	case unstable.LocalDateTime:
		return kindLocalDateTime
	case unstable.LocalDate:
		return kindLocalDate
	case unstable.LocalTime:
		return kindLocalTime
	}
	return ""
}
