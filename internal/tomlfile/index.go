package tomlfile

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/pelletier/go-toml/v2/unstable"
)

// Doc is a TOML file that parsed, with an index from dotted key paths to the
// line and column where each is first defined. Loaders keep it only while
// validating, to put file:line:col on every semantic error they report.
//
// The index is a tree of key parts (nodes), each naming its parent, so that
// it costs memory in proportion to the file: a path is rendered as a string
// only when an error names it.
type Doc struct {
	// File names the document in error messages.
	File string
	// nodes[0] is the document's root (the empty path); every other node is one key or array
	// index below its parent, and is created by the first statement that defines it, so its
	// entry is that first definition. A parent always comes before its children.
	nodes    []node
	children map[childKey]int32
	// paths caches rendered paths (path) by node.
	paths map[int32]string
	// data is the document's text; values holds where the value of each key/value and array
	// element starts, for errors about a value in a part of the document decoded later
	// (DecodeTable), indexed from data on the first such decoding so that documents never
	// decoded that way (a 20,000-stage blueprint) do not pay for it. valueDoc is the index that
	// second walk built, whose nodes values names.
	data     []byte
	values   map[int32]position
	valueDoc *Doc
}

// node is one part of a path in the index.
type node struct {
	parent int32
	// seg is the key or array index this node adds to its parent's path (seg.end is unused).
	seg segment
	// depth is the number of parts of the node's path; the root's is 0.
	depth int
	// keys counts the node's children that are keys (not array elements): MaxTableKeys.
	keys int
	entry
}

// childKey finds a node by its parent and its own part.
type childKey struct {
	parent  int32
	key     string
	index   int
	isIndex bool
}

// entry is what the index knows about one path.
type entry struct {
	line, col int
	// kind is the TOML kind of the value at the path (see the kind*
	// constants); intermediate keys of headers and dotted keys are tables.
	kind string
}

// newDoc returns an empty index of data, named file.
func newDoc(file string, data []byte) *Doc {
	return &Doc{
		File: file, data: data,
		nodes:    []node{{parent: -1}},
		children: make(map[childKey]int32),
	}
}

// lookup returns the node of path, if the document defines it.
func (d *Doc) lookup(path string) (int32, bool) {
	if path == "" {
		return 0, false
	}
	segs, ok := splitPath(path)
	if !ok {
		return 0, false
	}
	id := int32(0)
	for _, s := range segs {
		child, found := d.children[childKey{parent: id, key: s.key, index: s.index, isIndex: s.isIndex}]
		if !found {
			return 0, false
		}
		id = child
	}
	return id, true
}

// path renders the path of node id as JoinKey and JoinIndex build it, caching it.
func (d *Doc) path(id int32) string {
	if id <= 0 {
		return ""
	}
	if p, ok := d.paths[id]; ok {
		return p
	}
	// Collect the parts root first, then join them once (a path is built in time linear in
	// its length).
	var ids []int32
	for at := id; at > 0; at = d.nodes[at].parent {
		ids = append(ids, at)
	}
	var b strings.Builder
	for i := len(ids) - 1; i >= 0; i-- {
		s := d.nodes[ids[i]].seg
		switch {
		case s.isIndex:
			b.WriteByte('[')
			b.WriteString(strconv.Itoa(s.index))
			b.WriteByte(']')
		default:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(JoinKey("", s.key))
		}
	}
	if d.paths == nil {
		d.paths = make(map[int32]string)
	}
	p := b.String()
	d.paths[id] = p
	return p
}

// segs returns the parts of node id's path, root first.
func (d *Doc) segs(id int32) []segment {
	n := d.nodes[id].depth
	segs := make([]segment, n)
	for at := id; at > 0; at = d.nodes[at].parent {
		n--
		segs[n] = d.nodes[at].seg
	}
	return segs
}

