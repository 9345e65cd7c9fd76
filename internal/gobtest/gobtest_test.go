package gobtest

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

type image struct {
	Names []string
	Next  *image
}

func TestRoundTripGivesBackAnEqualValue(t *testing.T) {
	in := image{Names: []string{"a", "b"}, Next: &image{Names: []string{"c"}}}
	if out := RoundTrip(t, in); !reflect.DeepEqual(out, in) || out.Next == in.Next {
		t.Fatalf("round trip gave %+v for %+v", out, in)
	}
}

type liveThing struct {
	name  string
	Count int
	cache map[string]int
}

type thingImage struct {
	Name  string
	Count int
}

// recorder is a testing.TB that keeps what it is told of failures.
type recorder struct {
	testing.TB
	errors []string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

func TestMirrorsFindsAFieldTheImageMisses(t *testing.T) {
	Mirrors[liveThing, thingImage](t, "cache")
	r := &recorder{}
	Mirrors[liveThing, thingImage](r)
	if len(r.errors) != 1 || !strings.Contains(r.errors[0], "liveThing.cache") {
		t.Fatalf("Mirrors without the cache left out reported %q, want the cache field", r.errors)
	}
}
