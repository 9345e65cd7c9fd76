//go:build linux

package sandbox

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// The escape suite's evidence: what the host looks at to decide whether an attempt got out,
// never what the command says about itself.

// escapeCreated reports a file the command was not to create.
func escapeCreated(path string) string {
	if _, err := os.Lstat(path); err == nil {
		return "the host has " + path
	}
	return ""
}

// escapePrinted reports a secret in the command's output.
func escapePrinted(o Outcome, secret, what string) string {
	if secret != "" && bytes.Contains(o.Output, []byte(secret)) {
		return "the output holds " + what
	}
	return ""
}

// escapeLeftover waits up to two seconds (a killed process's exit is asynchronous) for the
// processes carrying arg to be gone, and reports those still alive (the run's cleanup kills them).
func escapeLeftover(arg string) string {
	deadline := time.Now().Add(2 * time.Second)
	for {
		pids := escapePIDs(arg)
		if len(pids) == 0 {
			return ""
		}
		if time.Now().After(deadline) {
			return fmt.Sprintf("processes %v carrying %q outlived Run", pids, arg)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// victimKilled reports the victim's death.
func (r *escapeRun) victimKilled() string {
	select {
	case <-r.victim.exited:
		return fmt.Sprintf("the host process %d died: %v", r.victim.cmd.Process.Pid, r.victim.cmd.ProcessState)
	case <-time.After(200 * time.Millisecond):
		return ""
	}
}

// accepted reports a connection waiting on the run's listener (a completed connect is in the
// backlog before the command's connect returns).
func (r *escapeRun) accepted() string {
	type deadliner interface{ SetDeadline(time.Time) error }
	_ = r.listener.(deadliner).SetDeadline(time.Now().Add(100 * time.Millisecond))
	c, err := r.listener.Accept()
	if err != nil {
		return ""
	}
	defer c.Close()
	return "the host's listener on " + r.listener.Addr().String() + " accepted a connection"
}

// received reports a datagram on the run's UDP socket that names the token.
func (r *escapeRun) received() string {
	buf := make([]byte, 2048)
	for {
		_ = r.packets.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
		n, from, err := r.packets.ReadFrom(buf)
		if err != nil {
			return ""
		}
		if bytes.Contains(buf[:n], []byte(r.token)) {
			return fmt.Sprintf("the host's UDP socket %s received the token from %v", r.packets.LocalAddr(), from)
		}
	}
}

// escapePIDs lists the live host processes one of whose arguments is exactly one of args (a
// shell whose command line merely mentions it does not count).
func escapePIDs(args ...string) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil || !slices.ContainsFunc(strings.Split(string(cmdline), "\x00"), func(a string) bool { return slices.Contains(args, a) }) {
			continue
		}
		if stat, err := os.ReadFile("/proc/" + e.Name() + "/stat"); err == nil && escapeZombie(stat) {
			continue
		}
		pids = append(pids, pid)
	}
	return pids
}

// escapeZombie reads the state field of /proc/<pid>/stat.
func escapeZombie(stat []byte) bool {
	i := bytes.LastIndexByte(stat, ')')
	return i >= 0 && i+2 < len(stat) && stat[i+2] == 'Z'
}

// escapeStatus is one field of /proc/<pid>/status, "" when unreadable.
func escapeStatus(pid int, name string) string {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return ""
	}
	for line := range strings.Lines(string(data)) {
		if value, ok := strings.CutPrefix(line, name+":"); ok {
			return strings.TrimSpace(value)
		}
	}
	return ""
}

// escapePrivileged reports a process carrying arg with capabilities: none of a contained command's
// processes may have any, in any user namespace.
func escapePrivileged(arg string) string {
	for _, pid := range escapePIDs(arg) {
		for _, field := range []string{"CapEff", "CapPrm", "CapAmb"} {
			if v := escapeStatus(pid, field); v != "" && strings.Trim(v, "0") != "" {
				return fmt.Sprintf("process %d has %s %s (uid %s)", pid, field, v, escapeStatus(pid, "Uid"))
			}
		}
	}
	return ""
}

// escapeNamespace is a process's namespace link, "" when unreadable.
func escapeNamespace(pid int, kind string) string {
	link, _ := os.Readlink(fmt.Sprintf("/proc/%d/ns/%s", pid, kind))
	return link
}

