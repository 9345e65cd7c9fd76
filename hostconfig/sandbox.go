package hostconfig

import (
	"errors"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/warrenhq/warren/internal/tomlfile"
	"github.com/warrenhq/warren/sandbox"
)

// SandboxTable is a [sandbox] table as written. The host config's [sandbox] is the ceiling every
// command runs under; a blueprint's [sandbox] and its stages' [stages.sandbox] have the same
// keys and may only tighten it, so blueprints decode and compile theirs with this type and
// CompileSandbox too. Pointers and nil lists tell an absent key (keep what the outer layer says)
// from an explicit value: `writable = []` is present and means "no writable paths". The keys are
// documented in docs/permissions.md, "Sandbox ceiling".
type SandboxTable struct {
	Mode          *string            `toml:"mode"`
	Network       *bool              `toml:"network"`
	OnUnavailable *string            `toml:"on_unavailable"`
	Writable      []string           `toml:"writable"`
	Hidden        []string           `toml:"hidden"`
	AllowEnvVars  []string           `toml:"allow_env_vars"`
	Limits        SandboxLimitsTable `toml:"limits"`
}

// SandboxLimitsTable is a [sandbox.limits] table as written. AddressSpace, OutputBytes, TmpSize
// and FileSize are sizes, which may be written as an integer byte count or as a string such as
// "64KiB", so they hold whatever the file wrote and CompileSandbox checks it.
type SandboxLimitsTable struct {
	Timeout      *string `toml:"timeout"`
	CPUSeconds   *int64  `toml:"cpu_seconds"`
	AddressSpace any     `toml:"address_space"`
	OpenFiles    *int64  `toml:"open_files"`
	Processes    *int64  `toml:"processes"`
	OutputBytes  any     `toml:"output_bytes"`
	TmpSize      any     `toml:"tmp_size"`
	FileSize     any     `toml:"file_size"`
}

// Sentinel errors of the [sandbox] table (the host's, a blueprint's or a stage's), wrapped by the
// problems CompileSandbox reports besides ErrOutOfRange, ErrBadDuration, ErrBadEnvName,
// sandbox.ErrUnknownMode, sandbox.ErrUnknownFallback and tomlfile.ErrType.
var (
	// ErrNotAbsolute: a writable or hidden entry is not an absolute host path. A relative path
	// would depend on the directory the host was started in, which a sandbox must not.
	ErrNotAbsolute = errors.New("not absolute")
	// ErrBadSize: a size limit is neither a byte count nor a string such as "64KiB".
	ErrBadSize = errors.New("invalid size")
	// ErrDuplicatePath: a writable or hidden list names one path twice (after cleaning), which
	// can only be a mistake.
	ErrDuplicatePath = errors.New("duplicate path")
	// ErrHiddenInWritable: a hidden path lies inside a writable one of the same table, where a
	// command could rename it out from under its cover.
	ErrHiddenInWritable = errors.New("hidden path inside a writable path")
)

// sandboxRange is the accepted range of one [sandbox.limits] key and what the key bounds, for
// messages.
type sandboxRange struct {
	min, max uint64
	// words is the range as the docs write it.
	words string
	// meaning says what the limit bounds.
	meaning string
}

// The ranges of the [sandbox.limits] keys: wide enough for any real command, narrow enough that
// a typo cannot disable a limit or make every command fail.
var (
	sandboxTimeoutRange = sandboxRange{uint64(time.Second), uint64(time.Hour), "1s to 1h", "the wall time one command may run"}
	cpuSecondsRange     = sandboxRange{1, 86_400, "1 to 86400", "the CPU seconds of the command's processes"}
	addressSpaceRange   = sandboxRange{16 << 20, 1 << 40, "16MiB to 1TiB", "the address space of each of the command's processes"}
	openFilesRange      = sandboxRange{16, 1 << 20, "16 to 1048576", "the open files of each of the command's processes"}
	processesRange      = sandboxRange{1, 65_536, "1 to 65536", "the processes the command may have at once"}
	outputBytesRange    = sandboxRange{1 << 10, 64 << 20, "1KiB to 64MiB", "the command output kept for the result"}
	tmpSizeRange        = sandboxRange{1 << 20, 1 << 40, "1MiB to 1TiB", "each of the private /tmp and /dev/shm, held in the host's memory"}
	fileSizeRange       = sandboxRange{1 << 20, 1 << 40, "1MiB to 1TiB", "each file the command's processes write"}
)

// sizeUnits are the suffixes a size string may carry, with the power of two each stands for.
var sizeUnits = [...]struct {
	suffix string
	shift  uint
}{{"KiB", 10}, {"MiB", 20}, {"GiB", 30}, {"TiB", 40}}

