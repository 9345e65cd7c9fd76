package hostconfig

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/warrenhq/warren/internal/tomlfile"
	"github.com/warrenhq/warren/policy"
)

// fileScripting is the [scripting] table as written. Pointers tell an absent key (keep the
// default) from an explicit value.
type fileScripting struct {
	ToolsDir             *string  `toml:"tools_dir"`
	AllowEnv             []string `toml:"allow_env"`
	HTTPAllowPrivate     bool     `toml:"http_allow_private"`
	CallTimeout          *string  `toml:"call_timeout"`
	MaxCallStack         *int64   `toml:"max_call_stack"`
	HTTPTimeout          *string  `toml:"http_timeout"`
	MaxHTTPResponseBytes *int64   `toml:"max_http_response_bytes"`
	MaxMemory            any      `toml:"max_memory"`
	MaxTotalMemory       any      `toml:"max_total_memory"`
}

// Sentinel errors of the [scripting] table, wrapped by the problems Load and Compile report.
var (
	// ErrBadDuration: a [scripting] or [sandbox.limits] timeout is not a Go duration string
	// ("2s", "500ms").
	ErrBadDuration = errors.New("invalid duration")
	// ErrBadEnvName: an allow_env or allow_env_vars entry is not a variable name, or is listed
	// twice.
	ErrBadEnvName = errors.New("invalid environment variable name")
	// ErrEmptyPath: tools_dir is given but empty, which can only be a mistake.
	ErrEmptyPath = errors.New("empty path")
)

// Defaults of the [scripting] table.
const (
	// DefaultScriptCallTimeout is the CPU-time budget of one script tool call; a script still
	// running then is interrupted and its call fails.
	DefaultScriptCallTimeout = 2 * time.Second
	// DefaultScriptMaxCallStack is the deepest JavaScript call stack a script may build, so a
	// runaway recursion fails its call instead of exhausting memory.
	DefaultScriptMaxCallStack = 256
	// DefaultScriptHTTPTimeout bounds one http_get or http_post from a script.
	DefaultScriptHTTPTimeout = 10 * time.Second
	// DefaultScriptMaxHTTPResponseBytes caps the body a script's HTTP call reads: 1 MiB.
	DefaultScriptMaxHTTPResponseBytes = 1 << 20
	// DefaultScriptMaxMemory is the memory budget of one script call, 64 MiB: what its built-ins
	// and host functions may build, counted the same on every machine (and the heap watch lets
	// its own JavaScript grow the heap by twice that). It is scripting.DefaultMaxMemory.
	DefaultScriptMaxMemory = 64 << 20
	// DefaultScriptTotalCalls is how many script calls the run-wide memory total holds at their
	// whole budget when max_total_memory is left out: it defaults to this many times max_memory
	// (1 GiB at the default 64 MiB), about what the per-call heap-watch threshold (twice
	// max_memory) allows the tool lane's eight workers on a machine of two cores at once.
	DefaultScriptTotalCalls = 16
	// DefaultScriptMaxTotalMemory is max_total_memory at the default max_memory: 1 GiB.
	DefaultScriptMaxTotalMemory = DefaultScriptTotalCalls * DefaultScriptMaxMemory
)

// scriptMemoryRange bounds max_memory: room for a 4 MiB file read and split, and no more than a
// host of this size can give each of its tool lane's workers at once.
var scriptMemoryRange = sandboxRange{1 << 20, 4 << 30, "1MiB to 4GiB", "the memory one script call may build"}

// scriptTotalMemoryRange bounds max_total_memory; it must also be at least max_memory, or no
// call could ever be admitted.
var scriptTotalMemoryRange = sandboxRange{1 << 20, 1 << 40, "1MiB to 1TiB", "the memory all the script calls running at once may build"}

// Limits of the [scripting] settings, checked at load.
const (
	minScriptTimeout        = time.Millisecond
	maxScriptTimeout        = 10 * time.Minute
	minScriptCallStack      = 16
	maxScriptCallStack      = 100_000
	maxScriptResponseBytes  = 1 << 30
	scriptTimeoutRangeWords = "1ms to 10m"
)

