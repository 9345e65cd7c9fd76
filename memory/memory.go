// Package memory is an agent's own key-value memory: a small store of JSON values under short
// keys that the agent writes with the memory_set tool (and a stage graph with a transition's set
// action) and that conditions, prompt templates, JS policies and expectations read. It is pure
// data with no reference to the world, so the agent's side store holds one and a snapshot
// images it as sorted key/JSON pairs.
//
// The store is bounded (MaxKeys keys, MaxValueBytes per value, MaxBytes in all) so that a model
// writing in a loop cannot grow an agent without limit, and every value is JSON: what is read
// back is what encoding/json decodes (numbers are float64), whoever wrote it.
package memory

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// The store's bounds.
const (
	// MaxKeys is the most keys one agent's memory holds.
	MaxKeys = 256
	// MaxKeyBytes bounds one key.
	MaxKeyBytes = 64
	// MaxValueBytes bounds one value's JSON text.
	MaxValueBytes = 16 << 10
	// MaxBytes bounds the JSON text of all values together.
	MaxBytes = 64 << 10
)

var (
	// ErrBadKey: a key is empty, too long, or not an identifier (letters, digits and '_', not
	// starting with a digit), which conditions could not name as memory.<key>.
	ErrBadKey = errors.New("invalid memory key")
	// ErrBadValue: a value is not JSON, or its JSON is larger than MaxValueBytes.
	ErrBadValue = errors.New("invalid memory value")
	// ErrFull: the write would take the memory past MaxKeys keys or MaxBytes bytes.
	ErrFull = errors.New("memory full")
)

// KeyRule says what a valid key is, for messages.
const KeyRule = "a key is 1 to 64 letters, digits and '_', not starting with a digit"

// CheckKey reports whether key is a valid memory key, wrapping ErrBadKey if not.
func CheckKey(key string) error {
	if key == "" || len(key) > MaxKeyBytes {
		return fmt.Errorf("%w %q: %s", ErrBadKey, key, KeyRule)
	}
	for i := range len(key) {
		c := key[i]
		letter := c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		if !letter && !(i > 0 && c >= '0' && c <= '9') {
			return fmt.Errorf("%w %q: %s", ErrBadKey, key, KeyRule)
		}
	}
	return nil
}

// Entry is one key and its value, as JSON text.
type Entry struct {
	Key  string
	JSON string
}

// Store is one agent's memory. The zero value is empty and ready to use; it is not safe for
// concurrent use (the world writes it, at tick boundaries or from an inline tool).
type Store struct {
	// entries are sorted by key; values the decoded JSON of each, in the same order.
	entries []Entry
	values  []any
	bytes   int
	// view is Map's answer, made on first use after a write.
	view map[string]any
}

// Set stores value (any value encoding/json can encode) under key, as its JSON; a nil value
// deletes the key, which then reads as nil like a key never set.
func (s *Store) Set(key string, value any) error {
	if value == nil {
		return s.SetJSON(key, nil)
	}
	raw, err := json.Marshal(value)
	if err != nil {
		return fmt.Errorf("%w for %q: %v", ErrBadValue, key, err)
	}
	return s.SetJSON(key, raw)
}

// SetJSON stores the JSON value raw under key; raw that is empty or the JSON null deletes the
// key.
func (s *Store) SetJSON(key string, raw []byte) error {
	if err := CheckKey(key); err != nil {
		return err
	}
	text := strings.TrimSpace(string(raw))
	i, found := slices.BinarySearchFunc(s.entries, key, func(e Entry, k string) int { return strings.Compare(e.Key, k) })
	if text == "" || text == "null" {
		if found {
			s.bytes -= len(s.entries[i].JSON)
			s.entries = slices.Delete(s.entries, i, i+1)
			s.values = slices.Delete(s.values, i, i+1)
			s.view = nil
		}
		return nil
	}
	var v any
	if err := json.Unmarshal([]byte(text), &v); err != nil {
		return fmt.Errorf("%w for %q: not JSON: %v", ErrBadValue, key, err)
	}
	canon, _ := json.Marshal(v) // one spelling per value, whoever wrote it
	if len(canon) > MaxValueBytes {
		return fmt.Errorf("%w for %q: %d bytes of JSON, at most %d", ErrBadValue, key, len(canon), MaxValueBytes)
	}
	old := 0
	if found {
		old = len(s.entries[i].JSON)
	} else if len(s.entries) >= MaxKeys {
		return fmt.Errorf("%w: %d keys already, at most %d; set one to null to remove it", ErrFull, len(s.entries), MaxKeys)
	}
	if s.bytes-old+len(canon) > MaxBytes {
		return fmt.Errorf("%w: %q would take it to %d bytes, at most %d", ErrFull, key, s.bytes-old+len(canon), MaxBytes)
	}
	s.bytes += len(canon) - old
	if found {
		s.entries[i].JSON, s.values[i] = string(canon), v
	} else {
		s.entries = slices.Insert(s.entries, i, Entry{Key: key, JSON: string(canon)})
		s.values = slices.Insert(s.values, i, v)
	}
	s.view = nil
	return nil
}

// Get returns the JSON text stored under key.
func (s *Store) Get(key string) (string, bool) {
	i, found := slices.BinarySearchFunc(s.entries, key, func(e Entry, k string) int { return strings.Compare(e.Key, k) })
	if !found {
		return "", false
	}
	return s.entries[i].JSON, true
}

// Len is the number of keys held.
func (s *Store) Len() int { return len(s.entries) }

// Entries returns the keys and values in key order; the slice is the store's own until the next
// write, so callers that keep it clone it.
func (s *Store) Entries() []Entry { return s.entries }

// Map returns the memory as decoded JSON values by key, for conditions and templates. The map
// is the store's own, made once per write: readers must not modify it.
func (s *Store) Map() map[string]any {
	if s.view == nil && len(s.entries) > 0 {
		s.view = make(map[string]any, len(s.entries))
		for i, e := range s.entries {
			s.view[e.Key] = s.values[i]
		}
	}
	return s.view
}

// Image returns the memory as data (sorted key/JSON pairs that share nothing with the store),
// for snapshots and final records; nil when empty.
func (s *Store) Image() []Entry { return slices.Clone(s.entries) }

// Restore makes a store from an Image. The image is trusted (a snapshot checks its own hash):
// entries are taken in its order, and a value that is not JSON, which only a damaged image could
// hold, reads as its text.
func Restore(img []Entry) Store {
	s := Store{entries: slices.Clone(img), values: make([]any, len(img))}
	for i, e := range img {
		if json.Unmarshal([]byte(e.JSON), &s.values[i]) != nil {
			s.values[i] = e.JSON
		}
		s.bytes += len(e.JSON)
	}
	return s
}
