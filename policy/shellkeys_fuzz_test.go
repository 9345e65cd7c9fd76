package policy

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// FuzzShellKeys checks that no line makes ShellKeys panic or break its contract: keys sorted,
// unique and all shell keys; no keys when the line is not analysed; the same answer twice.
func FuzzShellKeys(f *testing.F) {
	for _, seed := range []string{
		"git status && go test ./... 2>&1 | tail -n 20", "bash -c 'rm -rf /'", "echo $(( x ))",
		"find . -exec sh -c 'rm \"$1\"' _ {} \\;", "xargs -I{} sh -c 'echo {}'", "a=(1 2); declare -n r=a",
		"cat <<EOF\n$(id)\nEOF", "env -S 'a b' c", "make -j4 -C x t V=1", "[ -v x ] && echo",
		"parallel echo ::: a", "trap 'x' EXIT", "alias a='b c'", "f() { g; }; f", "(( a[$i]++ ))",
	} {
		f.Add(seed)
	}
	if data, err := os.ReadFile(filepath.Join("testdata", "shell", "evasion.txt")); err == nil {
		for _, raw := range strings.Split(string(data), "\n") {
			if _, line, ok := strings.Cut(raw, "\t"); ok && !strings.HasPrefix(raw, "#") {
				if unq, err := strconv.Unquote(line); err == nil && strings.HasPrefix(raw, "q ") {
					line = unq
				}
				f.Add(line)
			}
		}
	}
	f.Fuzz(func(t *testing.T, line string) {
		keys, why := ShellKeysExplained(line)
		if why != "" && keys != nil {
			t.Fatalf("keys %q with reason %q", keys, why)
		}
		if !slices.IsSorted(keys) || len(slices.Compact(slices.Clone(keys))) != len(keys) {
			t.Fatalf("keys not sorted and unique: %q", keys)
		}
		for _, k := range keys {
			if !IsShellKey(k) || k == shellPrefix {
				t.Fatalf("%q is not a shell key", k)
			}
		}
		again, ok := ShellKeys(line)
		if ok != (why == "") || !slices.Equal(again, keys) {
			t.Fatalf("second call = %q, %v; first = %q, %q", again, ok, keys, why)
		}
	})
}