// sizeRule says how to write a size, in messages.
const sizeRule = `write a byte count as an integer, or a string such as "64KiB", "16MiB" or "4GiB" (units KiB, MiB, GiB, TiB)`

// SandboxCeiling is the boundary every command of this host runs under at most: the [sandbox]
// table with the defaults filled in (sandbox.Ceiling). Blueprints and stages tighten it
// (blueprint.Blueprint.CheckSandboxCeiling and StageBoundary); it is computed on each call, so
// callers resolving many agents should keep the result.
func (c *Config) SandboxCeiling() sandbox.Boundary {
	return sandbox.Ceiling(c.Sandbox)
}

// CompileSandbox validates a decoded [sandbox] table whose keys sit under path in doc ("sandbox"
// in a host config, "host.sandbox" in a scenario, "stages[1].sandbox" in a blueprint) and
// returns the Spec it writes with every problem found, each positioned at its key and saying what
// would be valid. It checks each value on its own; whether a blueprint's table only tightens the
// host's is the blueprint's CheckSandboxCeiling, once both are known.
func CompileSandbox(doc *tomlfile.Doc, path string, t *SandboxTable) (sandbox.Spec, tomlfile.Errors) {
	c := compiler{doc: doc}
	spec := c.sandbox(path, t)
	return spec, c.errs
}

// sandbox compiles a [sandbox] table at path; see CompileSandbox.
func (c *compiler) sandbox(path string, t *SandboxTable) sandbox.Spec {
	var spec sandbox.Spec
	if t.Mode != nil {
		if m, err := sandbox.ParseMode(*t.Mode); err != nil {
			c.errorf(path+".mode", "%w", err)
		} else {
			spec.Mode = &m
		}
	}
	if t.Network != nil {
		on := *t.Network
		spec.Network = &on
	}
	if t.OnUnavailable != nil {
		if f, err := sandbox.ParseFallback(*t.OnUnavailable); err != nil {
			c.errorf(path+".on_unavailable", "%w", err)
		} else {
			spec.OnUnavailable = &f
		}
	}
	spec.Writable = c.sandboxPaths(path+".writable", t.Writable, `"/srv/cache"`)
	spec.Hidden = c.sandboxPaths(path+".hidden", t.Hidden, `"/root/.ssh"`)
	c.hiddenOutsideWritable(path, t.Hidden, spec.Writable)
	if t.AllowEnvVars != nil {
		// Present but empty passes no variable at all, so the list stays non-nil.
		spec.AllowEnv = append([]string{}, c.allowEnv(path+".allow_env_vars", t.AllowEnvVars)...)
		spec.AllowEnv = slices.DeleteFunc(spec.AllowEnv, sandbox.ShellExecutesEnv)
		for i, name := range t.AllowEnvVars {
			if sandbox.ShellExecutesEnv(name) {
				c.errorf(tomlfile.JoinIndex(path+".allow_env_vars", i), "%w %q: bash runs code or takes its options from it, or programs choose the shell they run commands with from it, so no command may get it; pass what a command needs under another name", ErrBadEnvName, name)
			}
		}
	}
	spec.Limits = c.sandboxLimits(path+".limits", &t.Limits)
	return spec
}

// sandboxPaths checks a writable or hidden list: absolute host paths, each once. It returns the
// valid ones cleaned, non-nil when the key is present (an empty list is a setting).
func (c *compiler) sandboxPaths(path string, raw []string, example string) []string {
	if raw == nil {
		return nil
	}
	key := lastKey(path)
	out := make([]string, 0, len(raw))
	firstAt := make(map[string]int, len(raw))
	for i, p := range raw {
		elem := tomlfile.JoinIndex(path, i)
		if !filepath.IsAbs(p) {
			c.errorf(elem, "%q is %w; write an absolute host path such as %s", p, ErrNotAbsolute, example)
			continue
		}
		clean := filepath.Clean(p)
		if first, dup := firstAt[clean]; dup {
			c.errorf(elem, "%w %q: %s is already listed at %s; list each path once", ErrDuplicatePath, p, clean, tomlfile.JoinIndex(key, first))
			continue
		}
		firstAt[clean] = i
		out = append(out, clean)
	}
	return out
}

// hiddenOutsideWritable refuses a hidden path inside (or equal to) a writable one of the same
// table: a command could rename the folder above it away, and the next command would find the
// secret uncovered at its new name.
func (c *compiler) hiddenOutsideWritable(path string, hidden, writable []string) {
	for i, h := range hidden {
		if !filepath.IsAbs(h) {
			continue // reported by sandboxPaths
		}
		h = filepath.Clean(h)
		for _, w := range writable {
			if h == w || strings.HasPrefix(h, w+string(filepath.Separator)) {
				c.errorf(tomlfile.JoinIndex(path+".hidden", i), "%w: %s lies inside the writable path %s, so a command could rename its folder away and read it; hide a path outside the writable ones",
					ErrHiddenInWritable, h, w)
				break
			}
		}
	}
}

