//go:build linux

package sandbox

import (
	"bytes"
	"cmp"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// The attempts: the list made concrete, and more, with the fixtures they share. Fixtures
// belong to the command's uid (escapeRun.file) unless an attempt is about the host's own files:
// each attempt must be stopped by the mechanism it aims at, not by a permission that happens to
// be in the way.

// escapeVictimFile makes {V}/victim, the command uid's file in the read-only host folder, which
// the write attempts aim at.
func escapeVictimFile(r *escapeRun) {
	r.file(filepath.Join(r.visibleDir(), "victim"), "original\n", 0o644)
}

// escapeHostSecret makes {H}/secret: a 0600 file in the host's /tmp.
func escapeHostSecret(r *escapeRun) { r.file(filepath.Join(r.hostTmp, "secret"), r.token, 0o600) }

// escapeVisibleSecrets makes the 0600 files outside /tmp: {V}/secret, the host uid's; {V}/mine and
// {V}/hidden/secret, the command uid's.
func escapeVisibleSecrets(r *escapeRun) {
	r.hostFile(filepath.Join(r.visibleDir(), "secret"), r.token, 0o600)
	r.file(filepath.Join(r.visibleDir(), "mine"), r.token, 0o600)
	r.file(filepath.Join(r.visibleDir(), "hidden", "secret"), r.token, 0o600)
}

// escapeHide adds paths under the visible folder to Boundary.Hidden.
func escapeHide(names ...string) func(r *escapeRun, b *Boundary) {
	return func(r *escapeRun, b *Boundary) {
		for _, name := range names {
			b.Hidden = append(b.Hidden, filepath.Join(r.visibleDir(), name))
		}
	}
}

// escapeLimit tightens the boundary's limits.
func escapeLimit(edit func(l *Limits)) func(r *escapeRun, b *Boundary) {
	return func(_ *escapeRun, b *Boundary) { edit(&b.Limits) }
}

// escapeShortLimit is the limit of the attempts that try to outlive it.
func escapeShortLimit(l *Limits) { l.Timeout = escapeShortTimeout }

// escapeCreatedIn reports the file name in the visible folder.
func escapeCreatedIn(name string) func(r *escapeRun, _ Outcome) string {
	return func(r *escapeRun, _ Outcome) string { return escapeCreated(filepath.Join(r.visibleDir(), name)) }
}

// escapeVictimChanged reports any change to {V}/victim.
func escapeVictimChanged(r *escapeRun, _ Outcome) string {
	path := filepath.Join(r.visibleDir(), "victim")
	info, err := os.Stat(path)
	if err != nil {
		return fmt.Sprintf("the host file %s is gone: %v", path, err)
	}
	if data, _ := os.ReadFile(path); string(data) != "original\n" || info.Mode().Perm() != 0o644 {
		return fmt.Sprintf("the host file %s changed: mode %v, content %.60q", path, info.Mode().Perm(), data)
	}
	return ""
}

// escapePrintedToken reports the run's token (a secret the host placed) in the output.
func escapePrintedToken(r *escapeRun, o Outcome) string {
	return escapePrinted(o, r.token, "the host's secret")
}

// escapeLeftoverMarker reports processes of the command that outlived Run.
func escapeLeftoverMarker(r *escapeRun, _ Outcome) string { return escapeLeftover(r.marker) }

// escapePrivilegedBrief reports capabilities on the command's watched process.
func escapePrivilegedBrief(r *escapeRun) string { return escapePrivileged(r.brief) }

// escapeRestoreHostname puts the host's name back after an attempt that may have changed it.
func escapeRestoreHostname(r *escapeRun) {
	r.t.Cleanup(func() {
		if h, _ := os.Hostname(); h != r.suite.hostname {
			_ = unix.Sethostname([]byte(r.suite.hostname))
		}
	})
}

// escapeWriteAt is the attempt to create a file in a host directory outside the temporary
// folders: a unique name, removed at the end wherever it landed.
func escapeWriteAt(name, dir string) escapeCase {
	path := func(r *escapeRun) string { return filepath.Join(dir, "warren-escape-"+r.token) }
	return escapeCase{name: name, claim: claimContained, line: "echo {T} > " + dir + "/warren-escape-{T}",
		setup: func(r *escapeRun) { r.t.Cleanup(func() { _ = os.Remove(path(r)) }) },
		check: func(r *escapeRun, _ Outcome) string { return escapeCreated(path(r)) }}
}

// escapeOwnInit opens a shell `if` that holds only when pid 1 is Warren's own namespace init
// (argv[0] exactly; pid 1's whole command line may quote the attempt, as bwrap's does): the
// attempts aimed at that init must never touch the machine's init in none mode.
const escapeOwnInit = `if [ "$(tr '\0' '\n' < /proc/1/cmdline | head -n1)" = ` + initEntry + ` ]; then `

// escapeSysctl is the global (not namespaced) sysctl the sysctl attempt writes; it only rate-limits
// kernel messages, and the host puts it back at once.
const escapeSysctl = "/proc/sys/kernel/printk_ratelimit_burst"

// escapeWorkRoot is the work root of the cross-agent attempts: {V}/root, outside /tmp.
func escapeWorkRoot(r *escapeRun) string { return filepath.Join(r.visibleDir(), "root") }

// escapeAgentIn makes the run's workdir the agent's at rel under escapeWorkRoot, and another
// agent's secret at g/other/secret.txt (the command uid's, so that only the view keeps it out).
func escapeAgentIn(rel string) func(r *escapeRun) {
	return func(r *escapeRun) {
		root := escapeWorkRoot(r)
		r.file(filepath.Join(root, "g", "other", "secret.txt"), r.token, 0o600)
		r.workdir = filepath.Join(root, rel)
		if err := os.MkdirAll(r.workdir, 0o755); err != nil {
			r.t.Fatal(err)
		}
		for p := r.workdir; p != r.visibleDir(); p = filepath.Dir(p) {
			r.own(p)
		}
	}
}

// escapeCoveredMounts mounts, on a root host, a tmpfs whose source names the token under {V}/hidden
// and under {H}: host mounts only covered paths hold.
func escapeCoveredMounts(r *escapeRun) {
	if os.Geteuid() != 0 {
		return // the host's own /proc and /dev mounts are still there to look for
	}
	for _, dir := range []string{filepath.Join(r.visibleDir(), "hidden", "m"), filepath.Join(r.hostTmp, "m")} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			r.t.Fatal(err)
		}
		if !mountHostTmpfs(r.t, "warren-"+r.token, dir) {
			return
		}
	}
}