// ScriptingConfig is the [scripting] table: where host-wide script tools live and the limits
// every script tool call runs under. Layer 3 ([tool_script_permissions]) is separate, in
// Config.ScriptPermissions.
type ScriptingConfig struct {
	// ToolsDir is a host-wide folder of script tools offered to every blueprint ("" for none). A
	// relative tools_dir is resolved against the folder of the file it was written in.
	ToolsDir string
	// AllowEnv are the environment variables a script's env() may read, sorted and unique;
	// any other name reads as unset. Empty: none.
	AllowEnv []string
	// HTTPAllowPrivate lets http_get and http_post reach private, loopback and link-local
	// addresses, which are refused by default so a script cannot probe the host's network.
	HTTPAllowPrivate bool
	// CallTimeout is the CPU-time budget of one script tool call (1ms to 10m).
	CallTimeout time.Duration
	// MaxCallStack is the deepest call stack a script may build (16 to 100000).
	MaxCallStack int
	// HTTPTimeout bounds one HTTP call of a script (1ms to 10m).
	HTTPTimeout time.Duration
	// MaxHTTPResponseBytes caps the response body an HTTP call reads (1 to 1 GiB).
	MaxHTTPResponseBytes int64
	// MaxMemory is the memory budget of one script call in bytes (1 MiB to 4 GiB), written as a
	// byte count or a size such as "64MiB": a call that builds more fails with a memory error
	// (docs/scripting.md, "Memory").
	MaxMemory int64
	// MaxTotalMemory is the run-wide total of script memory in bytes (max_memory to 1 TiB;
	// default 16 times MaxMemory, 1 GiB): each script call reserves its whole MaxMemory from it
	// while it runs, and a call that does not fit waits, before its budget starts, for running
	// calls to finish (docs/scripting.md, "Run-wide memory"). So what the calls running at once
	// may build never adds up past it, however many agents call scripts at once, and the trace
	// does not change. 0 (a Config made without DefaultScripting or Load) sets no total.
	MaxTotalMemory int64
}

// DefaultScripting returns the [scripting] settings used when the table or a key is left out:
// no tools folder, no environment variables, no private addresses, and the default limits.
func DefaultScripting() ScriptingConfig {
	return ScriptingConfig{
		CallTimeout:          DefaultScriptCallTimeout,
		MaxCallStack:         DefaultScriptMaxCallStack,
		HTTPTimeout:          DefaultScriptHTTPTimeout,
		MaxHTTPResponseBytes: DefaultScriptMaxHTTPResponseBytes,
		MaxMemory:            DefaultScriptMaxMemory,
		MaxTotalMemory:       DefaultScriptMaxTotalMemory,
	}
}

// scriptPermissions validates the [tool_script_permissions] table: keys host functions, values
// allow | deny | inherit (inherit only where a built-in tool of the same name exists).
func (c *compiler) scriptPermissions(path string, raw map[string]string) map[string]policy.ScriptVerdict {
	verdicts, problems := policy.ParseScriptTable(raw)
	for _, p := range problems {
		c.errorf(tomlfile.JoinKey(path, p.Name), "%w", p.Err)
	}
	return verdicts
}

// scripting fills out from the [scripting] table, keeping the default of every key left out.
func (c *compiler) scripting(f *fileScripting, out *ScriptingConfig) {
	if f.ToolsDir != nil {
		out.ToolsDir = c.toolsDir(*f.ToolsDir)
	}
	out.AllowEnv = c.allowEnv("scripting.allow_env", f.AllowEnv)
	out.HTTPAllowPrivate = f.HTTPAllowPrivate
	c.scriptTimeout("scripting.call_timeout", f.CallTimeout, "the CPU-time budget of one script tool call", &out.CallTimeout)
	c.scriptTimeout("scripting.http_timeout", f.HTTPTimeout, "the time one HTTP call of a script may take", &out.HTTPTimeout)
	if v := f.MaxCallStack; v != nil {
		if *v < minScriptCallStack || *v > maxScriptCallStack {
			c.errorf("scripting.max_call_stack", "%w: %d; valid: %d to %d (the deepest call stack a script may build)", ErrOutOfRange, *v, minScriptCallStack, maxScriptCallStack)
		} else {
			out.MaxCallStack = int(*v)
		}
	}
	if v := f.MaxHTTPResponseBytes; v != nil {
		if *v < 1 || *v > maxScriptResponseBytes {
			c.errorf("scripting.max_http_response_bytes", "%w: %d; valid: 1 to %d (the response bytes one HTTP call of a script reads)", ErrOutOfRange, *v, maxScriptResponseBytes)
		} else {
			out.MaxHTTPResponseBytes = *v
		}
	}
	if n := c.sandboxSize("scripting.max_memory", f.MaxMemory, scriptMemoryRange); n != 0 {
		out.MaxMemory = int64(n)
	}
	c.scriptTotalMemory(f, out)
}

