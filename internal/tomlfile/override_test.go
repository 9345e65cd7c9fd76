package tomlfile

import (
	"errors"
	"strings"
	"testing"
)

// TestOverride: each kind of scalar is replaced in place, in its own kind, and every other byte of
// the document (so every line and column) stays; keys the document does not set, tables, arrays
// and values of the wrong kind are refused with what to do.
func TestOverride(t *testing.T) {
	doc := `name = "gossip" # the scenario
seed = 7
[limits]
max_ticks = 100
ratio = 0.5
verbose = false
list = [1, 2]

[[groups]]
name = "voters"
count = 10000

[[groups]]
name = "judges"
count = 3
`
	for _, tc := range []struct {
		name, path, value string
		want              string // the line that changed, as it must read
		err               string
	}{
		{"a string", "name", `say "hi"\`, `name = "say \"hi\"\\" # the scenario`, ""},
		{"an integer", "limits.max_ticks", "250", "max_ticks = 250", ""},
		{"a float", "limits.ratio", "0.25", "ratio = 0.25", ""},
		{"a boolean", "limits.verbose", "true", "verbose = true", ""},
		{"an array of tables' element", "groups[1].count", "30", "count = 30", ""},
		{"a control character", "name", "a\tb", `name = "a\u0009b" # the scenario`, ""},
		{"a key not set", "limits.max_turns_per_agent", "9", "", "s.toml does not set it; write the key there"},
		{"an array", "limits.list", "3", "", "s.toml:7 sets it to an array"},
		{"a table", "limits", "3", "", "s.toml:3 sets it to a table"},
		{"not an integer", "groups[0].count", "many", "", "s.toml:11:9 sets it to an integer, and the new value is not an integer"},
		{"not a boolean", "limits.verbose", "yes", "", "not true or false"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := Override("s.toml", []byte(doc), tc.path, tc.value)
			if tc.err != "" {
				if !errors.Is(err, ErrOverride) || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want ErrOverride containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			was, now := strings.Split(doc, "\n"), strings.Split(string(out), "\n")
			if len(was) != len(now) {
				t.Fatalf("the document has %d lines, was %d", len(now), len(was))
			}
			changed := 0
			for i := range was {
				if was[i] != now[i] {
					changed++
					if now[i] != tc.want {
						t.Errorf("line %d reads %q, want %q", i+1, now[i], tc.want)
					}
				}
			}
			if changed != 1 {
				t.Errorf("%d lines changed, want 1", changed)
			}
			if _, err := Decode("s.toml", out, &struct {
				Name   string         `toml:"name"`
				Seed   int            `toml:"seed"`
				Limits map[string]any `toml:"limits"`
				Groups []struct {
					Name  string `toml:"name"`
					Count int    `toml:"count"`
				} `toml:"groups"`
			}{}); err != nil {
				t.Fatalf("the new document does not decode: %v", err)
			}
		})
	}
}
