package sandbox

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Mode is how a command is contained. The modes are ordered by what they contain: none contains
// nothing, namespace and bwrap contain the same boundary by two mechanisms (Warren's own
// namespaces, or bubblewrap), so either may replace the other under a ceiling of either.
type Mode uint8

const (
	// ModeNone runs the command on the host, in the agent's workdir: it contains nothing beyond
	// what the file tools' confinement gives the file tools.
	ModeNone Mode = iota
	// ModeNamespace runs the command in new user, mount, pid, network, uts and ipc namespaces,
	// with the host file system read-only except the workdir and a private /tmp, resource limits,
	// then Landlock and a seccomp filter where the kernel has them.
	ModeNamespace
	// ModeBwrap runs the same boundary through bubblewrap.
	ModeBwrap
)

// ErrUnknownMode: a mode name that is not none, namespace or bwrap.
var ErrUnknownMode = errors.New("unknown sandbox mode")

// modeNames are the config spellings, indexed by Mode.
var modeNames = [...]string{ModeNone: "none", ModeNamespace: "namespace", ModeBwrap: "bwrap"}

// String is the mode's config spelling.
func (m Mode) String() string {
	if int(m) < len(modeNames) {
		return modeNames[m]
	}
	return fmt.Sprintf("Mode(%d)", m)
}

// ParseMode reads a mode's config spelling.
func ParseMode(s string) (Mode, error) {
	for m, name := range modeNames {
		if s == name {
			return Mode(m), nil
		}
	}
	return 0, fmt.Errorf("%w %q; valid modes: none, namespace, bwrap", ErrUnknownMode, s)
}

// contains reports whether the mode contains anything (namespace and bwrap do).
func (m Mode) contains() bool { return m != ModeNone }

// Fallback says what happens when a mode's mechanism is missing on this machine.
type Fallback uint8

const (
	// FallbackError fails the command (and the agent's call) with the reason: nothing runs
	// outside the boundary the config asked for.
	FallbackError Fallback = iota
	// FallbackWarn degrades to the strongest boundary the machine has, with a logged and traced
	// warning naming what is missing.
	FallbackWarn
)

// ErrUnknownFallback: an on_unavailable value that is not error or warn.
var ErrUnknownFallback = errors.New("unknown on_unavailable value")

// String is the fallback's config spelling.
func (f Fallback) String() string {
	if f == FallbackWarn {
		return "warn"
	}
	return "error"
}

// ParseFallback reads an on_unavailable value.
func ParseFallback(s string) (Fallback, error) {
	switch s {
	case "error":
		return FallbackError, nil
	case "warn":
		return FallbackWarn, nil
	}
	return 0, fmt.Errorf("%w %q; valid: error, warn", ErrUnknownFallback, s)
}

// Limits bound what one command may use. A zero field means "no limit of this kind" in a Spec
// that tightens (it keeps the outer value) and is replaced by the default in the host's ceiling.
type Limits struct {
	// Timeout is the wall time a command may run before its whole process tree is killed.
	Timeout time.Duration
	// CPUSeconds is RLIMIT_CPU for the command's processes.
	CPUSeconds uint64
	// AddressSpace is RLIMIT_AS in bytes for each of the command's processes.
	AddressSpace uint64
	// OpenFiles is RLIMIT_NOFILE.
	OpenFiles uint64
	// Processes bounds the processes the command may have at once (RLIMIT_NPROC in the
	// command's own user namespace).
	Processes uint64
	// OutputBytes caps the output kept for the result; the rest is counted and cut with a note.
	OutputBytes uint64
	// TmpSize caps, in bytes, each of the contained modes' private file systems a command may
	// write (/tmp and /dev/shm): both live in the host's memory, so without a cap one command
	// could fill it. Not applied in none mode, which has no private file systems.
	TmpSize uint64
	// FileSize is RLIMIT_FSIZE in bytes: no file a command's processes write may grow past it
	// (the write fails, and the writer gets SIGXFSZ), in the workdir, the writable paths and the
	// private file systems alike.
	FileSize uint64
}