// sandboxLimits compiles a [sandbox.limits] table at path; a key left out stays 0, which keeps
// the outer layer's limit (or the default, in the host's ceiling).
func (c *compiler) sandboxLimits(path string, t *SandboxLimitsTable) sandbox.Limits {
	var l sandbox.Limits
	if t.Timeout != nil {
		l.Timeout = time.Duration(c.sandboxTimeout(path+".timeout", *t.Timeout))
	}
	l.CPUSeconds = c.sandboxCount(path+".cpu_seconds", t.CPUSeconds, cpuSecondsRange)
	l.AddressSpace = c.sandboxSize(path+".address_space", t.AddressSpace, addressSpaceRange)
	l.OpenFiles = c.sandboxCount(path+".open_files", t.OpenFiles, openFilesRange)
	l.Processes = c.sandboxCount(path+".processes", t.Processes, processesRange)
	l.OutputBytes = c.sandboxSize(path+".output_bytes", t.OutputBytes, outputBytesRange)
	l.TmpSize = c.sandboxSize(path+".tmp_size", t.TmpSize, tmpSizeRange)
	l.FileSize = c.sandboxSize(path+".file_size", t.FileSize, fileSizeRange)
	return l
}

// sandboxTimeout parses a timeout written as a Go duration, returning it in nanoseconds (0 after
// a problem).
func (c *compiler) sandboxTimeout(path, raw string) uint64 {
	d, err := time.ParseDuration(raw)
	if err != nil {
		c.errorf(path, "%w %q; write a Go duration such as \"60s\", \"500ms\" or \"1m30s\" (%s)", ErrBadDuration, raw, sandboxTimeoutRange.meaning)
		return 0
	}
	return c.inSandboxRange(path, strconv.Quote(raw), uint64(max(d, 0)), sandboxTimeoutRange)
}

// sandboxCount checks an integer limit, returning 0 when it is absent or after a problem.
func (c *compiler) sandboxCount(path string, raw *int64, r sandboxRange) uint64 {
	if raw == nil {
		return 0
	}
	return c.inSandboxRange(path, strconv.FormatInt(*raw, 10), uint64(max(*raw, 0)), r)
}

// sandboxSize checks a size limit written as an integer byte count or a string with a binary
// unit, returning 0 when it is absent or after a problem.
func (c *compiler) sandboxSize(path string, raw any, r sandboxRange) uint64 {
	switch v := raw.(type) {
	case nil:
		return 0
	case int64:
		return c.inSandboxRange(path, strconv.FormatInt(v, 10), uint64(max(v, 0)), r)
	case string:
		n, ok := parseSize(v)
		if !ok {
			c.errorf(path, "%w %q; %s", ErrBadSize, v, sizeRule)
			return 0
		}
		return c.inSandboxRange(path, strconv.Quote(v), n, r)
	}
	c.errorf(path, "%w: expected integer or string, got %s; %s", tomlfile.ErrType, valueKind(raw), sizeRule)
	return 0
}

// inSandboxRange returns n when r accepts it, and reports it (as written, shown) otherwise. A
// negative value arrives as 0, which every range refuses.
func (c *compiler) inSandboxRange(path, shown string, n uint64, r sandboxRange) uint64 {
	if n < r.min || n > r.max {
		c.errorf(path, "%w: %s; valid: %s (%s)", ErrOutOfRange, shown, r.words, r.meaning)
		return 0
	}
	return n
}

// parseSize reads a size string: decimal digits and a binary unit ("64KiB"). A number too large
// for 64 bits reads as math.MaxUint64, which every range refuses, so it is reported as out of
// range rather than as a bad spelling.
func parseSize(s string) (uint64, bool) {
	for _, u := range sizeUnits {
		digits, found := strings.CutSuffix(s, u.suffix)
		if !found || digits == "" || strings.TrimLeft(digits, "0123456789") != "" {
			continue
		}
		n, err := strconv.ParseUint(digits, 10, 64)
		if err != nil || n > math.MaxUint64>>u.shift {
			return math.MaxUint64, true
		}
		return n << u.shift, true
	}
	return 0, false
}

// lastKey is the last key of a dotted path ("writable" for "stages[0].sandbox.writable"), which
// names a list's elements in messages about the list itself.
func lastKey(path string) string {
	return path[strings.LastIndexByte(path, '.')+1:]
}

// valueKind names, in TOML words, the kind of a decoded value that is neither an integer nor a
// string, for "expected ..., got ..." messages.
func valueKind(v any) string {
	switch v.(type) {
	case float64:
		return "float"
	case bool:
		return "boolean"
	case []any:
		return "array"
	case map[string]any:
		return "table"
	}
	return "date-time"
}