// ancestor returns the node of the first depth parts of node id's path (the root for 0).
func (d *Doc) ancestor(id int32, depth int) int32 {
	for id > 0 && d.nodes[id].depth > depth {
		id = d.nodes[id].parent
	}
	return id
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
	id, ok := d.lookup(path)
	if !ok {
		return 0, 0, false
	}
	e := d.nodes[id].entry
	return e.line, e.col, true
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
	// node is the key part or value found at the position.
	node int32
	// stmt is the node of the full path the statement containing the position defines:
	// for a key part of `[a.b.c]` it is the node of c, so an error reported
	// at a's position can be traced to the key that is really at fault.
	stmt int32
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
	// arrays counts the elements of each array of tables by its node, so
	// `[[stages]]` opens stages[n] and `[stages.x]` extends the last.
	arrays map[int32]int
	// keys and added are scratch space reused across statements.
	keys  []*unstable.Node
	added []position
	// also are keys the caller of a DecodeTable reads itself: valid at the root, never decoded.
	also []string
	// values, when set, receives the position of every value (Doc.values).
	values map[int32]position
	// scalars, when set, receives the byte range and kind of every scalar value (Override).
	scalars map[int32]scalarSpan
	// refused is set, and the walk stops, when a path passes MaxDepth parts (see checkDepth,
	// which refuses such documents before they are parsed; this is its backstop) or a table
	// passes MaxTableKeys keys.
	refused *Error
}

// index parses data and builds its Doc. A syntax error, or a document nested
// past MaxDepth, is returned as an Error positioned where the problem is.
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
		doc:        newDoc(file, data),
		data:       data,
		lineStarts: lineStarts(data),
		at:         make(map[position]target),
		arrays:     make(map[int32]int),
	}
}

// walk indexes every expression of the document, returning the parser's error if it stops,
// or an *Error wrapping ErrTooDeep when the document nests past MaxDepth (checked before
// parsing, in one pass over the bytes, so that no deep document reaches the parser).
func (ix *indexer) walk() error {
	if err := ix.checkDepth(); err != nil {
		return err
	}
	var p unstable.Parser
	p.Reset(ix.data)
	table := int32(0)
	for p.NextExpression() {
		expr := p.Expression()
		switch expr.Kind {
		case unstable.Table, unstable.ArrayTable:
			table = ix.header(expr)
		case unstable.KeyValue:
			ix.keyValue(table, expr)
		}
		if ix.refused != nil {
			return ix.refused
		}
	}
	return p.Error()
}

