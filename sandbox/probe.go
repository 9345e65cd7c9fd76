package sandbox

import (
	"errors"
	"fmt"
	"strings"
	"sync"
)

// ErrUnavailable: a boundary's mechanism is missing on this machine and its on_unavailable says
// "error". The error wrapping it names what is missing and how to get it.
var ErrUnavailable = errors.New("sandbox mechanism unavailable")

// Support says whether one mechanism works on this machine, and if not, why and how to get it.
type Support struct {
	// Available is true when the mechanism was found to work.
	Available bool
	// Reason, when not Available, says what failed and how to fix it; "" when Available.
	Reason string
}

// yes is the doctor spelling of a working mechanism, or of a missing one with its reason.
func (s Support) yes() string {
	if s.Available {
		return "yes"
	}
	return "no (" + s.Reason + ")"
}

// Capabilities is what this machine offers the sandbox, probed once per process (Probe): the
// namespace mode and bwrap are each probed by running a command through them end to end, so a
// kernel, sysctl or AppArmor policy that forbids any step shows up here rather than at an agent's
// first command. Fields are in the order Report prints them.
type Capabilities struct {
	// Shell is whether ShellPath runs here and is bash: every mode runs command lines with it,
	// and without it no command runs (Effective refuses every boundary).
	Shell Support
	// ShellVersion is the first line `bash --version` printed.
	ShellVersion string
	// Namespaces is whether the namespace mode works: user, mount, pid, network, uts and ipc
	// namespaces, mount_setattr (Linux 5.12+) and a pivot_root into the assembled root.
	Namespaces Support
	// Bwrap is whether bubblewrap runs a command here.
	Bwrap Support
	// BwrapPath is the bwrap binary found in PATH ("" when none).
	BwrapPath string
	// BwrapVersion is what `bwrap --version` printed, e.g. "bubblewrap 0.8.0".
	BwrapVersion string
	// LandlockABI is the kernel's Landlock ABI version, 0 when Landlock is missing.
	LandlockABI int
	// Landlock is whether the namespace mode enforces Landlock (it needs ABI 2 or later).
	Landlock Support
	// Seccomp is whether the kernel loads seccomp filters.
	Seccomp Support
	// HardLimits are this process's hard rlimits (0 = unlimited; Timeout, OutputBytes and TmpSize
	// are unused): a command's limits are capped at these, since only a privileged process may raise
	// a hard limit.
	HardLimits Limits
	// UID and GID are the host's effective ids; InsideUID and InsideGID the ids a contained
	// command has in its user namespace (the host's, or 1000 when the host runs as root, so a
	// command is never root in its namespace).
	UID, GID, InsideUID, InsideGID int
	// CommandUID and CommandGID are the host ids a contained command runs as, what the kernel
	// checks its file accesses and process limits against: on a root host the unprivileged
	// unprivilegedID (so root's files, sockets and RLIMIT_NPROC exemption are not the command's;
	// the manager hands each workdir to it), otherwise the host's own ids (an unprivileged host
	// cannot map another). A root host whose own user namespace does not map unprivilegedID
	// (a container mapping uid 0 only) keeps its own ids too; Report says which.
	CommandUID, CommandGID int
}

// unprivilegedID is the host uid and gid contained commands run as on a root host. It must own
// nothing on the host: 65533 is outside every distribution's system and user ranges and is not
// nobody (65534), which the kernel shows for unmapped ids.
const unprivilegedID = 65533

// dropsPrivileges reports whether contained commands run as another host uid than the host's:
// the manager then hands them their workdir, and bwrap mode stages its bind sources.
func (c *Capabilities) dropsPrivileges() bool { return c.CommandUID != c.UID }

// probed caches the one probe of this process.
var probed = sync.OnceValue(probeMachine)

// Probe returns what this machine offers the sandbox. The first call probes (tens of
// milliseconds: it runs a command through each contained mode); later calls return the same
// value, which callers must not modify.
func Probe() *Capabilities { return probed() }