// escapeParent reads a process's parent from /proc/<pid>/stat.
func escapeParent(pid int) int {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	i := bytes.LastIndexByte(stat, ')')
	fields := strings.Fields(string(stat[i+1:]))
	if len(fields) < 2 {
		return 0
	}
	ppid, _ := strconv.Atoi(fields[1])
	return ppid
}

// escapeFDs lists where a process's descriptors point.
func escapeFDs(pid int) []string {
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	entries, _ := os.ReadDir(dir)
	targets := make([]string, 0, len(entries))
	for _, e := range entries {
		if target, err := os.Readlink(filepath.Join(dir, e.Name())); err == nil {
			targets = append(targets, target)
		}
	}
	return targets
}

// escapeHoldsFD reports a process carrying arg with a descriptor on kind (an anonymous inode).
func escapeHoldsFD(arg, kind string) string {
	for _, pid := range escapePIDs(arg) {
		if slices.Contains(escapeFDs(pid), kind) {
			return fmt.Sprintf("process %d holds an %s descriptor", pid, kind)
		}
	}
	return ""
}

// escapeHoldsSocket reports a process carrying arg with a socket of address family domain: the
// host takes a copy of each of its socket descriptors (pidfd_getfd) and asks the kernel the
// family (SO_DOMAIN), since a descriptor's /proc link names no family.
func escapeHoldsSocket(arg string, domain int) string {
	for _, pid := range escapePIDs(arg) {
		pidfd, err := unix.PidfdOpen(pid, 0)
		if err != nil {
			continue
		}
		entries, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
		for _, e := range entries {
			fd, err := strconv.Atoi(e.Name())
			if err != nil {
				continue
			}
			if target, _ := os.Readlink(fmt.Sprintf("/proc/%d/fd/%d", pid, fd)); !strings.HasPrefix(target, "socket:") {
				continue
			}
			copied, err := unix.PidfdGetfd(pidfd, fd, 0)
			if err != nil {
				continue
			}
			got, err := unix.GetsockoptInt(copied, unix.SOL_SOCKET, unix.SO_DOMAIN)
			unix.Close(copied)
			if err == nil && got == domain {
				unix.Close(pidfd)
				return fmt.Sprintf("process %d holds a socket of address family %d (descriptor %d)", pid, domain, fd)
			}
		}
		unix.Close(pidfd)
	}
	return ""
}

// escapeHasKey reports a key or keyring named name in the host's /proc/keys.
func escapeHasKey(name string) string {
	if data, err := os.ReadFile("/proc/keys"); err == nil && bytes.Contains(data, []byte(name)) {
		return "the host's /proc/keys lists " + name
	}
	return ""
}

// escapeDetachMounts detaches every mount at or under dir in the host's mount namespace, deepest
// first (a none-mode command is root on the host and may mount in its workdir).
func escapeDetachMounts(dir string) {
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return
	}
	var points []string
	for line := range strings.Lines(string(data)) {
		if fields := strings.Fields(line); len(fields) > 4 && within(fields[4], dir) {
			points = append(points, fields[4])
		}
	}
	slices.SortFunc(points, func(a, b string) int { return len(b) - len(a) })
	for _, p := range points {
		_ = unix.Unmount(p, unix.MNT_DETACH)
	}
}

// escapeMountedAt reports a mount at path in the mount namespace of a process carrying arg.
func escapeMountedAt(arg, path string) string {
	for _, pid := range escapePIDs(arg) {
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/mountinfo", pid))
		if err != nil {
			continue
		}
		for line := range strings.Lines(string(data)) {
			if fields := strings.Fields(line); len(fields) > 4 && fields[4] == path {
				return fmt.Sprintf("process %d sees a mount at %s: %s", pid, path, strings.TrimSpace(line))
			}
		}
	}
	return ""
}

// escapeLogFormat matches a kernel log line as dmesg or /dev/kmsg prints it.
var escapeLogFormat = regexp.MustCompile(`(?m)^(\[\s*\d+\.\d{6}\] |\d+,\d+,\d+,[-c];)`)

// escapeQuote quotes s for /bin/sh.
func escapeQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// escapeDNSQuery is a DNS question for <token>.escape.test, as printf octal escapes.
func escapeDNSQuery(token string) string {
	msg := []byte{0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0}
	for _, label := range []string{token, "escape", "test"} {
		msg = append(append(msg, byte(len(label))), label...)
	}
	msg = append(msg, 0, 0, 1, 0, 1)
	var sb strings.Builder
	for _, c := range msg {
		fmt.Fprintf(&sb, `\%03o`, c)
	}
	return sb.String()
}