// escapeTmpCap and escapeFileCap are the fill attempts' limits: /tmp and /dev/shm's size, and
// RLIMIT_FSIZE.
const (
	escapeTmpCap  = 8 << 20
	escapeFileCap = 4 << 20
)

// escapeFill is the attempt to write more into dir (one of the sandbox's private file systems)
// than its cap, with RLIMIT_FSIZE far above it: the host looks at the file through the command's
// root (/proc/<pid>/root) while the command holds on. In none mode dir is the host's own, and the
// file is removed at the end.
func escapeFill(name, dir string) escapeCase {
	file := func(r *escapeRun) string { return filepath.Join(dir, "warren-fill-"+r.token) }
	return escapeCase{name: name, claim: claimContained,
		setup:    func(r *escapeRun) { r.t.Cleanup(func() { _ = os.Remove(file(r)) }) },
		boundary: escapeLimit(func(l *Limits) { l.TmpSize, l.FileSize = escapeTmpCap, 1<<30 }),
		line:     fmt.Sprintf("head -c %d /dev/zero > %s/warren-fill-{T}; exec sleep {B}", 4*escapeTmpCap, dir),
		watch: func(r *escapeRun) string {
			for _, pid := range escapePIDs(r.brief) {
				path := fmt.Sprintf("/proc/%d/root%s", pid, file(r))
				if dir == "/dev" {
					if _, err := os.Lstat(path); err == nil {
						return fmt.Sprintf("process %d created %s in the sandbox's uncapped /dev", pid, file(r))
					}
					continue
				}
				if ev := escapeBigFile(path, escapeTmpCap); ev != "" {
					return ev
				}
			}
			return ""
		}}
}

// escapeBigFile reports a file grown past limit bytes.
func escapeBigFile(path string, limit int64) string {
	if info, err := os.Stat(path); err == nil && info.Size() > limit {
		return fmt.Sprintf("%s holds %d bytes, over a limit of %d", path, info.Size(), limit)
	}
	return ""
}