// Report is what host doctor prints: one line per mechanism, then one line per mode saying what
// that mode contains here and what it is missing.
func (c *Capabilities) Report() []string {
	shell := "shell: " + c.Shell.yes()
	if c.Shell.Available {
		shell = fmt.Sprintf("shell: %s (%s); every mode runs command lines with it", ShellPath, c.ShellVersion)
	}
	lines := []string{shell, "namespaces: " + c.Namespaces.yes()}
	if c.Bwrap.Available {
		lines = append(lines, fmt.Sprintf("bwrap: %s (%s)", c.BwrapPath, c.BwrapVersion))
	} else {
		lines = append(lines, "bwrap: "+c.Bwrap.yes())
	}
	if c.Landlock.Available {
		lines = append(lines, fmt.Sprintf("landlock: ABI %d", c.LandlockABI))
	} else {
		lines = append(lines, "landlock: "+c.Landlock.yes())
	}
	lines = append(lines, "seccomp: "+c.Seccomp.yes(),
		fmt.Sprintf("rlimits: hard cpu=%s as=%s nofile=%s nproc=%s fsize=%s (a command's limits are capped at these)",
			limitText(c.HardLimits.CPUSeconds), limitText(c.HardLimits.AddressSpace),
			limitText(c.HardLimits.OpenFiles), limitText(c.HardLimits.Processes), limitText(c.HardLimits.FileSize)),
		c.idsLine(),
		"mode none: contains nothing (the command runs on the host in its workdir; timeout, output cap, and a reaper that ends the whole process tree, setsid'd children included, when the command ends, times out or the host dies)")
	for _, m := range []Mode{ModeNamespace, ModeBwrap} {
		lines = append(lines, c.modeLine(m))
	}
	return lines
}

// idsLine says which host ids contained commands run as.
func (c *Capabilities) idsLine() string {
	line := fmt.Sprintf("ids: host uid=%d gid=%d; contained commands run as host uid=%d gid=%d (uid=%d gid=%d in their namespace)",
		c.UID, c.GID, c.CommandUID, c.CommandGID, c.InsideUID, c.InsideGID)
	switch {
	case c.dropsPrivileges():
		line += ", which must be able to reach each workdir (every folder above it searchable, or under /tmp) and to write each writable path"
	case c.UID == 0:
		line += fmt.Sprintf(": this user namespace does not map uid %d, so commands keep root's file access and are exempt from the process limit", unprivilegedID)
	}
	return line
}

// modeLine describes what one contained mode does on this machine.
func (c *Capabilities) modeLine(m Mode) string {
	if reason := c.missing(m); reason != "" {
		alt := "none (no sandbox)"
		if other := c.substitute(m); other != ModeNone {
			alt = other.String()
		}
		return fmt.Sprintf("mode %s: unavailable (%s); on_unavailable = \"warn\" would run %s", m, reason, alt)
	}
	contains := []string{"user namespace (not root)", "read-only host filesystem", "private /tmp",
		"hidden paths", "pid namespace (whole tree killed)", "network namespace (unless network = true)",
		"uts", "ipc", "rlimits"}
	var missing []string
	if m == ModeNamespace && c.Landlock.Available {
		contains = append(contains, "landlock")
	} else if m == ModeNamespace {
		missing = append(missing, "landlock ("+c.Landlock.Reason+")")
	} else {
		missing = append(missing, "landlock (bwrap mode does not apply it)")
	}
	if c.Seccomp.Available {
		contains = append(contains, "seccomp")
	} else {
		missing = append(missing, "seccomp ("+c.Seccomp.Reason+")")
	}
	if len(missing) == 0 {
		missing = []string{"nothing"}
	}
	return fmt.Sprintf("mode %s: contains %s; missing: %s", m, strings.Join(contains, ", "), strings.Join(missing, ", "))
}

