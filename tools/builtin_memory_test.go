package tools

import (
	"errors"
	"strings"
	"testing"

	"github.com/warrenhq/warren/memory"
)

// TestMemoryTools drives memory_set and memory_get through their handles, as a model's calls
// reach them: values of every JSON kind, replacement, removal by null, reads of one key and of
// all, and the store's bounds as error results.
func TestMemoryTools(t *testing.T) {
	ec := &ExecContext{Memory: &memory.Store{}}
	steps := []struct {
		name, tool, args, want string
		wantErr                error
	}{
		{"a number", NameMemorySet, `{"key":"rounds","value":1}`, "Remembered rounds.", nil},
		{"an object", NameMemorySet, `{"key":"review","value":{"verdict":"revise","notes":["tests"]}}`, "Remembered review.", nil},
		{"replaced", NameMemorySet, `{"key":"rounds","value":2}`, "Remembered rounds.", nil},
		{"one key", NameMemoryGet, `{"key":"rounds"}`, "2", nil},
		{"a key never set", NameMemoryGet, `{"key":"nothing"}`, "null", nil},
		{"every key, in key order", NameMemoryGet, `{}`, `{"review":{"notes":["tests"],"verdict":"revise"},"rounds":2}`, nil},
		{"null forgets", NameMemorySet, `{"key":"review","value":null}`, "Forgot review.", nil},
		{"what is left", NameMemoryGet, `{}`, `{"rounds":2}`, nil},
		{"too large", NameMemorySet, `{"key":"big","value":"` + strings.Repeat("x", memory.MaxValueBytes) + `"}`, "", ErrInvalidArguments},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			tool := Tool(MemorySet{})
			if st.tool == NameMemoryGet {
				tool = MemoryGet{}
			}
			res, err := run(t, tool, ec, st.args)
			if st.wantErr != nil {
				if !errors.Is(err, st.wantErr) {
					t.Fatalf("err = %v, want %v", err, st.wantErr)
				}
				return
			}
			if err != nil || res.Content != st.want {
				t.Fatalf("got %q, %v; want %q", res.Content, err, st.want)
			}
		})
	}
	if v, _ := ec.Memory.Get("rounds"); v != "2" || ec.Memory.Len() != 1 {
		t.Fatalf("memory holds %v", ec.Memory.Entries())
	}
}

// TestMemoryToolsNeedTheWorld: with no memory at hand (a script's callTool, a bare context) the
// tools refuse with ErrNoMemory rather than write somewhere the world does not see.
func TestMemoryToolsNeedTheWorld(t *testing.T) {
	for tool, args := range map[Tool]string{MemorySet{}: `{"key":"k","value":1}`, MemoryGet{}: `{"key":"k"}`} {
		if _, err := run(t, tool, &ExecContext{}, args); !errors.Is(err, ErrNoMemory) {
			t.Errorf("%s without memory: err = %v, want ErrNoMemory", tool.Spec().Name, err)
		}
	}
}