// DefaultLimits are the host's limits when its config sets none: 60s, 60 CPU seconds, 4 GiB of
// address space, 1024 open files, 256 processes, 64 KiB of output, 256 MiB each for /tmp and
// /dev/shm, 1 GiB per file.
func DefaultLimits() Limits {
	return Limits{
		Timeout:      60 * time.Second,
		CPUSeconds:   60,
		AddressSpace: 4 << 30,
		OpenFiles:    1024,
		Processes:    256,
		OutputBytes:  64 << 10,
		TmpSize:      256 << 20,
		FileSize:     1 << 30,
	}
}

// tighter returns the stricter of two limits where inner sets one (0 keeps outer).
func tighter[T time.Duration | uint64](outer, inner T) T {
	if inner == 0 || (outer != 0 && outer < inner) {
		return outer
	}
	return inner
}

// within returns l tightened by inner: each limit the smaller of the two.
func (l Limits) within(inner Limits) Limits {
	return Limits{
		Timeout:      tighter(l.Timeout, inner.Timeout),
		CPUSeconds:   tighter(l.CPUSeconds, inner.CPUSeconds),
		AddressSpace: tighter(l.AddressSpace, inner.AddressSpace),
		OpenFiles:    tighter(l.OpenFiles, inner.OpenFiles),
		Processes:    tighter(l.Processes, inner.Processes),
		OutputBytes:  tighter(l.OutputBytes, inner.OutputBytes),
		TmpSize:      tighter(l.TmpSize, inner.TmpSize),
		FileSize:     tighter(l.FileSize, inner.FileSize),
	}
}

// Boundary is what one command runs under, resolved from the host's ceiling, the agent's
// blueprint and its current stage. It is a value: a manager pointed at a new boundary changes
// nothing about commands already running.
type Boundary struct {
	// Mode is the containment mechanism.
	Mode Mode
	// Network lets the command reach the network (in namespace and bwrap modes it is off
	// otherwise: the command has only a loopback interface of its own).
	Network bool
	// Writable are host paths the command may write besides its workdir and private /tmp,
	// absolute, cleaned and sorted. Only in namespace and bwrap modes.
	Writable []string
	// Hidden are host paths replaced by an empty directory inside the boundary (secrets such as
	// ~/.ssh), absolute, cleaned and sorted. Only in namespace and bwrap modes.
	Hidden []string
	// AllowEnv are the environment variables passed to commands, sorted; every other variable of
	// the host's environment is dropped.
	AllowEnv []string
	// Limits bound each command.
	Limits Limits
	// OnUnavailable says what happens when Mode's mechanism is missing on this machine.
	OnUnavailable Fallback
}

// String describes the boundary in one line, for traces and host doctor:
// "namespace network=off writable=[/srv/cache] hidden=[/root] timeout=60s ...".
func (b Boundary) String() string {
	var sb strings.Builder
	sb.WriteString(b.Mode.String())
	if b.Mode.contains() {
		sb.WriteString(" network=")
		sb.WriteString(onOff(b.Network))
		fmt.Fprintf(&sb, " writable=[%s] hidden=[%s]", strings.Join(b.Writable, " "), strings.Join(b.Hidden, " "))
	}
	l := b.Limits
	fmt.Fprintf(&sb, " timeout=%v cpu=%ds as=%d nofile=%d nproc=%d output=%d tmp=%d fsize=%d",
		l.Timeout, l.CPUSeconds, l.AddressSpace, l.OpenFiles, l.Processes, l.OutputBytes, l.TmpSize, l.FileSize)
	return sb.String()
}

// onOff spells a switch.
func onOff(on bool) string {
	if on {
		return "on"
	}
	return "off"
}

// Spec is one layer's sandbox settings, as a config file wrote them: the host's ceiling, a
// blueprint's [sandbox], or a stage's. A nil pointer or empty list means "not set here" (keep
// what the outer layer says).
type Spec struct {
	Mode          *Mode
	Network       *bool
	Writable      []string
	Hidden        []string
	AllowEnv      []string
	Limits        Limits
	OnUnavailable *Fallback
}