// Unavailable says why no command can run in mode m on this machine, with how to get what is
// missing, and "" when commands can: the shell every mode needs, then the mode's own mechanism
// (the namespaces, or a working bwrap). Landlock and seccomp are not named: a contained mode runs
// without them, with a warning (Effective). Tests skip on it (internal/testenv).
func (c *Capabilities) Unavailable(m Mode) string {
	if !c.Shell.Available {
		return fmt.Sprintf("commands run with %s, and it cannot run here: %s", ShellPath, c.Shell.Reason)
	}
	if reason := c.missing(m); reason != "" {
		return fmt.Sprintf("sandbox mode %s cannot run here: %s", m, reason)
	}
	return ""
}

// missing says why mode m's mechanism is unavailable, "" when it is available.
func (c *Capabilities) missing(m Mode) string {
	switch m {
	case ModeNamespace:
		if !c.Namespaces.Available {
			return "namespaces: " + c.Namespaces.Reason
		}
	case ModeBwrap:
		if !c.Bwrap.Available {
			return "bwrap: " + c.Bwrap.Reason
		}
	}
	return ""
}

// substitute is the strongest mode that can stand in for m here: the other contained mode if it
// works (both contain the same boundary), else none.
func (c *Capabilities) substitute(m Mode) Mode {
	other := ModeBwrap
	if m == ModeBwrap {
		other = ModeNamespace
	}
	if c.missing(other) == "" {
		return other
	}
	return ModeNone
}

// Effective applies b.OnUnavailable against c: the boundary a command will actually run under,
// and a warning naming any degradation.
//
// Without a working ShellPath nothing runs, whatever the mode and fallback: an error wrapping
// ErrUnavailable says why. No other shell stands in, since the gate judged the line as bash.
//
// A missing namespace mechanism (or bwrap binary) obeys b.OnUnavailable: FallbackError returns
// an error wrapping ErrUnavailable that names what is missing and how to get it; FallbackWarn
// runs the other contained mode when it works (both contain the same boundary) and otherwise
// mode none, with a warning. Landlock and seccomp are applied "where the kernel has them", so
// their absence only adds a warning under either fallback: the namespaces, the read-only file
// system and the rlimits still hold.
func (c *Capabilities) Effective(b Boundary) (Boundary, string, error) {
	if !c.Shell.Available {
		return b, "", fmt.Errorf("%w: commands run with %s, and it cannot run here: %s", ErrUnavailable, ShellPath, c.Shell.Reason)
	}
	if !b.Mode.contains() {
		return b, "", nil
	}
	if reason := c.missing(b.Mode); reason != "" {
		if b.OnUnavailable == FallbackError {
			return b, "", fmt.Errorf("%w: sandbox mode %q cannot run here: %s (or set on_unavailable = \"warn\" to degrade)", ErrUnavailable, b.Mode, reason)
		}
		asked := b.Mode
		b.Mode = c.substitute(asked)
		if b.Mode == ModeNone {
			return b, fmt.Sprintf("sandbox mode %q unavailable (%s) and no other contained mode works: running with NO sandbox (mode none)", asked, reason), nil
		}
		warning := fmt.Sprintf("sandbox mode %q unavailable (%s): running under %q instead", asked, reason, b.Mode)
		if extra := c.weaker(b.Mode); extra != "" {
			warning += "; " + extra
		}
		return b, warning, nil
	}
	return b, c.weaker(b.Mode), nil
}

// weaker names the defence-in-depth layers a working contained mode lacks here, "" when none.
func (c *Capabilities) weaker(m Mode) string {
	var gaps []string
	if m == ModeNamespace && !c.Landlock.Available {
		gaps = append(gaps, "landlock ("+c.Landlock.Reason+")")
	}
	if !c.Seccomp.Available {
		gaps = append(gaps, "seccomp ("+c.Seccomp.Reason+")")
	}
	if len(gaps) == 0 {
		return ""
	}
	return fmt.Sprintf("sandbox mode %q runs without %s", m, strings.Join(gaps, " and "))
}

// limitText spells a hard limit for doctor.
func limitText(v uint64) string {
	if v == 0 {
		return "unlimited"
	}
	return fmt.Sprint(v)
}
