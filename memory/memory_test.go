package memory

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestCheckKey(t *testing.T) {
	for _, tc := range []struct {
		key string
		ok  bool
	}{
		{"rounds", true}, {"_x", true}, {"a1", true}, {"Verdict_2", true}, {strings.Repeat("k", MaxKeyBytes), true},
		{"", false}, {"2nd", false}, {"a-b", false}, {"a.b", false}, {"é", false}, {strings.Repeat("k", MaxKeyBytes+1), false},
	} {
		if err := CheckKey(tc.key); (err == nil) != tc.ok || (err != nil && !errors.Is(err, ErrBadKey)) {
			t.Errorf("CheckKey(%q) = %v, want ok %v", tc.key, err, tc.ok)
		}
	}
}

// TestStore: values are kept as canonical JSON in key order and read back decoded; null
// removes; Map is remade after each write.
func TestStore(t *testing.T) {
	var s Store
	if s.Map() != nil || s.Len() != 0 {
		t.Fatal("the zero store is not empty")
	}
	must(t, s.Set("b", map[string]any{"z": 1, "a": []int{1, 2}}))
	must(t, s.SetJSON("a", []byte(` "x" `)))
	must(t, s.Set("c", 2.5))
	if got := s.Entries(); !reflect.DeepEqual(got, []Entry{{"a", `"x"`}, {"b", `{"a":[1,2],"z":1}`}, {"c", "2.5"}}) {
		t.Fatalf("entries = %v", got)
	}
	m := s.Map()
	if m["a"] != "x" || m["c"] != 2.5 || m["b"].(map[string]any)["z"] != 1.0 {
		t.Fatalf("map = %v", m)
	}
	must(t, s.Set("c", nil))
	if _, ok := s.Map()["c"]; ok || s.Len() != 2 {
		t.Fatalf("after removing c: %v", s.Map())
	}
	if _, ok := s.Get("c"); ok {
		t.Fatal("c still there")
	}
	if err := s.SetJSON("d", []byte("{nope")); !errors.Is(err, ErrBadValue) {
		t.Fatalf("bad JSON: %v", err)
	}
	if err := s.Set("f", func() {}); !errors.Is(err, ErrBadValue) {
		t.Fatalf("unencodable: %v", err)
	}
}

// TestStoreBounds: a store refuses the write that would pass a bound, and keeps what it had.
func TestStoreBounds(t *testing.T) {
	var s Store
	big := strings.Repeat("x", MaxValueBytes-2) // with its quotes, exactly MaxValueBytes
	must(t, s.Set("v0", big))
	if err := s.Set("too_big", big+"y"); !errors.Is(err, ErrBadValue) {
		t.Fatalf("a value past MaxValueBytes: %v", err)
	}
	for i := 1; i < MaxBytes/MaxValueBytes; i++ {
		must(t, s.Set("v"+string(rune('0'+i)), big))
	}
	if err := s.Set("one_more", "x"); !errors.Is(err, ErrFull) {
		t.Fatalf("past MaxBytes: %v", err)
	}
	must(t, s.Set("v0", "small")) // replacing frees room
	must(t, s.Set("one_more", "x"))
	var keys Store
	for i := range MaxKeys {
		must(t, keys.Set("k"+strings.Repeat("1", i%50)+string(rune('a'+i%26))+string(rune('a'+i/26)), i))
	}
	if err := keys.Set("extra", 1); !errors.Is(err, ErrFull) || keys.Len() != MaxKeys {
		t.Fatalf("past MaxKeys: %v (len %d)", err, keys.Len())
	}
}

func TestRestore(t *testing.T) {
	var s Store
	must(t, s.Set("rounds", 3))
	must(t, s.Set("notes", []string{"a"}))
	back := Restore(s.Image())
	if !reflect.DeepEqual(back.Map(), s.Map()) || !reflect.DeepEqual(back.Entries(), s.Entries()) {
		t.Fatalf("restored %v, want %v", back.Map(), s.Map())
	}
	// Both go on alike: the byte count came back too.
	if back.bytes != s.bytes {
		t.Fatalf("restored %d bytes, want %d", back.bytes, s.bytes)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
