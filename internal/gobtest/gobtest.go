// Package gobtest passes values through gob for the tests of world snapshots: an image must
// survive the encoding a snapshot stores it in, not only a copy in memory.
package gobtest

import (
	"bytes"
	"encoding/gob"
	"testing"
)

// RoundTrip encodes v with gob and returns what decoding gives back, failing t on either error.
func RoundTrip[T any](t testing.TB, v T) T {
	t.Helper()
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(v); err != nil {
		t.Fatalf("gob encode %T: %v", v, err)
	}
	var back T
	if err := gob.NewDecoder(&buf).Decode(&back); err != nil {
		t.Fatalf("gob decode %T: %v", v, err)
	}
	return back
}
