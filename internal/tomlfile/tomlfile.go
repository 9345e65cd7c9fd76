// Package tomlfile decodes Warren's TOML inputs (blueprints, scenarios,
// configs) strictly and with positions, so that every problem in a file is
// reported as "file:line:col: key: message" together with what would have
// been valid there.
//
// Decoding is done by go-toml with unknown fields disallowed; the document is
// also walked once with go-toml's unstable parser to index where every key
// path is defined. That index turns the decoder's errors into messages that
// name the concrete path (stages[1].transitions[0].to rather than
// stages.transitions.to) and lets loaders position their own semantic
// checks with Doc.Errorf.
//
// Paths use dots between keys and [n] for array elements. An array of
// tables numbers its elements in file order ([[stages]] opens stages[0],
// then stages[1]); a [stages.tool_permissions] header after [[stages]]
// belongs to the last element, and [[stages.transitions]] nests inside it.
// Columns count bytes, as go-toml does.
package tomlfile

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"

	toml "github.com/pelletier/go-toml/v2"
)

// Sentinel errors classify every Error this package produces; test them with
// errors.Is on the error returned by Decode or ReadFile.
var (
	// ErrSyntax: the file is not valid TOML (including keys defined twice).
	ErrSyntax = errors.New("toml syntax error")
	// ErrUnknownKey: a key the target type has no field for. Unknown keys
	// are errors so that a misspelled setting is never silently ignored.
	ErrUnknownKey = errors.New("unknown key")
	// ErrType: a value the target field cannot hold (wrong kind, or out of
	// range for the Go type).
	ErrType = errors.New("invalid value type")
)

// Error is one problem in a TOML file, positioned as precisely as known.
// Line and Column are 1-based and 0 when unknown; Key is the dotted path of
// the offending key ("" when the problem is not about one key).
type Error struct {
	File         string
	Line, Column int
	Key          string
	// Msg says what is wrong and, where possible, what would be valid.
	Msg string
	// Err is the cause: one of this package's sentinels for decode errors,
	// or the error built by Doc.Errorf (which may wrap a caller's sentinel).
	Err error
}

