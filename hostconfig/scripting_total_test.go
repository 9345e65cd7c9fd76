package hostconfig

import (
	"errors"
	"testing"

	"github.com/warrenhq/warren/internal/tomlfile"
)

// TestScriptTotalMemory: max_total_memory reads as max_memory does (a byte count or a size),
// defaults to 16 times max_memory, and is refused with the file, line, key and what is valid
// when it is misspelled, out of range, of the wrong type or below max_memory.
func TestScriptTotalMemory(t *testing.T) {
	if got := DefaultScripting().MaxTotalMemory; got != 1<<30 {
		t.Fatalf("DefaultScripting().MaxTotalMemory = %d, want 1 GiB", got)
	}
	good := []struct {
		name, src string
		want      int64
	}{
		{"left out", "[scripting]\ncall_timeout = \"2s\"\n", 1 << 30},
		{"left out follows max_memory", "[scripting]\nmax_memory = \"128MiB\"\n", 2 << 30},
		{"left out follows the largest max_memory", "[scripting]\nmax_memory = \"4GiB\"\n", 64 << 30},
		{"a size", "[scripting]\nmax_total_memory = \"2GiB\"\n", 2 << 30},
		{"a byte count equal to max_memory", "[scripting]\nmax_total_memory = 67108864\n", 64 << 20},
		{"with a smaller max_memory", "[scripting]\nmax_memory = \"1MiB\"\nmax_total_memory = \"3MiB\"\n", 3 << 20},
		{"the upper bound", "[scripting]\nmax_total_memory = \"1TiB\"\n", 1 << 40},
	}
	for _, tt := range good {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := Load(writeConfig(t, tt.src), knownTools)
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Scripting.MaxTotalMemory != tt.want {
				t.Errorf("MaxTotalMemory = %d, want %d", cfg.Scripting.MaxTotalMemory, tt.want)
			}
		})
	}
	bad := []struct {
		name, src, want string
		sentinel        error
	}{
		{"misspelled size", "[scripting]\nmax_total_memory = \"1GB\"\n",
			`:2:1: scripting.max_total_memory: invalid size "1GB"; write a byte count as an integer, or a string such as "64KiB", "16MiB" or "4GiB" (units KiB, MiB, GiB, TiB)`, ErrBadSize},
		{"below the range", "[scripting]\nmax_total_memory = \"512KiB\"\n",
			`:2:1: scripting.max_total_memory: out of range: "512KiB"; valid: 1MiB to 1TiB (the memory all the script calls running at once may build)`, ErrOutOfRange},
		{"above the range", "[scripting]\nmax_total_memory = \"2TiB\"\n",
			`:2:1: scripting.max_total_memory: out of range: "2TiB"; valid: 1MiB to 1TiB (the memory all the script calls running at once may build)`, ErrOutOfRange},
		{"negative", "[scripting]\nmax_total_memory = -1\n",
			`:2:1: scripting.max_total_memory: out of range: -1; valid: 1MiB to 1TiB (the memory all the script calls running at once may build)`, ErrOutOfRange},
		{"below the default max_memory", "[scripting]\nmax_total_memory = \"32MiB\"\n",
			`:2:1: scripting.max_total_memory: out of range: "32MiB" is below max_memory (64MiB), so no script call could ever start; valid: max_memory to 1TiB (the memory all the script calls running at once may build)`, ErrOutOfRange},
		{"below a given max_memory", "[scripting]\nmax_total_memory = 3145728\nmax_memory = \"4MiB\"\n",
			`:2:1: scripting.max_total_memory: out of range: 3145728 is below max_memory (4MiB), so no script call could ever start; valid: max_memory to 1TiB (the memory all the script calls running at once may build)`, ErrOutOfRange},
		{"wrong type", "[scripting]\nmax_total_memory = true\n",
			`:2:1: scripting.max_total_memory: invalid value type: expected integer or string, got boolean; write a byte count as an integer, or a string such as "64KiB", "16MiB" or "4GiB" (units KiB, MiB, GiB, TiB)`, tomlfile.ErrType},
		{"unknown key", "[scripting]\nmax_totl_memory = \"1GiB\"\n",
			`:2:1: scripting.max_totl_memory: unknown key; valid keys here: allow_env, call_timeout, http_allow_private, http_timeout, max_call_stack, max_http_response_bytes, max_memory, max_total_memory, tools_dir`, tomlfile.ErrUnknownKey},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			path := writeConfig(t, tt.src)
			_, err := Load(path, knownTools)
			if err == nil {
				t.Fatal("Load accepted it")
			}
			if got := err.Error(); got != path+tt.want {
				t.Errorf("error =\n%s\nwant\n%s", got, path+tt.want)
			}
			if !errors.Is(err, tt.sentinel) {
				t.Errorf("the error does not wrap %v", tt.sentinel)
			}
		})
	}
}