// scriptTotalMemory sets max_total_memory: as written, checked against max_memory, or 16 times
// max_memory when left out (so a larger per-call budget never makes the default refuse every
// call).
func (c *compiler) scriptTotalMemory(f *fileScripting, out *ScriptingConfig) {
	if f.MaxTotalMemory == nil {
		out.MaxTotalMemory = DefaultScriptTotalCalls * out.MaxMemory
		return
	}
	n := c.sandboxSize("scripting.max_total_memory", f.MaxTotalMemory, scriptTotalMemoryRange)
	if n == 0 {
		return
	}
	if int64(n) < out.MaxMemory {
		c.errorf("scripting.max_total_memory", "%w: %s is below max_memory (%s), so no script call could ever start; valid: max_memory to 1TiB (%s)",
			ErrOutOfRange, sizeShown(f.MaxTotalMemory), sizeBytes(out.MaxMemory), scriptTotalMemoryRange.meaning)
		return
	}
	out.MaxTotalMemory = int64(n)
}

// sizeShown is a size as it was written: a string quoted, a number as is.
func sizeShown(raw any) string {
	if s, ok := raw.(string); ok {
		return strconv.Quote(s)
	}
	return fmt.Sprint(raw)
}

// sizeBytes writes a byte count in the largest binary unit that divides it ("64MiB", "1536KiB",
// "100 bytes"), as a size key is written.
func sizeBytes(n int64) string {
	for i := len(sizeUnits) - 1; i >= 0; i-- {
		u := sizeUnits[i]
		if u.shift > 0 && n >= 1<<u.shift && n%(1<<u.shift) == 0 {
			return strconv.FormatInt(n>>u.shift, 10) + u.suffix
		}
	}
	return strconv.FormatInt(n, 10) + " bytes"
}

// toolsDir resolves a tools_dir against the folder of the file it was written in.
func (c *compiler) toolsDir(dir string) string {
	if dir == "" {
		c.errorf("scripting.tools_dir", "%w; tools_dir is a folder of script tools, absolute or relative to this file's folder (leave the key out for none)", ErrEmptyPath)
		return ""
	}
	if filepath.IsAbs(dir) {
		return filepath.Clean(dir)
	}
	base := "."
	if c.doc != nil {
		base = filepath.Dir(c.doc.File)
	}
	return filepath.Join(base, dir)
}

// allowEnv checks a list of environment variable names at path (the variables scripts may read,
// or those a sandbox passes to commands) and returns them sorted.
func (c *compiler) allowEnv(path string, names []string) []string {
	if len(names) == 0 {
		return nil
	}
	key := lastKey(path)
	out := make([]string, 0, len(names))
	firstAt := make(map[string]int, len(names))
	for i, name := range names {
		elem := tomlfile.JoinIndex(path, i)
		if first, dup := firstAt[name]; dup {
			c.errorf(elem, "%w %q: listed twice (first at %s); list each variable once", ErrBadEnvName, name, tomlfile.JoinIndex(key, first))
			continue
		}
		firstAt[name] = i
		if !validEnvName(name) {
			c.errorf(elem, "%w %q; a variable name is letters, digits and '_', not starting with a digit", ErrBadEnvName, name)
			continue
		}
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}

// validEnvName reports whether name is [A-Za-z_][A-Za-z0-9_]*, the portable variable names.
func validEnvName(name string) bool {
	if name == "" || name[0] >= '0' && name[0] <= '9' {
		return false
	}
	for i := 0; i < len(name); i++ {
		if ch := name[i]; !(ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9' || ch == '_') {
			return false
		}
	}
	return true
}

// scriptTimeout parses a [scripting] duration into out when the key is given.
func (c *compiler) scriptTimeout(path string, raw *string, meaning string, out *time.Duration) {
	if raw == nil {
		return
	}
	d, err := time.ParseDuration(*raw)
	switch {
	case err != nil:
		c.errorf(path, "%w %q; write a Go duration such as \"2s\", \"500ms\" or \"1m30s\" (%s)", ErrBadDuration, *raw, meaning)
	case d < minScriptTimeout || d > maxScriptTimeout:
		c.errorf(path, "%w: %q; valid: %s (%s)", ErrOutOfRange, *raw, scriptTimeoutRangeWords, meaning)
	default:
		*out = d
	}
}
