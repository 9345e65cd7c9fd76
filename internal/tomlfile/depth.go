package tomlfile

import (
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"
)

// MaxDepth is how many parts a key's path may have: each key of its [table] or [[array]]
// header (an array of tables' element counting one more), of its dotted key and of the keys of
// the inline tables around it, and each array it is in. Warren's files need a handful (the
// deepest shipped scenario, blueprint or config has 9 parts); the cap keeps a hostile file (a dotted key
// 20,000 parts long) from costing time and memory out of proportion to its size, and it is
// checked in one pass over the bytes before the file is parsed.
const MaxDepth = 64

// ErrTooDeep marks a document nested past MaxDepth; test it with errors.Is on what Decode,
// ReadFile, DecodeTable or Override return.
var ErrTooDeep = errors.New("nested too deep")

// tooDeepMsg is the message of every ErrTooDeep error: the cap and what would be valid.
var tooDeepMsg = fmt.Sprintf("nested more than %d levels deep; a key's path may have at most %d parts "+
	"(each key of its [table] header, of a dotted key and of the inline tables around it, and each "+
	"array it is in, count one): flatten the structure", MaxDepth, MaxDepth)

// maxKeyInError is how many bytes of the key as far as read an ErrTooDeep error shows.
const maxKeyInError = 120

// tooDeepError is the error of a part seg below node parent, at pos, that passes MaxDepth.
func (d *Doc) tooDeepError(parent int32, seg segment, pos position) *Error {
	key := d.path(parent)
	if seg.isIndex {
		key = JoinIndex(key, seg.index)
	} else {
		key = JoinKey(key, seg.key)
	}
	return &Error{File: d.File, Line: pos.line, Column: pos.col, Key: shortKey(key), Msg: tooDeepMsg, Err: ErrTooDeep}
}

// shortKey cuts key to maxKeyInError bytes (on a character boundary), marking the cut.
func shortKey(key string) string {
	if len(key) <= maxKeyInError {
		return key
	}
	cut := maxKeyInError
	for cut > 0 && !utf8.RuneStart(key[cut]) {
		cut--
	}
	return key[:cut] + "..."
}

// depthFrame is an array or inline table the depth check is inside.
type depthFrame struct {
	// array is true for an array, false for an inline table.
	array bool
	// depth is the number of parts of the path of the value the frame is.
	depth int
	// keyLen is the length of the key as far as read when the frame opened; index counts
	// an array's elements.
	keyLen, index int
}

// depthScan is the state of checkDepth's one pass.
type depthScan struct {
	ix    *indexer
	data  []byte
	i     int
	stack []depthFrame
	// key is the path as far as read (at most maxKeyInError+1 bytes kept), for the error;
	// table is the current table header's part of it and tableDepth its number of parts.
	key        []byte
	table      []byte
	tableDepth int
}

// checkDepth refuses a document nested past MaxDepth, in one pass over its bytes, with no
// recursion and no memory beyond MaxDepth frames: strings (basic, literal and multi-line),
// comments, table headers, dotted keys, arrays and inline tables are followed as TOML writes
// them. Where the bytes are not TOML it stops and leaves the error to the parser (and the
// index's own depth count, record, to anything it might have missed). The error is an *Error
// wrapping ErrTooDeep at the part that passes the cap, naming the key as far as read.
func (ix *indexer) checkDepth() *Error {
	s := &depthScan{ix: ix, data: ix.data}
	err, _ := s.run()
	return err
}

// run scans the document; ok is false when it stopped at bytes that are not TOML.
func (s *depthScan) run() (*Error, bool) {
	for {
		// A statement: blank, comment, header or key/value.
		s.skipBlank(true)
		if s.i >= len(s.data) {
			return nil, true
		}
		depth := 0
		switch s.data[s.i] {
		case '[':
			s.i++
			array := s.i < len(s.data) && s.data[s.i] == '['
			if array {
				s.i++
			}
			s.key = s.key[:0]
			n, err, ok := s.keyParts(0)
			if err != nil || !ok {
				return err, ok
			}
			if array {
				n++
				if n > MaxDepth {
					return s.tooDeep("[]"), true
				}
			}
			if !s.expect(']') || array && !s.expect(']') {
				return nil, false
			}
			s.table = append(s.table[:0], s.key...)
			s.tableDepth = n
			if !s.endOfLine() {
				return nil, false
			}
			continue
		default:
			s.key = append(s.key[:0], s.table...)
			n, err, ok := s.keyParts(s.tableDepth)
			if err != nil || !ok {
				return err, ok
			}
			depth = s.tableDepth + n
			if !s.expect('=') {
				return nil, false
			}
		}
		if err, ok := s.value(depth); err != nil || !ok {
			return err, ok
		}
		if !s.endOfLine() {
			return nil, false
		}
	}
}

