package tomlfile

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// ErrOverride marks an override that cannot be applied: the document does not set the key, or
// sets it to a table or an array, or the new value is not of the key's kind.
var ErrOverride = errors.New("cannot override")

// scalarSpan is where a scalar value lies in a document, and its TOML kind.
type scalarSpan struct {
	start, end int
	kind       string
}

// Override returns a copy of the TOML document data (named file) in which the scalar value at
// path is replaced by value, written in that value's own kind: a string is quoted, an integer,
// a float and a boolean are parsed as such. Only the value's bytes change, so every line and
// column of the document stays where it was and errors about the new document point at the
// file as written. The document must set the key itself (with its default, when that is what
// it means): a key it leaves out has no place to be overridden, and an error says so. Paths are
// as Doc.Pos takes them ("limits.max_ticks", "groups[1].count").
func Override(file string, data []byte, path, value string) ([]byte, error) {
	ix := newIndexer(file, data)
	ix.scalars = map[int32]scalarSpan{}
	if err := ix.walk(); err != nil {
		return nil, ix.syntaxError(err)
	}
	id, found := ix.doc.lookup(path)
	span, ok := ix.scalars[id]
	if !found || !ok {
		if found {
			e := ix.doc.nodes[id].entry
			return nil, fmt.Errorf("%w %s: %s:%d sets it to %s, and only a string, number or boolean can be given", ErrOverride, path, file, e.line, article(e.kind))
		}
		return nil, fmt.Errorf("%w %s: %s does not set it; write the key there (with its default value) to give it other values", ErrOverride, path, file)
	}
	literal, err := scalarLiteral(span.kind, value)
	if err != nil {
		pos := ix.position(span.start)
		return nil, fmt.Errorf("%w %s = %q: %s:%d:%d sets it to %s, and %w", ErrOverride, path, value, file, pos.line, pos.col, article(span.kind), err)
	}
	out := make([]byte, 0, len(data)-(span.end-span.start)+len(literal))
	out = append(out, data[:span.start]...)
	out = append(out, literal...)
	return append(out, data[span.end:]...), nil
}

// article puts "a" or "an" before a kind's name.
func article(kind string) string {
	if kind != "" && strings.ContainsRune("aeiou", rune(kind[0])) {
		return "an " + kind
	}
	return "a " + kind
}

// scalarLiteral writes value as a TOML literal of kind.
func scalarLiteral(kind, value string) (string, error) {
	switch kind {
	case kindString:
		return quote(value), nil
	case kindInteger:
		if _, err := strconv.ParseInt(value, 10, 64); err != nil {
			return "", errors.New("the new value is not an integer")
		}
		return value, nil
	case kindFloat:
		f, err := strconv.ParseFloat(value, 64)
		if err != nil {
			return "", errors.New("the new value is not a number")
		}
		return strconv.FormatFloat(f, 'g', -1, 64), nil
	case kindBoolean:
		if value != "true" && value != "false" {
			return "", errors.New("the new value is not true or false")
		}
		return value, nil
	}
	return "", fmt.Errorf("a value of kind %s cannot be given", kind)
}

// quote writes s as a TOML basic string: quotes and backslashes escaped, control characters as
// \uXXXX, invalid UTF-8 refused by the caller's parse of the result.
func quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f || r == utf8.RuneError:
			fmt.Fprintf(&b, "\\u%04X", r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