// ErrLoosens: a blueprint or stage setting that would loosen the host's sandbox.
var ErrLoosens = errors.New("loosens the host's sandbox")

// DefaultHidden are the host paths a ceiling hides when the host's config names none: the
// places secrets live on most hosts (home folders, password hashes, SSH keys) and the runtime
// folders whose sockets a read-only mount does not stop a command from connecting to (a
// container engine's, the system bus). A path missing on this machine is skipped. A host config
// that sets hidden (even to []) replaces the list.
func DefaultHidden() []string {
	return []string{"/etc/gshadow", "/etc/shadow", "/etc/ssh", "/home", "/root", "/run", "/var/run"}
}

// Ceiling turns the host's Spec into the outermost Boundary: what it leaves unset takes the
// defaults (namespace mode, network off, the DefaultLimits, PATH/HOME/LANG/TERM passed,
// DefaultHidden hidden, error when a mechanism is missing).
func Ceiling(host Spec) Boundary {
	b := Boundary{Mode: ModeNamespace, Limits: DefaultLimits(), OnUnavailable: FallbackError,
		AllowEnv: []string{"HOME", "LANG", "PATH", "TERM"}}
	if host.Mode != nil {
		b.Mode = *host.Mode
	}
	if host.Network != nil {
		b.Network = *host.Network
	}
	if host.OnUnavailable != nil {
		b.OnUnavailable = *host.OnUnavailable
	}
	if host.AllowEnv != nil {
		b.AllowEnv = sortedUnique(slices.Clone(host.AllowEnv))
	}
	b.Writable, b.Hidden = cleanPaths(host.Writable), DefaultHidden()
	if host.Hidden != nil {
		b.Hidden = cleanPaths(host.Hidden)
	}
	b.Limits = b.Limits.overriddenBy(host.Limits)
	return b
}

// overriddenBy returns l with every limit o sets (non-zero) replaced: the host's config may raise
// a default as well as lower it.
func (l Limits) overriddenBy(o Limits) Limits {
	set := func(d *uint64, v uint64) {
		if v != 0 {
			*d = v
		}
	}
	if o.Timeout != 0 {
		l.Timeout = o.Timeout
	}
	set(&l.CPUSeconds, o.CPUSeconds)
	set(&l.AddressSpace, o.AddressSpace)
	set(&l.OpenFiles, o.OpenFiles)
	set(&l.Processes, o.Processes)
	set(&l.OutputBytes, o.OutputBytes)
	set(&l.TmpSize, o.TmpSize)
	set(&l.FileSize, o.FileSize)
	return l
}