// syntaxError positions a parser error. The parser highlights a subslice of
// the input, whose offset follows from the capacities; it is clamped so that
// an unexpected highlight can never cause a panic. An *Error (the depth
// check's) is returned as it is.
func (ix *indexer) syntaxError(err error) *Error {
	if e, ok := err.(*Error); ok {
		return e
	}
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

// record returns the node of the part seg below parent, creating it at pos
// with kind unless an earlier statement defined it already: Pos reports the
// first definition. A part past MaxDepth, or a key past its table's MaxTableKeys, is not
// created: refused is set (the walk stops after the statement) and parent is returned.
func (ix *indexer) record(parent int32, seg segment, pos position, kind string) int32 {
	key := childKey{parent: parent, key: seg.key, index: seg.index, isIndex: seg.isIndex}
	if id, ok := ix.doc.children[key]; ok {
		return id
	}
	depth := ix.doc.nodes[parent].depth + 1
	if depth > MaxDepth {
		if ix.refused == nil {
			ix.refused = ix.doc.tooDeepError(parent, seg, pos)
		}
		return parent
	}
	if !seg.isIndex {
		if ix.doc.nodes[parent].keys++; ix.doc.nodes[parent].keys > MaxTableKeys {
			if ix.refused == nil {
				ix.refused = ix.doc.tooManyKeysError(parent, pos)
			}
			return parent
		}
	}
	id := int32(len(ix.doc.nodes))
	ix.doc.nodes = append(ix.doc.nodes, node{
		parent: parent, seg: seg, depth: depth,
		entry: entry{line: pos.line, col: pos.col, kind: kind},
	})
	ix.doc.children[key] = id
	return id
}

// keySeg and indexSeg are path parts.
func keySeg(key string) segment { return segment{key: key} }
func indexSeg(i int) segment    { return segment{index: i, isIndex: true} }

// mark notes that the decoder may report an error at pos, about the path of id.
func (ix *indexer) mark(pos position, id int32, value bool) {
	ix.at[pos] = target{node: id, stmt: id, value: value}
	if !value {
		ix.added = append(ix.added, pos)
	} else if _, ok := ix.values[id]; !ok && ix.values != nil {
		ix.values[id] = pos
	}
}

// valuePos returns where the value at path starts, indexing the document's values on first use.
func (d *Doc) valuePos(path string) (position, bool) {
	if d.values == nil {
		d.values = map[int32]position{}
		ix := newIndexer(d.File, d.data)
		ix.values = d.values
		_ = ix.walk() // the document parsed once already
		d.valueDoc = ix.doc
	}
	id, ok := d.valueDoc.lookup(path)
	if !ok {
		return position{}, false
	}
	pos, ok := d.values[id]
	return pos, ok
}

// finishStatement sets the statement node of every key part marked since
// the statement began.
func (ix *indexer) finishStatement(stmt int32) {
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
// node of the table that following key/values belong to. Every key
// part that names an array of tables resolves to its last element, as TOML
// specifies; the last part of a [[header]] appends a new element.
func (ix *indexer) header(n *unstable.Node) int32 {
	isArray := n.Kind == unstable.ArrayTable
	parts := ix.keyParts(n)
	id := int32(0)
	for i, k := range parts {
		pos := ix.position(int(k.Raw.Offset))
		switch {
		case i == len(parts)-1 && isArray:
			id = ix.record(id, keySeg(string(k.Data)), pos, kindArrayOfTables)
			ix.mark(pos, id, false)
			count := ix.arrays[id]
			ix.arrays[id] = count + 1
			id = ix.record(id, indexSeg(count), pos, kindTable)
		default:
			id = ix.record(id, keySeg(string(k.Data)), pos, kindTable)
			ix.mark(pos, id, false)
			if count, ok := ix.arrays[id]; ok && i < len(parts)-1 {
				id = ix.record(id, indexSeg(count-1), pos, kindTable)
			}
		}
		if ix.refused != nil {
			break
		}
	}
	ix.finishStatement(id)
	return id
}

// keyValue indexes a key/value (possibly with a dotted key) inside table.
func (ix *indexer) keyValue(table int32, n *unstable.Node) {
	parts := ix.keyParts(n)
	value := n.Value()
	id := table
	for i, k := range parts {
		pos := ix.position(int(k.Raw.Offset))
		kind := kindTable
		if i == len(parts)-1 {
			kind = valueKind(value)
		}
		id = ix.record(id, keySeg(string(k.Data)), pos, kind)
		if ix.refused != nil {
			ix.added = ix.added[:0]
			return
		}
		ix.mark(pos, id, false)
	}
	ix.finishStatement(id)
	last := parts[len(parts)-1]
	ix.value(id, value, ix.valueOffset(int(last.Raw.Offset+last.Raw.Length)))
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
// node id. offset is where the value starts when known from outside (-1 if
// not); nodes that carry their own range use it instead.
func (ix *indexer) value(id int32, n *unstable.Node, offset int) {
	if ix.refused != nil {
		return
	}
	if n.Raw.Length > 0 {
		offset = int(n.Raw.Offset)
		if ix.scalars != nil && n.Kind != unstable.Array && n.Kind != unstable.InlineTable {
			if _, ok := ix.scalars[id]; !ok {
				ix.scalars[id] = scalarSpan{start: offset, end: offset + int(n.Raw.Length), kind: valueKind(n)}
			}
		}
	}
	var pos position
	if offset >= 0 {
		pos = ix.position(offset)
		ix.mark(pos, id, true)
	} else {
		// A nested array has no range of its own; see firstOffset.
		e := ix.doc.nodes[id].entry
		pos = position{line: e.line, col: e.col}
	}
	switch n.Kind {
	case unstable.Array:
		i := 0
		for it := n.Children(); it.Next() && ix.refused == nil; i++ {
			child := it.Node()
			childPos := pos
			if offset, ok := firstOffset(child); ok {
				childPos = ix.position(offset)
			}
			childID := ix.record(id, indexSeg(i), childPos, valueKind(child))
			ix.value(childID, child, -1)
		}
	case unstable.InlineTable:
		for it := n.Children(); it.Next() && ix.refused == nil; {
			if kv := it.Node(); kv.Kind == unstable.KeyValue {
				ix.keyValue(id, kv)
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
