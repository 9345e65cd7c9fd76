package gobtest

import (
	"reflect"
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
