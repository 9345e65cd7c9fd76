package tomlfile

import (
	"strconv"
	"strings"
)

// JoinKey appends one key to a dotted path, quoting the key (Go syntax) when
// it is not a bare TOML key, so that a key containing a dot or a space can
// never be confused with two nested keys. JoinKey("", "a") is "a";
// JoinKey("tool_permissions", "read file") is `tool_permissions."read file"`.
// Callers use it to build the paths they pass to [Doc.Pos] and [Doc.Errorf]
// for user-chosen keys such as tool names.
func JoinKey(parent, key string) string {
	if !isBareKey(key) {
		key = strconv.Quote(key)
	}
	if parent == "" {
		return key
	}
	return parent + "." + key
}

// JoinIndex appends an array index to a path: JoinIndex("stages", 2) is
// "stages[2]".
func JoinIndex(parent string, index int) string {
	return parent + "[" + strconv.Itoa(index) + "]"
}

// isBareKey reports whether key can be written unquoted in TOML, which is
// also when it needs no quoting in a path.
func isBareKey(key string) bool {
	if key == "" {
		return false
	}
	for i := 0; i < len(key); i++ {
		if !isBareKeyByte(key[i]) {
			return false
		}
	}
	return true
}

func isBareKeyByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// segment is one step of a path: a key, or an array index when isIndex.
type segment struct {
	key     string
	index   int
	isIndex bool
	// end is the byte offset in the path just after this segment, so the
	// path of the parent of segment i+1 is path[:segs[i].end].
	end int
}

// splitPath parses a path as built by JoinKey and JoinIndex. ok is false when
// the path is malformed; the segments read before the problem are still
// returned so callers can fall back to the longest valid prefix.
func splitPath(path string) (segs []segment, ok bool) {
	i := 0
	for i < len(path) {
		afterDot := false
		if len(segs) > 0 && path[i] == '.' {
			i++
			afterDot = true
			if i == len(path) {
				return segs, false
			}
		}
		switch c := path[i]; {
		case c == '[':
			closing := strings.IndexByte(path[i:], ']')
			if closing < 0 || len(segs) == 0 || afterDot {
				return segs, false
			}
			n, err := strconv.Atoi(path[i+1 : i+closing])
			if err != nil || n < 0 {
				return segs, false
			}
			i += closing + 1
			segs = append(segs, segment{index: n, isIndex: true, end: i})
		case c == '"':
			j := i + 1
			for j < len(path) && path[j] != '"' {
				if path[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(path) {
				return segs, false
			}
			key, err := strconv.Unquote(path[i : j+1])
			if err != nil {
				return segs, false
			}
			i = j + 1
			segs = append(segs, segment{key: key, end: i})
		case isBareKeyByte(c):
			j := i
			for j < len(path) && isBareKeyByte(path[j]) {
				j++
			}
			segs = append(segs, segment{key: path[i:j], end: j})
			i = j
		default:
			return segs, false
		}
		if i < len(path) && path[i] != '.' && path[i] != '[' {
			return segs, false
		}
	}
	return segs, true
}
