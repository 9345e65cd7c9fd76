package tomlfile

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// wideTable is a document whose table (shape: a [header], an inline table, the root) has n keys.
func wideTable(shape string, n int) string {
	var b strings.Builder
	switch shape {
	case "header":
		b.WriteString("[params]\n")
	case "inline":
		b.WriteString("params = {")
	}
	for i := range n {
		switch shape {
		case "inline":
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "k%d = %d", i, i)
		default:
			fmt.Fprintf(&b, "k%d = %d\n", i, i)
		}
	}
	if shape == "inline" {
		b.WriteString("}\n")
	}
	return b.String()
}

// TestTableKeysAreCapped: a table of MaxTableKeys keys loads; one more is refused with
// ErrTooManyKeys at the key past the cap, naming the table and the cap, before the decoder's
// quadratic key check sees it (100,000 keys took 19 s). An array of tables with as many elements
// as that is not a table of keys, and loads.
func TestTableKeysAreCapped(t *testing.T) {
	for _, tc := range []struct {
		shape, table string
		line         int // of the key past the cap
	}{{"header", "params", MaxTableKeys + 2}, {"inline", "params", 1}, {"root", "(the document's root)", MaxTableKeys + 1}} {
		t.Run(tc.shape, func(t *testing.T) {
			var v map[string]any
			if _, err := Decode("wide.toml", []byte(wideTable(tc.shape, MaxTableKeys)), &v); err != nil {
				t.Fatalf("%d keys: %v", MaxTableKeys, err)
			}
			_, err := Decode("wide.toml", []byte(wideTable(tc.shape, 100_000)), &v)
			var e *Error
			if !errors.Is(err, ErrTooManyKeys) || !errors.As(err, &e) || e.Key != tc.table || !strings.Contains(err.Error(), "at most 4096 keys") {
				t.Fatalf("100,000 keys: %v, want ErrTooManyKeys naming %s", err, tc.table)
			}
			if e.Line != tc.line {
				t.Errorf("refused at line %d, want %d, the key past the cap", e.Line, tc.line)
			}
		})
	}
	var b strings.Builder
	for i := range 2 * MaxTableKeys {
		fmt.Fprintf(&b, "[[a]]\nk = %d\n", i)
	}
	var v map[string]any
	if _, err := Decode("arrays.toml", []byte(b.String()), &v); err != nil {
		t.Fatalf("an array of %d tables: %v", 2*MaxTableKeys, err)
	}
}