// Tighten applies an inner layer (a blueprint's or a stage's Spec) to b. An inner layer may only
// tighten: turn containment on, turn the network off, drop writable paths, hide more paths,
// pass fewer variables, lower limits. Anything that would loosen b is an error wrapping
// ErrLoosens that names the setting and what the outer layer allows; b is returned unchanged
// with it, so a caller reporting load errors can go on.
func Tighten(b Boundary, inner Spec) (Boundary, error) {
	var problems []string
	out := b
	if inner.Mode != nil {
		switch m := *inner.Mode; {
		case b.Mode.contains() && !m.contains():
			problems = append(problems, fmt.Sprintf("mode %q under a host sandbox of mode %q (a blueprint can never turn a host sandbox off)", m, b.Mode))
		default:
			out.Mode = m
		}
	}
	if inner.Network != nil {
		switch {
		case *inner.Network && !b.Network:
			problems = append(problems, "network = true where the outer layer has the network off")
		default:
			out.Network = *inner.Network
		}
	}
	if inner.Writable != nil {
		want := cleanPaths(inner.Writable)
		for _, p := range want {
			if !slices.Contains(b.Writable, p) {
				problems = append(problems, fmt.Sprintf("writable path %s, which the outer layer does not allow (allowed: [%s])", p, strings.Join(b.Writable, " ")))
			}
		}
		out.Writable = intersect(b.Writable, want)
	}
	if inner.Hidden != nil {
		out.Hidden = sortedUnique(append(slices.Clone(b.Hidden), cleanPaths(inner.Hidden)...))
	}
	if inner.AllowEnv != nil {
		want := sortedUnique(slices.Clone(inner.AllowEnv))
		for _, name := range want {
			if !slices.Contains(b.AllowEnv, name) {
				problems = append(problems, fmt.Sprintf("allow_env_vars %s, which the outer layer does not pass (passed: [%s])", name, strings.Join(b.AllowEnv, " ")))
			}
		}
		out.AllowEnv = intersect(b.AllowEnv, want)
	}
	for _, l := range []struct {
		name         string
		outer, inner uint64
	}{
		{"timeout", uint64(b.Limits.Timeout), uint64(inner.Limits.Timeout)},
		{"cpu_seconds", b.Limits.CPUSeconds, inner.Limits.CPUSeconds},
		{"address_space", b.Limits.AddressSpace, inner.Limits.AddressSpace},
		{"open_files", b.Limits.OpenFiles, inner.Limits.OpenFiles},
		{"processes", b.Limits.Processes, inner.Limits.Processes},
		{"output_bytes", b.Limits.OutputBytes, inner.Limits.OutputBytes},
		{"tmp_size", b.Limits.TmpSize, inner.Limits.TmpSize},
		{"file_size", b.Limits.FileSize, inner.Limits.FileSize},
	} {
		if l.inner != 0 && l.outer != 0 && l.inner > l.outer {
			problems = append(problems, fmt.Sprintf("limits.%s above the outer layer's", l.name))
		}
	}
	out.Limits = b.Limits.within(inner.Limits)
	if inner.OnUnavailable != nil {
		switch {
		case *inner.OnUnavailable == FallbackWarn && b.OnUnavailable == FallbackError:
			problems = append(problems, `on_unavailable = "warn" where the outer layer says "error"`)
		default:
			out.OnUnavailable = *inner.OnUnavailable
		}
	}
	if len(problems) > 0 {
		return b, fmt.Errorf("%w: %s", ErrLoosens, strings.Join(problems, "; "))
	}
	return out, nil
}

// cleanPaths cleans, sorts and de-duplicates paths (the config loaders check they are absolute).
func cleanPaths(paths []string) []string {
	if len(paths) == 0 {
		return nil
	}
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = filepath.Clean(p)
	}
	return sortedUnique(out)
}

// sortedUnique sorts names and drops repeats, in place.
func sortedUnique(names []string) []string {
	slices.Sort(names)
	return slices.Compact(names)
}

// intersect returns the members of sorted a that are in sorted b.
func intersect(a, b []string) []string {
	var out []string
	for _, s := range a {
		if _, ok := slices.BinarySearch(b, s); ok {
			out = append(out, s)
		}
	}
	return out
}

// Meet is the boundary that contains a command at least as much as both a and b: contained if
// either is (a's mechanism when both are, else whichever contains), the network only if both
// allow it, the writable paths and variables both allow, the hidden paths of either, the lower
// of each limit, and error on a missing mechanism if either says so. A sub-agent's commands run
// under the meet of its own stage's boundary and its parent's.
func Meet(a, b Boundary) Boundary {
	out := a
	if !a.Mode.contains() {
		out.Mode = b.Mode
	}
	out.Network = a.Network && b.Network
	out.Writable = intersect(a.Writable, b.Writable)
	out.Hidden = sortedUnique(append(slices.Clone(a.Hidden), b.Hidden...))
	out.AllowEnv = intersect(a.AllowEnv, b.AllowEnv)
	out.Limits = a.Limits.within(b.Limits)
	if b.OnUnavailable == FallbackError {
		out.OnUnavailable = FallbackError
	}
	return out
}
