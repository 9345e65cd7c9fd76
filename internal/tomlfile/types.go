package tomlfile

import (
	"encoding"
	"reflect"
	"slices"
	"strings"
	"time"

	toml "github.com/pelletier/go-toml/v2"
)

// Names of TOML value kinds as they appear in error messages. The decoder
// target's Go types are described with the same words so that a mismatch
// reads "expected integer, got string".
const (
	kindString        = "string"
	kindInteger       = "integer"
	kindFloat         = "float"
	kindBoolean       = "boolean"
	kindArray         = "array"
	kindTable         = "table"
	kindArrayOfTables = "array of tables"
	kindDateTime      = "date-time"
	kindLocalDateTime = "local date-time"
	kindLocalDate     = "local date"
	kindLocalTime     = "local time"
)

var (
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
	timeType            = reflect.TypeFor[time.Time]()
	localDateType       = reflect.TypeFor[toml.LocalDate]()
	localTimeType       = reflect.TypeFor[toml.LocalTime]()
	localDateTimeType   = reflect.TypeFor[toml.LocalDateTime]()
)

// deref strips pointers: the decoder allocates through them, so *int accepts
// what int accepts.
func deref(t reflect.Type) reflect.Type {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

// scalarKind returns the TOML kind of Go types that the decoder fills from a
// single value even though their Go kind is a struct or slice (times and
// encoding.TextUnmarshaler implementations), or "" for any other type.
func scalarKind(t reflect.Type) string {
	switch t {
	case timeType:
		return kindDateTime
	case localDateType:
		return kindLocalDate
	case localTimeType:
		return kindLocalTime
	case localDateTimeType:
		return kindLocalDateTime
	}
	if reflect.PointerTo(t).Implements(textUnmarshalerType) {
		return kindString
	}
	return ""
}

// expectedKind describes, in TOML words, what the decoder accepts for a
// value of Go type t. It returns "" when t accepts anything (an interface).
func expectedKind(t reflect.Type) string {
	t = deref(t)
	if t == nil {
		return ""
	}
	if k := scalarKind(t); k != "" {
		return k
	}
	switch t.Kind() {
	case reflect.String:
		return kindString
	case reflect.Bool:
		return kindBoolean
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return kindInteger
	case reflect.Float32, reflect.Float64:
		return kindFloat
	case reflect.Slice, reflect.Array:
		if elem := expectedKind(t.Elem()); elem == kindTable {
			return kindArrayOfTables
		}
		return kindArray
	case reflect.Struct, reflect.Map:
		return kindTable
	}
	return ""
}

// compatibleKinds reports whether a document value of kind got could be
// stored where expected is wanted, as far as the kind alone can tell. An
// inline array of tables and a [[header]] array of tables are the same thing
// to the decoder.
func compatibleKinds(expected, got string) bool {
	isArray := func(k string) bool { return k == kindArray || k == kindArrayOfTables }
	return expected == "" || got == "" || expected == got || isArray(expected) && isArray(got)
}

// field is one key a struct accepts.
type field struct {
	name string
	typ  reflect.Type
}

// tomlFields lists the keys struct type t accepts, following the decoder's
// rules: the `toml` tag names the key (the Go field name when the tag has
// none), "-" hides a field, unexported fields are ignored, and untagged
// embedded structs contribute their own fields.
func tomlFields(t reflect.Type) []field {
	var fields []field
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
		if name == "-" {
			continue
		}
		if f.Anonymous && name == "" {
			if embedded := deref(f.Type); embedded.Kind() == reflect.Struct && scalarKind(embedded) == "" {
				fields = append(fields, tomlFields(embedded)...)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		fields = append(fields, field{name: name, typ: f.Type})
	}
	return fields
}

// validKeys returns the sorted, de-duplicated keys struct type t accepts,
// for "valid keys here" messages.
func validKeys(t reflect.Type) []string {
	fields := tomlFields(t)
	names := make([]string, 0, len(fields))
	for _, f := range fields {
		names = append(names, f.name)
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// lookupField finds the type of the field that key decodes into: an exact
// name match first, then a case-insensitive one, as the decoder does. exact
// reports which of the two matched.
func lookupField(t reflect.Type, key string) (typ reflect.Type, found, exact bool) {
	fields := tomlFields(t)
	for _, f := range fields {
		if f.name == key {
			return f.typ, true, true
		}
	}
	for _, f := range fields {
		if strings.EqualFold(f.name, key) {
			return f.typ, true, false
		}
	}
	return nil, false, false
}

// walkStop says why walkType stopped.
type walkStop uint8

const (
	// walkDone: every segment resolved (or an interface accepts the rest).
	walkDone walkStop = iota
	// walkUnknownKey: a struct has no field for the segment's key.
	walkUnknownKey
	// walkMismatch: the segment needs a table or array but the type there
	// holds a single value.
	walkMismatch
)

// walkType follows segs through Go type t the way the decoder would. It
// returns how many segments resolved, the type reached after them (for
// walkUnknownKey, the struct that lacks the key) and why it stopped.
func walkType(t reflect.Type, segs []segment) (resolved int, at reflect.Type, stop walkStop) {
	for i, s := range segs {
		t = deref(t)
		if t == nil {
			return i, t, walkMismatch
		}
		container := scalarKind(t) == ""
		switch kind := t.Kind(); {
		case kind == reflect.Interface:
			return len(segs), t, walkDone
		case s.isIndex && container && (kind == reflect.Slice || kind == reflect.Array):
			t = t.Elem()
		case !s.isIndex && container && kind == reflect.Map:
			t = t.Elem()
		case !s.isIndex && container && kind == reflect.Struct:
			ft, found, _ := lookupField(t, s.key)
			if !found {
				return i, t, walkUnknownKey
			}
			t = ft
		default:
			return i, t, walkMismatch
		}
	}
	return len(segs), t, walkDone
}

// stepType is one step of walkType: the type below t at the part s, or nil where walkType
// would stop (an interface accepts anything below it, so it stays the type there).
func stepType(t reflect.Type, s segment) reflect.Type {
	t = deref(t)
	if t == nil {
		return nil
	}
	container := scalarKind(t) == ""
	switch kind := t.Kind(); {
	case kind == reflect.Interface:
		return t
	case s.isIndex && container && (kind == reflect.Slice || kind == reflect.Array):
		return t.Elem()
	case !s.isIndex && container && kind == reflect.Map:
		return t.Elem()
	case !s.isIndex && container && kind == reflect.Struct:
		if ft, found, _ := lookupField(t, s.key); found {
			return ft
		}
	}
	return nil
}