// escapeAttempts is the suite: the list made concrete, and more.
func escapeAttempts() []escapeCase {
	fileWrites := []escapeCase{
		{name: "write-host-tmp-by-path", claim: claimContained, line: "echo {T} > {H}/escaped",
			check: func(r *escapeRun, _ Outcome) string { return escapeCreated(filepath.Join(r.hostTmp, "escaped")) }},
		{name: "write-outside-by-path", claim: claimContained, line: "echo {T} > {V}/escaped", check: escapeCreatedIn("escaped")},
		{name: "append-outside-file", claim: claimContained, setup: escapeVictimFile, line: "echo {T} >> {V}/victim", check: escapeVictimChanged},
		{name: "dotdot-traversal", claim: claimContained, line: "echo {T} > ../escaped-{T}; echo {T} > {REL}/escaped",
			check: func(r *escapeRun, o Outcome) string {
				return cmp.Or(escapeCreated(filepath.Join(filepath.Dir(r.workdir), "escaped-"+r.token)), escapeCreatedIn("escaped")(r, o))
			}},
		{name: "symlink-planted-to-file", claim: claimContained, setup: escapeVictimFile, line: "ln -s {V}/victim link && echo {T} >> link", check: escapeVictimChanged},
		{name: "symlink-planted-to-dir", claim: claimContained, line: "ln -s {V} dir && echo {T} > dir/escaped", check: escapeCreatedIn("escaped")},
		{name: "proc-self-root-write", claim: claimContained, setup: escapeVictimFile, line: "echo {T} >> /proc/self/root{V}/victim", check: escapeVictimChanged},
		{name: "hard-link-then-append", claim: claimContained, setup: escapeVictimFile, line: "ln {V}/victim hl && echo {T} >> hl", check: escapeVictimChanged},
		escapeWriteAt("write-etc", "/etc"),
		escapeWriteAt("write-host-tmp-root", "/tmp"),
		escapeWriteAt("write-dev-shm", "/dev/shm"),
		{name: "chmod-outside-file", claim: claimContained, setup: escapeVictimFile, line: "chmod 0777 {V}/victim", check: escapeVictimChanged},
		{name: "rm-outside-file", claim: claimContained, setup: escapeVictimFile, line: "rm -f {V}/victim", check: escapeVictimChanged},
		{name: "rename-outside-file", claim: claimContained, setup: escapeVictimFile, line: "mv {V}/victim {V}/renamed", check: escapeVictimChanged},
		{name: "mkdir-outside", claim: claimContained, line: "mkdir {V}/newdir", check: escapeCreatedIn("newdir")},
		{name: "truncate-outside-file", claim: claimContained, setup: escapeVictimFile, line: "truncate -s 0 {V}/victim || : > {V}/victim", check: escapeVictimChanged},
		{name: "write-into-hidden-dir", claim: claimContained, setup: escapeVisibleSecrets, boundary: escapeHide("hidden"),
			line: "echo {T} > {V}/hidden/escaped", check: escapeCreatedIn("hidden/escaped")},
	}
	reads := []escapeCase{
		{name: "read-host-tmp-secret", claim: claimContained, setup: escapeHostSecret, line: "cat {H}/secret", check: escapePrintedToken},
		{name: "read-secret-via-proc-root", claim: claimContained, setup: escapeHostSecret, line: "cat /proc/self/root{H}/secret", check: escapePrintedToken},
		{name: "read-secret-via-symlink", claim: claimContained, setup: escapeHostSecret, line: "ln -s {H}/secret s && cat s", check: escapePrintedToken},
		{name: "read-unhidden-0600-file", claim: claimOtherUID, setup: escapeVisibleSecrets, line: "cat {V}/secret", check: escapePrintedToken},
		{name: "read-hidden-dir", claim: claimContained, setup: escapeVisibleSecrets, boundary: escapeHide("hidden"),
			line: "cat {V}/hidden/secret; ls -A {V}/hidden", check: escapePrintedToken},
		{name: "read-hidden-file", claim: claimContained, setup: escapeVisibleSecrets, boundary: escapeHide("mine"), line: "cat {V}/mine", check: escapePrintedToken},
		{name: "read-hidden-via-symlink", claim: claimContained, setup: escapeVisibleSecrets, boundary: escapeHide("hidden"),
			line: "ln -s {V}/hidden/secret s && cat s", check: escapePrintedToken},
		{name: "read-hidden-in-tmp", claim: claimContained,
			setup:    func(r *escapeRun) { r.file(filepath.Join(r.hostTmp, "hidden", "secret"), r.token, 0o600) },
			boundary: func(r *escapeRun, b *Boundary) { b.Hidden = append(b.Hidden, filepath.Join(r.hostTmp, "hidden")) },
			line:     "cat {H}/hidden/secret", check: escapePrintedToken},
		{name: "read-hidden-after-rename", claim: claimContained,
			setup: func(r *escapeRun) { r.file(filepath.Join(r.visibleDir(), "project", "conf", "secret"), r.token, 0o600) },
			boundary: func(r *escapeRun, b *Boundary) {
				b.Writable = []string{filepath.Join(r.visibleDir(), "project")}
				b.Hidden = []string{filepath.Join(r.visibleDir(), "project", "conf", "secret")}
			},
			refused: ErrHiddenInWritable,
			prelude: "mv {V}/project/conf {V}/project/moved", line: "cat {V}/project/moved/secret", check: escapePrintedToken},
		{name: "read-host-test-environ", claim: claimContained, line: "base64 -w0 /proc/{TESTPID}/environ",
			check: func(r *escapeRun, o Outcome) string {
				return escapePrinted(o, base64.StdEncoding.EncodeToString(r.suite.environ), "the test process's environment")
			}},
		{name: "read-victim-environ", claim: claimContained, line: "tr '\\0' '\\n' < /proc/{PID}/environ", check: escapePrintedToken},
		{name: "read-victim-cwd", claim: claimContained, line: "cat /proc/{PID}/cwd/secret", check: escapePrintedToken},
		{name: "read-victim-root", claim: claimContained, setup: escapeHostSecret, line: "cat /proc/{PID}/root{H}/secret", check: escapePrintedToken},
		{name: "read-victim-mem", claim: claimContained, payload: true, line: "{P} readmem {PID}", check: escapePrintedToken},
		{name: "env-secret-leak", claim: claimEveryMode, line: "env; tr '\\0' '\\n' < /proc/self/environ; echo ${" + escapeSecretVar + "-}",
			check: func(_ *escapeRun, o Outcome) string {
				return escapePrinted(o, os.Getenv(escapeSecretVar), "the host's "+escapeSecretVar)
			}},
	}
	reads = append(reads,
		// Another agent's workdir under a work root outside /tmp: a sibling's, and the parent's of
		// a sub-agent (whose workdir lies inside it).
		escapeCase{name: "read-sibling-workdir", claim: claimContained, setup: escapeAgentIn("g/self"),
			workRoot: escapeWorkRoot, line: "cat ../other/secret.txt; cat {V}/root/g/other/secret.txt", check: escapePrintedToken},
		escapeCase{name: "read-parent-workdir", claim: claimContained, setup: escapeAgentIn("g/other/agents/1"),
			workRoot: escapeWorkRoot, line: "cat ../../secret.txt; cat {V}/root/g/other/secret.txt", check: escapePrintedToken},
		// The mount table: host mounts the view covers (the host's /proc and /dev ones; on a root
		// host also a tmpfs named after the token under a hidden folder and under the host's /tmp).
		escapeCase{name: "mountinfo-covered-mounts", claim: claimContained, setup: escapeCoveredMounts, boundary: escapeHide("hidden"),
			line: "cat /proc/self/mountinfo; echo ==; cat /proc/mounts",
			check: func(r *escapeRun, o Outcome) string {
				info, _, _ := strings.Cut(string(o.Output), "==\n")
				return cmp.Or(escapePrintedToken(r, o), strings.Join(coveredMountProblems(info, r.workdir), "; "))
			}},
		// Where the binds come from: the sandbox's private directory (bwrap's staged sources on a
		// root host), a bind's root that differs from where it is mounted.
		escapeCase{name: "mountinfo-bind-sources", claim: claimContained, line: "cat /proc/self/mountinfo; echo ==; cat /proc/mounts",
			check: func(_ *escapeRun, o Outcome) string {
				info, _, _ := strings.Cut(string(o.Output), "==\n")
				return cmp.Or(escapePrinted(o, "/warren-sandbox-", "the sandbox's private directory"), strings.Join(bindRootProblems(info), "; "))
			}},
	)
	network := []escapeCase{
		{name: "tcp-to-host-loopback", claim: claimContained, setup: func(r *escapeRun) { r.listen("tcp4", "127.0.0.1:0") },
			line: "bash -c 'echo {T} > /dev/tcp/127.0.0.1/{PORT}'", check: func(r *escapeRun, _ Outcome) string { return r.accepted() }},
		{name: "tcp6-to-host-loopback", claim: claimContained, setup: func(r *escapeRun) { r.listen("tcp6", "[::1]:0") },
			line: "bash -c 'echo {T} > /dev/tcp/::1/{PORT}'", check: func(r *escapeRun, _ Outcome) string { return r.accepted() }},
		{name: "udp-to-host-loopback", claim: claimContained, setup: func(r *escapeRun) { r.listenPackets() },
			line: "bash -c 'echo {T} > /dev/udp/127.0.0.1/{PORT}'", check: func(r *escapeRun, _ Outcome) string { return r.received() }},
		{name: "dns-to-host-resolver", claim: claimContained,
			setup: func(r *escapeRun) { r.listenPackets(); r.extra = escapeDNSQuery(r.token) },
			line:  "bash -c \"printf '{X}' > /dev/udp/127.0.0.1/{PORT}\"", check: func(r *escapeRun, _ Outcome) string { return r.received() }},
		{name: "abstract-unix-socket", claim: claimContained, payload: true,
			setup: func(r *escapeRun) { r.listen("unix", "@warren-escape-"+r.token) },
			line:  "{P} connect {ADDR} {T}", check: func(r *escapeRun, _ Outcome) string { return r.accepted() }},
		{name: "abstract-unix-network-on", claim: claimLandlock(6), payload: true,
			setup:    func(r *escapeRun) { r.listen("unix", "@warren-escape-"+r.token) },
			boundary: func(_ *escapeRun, b *Boundary) { b.Network = true },
			line:     "{P} connect {ADDR} {T}", check: func(r *escapeRun, _ Outcome) string { return r.accepted() }},
		{name: "unix-socket-in-host-tmp", claim: claimContained, payload: true,
			setup: func(r *escapeRun) {
				r.listen("unix", filepath.Join(r.hostTmp, "s.sock"))
				r.own(filepath.Join(r.hostTmp, "s.sock"))
			},
			line: "{P} connect {ADDR} {T}", check: func(r *escapeRun, _ Outcome) string { return r.accepted() }},
		// The socket is the host uid's, as a host service's would be.
		{name: "unix-socket-outside-tmp", claim: claimEither(claimLandlock(9), claimOtherUID), payload: true,
			setup: func(r *escapeRun) { r.listen("unix", filepath.Join(r.visibleDir(), "s.sock")) },
			line:  "{P} connect {ADDR} {T}", check: func(r *escapeRun, _ Outcome) string { return r.accepted() }},
	}
	processes := []escapeCase{
		{name: "kill-host-process", claim: claimContained, line: "kill -9 {PID}", check: func(r *escapeRun, _ Outcome) string { return r.victimKilled() }},
		{name: "pkill-host-process", claim: claimContained, line: "pkill -9 -f {VM}", check: func(r *escapeRun, _ Outcome) string { return r.victimKilled() }},
		{name: "ptrace-host-process", claim: claimContained, payload: true, line: "{P} ptrace {PID}",
			watch: func(r *escapeRun) string {
				if tracer := escapeStatus(r.victim.cmd.Process.Pid, "TracerPid"); tracer != "" && tracer != "0" {
					return "the host process is traced by pid " + tracer
				}
				return ""
			}},
	}
	resources := []escapeCase{
		{name: "fork-bomb", claim: claimEveryMode, boundary: escapeLimit(escapeShortLimit),
			line: "b() { if [ $1 -eq 0 ]; then exec sleep {M}; fi; b $(($1-1)) & b $(($1-1)) & wait; }; b 7",
			check: func(r *escapeRun, o Outcome) string {
				if r.elapsed > escapeShortTimeout+escapeSlack {
					return fmt.Sprintf("Run returned after %v, timeout %v", r.elapsed, escapeShortTimeout)
				}
				return escapeLeftover(r.marker)
			}},
		{name: "memory-bomb", claim: claimContained, payload: true, boundary: escapeLimit(func(l *Limits) { l.AddressSpace = escapeAddressSpace }),
			line: fmt.Sprintf("{P} mmap %d {B}", 2*escapeAddressSpace),
			watch: func(r *escapeRun) string {
				for _, pid := range escapePIDs(r.brief) {
					var kb uint64
					if _, err := fmt.Sscanf(escapeStatus(pid, "VmSize"), "%d kB", &kb); err == nil && kb<<10 > escapeAddressSpace {
						return fmt.Sprintf("process %d maps %d MiB, address-space limit %d MiB", pid, kb>>10, escapeAddressSpace>>20)
					}
				}
				return ""
			}},
		{name: "cpu-spin-past-timeout", claim: claimEveryMode, boundary: escapeLimit(escapeShortLimit),
			line:  "sh -c 'while :; do :; done' spin-{T} & sh -c 'while :; do :; done' spin-{T}",
			check: func(r *escapeRun, _ Outcome) string { return escapeLeftover("spin-" + r.token) }},
		// A long timeout: the limit, not the timeout, must end the spinner, and in none mode it
		// needs the wall time to show its CPU use on a loaded machine.
		{name: "cpu-seconds-limit", claim: claimContained, boundary: escapeLimit(func(l *Limits) { l.CPUSeconds, l.Timeout = 1, 6*time.Second }),
			line: "sh -c 'while :; do :; done' spin-{T}",
			watch: func(r *escapeRun) string {
				for _, pid := range escapePIDs("spin-" + r.token) {
					stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
					if err != nil {
						continue
					}
					fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
					if len(fields) < 13 {
						continue
					}
					utime, _ := strconv.Atoi(fields[11])
					stime, _ := strconv.Atoi(fields[12])
					if ticks := utime + stime; ticks > 130 { // 1.3 s at the kernel's 100 Hz user clock
						return fmt.Sprintf("process %d used %d.%02d s of CPU under a 1 s limit", pid, ticks/100, ticks%100)
					}
				}
				return ""
			}},
		// 20 MB of output, however long a loaded machine takes to write it (a timeout would let a
		// slow start write nothing): the host keeps the cap and counts the rest.
		{name: "output-flood", claim: claimEveryMode, boundary: escapeLimit(func(l *Limits) { l.Timeout, l.OutputBytes = escapeFloodTimeout, 4096 }),
			line: "yes {T} | head -c 20000000",
			check: func(r *escapeRun, o Outcome) string {
				switch {
				case len(o.Output) > 4096 || o.Output == nil || o.Dropped != 20000000-uint64(len(o.Output)):
					return fmt.Sprintf("kept %d bytes, dropped %d of 20000000, under a 4096-byte cap", len(o.Output), o.Dropped)
				case r.elapsed > escapeFloodTimeout+escapeSlack:
					return fmt.Sprintf("Run returned after %v", r.elapsed)
				}
				return escapeLeftover(r.token)
			}},
		{name: "open-files-limit", claim: claimContained, boundary: escapeLimit(func(l *Limits) { l.OpenFiles = 32 }),
			line: "touch fd-{T}; bash -c 'for i in $(seq 3 100); do eval \"exec $i<fd-{T}\" 2>/dev/null; done; exec sleep {B}'",
			watch: func(r *escapeRun) string {
				for _, pid := range escapePIDs(r.brief) {
					open := 0
					for _, target := range escapeFDs(pid) {
						if strings.HasSuffix(target, "/fd-"+r.token) {
							open++
						}
					}
					if open > 32 {
						return fmt.Sprintf("process %d holds %d descriptors under a limit of 32", pid, open)
					}
				}
				return ""
			}},
		{name: "process-count-limit", claim: claimContained, boundary: escapeLimit(func(l *Limits) { l.Processes = 16 }),
			line: "for i in $(seq 40); do sleep {B} & done; wait",
			watch: func(r *escapeRun) string {
				if n := len(escapePIDs(r.brief)); n > 16 {
					return fmt.Sprintf("%d processes at once under a limit of 16", n)
				}
				return ""
			}},
	}
	resources = append(resources,
		escapeFill("fill-private-tmp", "/tmp"),
		escapeFill("fill-dev-shm", "/dev/shm"),
		// /dev is a tmpfs of the sandbox's own, not capped: it must not take files at all.
		escapeFill("fill-dev", "/dev"),
		escapeCase{name: "big-file-in-workdir", claim: claimContained,
			boundary: escapeLimit(func(l *Limits) { l.FileSize = escapeFileCap }),
			line:     fmt.Sprintf("head -c %d /dev/zero > big-{T}; exec sleep {B}", 4*escapeFileCap),
			check: func(r *escapeRun, _ Outcome) string {
				return escapeBigFile(filepath.Join(r.workdir, "big-"+r.token), escapeFileCap)
			}},
	)
	timeouts := []escapeCase{
		{name: "double-fork-past-timeout", claim: claimEveryMode, boundary: escapeLimit(escapeShortLimit), line: "(sleep {M} &); sleep 30", check: escapeLeftoverMarker},
		{name: "setsid-past-timeout", claim: claimEveryMode, boundary: escapeLimit(escapeShortLimit), line: "setsid sleep {M} & sleep 30", check: escapeLeftoverMarker},
		{name: "nohup-past-timeout", claim: claimEveryMode, boundary: escapeLimit(escapeShortLimit), line: "nohup sleep {M} >/dev/null 2>&1 & sleep 30", check: escapeLeftoverMarker},
		{name: "disown-past-timeout", claim: claimEveryMode, boundary: escapeLimit(escapeShortLimit), line: "bash -c 'sleep {M} & disown; sleep 30'", check: escapeLeftoverMarker},
		{name: "setsid-past-exit", claim: claimEveryMode, line: "setsid -f sleep {M}; exit 0", check: escapeLeftoverMarker},
		// The host itself dies (an operator's kill, the OOM killer): nothing it started survives.
		{name: "orphan-after-host-sigkill", claim: claimEveryMode, killHost: syscall.SIGKILL,
			line: "setsid sleep {M} & (sleep {M} &); wait", check: escapeOutlivedHost},
		{name: "orphan-after-host-sigterm", claim: claimEveryMode, killHost: syscall.SIGTERM,
			line: "setsid sleep {M} & (sleep {M} &); wait", check: escapeOutlivedHost},
	}
	mounts := []escapeCase{
		{name: "mount-tmpfs", claim: claimContained, line: "mkdir m; mount -t tmpfs none m; exec sleep {B}",
			watch: func(r *escapeRun) string { return escapeMountedAt(r.brief, filepath.Join(r.workdir, "m")) }},
		{name: "remount-root-read-write", claim: claimContained, payload: true, setup: escapeVictimFile, line: "{P} remount {V}/victim {T}", check: escapeVictimChanged},
		{name: "bind-mount-outside-in", claim: claimContained, line: "mkdir b && mount --bind {V} b; echo {T} > b/escaped", check: escapeCreatedIn("escaped")},
		{name: "unshare-user-namespace", claim: claimContained, line: "unshare -Ur sleep {B}",
			watch: func(r *escapeRun) string {
				for _, pid := range escapePIDs(r.brief) {
					if own, parent := escapeNamespace(pid, "user"), escapeNamespace(escapeParent(pid), "user"); own != "" && parent != "" && own != parent {
						return fmt.Sprintf("process %d made a user namespace %s (its parent's: %s)", pid, own, parent)
					}
				}
				return ""
			}},
		{name: "unshare-then-remount", claim: claimContained, line: "unshare -Urm sh -c 'mount -o remount,bind,rw /; echo {T} > {V}/escaped'", check: escapeCreatedIn("escaped")},
		{name: "setns-into-host", claim: claimContained, line: "nsenter -t {TESTPID} -m -u -i -n -p sh -c 'echo {T} > {V}/escaped'", check: escapeCreatedIn("escaped")},
		{name: "chroot-escape", claim: claimContained, payload: true, line: "{P} chroot {H}/escaped {T}",
			check: func(r *escapeRun, _ Outcome) string { return escapeCreated(filepath.Join(r.hostTmp, "escaped")) }},
	}
	privileges := []escapeCase{
		{name: "setuid-root-shell", claim: claimContained, line: "./suidsh -p -c 'exec sleep {B}'", watch: escapePrivilegedBrief,
			setup: func(r *escapeRun) { r.link(r.suite.suidShell, "suidsh") }},
		{name: "setuid-0-syscall", claim: claimContained, payload: true, line: "{P} setuid {B}", watch: escapePrivilegedBrief},
		{name: "capabilities", claim: claimContained, watch: escapePrivilegedBrief,
			line: "capsh --caps=all+eip -- -c 'exec sleep {B}' 2>/dev/null || setpriv --inh-caps=+all --ambient-caps=+all sleep {B} 2>/dev/null || exec sleep {B}"},
	}
	kernel := []escapeCase{
		{name: "hostname-change", claim: claimContained, exclusive: "uts", setup: escapeRestoreHostname,
			line: "hostname we-{T} || echo we-{T} > /proc/sys/kernel/hostname",
			check: func(r *escapeRun, _ Outcome) string {
				if h, _ := os.Hostname(); h != r.suite.hostname {
					_ = unix.Sethostname([]byte(r.suite.hostname))
					return fmt.Sprintf("the host's name became %q", h)
				}
				return ""
			}},
		{name: "domainname-change", claim: claimContained, exclusive: "uts",
			setup: func(r *escapeRun) {
				old, err := os.ReadFile("/proc/sys/kernel/domainname")
				if err != nil {
					r.t.Fatal(err)
				}
				r.extra = strings.TrimSpace(string(old))
				r.t.Cleanup(func() { _ = unix.Setdomainname([]byte(r.extra)) })
			},
			line: "echo {T} > /proc/sys/kernel/domainname",
			check: func(r *escapeRun, _ Outcome) string {
				if now, _ := os.ReadFile("/proc/sys/kernel/domainname"); strings.TrimSpace(string(now)) != r.extra {
					_ = unix.Setdomainname([]byte(r.extra))
					return fmt.Sprintf("the host's NIS domain name became %q", bytes.TrimSpace(now))
				}
				return ""
			}},
		{name: "global-sysctl-write", claim: claimContained, exclusive: "sysctl",
			setup: func(r *escapeRun) {
				old, err := os.ReadFile(escapeSysctl)
				if err != nil {
					r.t.Fatal(err)
				}
				n, err := strconv.Atoi(strings.TrimSpace(string(old)))
				if err != nil {
					r.t.Fatal(err)
				}
				r.extra = strconv.Itoa(n + 7)
				r.t.Cleanup(func() { _ = os.WriteFile(escapeSysctl, []byte(strconv.Itoa(n)), 0) })
			},
			line: "echo {X} > " + escapeSysctl,
			check: func(r *escapeRun, _ Outcome) string {
				if now, _ := os.ReadFile(escapeSysctl); strings.TrimSpace(string(now)) == r.extra {
					return fmt.Sprintf("the host's %s became %s (the host puts it back)", escapeSysctl, r.extra)
				}
				return ""
			}},
		// Opening for writing is the attempt, with nothing written: no sysctl changes and no
		// sysrq fires even where the open succeeds (none mode on a root host; a kernel without
		// magic SysRq has no trigger to open).
		{name: "open-proc-for-writing", claim: claimContained, exclusive: "sysctl",
			line: ": > " + escapeSysctl + " && echo opened-{T}; : > /proc/sysrq-trigger && echo opened-{T}",
			check: func(r *escapeRun, o Outcome) string {
				return escapePrinted(o, "opened-"+r.token, "proof that a host sysctl or /proc/sysrq-trigger opened for writing")
			}},
		{name: "mknod-block-device", claim: claimContained, line: "mknod blk b 7 200",
			check: func(r *escapeRun, _ Outcome) string {
				if info, err := os.Lstat(filepath.Join(r.workdir, "blk")); err == nil && info.Mode()&os.ModeDevice != 0 {
					return "the host has a block device node " + filepath.Join(r.workdir, "blk")
				}
				return ""
			}},
		{name: "read-kernel-log", claim: claimContained, setup: func(r *escapeRun) { r.extra = escapeQuote(r.suite.logLine) },
			line: "dmesg 2>&1 | grep -F -- {X}; timeout 0.3 cat /dev/kmsg 2>&1 | grep -F -- {X}; timeout 0.3 cat /proc/kmsg 2>&1 | grep -F -- {X}",
			check: func(r *escapeRun, o Outcome) string {
				if r.suite.logLine == "" && escapeLogFormat.Match(o.Output) {
					return "the output holds kernel log lines"
				}
				return escapePrinted(o, r.suite.logLine, "a kernel log message")
			}},
		{name: "keyctl-session-keyring", claim: claimContained, payload: true, line: "{P} keyctl we-{T}",
			watch: func(r *escapeRun) string { return escapeHasKey("we-" + r.token) }},
		{name: "bpf-map", claim: claimContained, payload: true, line: "{P} bpf {B}",
			watch: func(r *escapeRun) string { return escapeHoldsFD(r.brief, "anon_inode:bpf-map") }},
		{name: "perf-event-open", claim: claimContained, payload: true, line: "{P} perf {B}",
			watch: func(r *escapeRun) string { return escapeHoldsFD(r.brief, "anon_inode:[perf_event]") }},
		{name: "open-by-handle", claim: claimContained, payload: true,
			setup: func(r *escapeRun) {
				escapeHostSecret(r)
				h, _, err := unix.NameToHandleAt(unix.AT_FDCWD, filepath.Join(r.hostTmp, "secret"), 0)
				if err != nil {
					r.t.Fatalf("name_to_handle_at: %v", err)
				}
				r.extra = fmt.Sprintf("%d %x", h.Type(), h.Bytes())
			},
			line: "{P} handle {X}", check: escapePrintedToken},
		{name: "seccomp-32-bit-abi", claim: claimContained, payload: true, line: "{P} int80-keyctl we-{T}",
			watch: func(r *escapeRun) string { return escapeHasKey("we-" + r.token) }},
		// io_uring performs operations without the system calls seccomp judges: refused always.
		{name: "io-uring-setup", claim: claimContained, payload: true, line: "{P} io_uring {B}",
			watch: func(r *escapeRun) string { return escapeHoldsFD(r.brief, "anon_inode:[io_uring]") }},
		// vsock ignores network namespaces: with the network off, no vsock socket.
		{name: "vsock-socket-network-off", claim: claimContained, payload: true, line: "{P} vsock {B}",
			watch: func(r *escapeRun) string { return escapeHoldsSocket(r.brief, unix.AF_VSOCK) }},
	}
	channels := []escapeCase{
		{name: "host-sysv-shared-memory", claim: claimContained, payload: true,
			setup: func(r *escapeRun) {
				key := int(binary.NativeEndian.Uint32([]byte(r.token)) & 0x3fffffff)
				// Open to every uid: only the IPC namespace keeps the command from it.
				id, err := unix.SysvShmGet(key, 4096, unix.IPC_CREAT|unix.IPC_EXCL|0o666)
				if err != nil {
					r.t.Fatalf("shmget: %v", err)
				}
				r.t.Cleanup(func() { _, _ = unix.SysvShmCtl(id, unix.IPC_RMID, nil) })
				mem, err := unix.SysvShmAttach(id, 0, 0)
				if err != nil {
					r.t.Fatalf("shmat: %v", err)
				}
				copy(mem, r.token)
				if err := unix.SysvShmDetach(mem); err != nil {
					r.t.Fatal(err)
				}
				r.extra = strconv.Itoa(key)
			},
			line: "{P} shm {X}", check: escapePrintedToken},
		// The runc CVE-2019-5736 shape: pid 1 of a namespace-mode sandbox is the host's own
		// binary.
		{name: "overwrite-host-binary", claim: claimContained,
			setup: func(r *escapeRun) {
				info, err := os.Stat(r.suite.binary)
				if err != nil {
					r.t.Fatal(err)
				}
				r.extra = fmt.Sprint(info.Size(), info.ModTime().UnixNano())
			},
			line: escapeOwnInit + "echo {T} >> /proc/1/exe; fi",
			check: func(r *escapeRun, _ Outcome) string {
				if info, err := os.Stat(r.suite.binary); err != nil || fmt.Sprint(info.Size(), info.ModTime().UnixNano()) != r.extra {
					return fmt.Sprintf("the host binary %s changed: %v", r.suite.binary, err)
				}
				return ""
			}},
		{name: "inherited-host-descriptor", claim: claimEveryMode,
			setup: func(r *escapeRun) {
				escapeVictimFile(r)
				f, err := os.OpenFile(filepath.Join(r.visibleDir(), "victim"), os.O_WRONLY|os.O_APPEND, 0)
				if err != nil {
					r.t.Fatal(err)
				}
				r.t.Cleanup(func() { f.Close() })
				// As a descriptor the host inherited from whoever started it: not close-on-exec.
				if _, err := unix.FcntlInt(f.Fd(), unix.F_SETFD, 0); err != nil {
					r.t.Fatal(err)
				}
				r.extra = strconv.Itoa(int(f.Fd()))
			},
			line: "bash -c 'echo {T} >&{X}'", check: escapeVictimChanged},
		{name: "terminal-injection", claim: claimContained, payload: true, terminal: true, line: "{P} tiocsti {T}",
			check: func(r *escapeRun, _ Outcome) string {
				switch {
				case bytes.Contains(r.terminalIn, []byte(r.token)):
					return fmt.Sprintf("the host's terminal has %q waiting as typed input", r.terminalIn)
				case bytes.Contains(r.terminalOut, []byte(r.token)):
					return fmt.Sprintf("the command wrote %q on the host's terminal", r.terminalOut)
				}
				return ""
			}},
		// The namespace init reports how the command ended on its descriptor 4.
		{name: "forge-init-status", claim: claimContained,
			line: escapeOwnInit + `printf '{"exit":0}\n' > /proc/1/fd/4; fi; exit 7`,
			check: func(_ *escapeRun, o Outcome) string {
				if o.ExitCode != 7 {
					return fmt.Sprintf("the outcome says exit %d where the command exited 7", o.ExitCode)
				}
				return ""
			}},
	}
	return slices.Concat(fileWrites, reads, network, processes, resources, timeouts, mounts, privileges, kernel, channels, workdirAttempts())
}
