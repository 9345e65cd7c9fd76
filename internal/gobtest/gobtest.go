// Package gobtest passes values through gob for the tests of world snapshots: an image must
// survive the encoding a snapshot stores it in, not only a copy in memory.
package gobtest

import (
	"bytes"
	"encoding/gob"
	"reflect"
	"slices"
	"strings"
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

// Mirrors fails t unless every field of Live, the type a world keeps, has a field of the same
// name (its first letter's case aside) in Image, the type its snapshot stores, but those left
// names, which the image makes again instead of keeping. A mirror image written field by field
// must fail its test when the live type grows, or the new field is lost at a restore in silence.
func Mirrors[Live, Image any](t testing.TB, left ...string) {
	t.Helper()
	live, img := reflect.TypeFor[Live](), reflect.TypeFor[Image]()
	have := map[string]bool{}
	for i := range img.NumField() {
		have[strings.ToLower(img.Field(i).Name)] = true
	}
	for i := range live.NumField() {
		name := live.Field(i).Name
		if !have[strings.ToLower(name)] && !slices.Contains(left, name) {
			t.Errorf("%s.%s has no field in %s: image it there, or say why it is made again instead", live, name, img)
		}
	}
}