// Error formats the problem as "file:line:col: key: msg", leaving out the
// parts that are unknown (no line when Line is 0, no key when Key is "").
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		if e.File != "" {
			b.WriteByte(':')
		}
		b.WriteString(strconv.Itoa(e.Line))
		if e.Column > 0 {
			b.WriteByte(':')
			b.WriteString(strconv.Itoa(e.Column))
		}
	}
	if b.Len() > 0 {
		b.WriteString(": ")
	}
	if e.Key != "" {
		b.WriteString(e.Key)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Unwrap returns the cause, so errors.Is sees sentinels through an Error.
func (e *Error) Unwrap() error { return e.Err }

// Errors is every problem found in one file; loaders report them all at once
// so a user can fix a file in one pass.
type Errors []*Error

// Error returns one problem per line, ordered by position in the file
// (problems without a line first).
func (es Errors) Error() string {
	sorted := slices.Clone(es)
	sorted.Sort()
	lines := make([]string, len(sorted))
	for i, e := range sorted {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// Unwrap exposes each problem to errors.Is and errors.As.
func (es Errors) Unwrap() []error {
	errs := make([]error, len(es))
	for i, e := range es {
		errs[i] = e
	}
	return errs
}

// Sort orders the problems by line and column, keeping the order of problems
// at the same position, so reports are deterministic.
func (es Errors) Sort() {
	slices.SortStableFunc(es, func(a, b *Error) int {
		return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(a.Column, b.Column))
	})
}

// Err returns es as an error, or nil when there are no problems, avoiding the
// non-nil interface holding an empty Errors.
func (es Errors) Err() error {
	if len(es) == 0 {
		return nil
	}
	return es
}

// Decode strictly decodes data, a TOML document named file, into v (a
// pointer, as for toml.Unmarshal). Problems come back as Errors:
//   - a syntax error: the parser's message at the position it stopped;
//   - unknown keys, all of them: "unknown key; valid keys here: a, b" at the
//     key, with the valid keys taken from v's `toml` struct tags; a key that
//     go-toml would match to a field only by ignoring case ("Name" for
//     "name") is unknown too, "unknown key (keys are case-sensitive); ...";
//   - a value of the wrong kind: "expected integer, got string" at the value
//     (go-toml's own message for other rejected values, such as overflow).
//
// The Doc is returned whenever the document parsed, even when decoding
// failed; when the only problems are unknown keys, v is otherwise fully
// decoded, so callers may go on validating and report everything together.
func Decode(file string, data []byte, v any) (*Doc, error) {
	ix, syntaxErr := index(file, data)
	if syntaxErr != nil {
		return nil, Errors{syntaxErr}
	}
	return ix.doc, ix.decode(v)
}

// decode strictly decodes the indexed document into v (see Decode).
func (ix *indexer) decode(v any) error {
	err := toml.NewDecoder(bytes.NewReader(ix.data)).DisallowUnknownFields().Decode(v)
	root := reflect.TypeOf(v)
	var strict *toml.StrictMissingError
	var decodeErr *toml.DecodeError
	switch {
	case err == nil:
		return ix.caseMismatches(root).Err()
	case errors.As(err, &strict):
		errs := append(ix.unknownKeys(root, strict), ix.caseMismatches(root)...)
		errs.Sort()
		return errs
	case errors.As(err, &decodeErr):
		return Errors{ix.decodeError(root, decodeErr)}
	}
	return fmt.Errorf("tomlfile: decoding %s: %w", ix.doc.File, err)
}

// Read returns the bytes of the file at path. Failures are Errors naming the
// file; a missing file says so plainly and wraps fs.ErrNotExist.
func Read(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err == nil {
		return data, nil
	}
	msg := "file does not exist"
	if !errors.Is(err, fs.ErrNotExist) {
		reason := err
		var pathErr *fs.PathError
		if errors.As(err, &pathErr) {
			reason = pathErr.Err
		}
		msg = "cannot read file: " + reason.Error()
	}
	return nil, Errors{{File: path, Msg: msg, Err: err}}
}

// ReadFile reads the file at path and decodes it into v like Decode, naming
// the file by path in every error.
func ReadFile(path string, v any) (*Doc, error) {
	data, err := Read(path)
	if err != nil {
		return nil, err
	}
	return Decode(path, data, v)
}

// unknownKeys converts the decoder's unknown-field report. Each key is
// reported once, at its first definition, with the keys that would be valid
// in its table.
func (ix *indexer) unknownKeys(root reflect.Type, strict *toml.StrictMissingError) Errors {
	errs := make(Errors, 0, len(strict.Errors))
	seen := make(map[string]bool, len(strict.Errors))
	for i := range strict.Errors {
		e := ix.unknownKey(root, &strict.Errors[i])
		if seen[e.Key] {
			continue
		}
		seen[e.Key] = true
		errs = append(errs, e)
	}
	errs.Sort()
	return errs
}

func (ix *indexer) unknownKey(root reflect.Type, de *toml.DecodeError) *Error {
	line, col := de.Position()
	e := &Error{File: ix.doc.File, Line: line, Column: col, Msg: "unknown key", Err: ErrUnknownKey}
	t, ok := ix.at[position{line: line, col: col}]
	if !ok {
		e.Key = joinKeys(de.Key())
		return e
	}
	segs := ix.doc.segs(t.stmt)
	n, parent, stop := walkType(root, segs)
	if stop != walkUnknownKey {
		e.Key = ix.doc.path(t.stmt)
		return e
	}
	at := ix.doc.ancestor(t.stmt, n+1)
	e.Key = ix.doc.path(at)
	e.Line, e.Column = ix.doc.nodes[at].line, ix.doc.nodes[at].col
	if valid := ix.validKeys(parent, n == 0); len(valid) > 0 {
		e.Msg += "; valid keys here: " + strings.Join(valid, ", ")
	} else {
		e.Msg += "; no keys are valid here"
	}
	return e
}

// decodeError converts a decoder error other than unknown fields. When its
// position is a key or value of the document, the target type is followed
// along that path to name the key at fault and the kinds involved.
func (ix *indexer) decodeError(root reflect.Type, de *toml.DecodeError) *Error {
	line, col := de.Position()
	e := &Error{
		File: ix.doc.File, Line: line, Column: col,
		Key: joinKeys(de.Key()),
		Msg: strings.TrimPrefix(de.Error(), "toml: "),
		Err: ErrSyntax,
	}
	t, ok := ix.at[position{line: line, col: col}]
	if !ok {
		return e
	}
	segs := ix.doc.segs(t.stmt)
	n, at, stop := walkType(root, segs)
	keyID := t.stmt
	switch stop {
	case walkUnknownKey:
		// Not a kind problem; go-toml's message is the best there is.
		e.Key = ix.doc.path(keyID)
		return e
	case walkMismatch:
		keyID = ix.doc.ancestor(t.stmt, n)
	}
	e.Key = ix.doc.path(keyID)
	if keyID != t.node && keyID != 0 {
		e.Line, e.Column = ix.doc.nodes[keyID].line, ix.doc.nodes[keyID].col
	}
	expected, got := expectedKind(at), ix.doc.nodes[keyID].kind
	if !compatibleKinds(expected, got) {
		e.Msg = "expected " + expected + ", got " + got
		e.Err = ErrType
	} else if t.value {
		e.Err = ErrType
	}
	return e
}

// caseMismatches finds keys that the decoder matched to a struct field only
// by ignoring case. go-toml accepts them, but a file that says "Name" where
// "name" is meant is misspelled, and strictness means saying so. Every key
// of the document is an index node, so checking each node's part covers them
// all. The target type is followed down the index tree once, parents before
// children, so the check costs time in proportion to the document.
func (ix *indexer) caseMismatches(root reflect.Type) Errors {
	nodes := ix.doc.nodes
	// types[i] is the type at node i's path, nil when the path does not lead through
	// v's type to the end (walkType would stop early).
	types := make([]reflect.Type, len(nodes))
	types[0] = root
	var found []int32
	for i := 1; i < len(nodes); i++ {
		nd := &nodes[i]
		parent := types[nd.parent]
		if parent == nil {
			continue
		}
		types[i] = stepType(parent, nd.seg)
		t := deref(parent)
		if nd.seg.isIndex || t == nil || t.Kind() != reflect.Struct || scalarKind(t) != "" {
			continue
		}
		if _, ok, exact := lookupField(t, nd.seg.key); ok && !exact {
			found = append(found, int32(i))
		}
	}
	errs := make(Errors, 0, len(found))
	for _, id := range found {
		nd := nodes[id]
		errs = append(errs, &Error{
			File: ix.doc.File, Line: nd.line, Column: nd.col, Key: ix.doc.path(id),
			Msg: "unknown key (keys are case-sensitive); valid keys here: " + strings.Join(ix.validKeys(deref(types[nd.parent]), nd.depth == 1), ", "),
			Err: ErrUnknownKey,
		})
	}
	// Sorted by path, then by position, so that errors at one position keep a deterministic
	// order.
	slices.SortFunc(errs, func(a, b *Error) int { return strings.Compare(a.Key, b.Key) })
	errs.Sort()
	return errs
}

// validKeys is the package's validKeys for the struct that lacks a key, plus, at the document's
// root (root), the keys the caller reads itself (DecodeTable's also).
func (ix *indexer) validKeys(t reflect.Type, root bool) []string {
	valid := validKeys(t)
	if root && len(ix.also) > 0 {
		valid = append(valid, ix.also...)
		slices.Sort(valid)
		valid = slices.Compact(valid)
	}
	return valid
}

// joinKeys renders a go-toml key (parts without array indices) as a path.
func joinKeys(parts []string) string {
	path := ""
	for _, p := range parts {
		path = JoinKey(path, p)
	}
	return path
}