// value scans the value of a key/value whose path has depth parts, with every array and inline
// table in it, leaving s.i after it.
func (s *depthScan) value(depth int) (*Error, bool) {
	s.stack = s.stack[:0]
	for {
		// A value at depth.
		s.skipBlank(len(s.stack) > 0)
		if s.i >= len(s.data) {
			return nil, false
		}
		switch c := s.data[s.i]; {
		case c == '[':
			if depth+1 > MaxDepth {
				return s.tooDeep("[0]"), true
			}
			s.i++
			s.stack = append(s.stack, depthFrame{array: true, depth: depth, keyLen: len(s.key)})
			s.appendKey("[0]")
			depth++
			s.skipBlank(true)
			if s.i < len(s.data) && s.data[s.i] == ']' {
				// An empty array.
				s.i++
				s.pop()
				break
			}
			continue
		case c == '{':
			s.i++
			s.stack = append(s.stack, depthFrame{depth: depth, keyLen: len(s.key)})
			s.skipBlank(true)
			if s.i < len(s.data) && s.data[s.i] == '}' {
				s.i++
				s.pop()
				break
			}
			n, err, ok := s.keyParts(depth)
			if err != nil || !ok {
				return err, ok
			}
			depth += n
			if !s.expect('=') {
				return nil, false
			}
			continue
		case c == '"' || c == '\'':
			if !s.skipString() {
				return nil, false
			}
		default:
			// A number, boolean or date (which may hold a space): up to what ends a value.
			start := s.i
			for s.i < len(s.data) && !isValueEnd(s.data[s.i]) {
				s.i++
			}
			if s.i == start {
				return nil, false
			}
		}
		// After a value: the end of the statement, or the next element, key or closing.
		for {
			if len(s.stack) == 0 {
				return nil, true
			}
			s.skipBlank(true)
			if s.i >= len(s.data) {
				return nil, false
			}
			top := &s.stack[len(s.stack)-1]
			c := s.data[s.i]
			if c == ',' {
				s.i++
				s.key = s.key[:min(top.keyLen, len(s.key))]
				if top.array {
					top.index++
					s.skipBlank(true)
					if s.i < len(s.data) && s.data[s.i] == ']' {
						// A trailing comma.
						s.i++
						s.pop()
						continue
					}
					s.appendKey("[" + strconv.Itoa(top.index) + "]")
					depth = top.depth + 1
					break
				}
				s.skipBlank(true)
				if s.i < len(s.data) && s.data[s.i] == '}' {
					// A trailing comma, which go-toml takes in an inline table (TOML 1.1).
					s.i++
					s.pop()
					continue
				}
				n, err, ok := s.keyParts(top.depth)
				if err != nil || !ok {
					return err, ok
				}
				depth = top.depth + n
				if !s.expect('=') {
					return nil, false
				}
				break
			}
			if top.array && c == ']' || !top.array && c == '}' {
				s.i++
				s.pop()
				continue
			}
			return nil, false
		}
	}
}

// pop closes the innermost array or inline table, restoring the key to what it was there.
func (s *depthScan) pop() {
	top := s.stack[len(s.stack)-1]
	s.stack = s.stack[:len(s.stack)-1]
	s.key = s.key[:min(top.keyLen, len(s.key))]
}

