package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// probeTimeout bounds each end-to-end probe of a contained mode. It is a backstop against a
// mechanism that hangs, far above what a loaded machine takes (a probe runs `exit 0`, in
// milliseconds): the probe decides which modes a run may use, so a limit a busy machine could
// reach would let load choose the sandbox.
const probeTimeout = 2 * time.Minute

// probeMachine probes every mechanism; the contained modes by running `exit 0` through them.
func probeMachine() *Capabilities {
	c := &Capabilities{UID: os.Geteuid(), GID: os.Getegid(), HardLimits: hardLimits()}
	c.InsideUID, c.InsideGID = insideID(c.UID), insideID(c.GID)
	c.CommandUID, c.CommandGID = c.UID, c.GID
	if c.UID == 0 && idMapped("/proc/self/uid_map", unprivilegedID) && idMapped("/proc/self/gid_map", unprivilegedID) {
		c.CommandUID, c.CommandGID = unprivilegedID, unprivilegedID
	}
	c.ShellVersion, c.Shell = probeShell()
	c.LandlockABI, c.Landlock = probeLandlock()
	c.Seccomp = probeSeccomp()
	dir, err := os.MkdirTemp("", "warren-sandbox-probe-")
	if err != nil {
		reason := fmt.Sprintf("cannot create a probe directory: %v", err)
		c.Namespaces, c.Bwrap = Support{Reason: reason}, Support{Reason: reason}
		return c
	}
	defer os.RemoveAll(dir) // only the probes' workdirs: nothing is mounted in this namespace
	// A manager refuses a workdir reached through a link: TMPDIR may be the operator's own.
	dir = resolved(dir)
	c.Namespaces = probeMode(c, ModeNamespace, dir)
	if c.Namespaces.Reason != "" {
		c.Namespaces.Reason += namespaceHints()
	}
	c.BwrapPath, c.BwrapVersion, c.Bwrap = probeBwrap(c, dir)
	return c
}

// insideID is the id a contained command has in its user namespace: the host's, or 1000 for
// root, so that the command is never root there.
func insideID(hostID int) int {
	if hostID == 0 {
		return 1000
	}
	return hostID
}

// idMapped reports whether the id map file (/proc/self/uid_map or gid_map: "inside outside
// count" lines) maps id in this process's user namespace, so that a child namespace may map it.
func idMapped(mapFile string, id int) bool {
	data, err := os.ReadFile(mapFile)
	if err != nil {
		return false
	}
	for line := range strings.Lines(string(data)) {
		var inside, outside, count int
		if _, err := fmt.Sscan(line, &inside, &outside, &count); err == nil && id >= inside && id-inside < count {
			return true
		}
	}
	return false
}

// probeMode runs `exit 0` in mode m on a copy of c that takes m's mechanism for granted.
func probeMode(c *Capabilities, m Mode, dir string) Support {
	trial := *c
	trial.Namespaces, trial.Bwrap, trial.Shell = Support{Available: true}, Support{Available: true}, Support{Available: true}
	b := Ceiling(Spec{Mode: &m})
	b.Limits.Timeout = probeTimeout
	mgr := newManager(filepath.Join(dir, m.String()), &trial, b)
	defer mgr.Close()
	o, err := mgr.Run(context.Background(), "exit 0")
	switch {
	case errors.Is(err, syscall.ENOSPC):
		// What clone returns past the user namespace limit, and inside a sandbox or container
		// that forbids nesting them (bwrap --disable-userns): nothing is short of disk space.
		return Support{Reason: err.Error() + " (ENOSPC: no more user namespaces may be made here: user.max_user_namespaces is reached, or the container or sandbox the host runs in forbids nesting them)"}
	case err != nil:
		return Support{Reason: err.Error()}
	case o.TimedOut:
		return Support{Reason: fmt.Sprintf("a trial command (exit 0) did not end within %s: the mechanism hangs here", probeTimeout)}
	case o.ExitCode != 0:
		return Support{Reason: fmt.Sprintf("a trial command exited %d (signal %q, timed out %v): %s", o.ExitCode, o.Signal, o.TimedOut, strings.TrimSpace(string(o.Output)))}
	}
	return Support{Available: true}
}

// namespaceHints names the usual reasons user namespaces are off, as found on this machine.
func namespaceHints() string {
	read := func(path string) string {
		data, _ := os.ReadFile(path)
		return strings.TrimSpace(string(data))
	}
	switch {
	case read("/proc/sys/user/max_user_namespaces") == "0":
		return "; user namespaces are disabled: sysctl -w user.max_user_namespaces=15000"
	case read("/proc/sys/kernel/unprivileged_userns_clone") == "0":
		return "; unprivileged user namespaces are disabled: sysctl -w kernel.unprivileged_userns_clone=1"
	case read("/proc/sys/kernel/apparmor_restrict_unprivileged_userns") == "1":
		return "; AppArmor restricts unprivileged user namespaces: sysctl -w kernel.apparmor_restrict_unprivileged_userns=0, or an AppArmor profile for the host binary that allows userns"
	}
	return "; the namespace mode needs Linux 5.12+ with user namespaces allowed (a container runtime's seccomp profile may forbid them); bwrap mode may still work"
}

// probeShell runs ShellPath --version and checks that it is GNU bash.
func probeShell() (version string, s Support) {
	ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, ShellPath, "--version").Output()
	if err != nil {
		return "", Support{Reason: fmt.Sprintf("%s --version failed: %v: install bash (apt-get install -y bash)", ShellPath, err)}
	}
	version, _, _ = strings.Cut(strings.TrimSpace(string(out)), "\n")
	if !strings.HasPrefix(version, "GNU bash") {
		return version, Support{Reason: fmt.Sprintf("%s is not GNU bash (it says %q), and the gate judges command lines as bash", ShellPath, version)}
	}
	return version, Support{Available: true}
}

// probeBwrap finds bwrap in PATH, reads its version and runs a trial command through it.
func probeBwrap(c *Capabilities, dir string) (path, version string, s Support) {
	path, err := exec.LookPath("bwrap")
	if err != nil {
		return "", "", Support{Reason: "bwrap not found in PATH: install bubblewrap (apt-get install -y bubblewrap)"}
	}
	ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, path, "--version").Output()
	if err != nil {
		return path, "", Support{Reason: fmt.Sprintf("%s --version failed: %v", path, err)}
	}
	version = strings.TrimSpace(string(out))
	trial := *c
	trial.BwrapPath = path
	s = probeMode(&trial, ModeBwrap, dir)
	if !s.Available {
		s.Reason += "; bwrap needs unprivileged user namespaces (or a setuid bwrap)"
	}
	return path, version, s
}