// keyParts scans a (possibly dotted) key below a path of depth parts, appending it to s.key,
// and returns its number of parts; err is set at the first part past MaxDepth.
func (s *depthScan) keyParts(depth int) (n int, err *Error, ok bool) {
	for {
		s.skipBlank(false)
		if s.i >= len(s.data) {
			return n, nil, false
		}
		start := s.i
		switch c := s.data[s.i]; {
		case c == '"' || c == '\'':
			if !s.skipString() {
				return n, nil, false
			}
		case isBareKeyByte(c):
			for s.i < len(s.data) && isBareKeyByte(s.data[s.i]) {
				s.i++
			}
		default:
			return n, nil, false
		}
		n++
		if len(s.key) > 0 {
			s.appendKey(".")
		}
		s.appendKey(string(s.data[start:s.i]))
		if depth+n > MaxDepth {
			return n, s.tooDeepAt(start), true
		}
		s.skipBlank(false)
		if s.i >= len(s.data) || s.data[s.i] != '.' {
			return n, nil, true
		}
		s.i++
	}
}

// appendKey adds text to the key as far as read, keeping no more than the error shows.
func (s *depthScan) appendKey(text string) {
	if room := maxKeyInError + 1 - len(s.key); room > 0 {
		s.key = append(s.key, text[:min(room, len(text))]...)
	}
}

// tooDeep is the error at s.i, for the key as far as read followed by more.
func (s *depthScan) tooDeep(more string) *Error {
	s.appendKey(more)
	return s.tooDeepAt(s.i)
}

// tooDeepAt is the error at offset, for the key as far as read.
func (s *depthScan) tooDeepAt(offset int) *Error {
	pos := s.ix.position(offset)
	return &Error{File: s.ix.doc.File, Line: pos.line, Column: pos.col, Key: shortKey(string(s.key)), Msg: tooDeepMsg, Err: ErrTooDeep}
}

// expect consumes c after optional blanks, reporting whether it was there.
func (s *depthScan) expect(c byte) bool {
	s.skipBlank(false)
	if s.i < len(s.data) && s.data[s.i] == c {
		s.i++
		return true
	}
	return false
}

// endOfLine consumes blanks and a comment up to the end of the line (or of the document).
func (s *depthScan) endOfLine() bool {
	s.skipBlank(false)
	if s.i < len(s.data) && s.data[s.i] == '#' {
		s.skipComment()
	}
	if s.i >= len(s.data) {
		return true
	}
	switch s.data[s.i] {
	case '\n':
		s.i++
		return true
	case '\r':
		return true // skipBlank(true) takes it with the newline
	}
	return false
}

// skipBlank skips spaces and tabs, and with lines also newlines and comments.
func (s *depthScan) skipBlank(lines bool) {
	for s.i < len(s.data) {
		switch s.data[s.i] {
		case ' ', '\t':
		case '\r', '\n':
			if !lines {
				return
			}
		case '#':
			if !lines {
				return
			}
			s.skipComment()
			continue
		default:
			return
		}
		s.i++
	}
}

// skipComment skips a comment up to (not including) the end of its line.
func (s *depthScan) skipComment() {
	for s.i < len(s.data) && s.data[s.i] != '\n' && s.data[s.i] != '\r' {
		s.i++
	}
}

// skipString skips a basic, literal or multi-line string starting at s.i, reporting whether it
// ends (a one-line string must end on its line).
func (s *depthScan) skipString() bool {
	q := s.data[s.i]
	if s.i+2 < len(s.data) && s.data[s.i+1] == q && s.data[s.i+2] == q {
		// Multi-line: up to three quotes, and the up to two more the string may end with.
		s.i += 3
		for s.i < len(s.data) {
			c := s.data[s.i]
			switch {
			case c == '\\' && q == '"':
				s.i += 2
				continue
			case c == q && s.i+2 < len(s.data) && s.data[s.i+1] == q && s.data[s.i+2] == q:
				s.i += 3
				for extra := 0; extra < 2 && s.i < len(s.data) && s.data[s.i] == q; extra++ {
					s.i++
				}
				return true
			}
			s.i++
		}
		return false
	}
	s.i++
	for s.i < len(s.data) {
		switch c := s.data[s.i]; {
		case c == q:
			s.i++
			return true
		case c == '\n':
			return false
		case c == '\\' && q == '"':
			s.i++
		}
		s.i++
	}
	return false
}

// isValueEnd reports whether c ends a number, boolean or date.
func isValueEnd(c byte) bool {
	switch c {
	case ',', ']', '}', '\n', '\r', '#':
		return true
	}
	return false
}
